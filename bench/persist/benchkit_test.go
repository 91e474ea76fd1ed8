package persist

// Tests of package benchkit live here: benchkit is a module of its own
// (shared with the genkit module), and this is the module CI tests.

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

// TestDiffCoversEveryField fails when convo.Message or convo.Part gains a
// field the fidelity diff does not compare.
func TestDiffCoversEveryField(t *testing.T) {
	msg, part := benchkit.CoveredFields()
	for _, c := range []struct {
		typ     reflect.Type
		covered []string
	}{{reflect.TypeFor[convo.Message](), msg}, {reflect.TypeFor[convo.Part](), part}} {
		for i := range c.typ.NumField() {
			if name := c.typ.Field(i).Name; !slices.Contains(c.covered, name) {
				t.Errorf("benchkit.Diff does not compare %s.%s", c.typ.Name(), name)
			}
		}
	}
}

func TestDiff(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	base := func() convo.History {
		a := convo.Message{Role: convo.RoleAssistant, ID: "m1", Time: t0, Parts: []convo.Part{
			{Type: convo.TypeReasoning, Text: "think", Signature: "sig"},
			convo.Text("hi"),
			convo.ToolCall("c1", "f", json.RawMessage(`{"a":1,"b":[1,2]}`)),
		}, Usage: &convo.Usage{Input: 5}}
		return convo.History{convo.User("q"), a,
			convo.ToolResults(convo.ToolResultParts("c1", "f", convo.JSON(json.RawMessage(`{"x":0.10}`))))}
	}
	tests := []struct {
		name   string
		change func(h convo.History) convo.History
		want   []string // fields, in order
	}{
		{"identical", func(h convo.History) convo.History { return h }, nil},
		{"JSON by meaning", func(h convo.History) convo.History {
			h[1].Parts[2].Args = json.RawMessage(`{ "b":[1,2], "a":1.0 }`)
			h[2].Parts[0].Parts[0].Value = json.RawMessage(`{"x":0.1}`)
			return h
		}, nil},
		{"time in another zone is the same instant", func(h convo.History) convo.History {
			h[1].Time = t0.In(time.FixedZone("X", 3600))
			return h
		}, nil},
		{"message fields", func(h convo.History) convo.History {
			h[1].ID, h[1].Time, h[1].Usage = "", time.Time{}, nil
			return h
		}, []string{"message.id", "message.time", "message.usage.input"}},
		{"part field", func(h convo.History) convo.History {
			h[1].Parts[0].Signature = ""
			return h
		}, []string{"reasoning.signature"}},
		{"dropped part does not shift the others", func(h convo.History) convo.History {
			h[1].Parts = h[1].Parts[1:]
			return h
		}, []string{"reasoning (whole part)"}},
		{"JSON result that came back as text", func(h convo.History) convo.History {
			h[2].Parts[0].Parts = []convo.Part{convo.Text(`{"x":0.10}`)}
			return h
		}, []string{"tool_result.parts.json (whole part)", "tool_result.parts.text (part added)"}},
		{"order", func(h convo.History) convo.History {
			p := h[1].Parts
			p[0], p[1] = p[1], p[0]
			return h
		}, []string{"parts (order)"}},
		{"messages missing", func(h convo.History) convo.History { return h[:2] }, []string{"messages (3 came back as 2)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := base()
			got := tt.change(base())
			var fields []string
			for _, l := range benchkit.Diff(want, got) {
				fields = append(fields, l.Field)
				if l.Count < 1 || l.First == "" {
					t.Errorf("loss without count or place: %+v", l)
				}
			}
			if !slices.Equal(fields, tt.want) {
				t.Errorf("got %q, want %q", fields, tt.want)
			}
		})
	}
}

// TestHistory checks the generated history is valid, deterministic, of the
// asked length, and holds what the benchmarks claim it holds.
func TestHistory(t *testing.T) {
	for _, f := range []benchkit.Flavor{benchkit.Anthropic, benchkit.OpenAI} {
		h := benchkit.History(1000, benchkit.Options{Flavor: f})
		if len(h) != 1000 {
			t.Fatalf("len %d", len(h))
		}
		if err := h.Validate(); err != nil {
			t.Fatalf("flavor %d: %v", f, err)
		}
		a, _ := convo.Marshal(h)
		b, _ := convo.Marshal(benchkit.History(1000, benchkit.Options{Flavor: f}))
		if string(a) != string(b) {
			t.Error("two histories of the same size differ")
		}
		var images, reasoning, errs, signed int
		for _, m := range h {
			for _, p := range m.Parts {
				switch {
				case p.Type == convo.TypeImage:
					images++
				case p.Type == convo.TypeReasoning:
					reasoning++
					if p.Signature != "" || p.Encrypted != "" {
						signed++
					}
				case p.Type == convo.TypeToolResult && p.Error:
					errs++
				}
			}
		}
		if images != 1000/4/benchkit.ImageEvery || reasoning != 250 || signed != reasoning || errs == 0 {
			t.Errorf("flavor %d: %d images, %d reasoning (%d signed), %d failed tool results", f, images, reasoning, signed, errs)
		}
	}
	if h := benchkit.History(1000, benchkit.Options{NoImages: true}); strings.Contains(string(must(convo.Marshal(h))), `"type":"image"`) {
		t.Error("NoImages history has images")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
