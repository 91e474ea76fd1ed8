package convo_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

// slabDoc is a document whose messages share the decoder's chunks: texts
// with and without escapes, tool calls with args, results with nested
// parts, origins and usages.
func slabDoc(t *testing.T, n int) ([]byte, convo.History) {
	t.Helper()
	var h convo.History
	for i := range n {
		h = append(h,
			convo.User(fmt.Sprintf("question %d with \"quotes\" and é", i)),
			convo.Message{
				Role: convo.RoleAssistant, ID: fmt.Sprintf("msg_%d", i),
				Origin: &convo.Origin{Provider: "anthropic", Model: "claude", ResponseID: fmt.Sprintf("resp_%d", i)},
				Usage:  &convo.Usage{Input: int64(i), Output: 7},
				Parts: []convo.Part{
					{Type: convo.TypeText, Text: fmt.Sprintf("answer %d", i)},
					{Type: convo.TypeToolCall, ID: fmt.Sprintf("call_%d", i), Name: "lookup", Args: []byte(fmt.Sprintf(`{"q":%d}`, i))},
				},
			},
			convo.Message{Role: convo.RoleTool, Parts: []convo.Part{{
				Type: convo.TypeToolResult, ID: fmt.Sprintf("call_%d", i),
				Parts: []convo.Part{{Type: convo.TypeText, Text: fmt.Sprintf("result %d", i)}, {Type: convo.TypeJSON, Value: []byte(`{"ok":true}`)}},
			}}},
		)
	}
	doc, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return doc, h
}

// Decoded strings and JSON values are copies: writing over the document
// afterwards changes nothing in the history.
func TestUnmarshalKeepsNothingOfTheInput(t *testing.T) {
	doc, want := slabDoc(t, 50)
	got, err := convo.Unmarshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range doc {
		doc[i] = 'x'
	}
	if !got.Equal(want) {
		t.Fatal("the history changed when the document was overwritten")
	}
}

// Slices cut from a shared chunk have no room to grow into a neighbour's
// elements: appending to one message's parts or args copies, and writing
// to one message's parts leaves the others as they were.
func TestDecodedSlicesAreIndependent(t *testing.T) {
	doc, want := slabDoc(t, 20)
	got, err := convo.Unmarshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		m := &got[i]
		m.Parts = append(m.Parts, convo.Part{Type: convo.TypeText, Text: "appended"})
		for j := range m.Parts {
			if m.Parts[j].Args != nil {
				m.Parts[j].Args = append(m.Parts[j].Args, ' ')
			}
		}
	}
	for i := range got {
		m := got[i]
		if n := len(m.Parts); n != len(want[i].Parts)+1 || m.Parts[n-1].Text != "appended" {
			t.Fatalf("message %d: parts %+v", i, m.Parts)
		}
		m.Parts = m.Parts[:len(m.Parts)-1]
		for j := range m.Parts {
			if a := m.Parts[j].Args; a != nil {
				if !bytes.Equal(a[:len(a)-1], want[i].Parts[j].Args) {
					t.Fatalf("message %d part %d: args %s", i, j, a)
				}
				m.Parts[j].Args = a[:len(a)-1]
			}
		}
		if !m.Equal(want[i]) {
			t.Fatalf("message %d changed when its neighbours were appended to: %+v", i, m)
		}
	}
	got[0].Parts[0].Text = "changed"
	got[1].Origin.Model = "changed"
	got[1].Usage.Output = 99
	if got[3].Parts[0].Text != want[3].Parts[0].Text || got[4].Origin.Model != "claude" || got[4].Usage.Output != 7 {
		t.Fatal("writing one message's parts, origin or usage changed another's")
	}
}

// A document is decoded into a few chunks, not an object per string,
// parts slice, origin and usage: a regression back to one allocation per
// value would multiply the count by a hundred (it was 7.5 a message).
func TestUnmarshalAllocatesPerChunk(t *testing.T) {
	doc, _ := slabDoc(t, 300) // 900 messages, 1,500 parts
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := convo.Unmarshal(doc); err != nil {
			t.Fatal(err)
		}
	})
	if perMsg := allocs / 900; perMsg > 0.2 {
		t.Fatalf("%.0f allocations for 900 messages (%.2f a message)", allocs, perMsg)
	}
}

// Strings long enough to waste a chunk (inline media) are allocated on
// their own and survive whole; empty strings and values stay empty.
func TestUnmarshalLongAndEmptyValues(t *testing.T) {
	long := strings.Repeat("QUJD", 3000) // 12 KB of base64
	want := convo.History{
		convo.User("a"),
		{Role: convo.RoleUser, Parts: []convo.Part{{Type: convo.TypeImage, MediaType: "image/png", Data: long}}},
		{Role: convo.RoleUser, Parts: []convo.Part{{Type: convo.TypeText, Text: strings.Repeat("é", 20000)}}},
		{Role: convo.RoleAssistant, Parts: []convo.Part{}},
	}
	doc, err := convo.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := convo.Unmarshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) || got[1].Parts[0].Data != long {
		t.Fatal("long values did not survive")
	}
}

// UnmarshalMessage, which a store runs on every message it writes, grows
// no parts stack of its own: a message of four parts (one a tool result
// holding two) allocates 8 times, not 12 as when each call grew a stack
// of its own. Messages decoded one after another share nothing.
func TestUnmarshalMessageAllocs(t *testing.T) {
	m := convo.Message{Role: convo.RoleAssistant, Origin: &convo.Origin{Provider: "anthropic", Model: "claude"}, Usage: &convo.Usage{Input: 3, Output: 7},
		Parts: []convo.Part{
			{Type: convo.TypeReasoning, Text: "thinking it over", Signature: "c2ln"},
			convo.Text("It is 18 °C."),
			convo.ToolCall("call_1", "get_weather", json.RawMessage(`{"city":"Paris"}`)),
			{Type: convo.TypeToolResult, ID: "call_0", Name: "f", Parts: []convo.Part{convo.Text("a"), convo.Text("b")}},
		}}
	body, err := convo.AppendMessage(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := convo.UnmarshalMessage(body); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.0f allocations", allocs)
	if allocs > 9 {
		t.Errorf("%.0f allocations to decode a message of four parts, more than 9", allocs)
	}
	a, err := convo.UnmarshalMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := convo.UnmarshalMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	b.Parts[0].Text, b.Parts[3].Parts[1].Text = "changed", "changed"
	if !a.Equal(m) || a.Parts[0].Text != "thinking it over" || a.Parts[3].Parts[1].Text != "b" {
		t.Fatalf("decoded %+v, want %+v", a, m)
	}
}
