package bedrock

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
	"pgregory.net/rapid"
)

// genPart draws a part a message of role r may hold.
func genPart(t *rapid.T, r convo.Role, label string) convo.Part {
	text := rapid.StringMatching(`[a-zA-Z0-9 .,'"\\\n\t{}-]{0,12}`).Draw(t, label+".text")
	providers := []string{ProviderID, "anthropic", "openai", "gemini", ""}
	switch r {
	case convo.RoleAssistant:
		switch rapid.IntRange(0, 5).Draw(t, label+".kind") {
		case 0:
			return convo.ToolCall(rapid.StringMatching(`[a-z_:.|0-9]{0,70}`).Draw(t, label+".id"),
				rapid.SampledFrom([]string{"f", "g"}).Draw(t, label+".name"), json.RawMessage(`{"q":1}`))
		case 1:
			return convo.Part{Type: convo.TypeReasoning, Text: text, Provider: rapid.SampledFrom(providers).Draw(t, label+".provider"),
				Signature: rapid.SampledFrom([]string{"", "c2ln"}).Draw(t, label+".sig")}
		case 2:
			return convo.Part{Type: convo.TypeReasoning, Encrypted: "cmVk", Provider: rapid.SampledFrom(providers).Draw(t, label+".provider")}
		case 3:
			return convo.Refusal(text)
		}
	case convo.RoleTool:
		inner := []convo.Part{convo.Text(text)}
		if rapid.Bool().Draw(t, label+".json") {
			inner = append(inner, convo.JSON(json.RawMessage(`{"ok":true}`)))
		}
		if rapid.Bool().Draw(t, label+".audio") {
			inner = append(inner, convo.Audio("audio/wav", []byte("RIFF")))
		}
		return convo.Part{Type: convo.TypeToolResult, ID: rapid.StringMatching(`[a-z_:.|0-9]{0,70}`).Draw(t, label+".id"),
			Name: rapid.SampledFrom([]string{"f", "g"}).Draw(t, label+".name"), Parts: inner, Error: rapid.Bool().Draw(t, label+".error")}
	default:
		switch rapid.IntRange(0, 5).Draw(t, label+".kind") {
		case 0:
			return convo.Image(rapid.SampledFrom([]string{"image/png", "image/jpeg", "image/tiff", ""}).Draw(t, label+".mime"), []byte("\x89PNG\r\n\x1a\n"))
		case 1:
			return convo.ImageURL("image/png", rapid.SampledFrom([]string{"s3://b/k.png", "https://x/y.png"}).Draw(t, label+".url"))
		case 2:
			return convo.File("application/pdf", rapid.StringMatching(`[a-zA-Z .()_-]{0,10}`).Draw(t, label+".fname"), []byte("%PDF"))
		case 3:
			return convo.JSON(json.RawMessage(`[1,2]`))
		}
	}
	p := convo.Text(text)
	if rapid.Bool().Draw(t, label+".cache") {
		p = p.WithCache(rapid.SampledFrom([]string{"", "5m", "1h"}).Draw(t, label+".ttl"))
	}
	return p
}

func genHistory(t *rapid.T) convo.History {
	roles := []convo.Role{convo.RoleSystem, convo.RoleUser, convo.RoleAssistant, convo.RoleTool, convo.RoleSummary, convo.RoleError}
	n := rapid.IntRange(0, 12).Draw(t, "messages")
	h := make(convo.History, 0, n)
	for i := range n {
		r := rapid.SampledFrom(roles).Draw(t, fmt.Sprintf("m%d.role", i))
		m := convo.Message{Role: r}
		if r == convo.RoleSummary {
			m.Compacted = 1
		}
		if rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("m%d.named", i)) == 0 {
			m.Name = "alice"
		}
		k := rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("m%d.parts", i))
		for j := range k {
			m.Parts = append(m.Parts, genPart(t, r, fmt.Sprintf("m%d.p%d", i, j)))
		}
		h = append(h, m)
	}
	return h
}

// TestEncodeProperties: whatever the history, with repair and placeholders
// on, Encode gives a request Bedrock's rules allow (strict alternation
// starting with user, no empty content, one-member blocks, valid tool ids,
// every result answering a call of the message before), and decoding that
// request and encoding it again gives the same request.
func TestEncodeProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t)
		opts := provider.Options{Repair: true, Media: provider.MediaPlaceholder,
			Reasoning: rapid.SampledFrom([]provider.ReasoningMode{provider.ReasoningDrop, provider.ReasoningText}).Draw(t, "reasoning")}
		body, _, err := converse{}.Encode(h, opts)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		checkShape(t, body)
		back, _, err := converse{}.Decode(body, provider.Options{})
		if err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		if err := back.Validate(); err != nil {
			t.Fatalf("decoded history: %v\n%s", err, body)
		}
		again, warns, err := converse{}.Encode(back, provider.Options{})
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		for _, w := range warns {
			// Decoding moves text before tool results after them; nothing
			// else changes on the second pass.
			t.Fatalf("re-encode warned: %v\n%s", w, body)
		}
		if !codectest.SameJSON(t, body, again) {
			t.Fatalf("not stable:\n%s\n%s", body, again)
		}
	})
}
