package convo_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
)

// genString draws strings that stress escaping: quotes, backslashes,
// control characters, non-ASCII and astral runes.
func genString() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.StringMatching(`[a-zA-Z0-9 _.-]{0,12}`),
		rapid.String(),
		rapid.SampledFrom([]string{"", "\"", "\\", "\n\t\r", "\x00\x1f", "é", "😀", "<&>", "\u2028"}),
	)
}

func genJSON(depth int) *rapid.Generator[json.RawMessage] {
	return rapid.Custom(func(t *rapid.T) json.RawMessage {
		var v any
		switch k := rapid.IntRange(0, 5).Draw(t, "kind"); {
		case k == 0 || depth == 0:
			v = rapid.SampledFrom([]any{nil, true, 1.5, -3, "s"}).Draw(t, "scalar")
		case k == 1:
			v = genString().Draw(t, "str")
		case k <= 3:
			m := map[string]json.RawMessage{}
			for i, n := 0, rapid.IntRange(0, 3).Draw(t, "n"); i < n; i++ {
				m[genString().Draw(t, "key")] = genJSON(depth-1).Draw(t, "val")
			}
			v = m
		default:
			var a []json.RawMessage
			for i, n := 0, rapid.IntRange(0, 3).Draw(t, "n"); i < n; i++ {
				a = append(a, genJSON(depth-1).Draw(t, "el"))
			}
			v = a
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
}

func genObject() *rapid.Generator[json.RawMessage] {
	return rapid.Custom(func(t *rapid.T) json.RawMessage {
		m := map[string]json.RawMessage{}
		for i, n := 0, rapid.IntRange(1, 3).Draw(t, "n"); i < n; i++ {
			m[rapid.StringMatching(`[a-z]{1,6}`).Draw(t, "k")] = genJSON(2).Draw(t, "v")
		}
		b, _ := json.Marshal(m)
		return b
	})
}

func maybe[T any](t *rapid.T, label string, g *rapid.Generator[T]) T {
	var zero T
	if rapid.Bool().Draw(t, label+"?") {
		return g.Draw(t, label)
	}
	return zero
}

func genNative() *rapid.Generator[convo.Native] {
	return rapid.Custom(func(t *rapid.T) convo.Native {
		if !rapid.Bool().Draw(t, "native?") {
			return nil
		}
		return convo.Native{rapid.SampledFrom([]string{"openai", "gemini", "anthropic"}).Draw(t, "p"): genObject().Draw(t, "obj")}
	})
}

// genCitation draws a citation of any kind, with the fields its kind
// uses, sometimes a span, native members and a newer writer's member.
func genCitation() *rapid.Generator[convo.Citation] {
	return rapid.Custom(func(t *rapid.T) convo.Citation {
		c := convo.Citation{Kind: rapid.SampledFrom([]convo.CitationKind{convo.CiteURL, convo.CiteDocument, convo.CiteFile, "future_kind"}).Draw(t, "kind")}
		c.Title, c.Text = maybe(t, "title", genString()), maybe(t, "quote", genString())
		switch c.Kind {
		case convo.CiteURL:
			c.URL = "https://example.com/" + rapid.StringMatching(`[a-z]{0,8}`).Draw(t, "url")
		case convo.CiteDocument:
			c.Source = rapid.IntRange(0, 5).Draw(t, "source")
			c.URL = maybe(t, "srcurl", genString())
			if rapid.Bool().Draw(t, "range?") {
				c.Unit = rapid.SampledFrom([]string{convo.UnitChar, convo.UnitPage, convo.UnitBlock}).Draw(t, "unit")
				c.Start = rapid.IntRange(0, 1000).Draw(t, "start")
				c.End = c.Start + rapid.IntRange(0, 1000).Draw(t, "len")
			}
		case convo.CiteFile:
			c.FileID = "file-" + rapid.StringMatching(`[a-z0-9]{1,8}`).Draw(t, "fid")
		}
		if rapid.Bool().Draw(t, "span?") {
			s := rapid.IntRange(0, 100).Draw(t, "spanstart")
			c.Span = &convo.Span{Start: s, End: s + rapid.IntRange(0, 100).Draw(t, "spanlen")}
		}
		c.Native = genNative().Draw(t, "cnative")
		if rapid.Bool().Draw(t, "cextra?") {
			c.Extra = convo.Fields{{Key: "x_future", Value: genJSON(2).Draw(t, "cx")}}
		}
		return c
	})
}

func genPart(depth int) *rapid.Generator[convo.Part] {
	return rapid.Custom(func(t *rapid.T) convo.Part {
		types := []convo.PartType{convo.TypeText, convo.TypeImage, convo.TypeAudio, convo.TypeVideo, convo.TypeFile,
			convo.TypeJSON, convo.TypeToolCall, convo.TypeReasoning, convo.TypeRefusal,
			convo.TypeApprovalRequest, convo.TypeApproval, "future_kind"}
		if depth > 0 {
			types = append(types, convo.TypeToolResult)
		}
		p := convo.Part{Type: rapid.SampledFrom(types).Draw(t, "type")}
		switch p.Type {
		case convo.TypeText, convo.TypeRefusal:
			p.Text = genString().Draw(t, "text")
			if p.Type == convo.TypeText {
				p.Citations = rapid.SliceOfN(genCitation(), 0, 3).Draw(t, "citations")
			}
		case convo.TypeImage, convo.TypeAudio, convo.TypeVideo, convo.TypeFile:
			p.MediaType = rapid.SampledFrom([]string{"image/png", "audio/wav", "application/pdf"}).Draw(t, "mt")
			switch rapid.IntRange(0, 2).Draw(t, "src") {
			case 0:
				p.Data = base64.StdEncoding.EncodeToString(rapid.SliceOf(rapid.Byte()).Draw(t, "data"))
			case 1:
				p.URL = "https://example.com/" + rapid.StringMatching(`[a-z]{1,8}`).Draw(t, "url")
			default:
				p.FileID = "file-" + rapid.StringMatching(`[a-z0-9]{1,8}`).Draw(t, "fid")
			}
			p.Name = maybe(t, "name", genString())
		case convo.TypeJSON:
			p.Value = genJSON(3).Draw(t, "value")
		case convo.TypeToolCall:
			p.ID, p.Name = "call_"+rapid.StringMatching(`[a-z0-9]{1,6}`).Draw(t, "id"), rapid.StringMatching(`[a-z_]{1,10}`).Draw(t, "name")
			if rapid.Bool().Draw(t, "raw?") {
				p.ArgsRaw = genString().Draw(t, "argsraw")
			} else {
				p.Args = genObject().Draw(t, "args")
			}
			p.Server = maybe(t, "server", genServer())
		case convo.TypeApprovalRequest:
			p.ID, p.Name = "apr_"+rapid.StringMatching(`[a-z0-9]{1,6}`).Draw(t, "id"), rapid.StringMatching(`[a-z_]{1,10}`).Draw(t, "name")
			p.CallID = maybe(t, "callid", genString())
			p.Args = genObject().Draw(t, "args")
		case convo.TypeApproval:
			p.ID, p.Approved = "apr_x", rapid.Bool().Draw(t, "approved")
			p.Reason = maybe(t, "reason", genString())
		case convo.TypeToolResult:
			p.ID, p.Error = "call_x", rapid.Bool().Draw(t, "err")
			p.Parts = rapid.SliceOfN(genPart(0), 0, 3).Draw(t, "parts")
			p.Server = maybe(t, "server", genServer())
		case convo.TypeReasoning:
			p.Text = maybe(t, "rtext", genString())
			p.Signature = maybe(t, "sig", genString())
			p.Encrypted = maybe(t, "enc", rapid.StringMatching(`[A-Za-z0-9+/]{0,16}=?`))
			p.Provider = maybe(t, "prov", rapid.SampledFrom([]string{"openai", "anthropic", "gemini"}))
			if rapid.Bool().Draw(t, "summary?") {
				p.Summary = rapid.SliceOfN(genString(), 0, 3).Draw(t, "summary")
			}
		default:
			// An unknown part type comes from a newer writer; it is kept raw.
			p.Raw = []byte(`{"type":"future_kind","x":` + string(genJSON(2).Draw(t, "x")) + `}`)
			return p
		}
		if rapid.Bool().Draw(t, "cache?") {
			p.Cache = &convo.Cache{TTL: rapid.SampledFrom([]string{"", "5m", "1h"}).Draw(t, "ttl")}
		}
		p.Native = genNative().Draw(t, "pnative")
		return p
	})
}

func genMessage() *rapid.Generator[convo.Message] {
	return rapid.Custom(func(t *rapid.T) convo.Message {
		m := convo.Message{
			Role:  rapid.SampledFrom([]convo.Role{"system", "user", "assistant", "tool", "summary", "error"}).Draw(t, "role"),
			ID:    maybe(t, "id", genString()),
			Name:  maybe(t, "name", genString()),
			Parts: rapid.SliceOfN(genPart(1), 0, 4).Draw(t, "parts"),
		}
		if rapid.Bool().Draw(t, "time?") {
			m.Time = time.Unix(rapid.Int64Range(0, 4e9).Draw(t, "sec"), rapid.Int64Range(0, 1e9-1).Draw(t, "ns")).UTC()
		}
		m.Phase = convo.Phase(maybe(t, "phase", rapid.SampledFrom([]string{"commentary", "final"})))
		m.Effort = maybe(t, "effort", genString())
		m.Compacted = rapid.IntRange(0, 50).Draw(t, "compacted")
		m.Finish = convo.Finish(maybe(t, "finish", rapid.SampledFrom([]string{"stop", "tool_use", "length"})))
		if rapid.Bool().Draw(t, "origin?") {
			m.Origin = &convo.Origin{Provider: genString().Draw(t, "op"), Model: genString().Draw(t, "om"), ResponseID: genString().Draw(t, "or")}
		}
		if rapid.Bool().Draw(t, "usage?") {
			m.Usage = &convo.Usage{Input: rapid.Int64Range(0, 1e9).Draw(t, "in"), Output: rapid.Int64Range(0, 1e6).Draw(t, "out"), CacheRead: rapid.Int64Range(0, 9).Draw(t, "cr")}
		}
		if rapid.Bool().Draw(t, "cost?") {
			m.Cost = &convo.Cost{USD: convo.Money(rapid.Int64Range(0, 1<<62).Draw(t, "usd"))}
		}
		if rapid.Bool().Draw(t, "meta?") {
			m.Meta = genObject().Draw(t, "meta")
		}
		m.Native = genNative().Draw(t, "native")
		if rapid.Bool().Draw(t, "extra?") {
			m.Extra = convo.Fields{{Key: "x_" + rapid.StringMatching(`[a-z]{1,5}`).Draw(t, "xk"), Value: genJSON(2).Draw(t, "xv")}}
		}
		return m
	})
}

func genHistory() *rapid.Generator[convo.History] {
	return rapid.Custom(func(t *rapid.T) convo.History {
		return rapid.SliceOfN(genMessage(), 0, 8).Draw(t, "messages")
	})
}

// TestPropertyRoundTrip: random histories survive the envelope and JSON
// Lines unchanged, encoding is deterministic, and decode→encode is a fixed
// point.
func TestPropertyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory().Draw(t, "history")
		for name, enc := range map[string]func(convo.History) ([]byte, error){"envelope": convo.Marshal, "lines": convo.MarshalLines} {
			b, err := enc(h)
			if err != nil {
				t.Fatalf("%s encode: %v", name, err)
			}
			again, _ := enc(h)
			if !bytes.Equal(b, again) {
				t.Fatalf("%s encoding is not deterministic", name)
			}
			back, err := convo.Unmarshal(b)
			if err != nil {
				t.Fatalf("%s decode: %v\n%s", name, err, b)
			}
			if len(h) > 0 && !back.Equal(h) {
				t.Fatalf("%s round trip changed the history:\n%s", name, b)
			}
			b2, err := enc(back)
			if err != nil || !bytes.Equal(b, b2) {
				t.Fatalf("%s decode→encode is not a fixed point: %v\n%s\n%s", name, err, b, b2)
			}
		}
	})
}

// TestPropertyClone: a clone is equal and shares nothing mutable.
func TestPropertyClone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMessage().Draw(t, "m")
		c := m.Clone()
		if !c.Equal(m) {
			t.Fatal("clone differs")
		}
		before, _ := m.MarshalJSON()
		for i := range c.Parts {
			c.Parts[i].Text += "!"
			if len(c.Parts[i].Args) > 0 {
				c.Parts[i].Args[0] = ' '
			}
			// Citations are part of the deep copy too: a shared array
			// or span would carry this edit back to the original.
			for j := range c.Parts[i].Citations {
				cj := &c.Parts[i].Citations[j]
				cj.URL += "!"
				if cj.Span != nil {
					cj.Span.End++
				}
				for k := range cj.Extra {
					if len(cj.Extra[k].Value) > 0 {
						cj.Extra[k].Value[0] = ' '
					}
				}
			}
		}
		if len(c.Meta) > 0 {
			c.Meta[0] = ' '
		}
		after, _ := m.MarshalJSON()
		if !bytes.Equal(before, after) {
			t.Fatal("editing the clone changed the original")
		}
	})
}

// TestPropertyEstimatedBytes: the estimate stays close to the real size;
// only escaping (which the generator stresses) makes them differ.
func TestPropertyEstimatedBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMessage().Draw(t, "m")
		b, err := m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		est := m.EstimatedBytes()
		if est < len(b)/2-8 || est > len(b)+len(b)/4+16 {
			t.Fatalf("estimate %d for %d bytes", est, len(b))
		}
	})
}

// genServer draws a provider-run tool kind, listed or not.
func genServer() *rapid.Generator[string] {
	return rapid.SampledFrom([]string{convo.ServerWebSearch, convo.ServerCodeExecution, convo.ServerMCP, "x_future_tool"})
}

// TestPropertyAppendHistory: AppendHistory appends exactly Marshal's bytes
// after whatever dst held, and into a buffer handed back after an earlier
// call it writes without allocating per message.
func TestPropertyAppendHistory(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory().Draw(t, "h")
		prefix := []byte(rapid.StringN(0, 8, -1).Draw(t, "prefix"))
		want, err := convo.Marshal(h)
		got, err2 := convo.AppendHistory(bytes.Clone(prefix), h)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("Marshal: %v, AppendHistory: %v", err, err2)
		}
		if err != nil {
			if !bytes.Equal(got, prefix) {
				t.Fatalf("on an error AppendHistory returned %q, not dst %q", got, prefix)
			}
			return
		}
		if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
			t.Fatalf("AppendHistory wrote\n%s\nafter %q, Marshal\n%s", got[min(len(prefix), len(got)):], prefix, want)
		}
	})
	// Handed back, the buffer is written without allocating per message:
	// what is left is per document (the reader that checks tool call
	// arguments), the same for one turn and for fifty.
	turn := convo.History{convo.User("hi", convo.Image("image/png", []byte{1, 2, 3})),
		convo.Assistant("", convo.ToolCall("c1", "f", json.RawMessage(`{"a": [1, 2]}`)))}
	var allocs []float64
	for _, n := range []int{1, 50} {
		var h convo.History
		for range n {
			h = append(h, turn...)
		}
		buf, err := convo.AppendHistory(nil, h)
		if err != nil {
			t.Fatal(err)
		}
		allocs = append(allocs, testing.AllocsPerRun(20, func() { buf, _ = convo.AppendHistory(buf[:0], h) }))
	}
	if allocs[0] > 1 || allocs[1] != allocs[0] {
		t.Errorf("AppendHistory into a buffer large enough allocated %v times for one turn, %v for fifty", allocs[0], allocs[1])
	}
}

// countWriter records the bytes written to it and the longest write.
type countWriter struct {
	bytes.Buffer
	writes, longest int
}

func (w *countWriter) Write(p []byte) (int, error) {
	w.writes++
	w.longest = max(w.longest, len(p))
	return w.Buffer.Write(p)
}

// TestWriteMessageProperty: WriteMessage writes the bytes AppendMessage
// appends, or fails with its error, however its long strings are cut:
// any message, pieces of 1 to 64 bytes (the strings drawn stress escaping,
// multi-byte and invalid UTF-8, so a cut inside a rune would show).
func TestWriteMessageProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := genMessage().Draw(t, "m")
		if rapid.Bool().Draw(t, "long") {
			m.Parts = append(m.Parts, convo.Text(rapid.StringN(0, 400, -1).Draw(t, "text")))
		}
		piece := rapid.IntRange(1, 64).Draw(t, "piece")
		want, werr := convo.AppendMessage(nil, m)
		var got countWriter
		err := convo.WriteMessagePieces(&got, m, piece)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) {
			t.Fatalf("error %v, AppendMessage's %v", err, werr)
		}
		if err == nil && !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("wrote\n%s\nAppendMessage appends\n%s", got.Bytes(), want)
		}
	})
}

// TestWriteMessageLong: a message with a long text, or with many short
// parts, is written in pieces of at most about 64 KiB, never as a whole.
func TestWriteMessageLong(t *testing.T) {
	text := convo.Assistant(strings.Repeat("Drizzle all morning — ☂ — \"clearing\" by the afternoon.\n", 1<<15))
	var parts convo.Message
	parts.Role = convo.RoleTool
	for i := range 20000 {
		parts.Parts = append(parts.Parts, convo.ToolResult(fmt.Sprint("call_", i), "weather", "12 °C, drizzle"))
	}
	for _, m := range []convo.Message{text, parts} {
		var w countWriter
		if err := convo.WriteMessage(&w, m); err != nil {
			t.Fatal(err)
		}
		want, err := convo.AppendMessage(nil, m)
		if err != nil || !bytes.Equal(w.Bytes(), want) {
			t.Fatalf("WriteMessage wrote %d bytes, not AppendMessage's %d (%v)", w.Len(), len(want), err)
		}
		if w.writes < len(want)/(128<<10) || w.longest > 128<<10 {
			t.Fatalf("%d bytes written in %d writes, the longest %d", w.Len(), w.writes, w.longest)
		}
	}
}
