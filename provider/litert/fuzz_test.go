package litert

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
	codectest.FuzzRoundTrip(f, Conversation(), "testdata/requests/*.json",
		`[{"role":"tool","content":"Error: x"},{"role":"model","type":"function","function":{"name":"f"},"id":""}]`,
		`{"messages":[{"role":"user","content":{"type":"image","path":"/a","blob":"AAAA"},"channels":{"x":"y"},"tool_calls":null}]}`,
	)
}

// TestConvertBack checks that what LiteRT-LM can carry comes back
// unchanged from a trip through its wire format.
func TestConvertBack(t *testing.T) {
	media := []convo.Part{
		{Type: convo.TypeImage, MediaType: "image/png", Data: "iVBORw0KGgoAAAANSUhEUg=="},
		{Type: convo.TypeImage, MediaType: "image/jpeg", URL: "file:///sdcard/DCIM/cat%201.jpg"},
		{Type: convo.TypeAudio, MediaType: "audio/wav", Data: "UklGRiQAAABXQVZFZm10IBAAAAA="},
		{Type: convo.TypeAudio, MediaType: "audio/mpeg", URL: "file:clips%2Fa.mp3"},
	}
	values := []string{`{"temp_c":18}`, `[1,2,3]`, `42`, `{"a":{"b":[true,null]}}`}
	rapid.Check(t, func(t *rapid.T) {
		text := rapid.StringMatching(`[a-zA-Z0-9 "\\\n\t<>&é€😀]{1,20}`)
		name := rapid.StringMatching(`[a-z_]{1,8}`)
		var h convo.History
		if rapid.Bool().Draw(t, "system") {
			h = append(h, convo.System(text.Draw(t, "sys")))
		}
		for turn := range rapid.IntRange(1, 4).Draw(t, "turns") {
			u := convo.User(text.Draw(t, "user"))
			for range rapid.IntRange(0, 2).Draw(t, "media") {
				u.Parts = append(u.Parts, rapid.SampledFrom(media).Draw(t, "part"))
			}
			h = append(h, u)
			a := convo.Message{Role: convo.RoleAssistant}
			if rapid.Bool().Draw(t, "thinks") {
				a.Parts = append(a.Parts, convo.Part{Type: convo.TypeReasoning, Text: text.Draw(t, "thought"), Provider: ProviderID})
			}
			if rapid.Bool().Draw(t, "says") {
				a.Parts = append(a.Parts, convo.Text(text.Draw(t, "answer")))
			}
			for k := range rapid.IntRange(0, 3).Draw(t, "calls") {
				args, _ := json.Marshal(map[string]string{"q": text.Draw(t, "arg")})
				a.Parts = append(a.Parts, convo.ToolCall("call_"+string(rune('a'+turn))+string(rune('0'+k)), name.Draw(t, "name"), args))
			}
			h = append(h, a)
			if calls := a.ToolCalls(); len(calls) > 0 {
				var results []convo.Part
				for _, c := range calls {
					var r convo.Part
					if rapid.Bool().Draw(t, "json") {
						r = convo.ToolResultParts(c.ID, c.Name, convo.JSON(json.RawMessage(rapid.SampledFrom(values).Draw(t, "value"))))
					} else {
						r = convo.ToolResult(c.ID, c.Name, text.Draw(t, "output"))
					}
					r.Error = rapid.Bool().Draw(t, "fails")
					results = append(results, r)
				}
				h = append(h, convo.ToolResults(results...))
			}
		}
		out, warns, err := Conversation().Encode(h, provider.Options{Strict: true})
		if err != nil {
			t.Fatalf("encode: %v %v", err, warns)
		}
		back, _, err := Conversation().Decode(out, provider.Options{Strict: true})
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
