package backend

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// The store's pairing check and open calls as they were before they
// stopped copying: what Check and OpenCalls must still answer
// (FuzzCheckAsBefore).

func openCallsBefore(h convo.History) []Call {
	var open []Call
	for _, p := range h.Pending() {
		open = append(open, Call{ID: p.ID, Name: p.Name})
	}
	return open
}

func checkBefore(open []Call, msgs convo.History) ([]Call, error) {
	lead := 0
	for lead < len(msgs) && msgs[lead].Role == convo.RoleTool {
		lead++
	}
	answered := map[string]int{}
	for _, m := range msgs[:lead] {
		for _, p := range m.Parts {
			if p.Type == convo.TypeToolResult {
				answered[p.ID]++
			}
		}
	}
	var opener []convo.Part
	var remaining []Call
	for _, c := range open {
		if answered[c.ID] > 0 {
			answered[c.ID]--
			name := c.Name
			if name == "" {
				name = "unknown" // only a database edited by hand has such a call
			}
			opener = append(opener, convo.ToolCall(c.ID, name, nil))
		} else {
			remaining = append(remaining, c)
		}
	}
	var problems []convo.Problem
	if lead < len(msgs) {
		for _, c := range remaining {
			problems = append(problems, convo.Problem{
				Path: "messages[" + strconv.Itoa(lead) + "]",
				Msg:  fmt.Sprintf("tool call %q (%s) of the conversation has no result before this message", c.ID, c.Name),
			})
		}
	}

	v := make(convo.History, 0, len(msgs)+2)
	offset := 0
	if opener != nil {
		v = append(v, convo.Message{Role: convo.RoleAssistant, Parts: opener})
		offset = 1
	}
	v = append(v, msgs...)
	after := remaining
	if lead < len(msgs) {
		after = openCallsBefore(msgs)
	}
	if lead < len(msgs) && len(after) > 0 {
		closer := make([]convo.Part, len(after))
		for i, c := range after {
			closer[i] = convo.ToolResult(c.ID, c.Name, "")
		}
		v = append(v, convo.ToolResults(closer...))
	}
	if err := v.Validate(); err != nil {
		var ve *convo.ValidationError
		if !errors.As(err, &ve) {
			return nil, fmt.Errorf("%w: %w", store.ErrInvalid, err)
		}
		for _, p := range ve.Problems {
			p.Path = shift(p.Path, offset)
			p.Unpaired = false // an append is not a conversion: there is nothing to repair it with
			problems = append(problems, p)
		}
	}
	if problems != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrInvalid, &convo.ValidationError{Problems: problems})
	}
	return after, nil
}

// FuzzCheckAsBefore: Check and OpenCalls answer as they did when Check
// validated a history it built of the messages and OpenCalls copied
// History.Pending: the same calls open and the same problems, for any
// decodable history and open calls.
func FuzzCheckAsBefore(f *testing.F) {
	f.Add([]byte(`[{"role":"user","parts":[{"type":"text","text":"hi"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","args":{}},{"type":"tool_call","id":"d","name":"g","server":"web_search"}]}]`), "c", "")
	f.Add([]byte(`[{"role":"tool","parts":[{"type":"tool_result","id":"c","parts":[]}]},{"role":"user"}]`), "c", "c")
	f.Add([]byte(`[{"role":"tool","parts":[{"type":"tool_result","id":"c"},{"type":"tool_result","id":"e"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"x","name":"f"}]},{"role":"tool","parts":[{"type":"tool_result","id":"x"}]}]`), "c", "e")
	f.Add([]byte(`{"role":"robot"}`), "", "")
	f.Fuzz(func(t *testing.T, doc []byte, id1, id2 string) {
		h, err := convo.Unmarshal(doc)
		if err != nil {
			return
		}
		if got, want := OpenCalls(h), openCallsBefore(h); !reflect.DeepEqual(got, want) {
			t.Fatalf("OpenCalls %#v, before %#v", got, want)
		}
		var open []Call
		for _, id := range []string{id1, id2} {
			if id != "" {
				open = append(open, Call{ID: id, Name: id})
			}
		}
		got, err1 := Check(open, h)
		want, err2 := checkBefore(open, h)
		if !reflect.DeepEqual(got, want) || (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
			t.Fatalf("Check %v, %v; before %v, %v", got, err1, want, err2)
		}
	})
}

// TestCheckAsBefore runs FuzzCheckAsBefore's comparison over the messages
// of every fixture, whole and in tails, with no open calls and with the
// calls of the message before.
func TestCheckAsBefore(t *testing.T) {
	n := 0
	for name, h := range fixtureMessages(t) {
		for i := range h {
			tail := h[i:]
			var open []Call
			if i > 0 {
				open = openCallsBefore(h[:i])
			}
			if got, want := OpenCalls(tail), openCallsBefore(tail); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s[%d:]: OpenCalls %#v, before %#v", name, i, got, want)
			}
			got, err1 := Check(open, tail)
			want, err2 := checkBefore(open, tail)
			if !reflect.DeepEqual(got, want) || (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
				t.Fatalf("%s[%d:]: Check %v, %v; before %v, %v", name, i, got, err1, want, err2)
			}
			n++
		}
	}
	if n < 1000 {
		t.Fatalf("only %d tails compared", n)
	}
}
