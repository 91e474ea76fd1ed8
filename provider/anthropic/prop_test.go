package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var genText = rapid.OneOf(
	rapid.StringMatching(`[a-zA-Z0-9 .,!?]{0,40}`),
	rapid.SampledFrom([]string{"", "line\nbreak", `quote " and \ slash`, "émoji 😀 «ok»", "tab\there"}),
)

// genPart draws a part an Anthropic request can carry.
func genPart(t *rapid.T, role convo.Role, label string) convo.Part {
	switch role {
	case convo.RoleAssistant:
		switch rapid.IntRange(0, 3).Draw(t, label+"kind") {
		case 0:
			return convo.Part{Type: convo.TypeReasoning, Text: genText.Draw(t, label+"thought"),
				Signature: rapid.StringMatching(`[A-Za-z0-9+/]{4,20}`).Draw(t, label+"sig"), Provider: ProviderID}
		case 1:
			return convo.Part{Type: convo.TypeReasoning, Encrypted: rapid.StringMatching(`[A-Za-z0-9+/]{4,20}`).Draw(t, label+"data"), Provider: ProviderID}
		}
	default:
		switch rapid.IntRange(0, 4).Draw(t, label+"kind") {
		case 0:
			return convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: "iVBORw0KGgo="}
		case 1:
			return convo.Part{Type: convo.TypeFile, MediaType: "application/pdf", Name: genText.Draw(t, label+"title"), Data: "JVBERi0xLjQK"}
		}
	}
	p := convo.Text(genText.Draw(t, label+"text"))
	if role == convo.RoleAssistant {
		p.Citations = rapid.SliceOfN(genCitation(label), 0, 3).Draw(t, label+"cites")
	}
	if rapid.Bool().Draw(t, label+"cache") {
		p.Cache = &convo.Cache{TTL: rapid.SampledFrom([]string{"", "5m", "1h"}).Draw(t, label+"ttl")}
	}
	return p
}

// genCitation draws a citation Anthropic has a form for: a document range
// or a web result with its encrypted index.
func genCitation(label string) *rapid.Generator[convo.Citation] {
	return rapid.Custom(func(t *rapid.T) convo.Citation {
		c := convo.Citation{Text: genText.Draw(t, label+"quote"), Title: genText.Draw(t, label+"ctitle")}
		if rapid.Bool().Draw(t, label+"web") {
			c.Kind, c.URL = convo.CiteURL, "https://example.com/"+rapid.StringMatching(`[a-z]{0,6}`).Draw(t, label+"url")
			c.Native = convo.Native{ProviderID: []byte(`{"encrypted_index":"Eo8B"}`)}
			return c
		}
		c.Kind, c.Source = convo.CiteDocument, rapid.IntRange(0, 3).Draw(t, label+"src")
		c.Unit = rapid.SampledFrom([]string{convo.UnitChar, convo.UnitPage, convo.UnitBlock}).Draw(t, label+"unit")
		c.Start = rapid.IntRange(0, 50).Draw(t, label+"start")
		c.End = c.Start + rapid.IntRange(0, 50).Draw(t, label+"len")
		return c
	})
}

// genHistory draws a valid history: a system prompt, then user turns,
// assistant turns (some calling tools) and the tool results they need.
func genHistory(t *rapid.T) convo.History {
	var h convo.History
	if rapid.Bool().Draw(t, "system") {
		h = append(h, convo.System(genText.Draw(t, "sys")))
	}
	turns := rapid.IntRange(1, 6).Draw(t, "turns")
	call := 0
	for i := 0; i < turns; i++ {
		u := convo.Message{Role: convo.RoleUser}
		for j := rapid.IntRange(1, 3).Draw(t, "uparts"); j > 0; j-- {
			u.Parts = append(u.Parts, genPart(t, convo.RoleUser, fmt.Sprintf("u%d.%d.", i, j)))
		}
		h = append(h, u)
		a := convo.Message{Role: convo.RoleAssistant}
		for j := rapid.IntRange(0, 2).Draw(t, "aparts"); j > 0; j-- {
			a.Parts = append(a.Parts, genPart(t, convo.RoleAssistant, fmt.Sprintf("a%d.%d.", i, j)))
		}
		a.Parts = append(a.Parts, convo.Text("answer "+fmt.Sprint(i)))
		var results []convo.Part
		for j := rapid.IntRange(0, 3).Draw(t, "calls"); j > 0; j-- {
			call++
			id := rapid.SampledFrom([]string{"toolu_%d", "call.%d/x", "fc-%d"}).Draw(t, "idform")
			id = fmt.Sprintf(id, call)
			args, _ := json.Marshal(map[string]any{"q": genText.Draw(t, "arg"), "n": call})
			a.Parts = append(a.Parts, convo.ToolCall(id, "tool_"+fmt.Sprint(call%2), args))
			r := convo.ToolResult(id, "tool_"+fmt.Sprint(call%2), genText.Draw(t, "out"))
			r.Error = rapid.Bool().Draw(t, "err")
			results = append(results, r)
		}
		h = append(h, a)
		if len(results) > 0 {
			h = append(h, convo.ToolResults(results...))
		}
	}
	return h
}

// TestPropertyEncodeDecode: for any valid history, encoding is a fixpoint
// of decode∘encode, and what Anthropic can carry comes back: texts,
// reasoning with signatures and redacted data in order, tool calls with
// their (sanitised) ids and arguments, results with their error flags.
func TestPropertyEncodeDecode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t)
		if err := h.Validate(); err != nil {
			t.Fatalf("generator made an invalid history: %v", err)
		}
		out, _, err := Messages().Encode(h, provider.Options{})
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		back, _, err := Messages().Decode(out, provider.Options{})
		if err != nil {
			t.Fatalf("decode: %v\n%s", err, out)
		}
		again, _, err := Messages().Encode(back, provider.Options{})
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("not a fixpoint (%v)\n first: %s\nsecond: %s", err, out, again)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("decoded history invalid: %v", err)
		}
		if got, want := signature(back), signature(h); got != want {
			t.Fatalf("content changed\n got: %s\nwant: %s", got, want)
		}
	})
}

// signature lists, in order, what a history says to Anthropic, ignoring
// how it is split into messages.
func signature(h convo.History) string {
	var b strings.Builder
	for _, m := range h {
		for _, p := range m.Parts {
			switch p.Type {
			case convo.TypeText:
				fmt.Fprintf(&b, "text %q %v", p.Text, p.Cache != nil)
				for _, c := range p.Citations {
					fmt.Fprintf(&b, " cite %s %q %q %d %s %d-%d %q %s", c.Kind, c.URL, c.Title, c.Source, c.Unit, c.Start, c.End, c.Text, c.Native[ProviderID])
				}
				b.WriteString("|")
			case convo.TypeReasoning:
				fmt.Fprintf(&b, "reasoning %q %q %q|", p.Text, p.Signature, p.Encrypted)
			case convo.TypeToolCall:
				fmt.Fprintf(&b, "call %s %s %s|", provider.SanitizeID(p.ID, 0), p.Name, p.Args)
			case convo.TypeToolResult:
				fmt.Fprintf(&b, "result %s %v %q|", provider.SanitizeID(p.ID, 0), p.Error, p.Parts[0].Text)
			default:
				fmt.Fprintf(&b, "%s %s %s %s|", p.Type, p.MediaType, p.Data, p.Name)
			}
		}
	}
	return b.String()
}

// TestPropertyStreamSplits: however the API splits text, thinking,
// signature and tool input into deltas, the accumulated message is the
// same as the non-streamed reply.
func TestPropertyStreamSplits(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		thinking := genText.Draw(t, "thinking")
		sig := rapid.StringMatching(`[A-Za-z0-9+/=]{1,30}`).Draw(t, "sig")
		text := genText.Draw(t, "text")
		args := `{"city":"` + rapid.StringMatching(`[a-z ]{0,12}`).Draw(t, "city") + `","n":[1,2]}`
		body := `{"id":"m1","type":"message","role":"assistant","model":"x","content":[` +
			`{"type":"thinking","thinking":` + jsonString(thinking) + `,"signature":` + jsonString(sig) + `},` +
			`{"type":"text","text":` + jsonString(text) + `},` +
			`{"type":"tool_use","id":"toolu_1","name":"f","input":` + args + `}],` +
			`"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":9}}`
		want, _, err := Messages().DecodeReply([]byte(body), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		evs := []string{`{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"x","usage":{"input_tokens":3,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`}
		for _, piece := range split(t, thinking, "t") {
			evs = append(evs, `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":`+jsonString(piece)+`}}`)
		}
		for _, piece := range split(t, sig, "s") {
			evs = append(evs, `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":`+jsonString(piece)+`}}`)
		}
		evs = append(evs, `{"type":"content_block_stop","index":0}`,
			`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
		for _, piece := range split(t, text, "x") {
			evs = append(evs, `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":`+jsonString(piece)+`}}`)
		}
		evs = append(evs, `{"type":"content_block_stop","index":1}`,
			`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`)
		for _, piece := range split(t, args, "a") {
			evs = append(evs, `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":`+jsonString(piece)+`}}`)
		}
		evs = append(evs, `{"type":"content_block_stop","index":2}`,
			`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}`,
			`{"type":"message_stop"}`)
		acc, err := feed(evs...)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := acc.Message()
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			g, _ := convo.AppendMessage(nil, got)
			w, _ := convo.AppendMessage(nil, want)
			t.Fatalf("got  %s\nwant %s", g, w)
		}
	})
}

// split cuts s into random pieces at rune boundaries.
func split(t *rapid.T, s, label string) []string {
	runes := []rune(s)
	var out []string
	for len(runes) > 0 {
		n := rapid.IntRange(1, len(runes)).Draw(t, label)
		out = append(out, string(runes[:n]))
		runes = runes[n:]
	}
	return out
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
