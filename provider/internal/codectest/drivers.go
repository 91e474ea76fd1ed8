package codectest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// RoundTrip decodes with c every request body matching pattern (golden
// files left out: names with more dots than the pattern's, x.convo.json for
// *.json), compares the history and the decode warnings with the golden
// files beside it (<name>.convo.json, <name>.decode-warnings.txt), and
// encodes the history reloaded from its canonical form: the result must be
// the same JSON as wire(body), the conversation part of the request, and
// encoding again must give the same bytes.
func RoundTrip(t *testing.T, c provider.Codec, pattern string, wire func(t TB, body []byte) []byte) {
	for _, file := range requests(t, pattern) {
		base := strings.TrimSuffix(file, filepath.Ext(file))
		t.Run(filepath.Base(base), func(t *testing.T) {
			body := ReadFile(t, file)
			h, warns, err := c.Decode(body, provider.Options{})
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			canon, err := convo.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			Golden(t, base+".convo.json", canon)
			Golden(t, base+".decode-warnings.txt", WarningText(warns))

			// The canonical form is lossless too: reading it back and
			// encoding gives the same request.
			h2, err := convo.Unmarshal(canon)
			if err != nil {
				t.Fatal(err)
			}
			out, ewarns, err := c.Encode(h2, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("encode: %v (warnings %v)", err, ewarns)
			}
			if want := wire(t, body); !SameJSON(t, out, want) {
				t.Errorf("round trip differs:\n got: %s\nwant: %s", out, want)
			}
			// Same input, same bytes.
			again, _, _ := c.Encode(h2, provider.Options{})
			if !bytes.Equal(out, again) {
				t.Error("encoding is not deterministic")
			}
		})
	}
}

// requests returns the request bodies matching pattern, leaving out the
// golden files beside them: names with more dots than the pattern's
// (x.convo.json for *.json).
func requests(t TB, pattern string) []string {
	t.Helper()
	dots := strings.Count(filepath.Base(pattern), ".")
	var out []string
	for _, file := range Files(t, pattern) {
		if strings.Count(filepath.Base(file), ".") == dots {
			out = append(out, file)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no requests match %s", pattern)
	}
	return out
}

// FuzzRoundTrip fuzzes c's Decode, seeded with the request bodies matching
// pattern (as RoundTrip reads them) and seeds. It must never panic, and a
// body it accepts must survive a round trip: encoding the history (when
// that needs no warning) and decoding the result gives the same history.
func FuzzRoundTrip(f *testing.F, c provider.Codec, pattern string, seeds ...string) {
	for _, file := range requests(f, pattern) {
		f.Add(ReadFile(f, file))
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		h, _, err := c.Decode(body, provider.Options{})
		if err != nil {
			return
		}
		out, _, err := c.Encode(h, provider.Options{Strict: true})
		if err != nil {
			return // unpaired tool results, messages with nothing to send
		}
		h2, _, err := c.Decode(out, provider.Options{})
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		if !h.Equal(h2) {
			a, _ := convo.Marshal(h)
			b, _ := convo.Marshal(h2)
			t.Fatalf("round trip changed the history:\n%s\n%s\nvia %s", a, b, out)
		}
	})
}

// OptionsOf returns the Options a fixture's name asks for: .strict,
// .repair, .placeholder (MediaPlaceholder) and .text (ReasoningText)
// anywhere in it.
func OptionsOf(name string) provider.Options {
	opts := provider.Options{
		Strict: strings.Contains(name, ".strict"),
		Repair: strings.Contains(name, ".repair"),
	}
	if strings.Contains(name, ".placeholder") {
		opts.Media = provider.MediaPlaceholder
	}
	if strings.Contains(name, ".text") {
		opts.Reasoning = provider.ReasoningText
	}
	return opts
}

// EncodeGoldens encodes every canonical history matching pattern (named
// <name>.convo.json) with c and the options its name asks for (OptionsOf),
// and compares the request, indented by one space, or the error, followed
// by the warnings, with <name>.golden.
func EncodeGoldens(t *testing.T, c provider.Codec, pattern string) {
	for _, file := range Files(t, pattern) {
		base := strings.TrimSuffix(file, ".convo.json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			h := History(t, file)
			out, warns, err := c.Encode(h, OptionsOf(filepath.Base(base)))
			var got []byte
			if err != nil {
				got = append(got, "error: "+err.Error()+"\n"...)
			} else {
				got = Indent(t, out, " ")
			}
			got = append(got, "-- warnings --\n"...)
			got = append(got, WarningText(warns)...)
			Golden(t, base+".golden", got)
		})
	}
}

// Replies reads every recorded stream matching pattern with rc and
// compares the message, error and warnings with <name>.golden; where the
// equivalent whole reply <name>.json is there too, DecodeReply of it must
// give the same message.
func Replies(t *testing.T, rc provider.ReplyCodec, pattern string) {
	for _, file := range Files(t, pattern) {
		base := strings.TrimSuffix(file, filepath.Ext(file))
		t.Run(filepath.Base(base), func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, warns, err := rc.ReadStream(f, provider.Options{})
			Golden(t, base+".golden", ReplyText(t, m, warns, err))
			body, rerr := os.ReadFile(base + ".json")
			if rerr != nil {
				return // no whole twin: an error or a cut-off stream
			}
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			d, _, err := rc.DecodeReply(body, provider.Options{})
			if err != nil {
				t.Fatalf("DecodeReply: %v", err)
			}
			if !d.Equal(m) {
				t.Errorf("streamed and whole replies differ:\nwhole:  %s\nstream: %s", MessageJSON(t, d), MessageJSON(t, m))
			}
		})
	}
}

// FuzzAccumulate fuzzes an accumulator of rc, seeded with the recorded
// streams matching pattern, one event a line: whatever the events, it
// must never panic, and every snapshot and the final message (complete or
// not) must encode.
func FuzzAccumulate(f *testing.F, rc provider.ReplyCodec, pattern string) {
	for _, file := range Files(f, pattern) {
		f.Add(ReadFile(f, file))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acc := rc.NewAccumulator(provider.Options{})
		for _, l := range bytes.Split(data, []byte("\n")) {
			_ = acc.Add(provider.Event{Data: l}) // an error stops nothing: later events must not break it either
			if _, err := convo.AppendMessage(nil, acc.Snapshot()); err != nil {
				t.Fatalf("snapshot does not encode: %v", err)
			}
		}
		m, _, _ := acc.Message()
		if _, err := convo.AppendMessage(nil, m); err != nil {
			t.Fatalf("message does not encode: %v", err)
		}
	})
}

// FuzzFixpoint fuzzes c's Decode, seeded with the request bodies matching
// pattern (golden files beside them too: they make seeds as good as any)
// and seeds. It must never panic; a body it accepts must hold in the
// canonical format, and encoding with opts is a fixpoint: what it writes
// is valid JSON that decodes again, and a second trip gives the same bytes.
func FuzzFixpoint(f *testing.F, c provider.Codec, opts provider.Options, pattern string, seeds ...string) {
	for _, file := range Files(f, pattern) {
		f.Add(ReadFile(f, file))
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		h, _, err := c.Decode(body, provider.Options{})
		if err != nil {
			return
		}
		canon, err := convo.Marshal(h)
		if err != nil {
			t.Fatalf("decoded history does not marshal: %v", err)
		}
		if _, err := convo.Unmarshal(canon); err != nil {
			t.Fatalf("decoded history does not reload: %v\n%s", err, canon)
		}
		out, _, err := c.Encode(h, opts)
		if err != nil {
			return // e.g. a media type the API does not take: reported, not a crash
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON: %s", out)
		}
		h2, _, err := c.Decode(out, provider.Options{})
		if err != nil {
			t.Fatalf("encoded request does not decode: %v\n%s", err, out)
		}
		out2, _, err := c.Encode(h2, opts)
		if err != nil {
			t.Fatalf("second encode: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not a fixpoint\n first: %s\nsecond: %s", out, out2)
		}
	})
}

// Cut reads every prefix of every recorded stream matching pattern with
// rc.ReadStream, as a connection cut at that byte would leave it: each
// must either read as a complete reply (the cut fell after the reply's
// end) or fail with an error wrapping provider.ErrIncomplete, with the
// partial message beside it — never another error, never a panic. The
// empty stream is always incomplete. Streams that fail whole (recorded
// errors) are left out.
func Cut(t *testing.T, rc provider.ReplyCodec, pattern string) {
	for _, file := range Files(t, pattern) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data := ReadFile(t, file)
			if _, _, err := rc.ReadStream(bytes.NewReader(data), provider.Options{}); err != nil {
				t.Skipf("the whole stream fails: %v", err)
			}
			// Every byte for small streams, a few hundred cuts for big ones.
			step := max(1, len(data)/512)
			for n := 0; n < len(data); n += step {
				m, _, err := rc.ReadStream(bytes.NewReader(data[:n]), provider.Options{})
				if n == 0 && err == nil {
					t.Fatalf("the empty stream read as complete: %s", MessageJSON(t, m))
				}
				if err != nil && !errors.Is(err, provider.ErrIncomplete) {
					t.Fatalf("cut at byte %d of %d: %v, want an error wrapping provider.ErrIncomplete", n, len(data), err)
				}
				if _, err := convo.AppendMessage(nil, m); err != nil {
					t.Fatalf("cut at byte %d: the partial message does not encode: %v", n, err)
				}
			}
		})
	}
}
