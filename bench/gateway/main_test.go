package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo/store/sqlite"
)

// TestPlaceOrder checks that every round runs every mode once and that
// over as many rounds as modes every mode runs in every place once.
func TestPlaceOrder(t *testing.T) {
	for n := 1; n <= 7; n++ {
		at := make([][]int, n) // at[mode][place]: how often
		for i := range at {
			at[i] = make([]int, n)
		}
		for r := range n {
			o := placeOrder(r, n)
			seen := map[int]bool{}
			for place, i := range o {
				if i < 0 || i >= n || seen[i] {
					t.Fatalf("n=%d round %d: order %v is not a permutation", n, r, o)
				}
				seen[i] = true
				at[i][place]++
			}
		}
		for i := range at {
			for place, k := range at[i] {
				if k != 1 {
					t.Errorf("n=%d: mode %d ran %d times in place %d over %d rounds, want 1", n, i, k, place, n)
				}
			}
		}
	}
}

// TestUnrecordedAsksForNoRecording checks that the unrecorded mode's
// client, and only it, sends Convo-Record: off.
func TestUnrecordedAsksForNoRecording(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- r.Header.Get("Convo-Record")
		_, _ = io.WriteString(w, "event: ping\ndata: {}\n\n")
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, sp := range specs("", true) {
		name, want := sp.mode+sp.label, ""
		if sp.label == unrecordedLabel {
			want = "off"
		}
		tg, done := newTarget(&proc{name: name, addr: addr, spec: sp}, "text", 1)
		tg.exchange(make([]byte, 1024))
		done()
		if h := <-got; h != want {
			t.Errorf("%s: Convo-Record %q, want %q", name, h, want)
		}
		if len(tg.res.total) != 1 {
			t.Errorf("%s: %d exchanges measured, want 1", name, len(tg.res.total))
		}
	}
}

// TestTextStreams checks the text set: the Chat stream is the recording's
// 303 chunks and [DONE], and the Anthropic stream derived from it carries
// the same text, delta for delta, and the recording's output tokens,
// written as the recorded Anthropic stream it is framed by writes its
// events: that stream's own message_start first, each delta's members in
// the wire's order.
func TestTextStreams(t *testing.T) {
	sets, err := loadStreams(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	text := sets["text"]
	if len(text.chat) != 304 || string(text.chat[303]) != "data: [DONE]\n\n" {
		t.Fatalf("chat stream: %d events, last %q; want 303 chunks and [DONE]", len(text.chat), text.chat[len(text.chat)-1])
	}
	var chatText, anthText strings.Builder
	var deltas int
	for _, ev := range text.chat[:303] {
		var c struct {
			Choices []struct {
				Delta struct{ Content string } `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(string(ev), "data: "), "\n\n")), &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			chatText.WriteString(ch.Delta.Content)
		}
	}
	var outTokens int
	for _, ev := range text.anthropic {
		name, data, ok := strings.Cut(string(ev), "\ndata: ")
		if !ok || !strings.HasPrefix(name, "event: ") || !strings.HasSuffix(data, "\n\n") {
			t.Fatalf("not an SSE event: %q", ev)
		}
		var e struct {
			Type  string
			Delta struct{ Type, Text string }
			Usage struct {
				Output int `json:"output_tokens"`
			}
		}
		if err := json.Unmarshal([]byte(data), &e); err != nil || "event: "+e.Type != name {
			t.Fatalf("event %q: type %q, %v", name, e.Type, err)
		}
		if e.Type == "content_block_delta" {
			if !strings.HasPrefix(data, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`) {
				t.Fatalf("delta not in the wire's member order: %s", data)
			}
			deltas++
			anthText.WriteString(e.Delta.Text)
		}
		if e.Type == "message_delta" {
			outTokens = e.Usage.Output
		}
	}
	if deltas != 300 || anthText.String() != chatText.String() || chatText.Len() != 1730 {
		t.Errorf("anthropic stream: %d deltas, %d characters, same text %v; want 300 deltas of the chat stream's 1730 bytes", deltas, anthText.Len(), anthText.String() == chatText.String())
	}
	frame, err := os.ReadFile(filepath.Join("..", "..", "provider", "anthropic", "testdata", "recorded", "llm-anthropic-prefill-stop-sequence.sse"))
	if err != nil {
		t.Fatal(err)
	}
	if first := string(text.anthropic[0]); !strings.HasPrefix(string(frame), first) {
		t.Errorf("anthropic stream starts %q, not with its frame's message_start", first)
	}
	if outTokens != 300 {
		t.Errorf("anthropic stream: output_tokens %d, want the recording's 300", outTokens)
	}
}

// TestModesEndToEnd runs every mode's client through its proxy, in this
// process, to the upstream replaying each stream set, and checks each
// exchange succeeds with the stream the mode should get, and that the
// gateway recorded exactly the exchanges whose client did not ask it not
// to, with its spool and without.
func TestModesEndToEnd(t *testing.T) {
	sets, err := loadStreams(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(upstream(sets))
	defer up.Close()
	upAddr := strings.TrimPrefix(up.URL, "http://")
	for _, set := range []string{"text", "tool"} {
		for _, sp := range specs("", true) {
			t.Run(set+"/"+sp.mode+sp.label, func(t *testing.T) {
				args := []string{upAddr, set}
				var h http.Handler
				var recorded func() int64
				if sp.mode == "reverse" {
					h = reverseProxy(upAddr + setPath(args))
				} else {
					dir := t.TempDir()
					st, err := sqlite.Open(context.Background(), filepath.Join(dir, "gw.db"))
					if err != nil {
						t.Fatal(err)
					}
					defer st.Close()
					spool := filepath.Join(dir, "spool")
					if sp.spoolOff {
						spool = ""
					}
					gw, err := newGateway(st, "http://"+upAddr+setPath(args), spool)
					if err != nil {
						t.Fatal(err)
					}
					h = withStats(gw)
					recorded = func() int64 {
						ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
						defer cancel()
						if err := gw.Close(ctx); err != nil {
							t.Fatal(err)
						}
						s := gw.Stats()
						if s.Dropped+s.Failed != 0 {
							t.Errorf("dropped %d, failed %d", s.Dropped, s.Failed)
						}
						return s.Recorded
					}
				}
				var body strings.Builder
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					h.ServeHTTP(&teeWriter{w, &body}, r)
				}))
				defer srv.Close()
				m := &proc{name: sp.mode + sp.label, addr: strings.TrimPrefix(srv.URL, "http://"), spec: sp}
				tg, done := newTarget(m, set, 3)
				for range 3 {
					tg.exchange(make([]byte, 1024))
				}
				done()
				failMu.Lock()
				failed := failures[m.name]
				delete(failures, m.name)
				failMu.Unlock()
				if failed != 0 || len(tg.res.total) != 3 {
					t.Fatalf("%d exchanges measured, %d failed; want 3, 0", len(tg.res.total), failed)
				}
				want := map[string]string{"text": "Harmony", "tool": "get_weather"}[set]
				if got := body.String(); !strings.Contains(got, want) {
					t.Errorf("reply does not carry %q: %.200q", want, got)
				}
				if wantChat := set == "text" || sp.mode == "translate"; wantChat != strings.Contains(body.String(), "chat.completion.chunk") {
					t.Errorf("reply in OpenAI Chat's format %v, want %v", !wantChat, wantChat)
				}
				if recorded != nil {
					wantRec := int64(3)
					if sp.noRecord {
						wantRec = 0
					}
					// The load generator waits for the recordings and reads
					// what the process recorded.
					if st := m.drain(nil, 3); st == nil || st.Recorded != wantRec {
						t.Errorf("stats from %s: %+v, want %d recorded", statsPath, st, wantRec)
					}
					if n := recorded(); n != wantRec {
						t.Errorf("recorded %d exchanges, want %d", n, wantRec)
					}
				}
			})
		}
	}
}

// teeWriter keeps a copy of what a handler writes to its client.
type teeWriter struct {
	http.ResponseWriter
	copy *strings.Builder
}

func (w *teeWriter) Write(b []byte) (int, error) {
	w.copy.Write(b)
	return w.ResponseWriter.Write(b)
}

func (w *teeWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// TestSpread checks the median and range of the rounds' CPU ratios and
// first-byte differences, odd and even in number, and nothing for a mode
// without rounds.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want string
	}{
		{nil, ""},
		{[]float64{1.5}, "1.50× (1.50 … 1.50)"},
		{[]float64{1.7, 1.2, 1.5}, "1.50× (1.20 … 1.70)"},
		{[]float64{1.8, 1.2, 1.4, 1.6}, "1.50× (1.20 … 1.80)"},
	} {
		if got := spread(c.in); got != c.want {
			t.Errorf("spread(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	ds := []time.Duration{130 * time.Microsecond, -20 * time.Microsecond, 43 * time.Microsecond, 50 * time.Microsecond}
	if got, want := spreadTimes(ds), "+46 µs (-20 µs … +130 µs)"; got != want {
		t.Errorf("spreadTimes(%v) = %q, want %q", ds, got, want)
	}
	if got := spreadTimes(nil); got != "" {
		t.Errorf("spreadTimes(nil) = %q, want nothing", got)
	}
}
