package openai

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"pgregory.net/rapid"
)

// genHistory draws a history both OpenAI formats carry exactly: system and
// user text (with image URLs), assistant text and tool calls with object
// arguments, one tool message per result.
func genHistory(t *rapid.T) convo.History {
	text := rapid.StringN(1, 40, -1)
	var h convo.History
	if rapid.Bool().Draw(t, "system") {
		h = append(h, convo.System(text.Draw(t, "sys")))
	}
	turns := rapid.IntRange(1, 4).Draw(t, "turns")
	callN := 0
	for i := 0; i < turns; i++ {
		u := convo.User(text.Draw(t, "user"))
		if rapid.Bool().Draw(t, "image") {
			u.Parts = append(u.Parts, convo.Part{Type: convo.TypeImage, URL: "https://example.com/" + fmt.Sprint(i) + ".png", Detail: "low"})
		}
		h = append(h, u)
		calls := rapid.IntRange(0, 3).Draw(t, "calls")
		if calls == 0 {
			h = append(h, convo.Assistant(text.Draw(t, "answer")))
			continue
		}
		a := convo.Message{Role: convo.RoleAssistant}
		if rapid.Bool().Draw(t, "preamble") {
			a.Parts = append(a.Parts, convo.Text(text.Draw(t, "preamble text")))
		}
		var results convo.History
		for k := 0; k < calls; k++ {
			callN++
			id := fmt.Sprintf("call_%d", callN)
			name := rapid.SampledFrom([]string{"get_weather", "search", "run"}).Draw(t, "name")
			args := rapid.MapOfN(rapid.StringMatching(`[a-z]{1,6}`), rapid.IntRange(-100, 100), 0, 3).Draw(t, "args")
			raw, _ := json.Marshal(args)
			a.Parts = append(a.Parts, convo.ToolCall(id, name, raw))
			results = append(results, convo.ToolResults(convo.ToolResult(id, name, text.Draw(t, "result"))))
		}
		h = append(h, a)
		h = append(h, results...)
		h = append(h, convo.Assistant(text.Draw(t, "final")))
	}
	return h
}

// TestPropertyRoundTrip: for histories both formats carry exactly,
// decode(encode(h)) == h, and encoding is deterministic.
func TestPropertyRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t)
		for _, codec := range []provider.Codec{Chat(), Responses()} {
			out, warns, err := codec.Encode(h, provider.Options{})
			if err != nil || len(warns) > 0 {
				t.Fatalf("%s: %v %v", codec.Name(), err, warns)
			}
			again, _, _ := codec.Encode(h, provider.Options{})
			if string(again) != string(out) {
				t.Fatalf("%s: encoding is not deterministic", codec.Name())
			}
			back, warns, err := codec.Decode(out, provider.Options{})
			if err != nil || len(warns) > 0 {
				t.Fatalf("%s: decode: %v %v\n%s", codec.Name(), err, warns, out)
			}
			if !back.Equal(h) {
				a, _ := convo.Marshal(h)
				b, _ := convo.Marshal(back)
				t.Fatalf("%s: decode(encode(h)) != h\n%s\n%s", codec.Name(), a, b)
			}
		}
	})
}

// TestPropertyItems: EncodeItems and DecodeItems invert each other on the
// same histories, and Encode's input array holds exactly EncodeItems' items.
func TestPropertyItems(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t)
		items, _, err := EncodeItems(h, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		back, _, err := DecodeItems(items, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !back.Equal(h) {
			t.Fatalf("DecodeItems(EncodeItems(h)) != h")
		}
		out, _, err := Responses().Encode(h, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var req struct{ Input []json.RawMessage }
		if err := json.Unmarshal(out, &req); err != nil {
			t.Fatal(err)
		}
		if len(req.Input) != len(items) {
			t.Fatalf("%d input items, %d items", len(req.Input), len(items))
		}
		for i := range items {
			if string(req.Input[i]) != string(items[i]) {
				t.Fatalf("item %d: %s vs %s", i, req.Input[i], items[i])
			}
		}
	})
}
