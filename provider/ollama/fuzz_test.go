package ollama

import (
	"encoding/json"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
	"pgregory.net/rapid"
)

// FuzzDecode feeds arbitrary bodies to Decode. It must never panic, and a
// body it accepts must survive a round trip: encoding the history (when
// that needs no warning) and decoding the result gives the same history.
func FuzzDecode(f *testing.F) {
	codectest.FuzzRoundTrip(f, Chat(), "testdata/requests/*.json",
		`[{"role":"tool","content":"Error: x","tool_call_id":""}]`,
		`{"messages":[{"role":"USER","content":null,"images":null,"tool_calls":[{"function":{"name":"f"}}]}]}`,
	)
}

// TestConvertBack checks that what Ollama can carry comes back unchanged
// from a trip through its wire format: random histories of system, user,
// assistant and tool messages with the parts Ollama has.
func TestConvertBack(t *testing.T) {
	images := []convo.Part{
		{Type: convo.TypeImage, MediaType: "image/png", Data: "iVBORw0KGgoAAAANSUhEUg=="},
		{Type: convo.TypeImage, MediaType: "image/jpeg", Data: "/9j/4AAQSkZJRg=="},
	}
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.StringMatching(`[a-zA-Z0-9 "\\\n\t<>&é€😀]{1,20}`)
		name := rapid.StringMatching(`[a-z_]{1,8}`)
		var h convo.History
		if rapid.Bool().Draw(t, "system") {
			h = append(h, convo.System(text.Draw(t, "sys")))
		}
		for turn := range rapid.IntRange(1, 4).Draw(t, "turns") {
			u := convo.User(text.Draw(t, "user"))
			for range rapid.IntRange(0, 2).Draw(t, "images") {
				u.Parts = append(u.Parts, rapid.SampledFrom(images).Draw(t, "image"))
			}
			h = append(h, u)
			a := convo.Message{Role: convo.RoleAssistant}
			if rapid.Bool().Draw(t, "thinks") {
				a.Parts = append(a.Parts, convo.Part{Type: convo.TypeReasoning, Text: text.Draw(t, "thinking"), Provider: ProviderID})
			}
			if rapid.Bool().Draw(t, "says") {
				a.Parts = append(a.Parts, convo.Text(text.Draw(t, "answer")))
			}
			ncalls := rapid.IntRange(0, 3).Draw(t, "calls")
			for k := range ncalls {
				args, _ := json.Marshal(map[string]string{"q": text.Draw(t, "arg")})
				a.Parts = append(a.Parts, convo.ToolCall("call_"+string(rune('a'+turn))+string(rune('0'+k)), name.Draw(t, "name"), args))
			}
			h = append(h, a)
			for _, c := range a.ToolCalls() {
				r := convo.ToolResult(c.ID, c.Name, text.Draw(t, "output"))
				if rapid.Bool().Draw(t, "fails") {
					r.Error = true
				}
				h = append(h, convo.ToolResults(r))
			}
		}
		out, warns, err := Chat().Encode(h, provider.Options{Strict: true})
		if err != nil {
			t.Fatalf("encode: %v %v", err, warns)
		}
		back, _, err := Chat().Decode(out, provider.Options{Strict: true})
		if err != nil {
			t.Fatalf("decode %s: %v", out, err)
		}
		if !h.Equal(back) {
			a, _ := convo.Marshal(h)
			b, _ := convo.Marshal(back)
			t.Fatalf("changed:\n%s\n%s\nvia %s", a, b, out)
		}
	})
}
