package convo_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/convo-go/convo"
)

func TestConstructors(t *testing.T) {
	img := convo.Image("image/png", []byte{0x89, 'P', 'N', 'G'})
	if img.Data != "iVBORw==" || img.MediaType != "image/png" {
		t.Fatalf("image: %+v", img)
	}
	if b, err := img.Bytes(); err != nil || string(b) != "\x89PNG" {
		t.Fatalf("bytes: %q %v", b, err)
	}
	tests := []struct {
		name string
		m    convo.Message
		role convo.Role
		text string
	}{
		{"system", convo.System("be brief"), convo.RoleSystem, "be brief"},
		{"user with attachments", convo.User("look", img, convo.Audio("audio/wav", []byte("RIFF")), convo.File("application/pdf", "a.pdf", []byte("%PDF"))), convo.RoleUser, "look"},
		{"user without text", convo.User("", img), convo.RoleUser, ""},
		{"assistant with calls", convo.Assistant("checking", convo.ToolCall("c1", "f", json.RawMessage(`{}`))), convo.RoleAssistant, "checking"},
		{"tool results", convo.ToolResults(convo.ToolResult("c1", "f", "ok"), convo.ToolError("c2", "g", "boom")), convo.RoleTool, ""},
		{"summary", convo.Summary("earlier: x", 4), convo.RoleSummary, "earlier: x"},
		{"error", convo.ErrorMessage("overloaded"), convo.RoleError, "overloaded"},
		{"turn system", convo.TurnSystem("now French"), convo.RoleSystem, "now French"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.m.Role != tt.role || tt.m.Text() != tt.text {
				t.Fatalf("got role %s text %q", tt.m.Role, tt.m.Text())
			}
			if err := (convo.History{tt.m}).Validate(); err != nil && tt.role != convo.RoleTool && tt.role != convo.RoleAssistant {
				t.Fatalf("constructor builds an invalid message: %v", err)
			}
		})
	}
	if !convo.TurnSystem("x").IsTurnScoped() || convo.System("x").IsTurnScoped() {
		t.Fatal("IsTurnScoped")
	}
	r := convo.ToolResults(convo.ToolError("c2", "g", "boom")).Parts[0]
	if !r.Error || r.ID != "c2" {
		t.Fatalf("tool error: %+v", r)
	}
}

func TestPredicates(t *testing.T) {
	call := convo.Assistant("", convo.ToolCall("c", "f", nil))
	checks := []struct {
		got, want bool
		what      string
	}{
		{convo.System("").IsSystem(), true, "IsSystem"},
		{convo.User("").IsUser(), true, "IsUser"},
		{call.IsAssistant(), true, "IsAssistant"},
		{convo.ToolResults().IsToolResult(), true, "IsToolResult"},
		{convo.Summary("", 1).IsSummary(), true, "IsSummary"},
		{convo.ErrorMessage("").IsError(), true, "IsError"},
		{call.HasToolCalls(), true, "HasToolCalls"},
		{call.IsFinalAnswer(), false, "a tool-calling turn is not final"},
		{convo.Assistant("done").IsFinalAnswer(), true, "plain answer is final"},
		{convo.Message{Role: convo.RoleAssistant, Phase: convo.PhaseCommentary}.IsFinalAnswer(), false, "commentary is not final"},
		{convo.User("x").IsFinalAnswer(), false, "a user message is not an answer"},
		{convo.User("").IsSystem(), false, "user is not system"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v", c.what, c.got)
		}
	}
	if n := len(call.ToolCalls()); n != 1 {
		t.Errorf("ToolCalls: %d", n)
	}
	img, pdf := convo.ImageURL("image/png", "https://x/a.png"), convo.File("application/pdf", "a.pdf", []byte("%PDF"))
	withMedia := convo.User("look", img, pdf, convo.Audio("audio/wav", []byte("RIFF")), convo.Video("video/mp4", []byte("v")))
	if got := withMedia.Attachments(); len(got) != 4 || !got[0].Equal(img) || !got[1].Equal(pdf) || got[2].Type != convo.TypeAudio || got[3].Type != convo.TypeVideo {
		t.Errorf("Attachments: %+v", got)
	}
	if got := call.Attachments(); got != nil {
		t.Errorf("Attachments of a message without media: %+v", got)
	}
}

func TestText(t *testing.T) {
	m := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		{Type: convo.TypeReasoning, Text: "secret plan"},
		convo.Text("Hello"),
		convo.ToolCall("c", "f", json.RawMessage(`{"x":"tool text"}`)),
		convo.Refusal("no"),
		convo.Text("world"),
	}}
	// Joined with nothing between, as the seed's Message#text and
	// OpenAI's output_text do: the parts of one text are not lines.
	if got := m.Text(); got != "Helloworld" {
		t.Fatalf("Text = %q", got)
	}
	if got := convo.ToolResults(convo.ToolResult("c", "f", "out")).Text(); got != "" {
		t.Fatalf("tool content leaked into Text: %q", got)
	}
}

func TestWithoutReasoning(t *testing.T) {
	plain := convo.Assistant("hi")
	same := plain.WithoutReasoning()
	if &same.Parts[0] != &plain.Parts[0] {
		t.Fatal("WithoutReasoning copied a message that has no reasoning")
	}
	m := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Reasoning("think"), convo.Text("answer")}}
	out := m.WithoutReasoning()
	if len(out.Parts) != 1 || out.Parts[0].Text != "answer" {
		t.Fatalf("got %+v", out.Parts)
	}
	if len(m.Parts) != 2 || m.Parts[0].Type != convo.TypeReasoning {
		t.Fatal("WithoutReasoning modified its receiver")
	}
}

func TestWithTextPrefix(t *testing.T) {
	m := convo.User("hello", convo.Image("image/png", nil))
	m.Name = "Alice"
	p := m.WithActorPrefix()
	if p.Parts[0].Text != "[Alice] hello" || m.Parts[0].Text != "hello" {
		t.Fatalf("got %q, original %q", p.Parts[0].Text, m.Parts[0].Text)
	}
	if again := p.WithActorPrefix(); again.Parts[0].Text != "[Alice] hello" {
		t.Fatalf("prefix applied twice: %q", again.Parts[0].Text)
	}
	onlyImage := convo.User("", convo.Image("image/png", nil)).WithTextPrefix("[Bob] ")
	if len(onlyImage.Parts) != 2 || onlyImage.Parts[0].Text != "[Bob] " {
		t.Fatalf("no text part: %+v", onlyImage.Parts)
	}
	if anon := convo.User("x").WithActorPrefix(); anon.Parts[0].Text != "x" {
		t.Fatal("prefix without a name")
	}
}

func TestEqual(t *testing.T) {
	a := convo.Message{Role: convo.RoleUser, Meta: json.RawMessage(`{"a":1,"b":[1,2]}`), Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	b := a
	b.Meta = json.RawMessage(`{ "b": [1, 2], "a": 1 }`)
	b.Time = a.Time.In(time.FixedZone("x", 3600))
	if !a.Equal(b) {
		t.Fatal("JSON members compared as bytes, or times by zone")
	}
	b.Meta = json.RawMessage(`{"a":2}`)
	if a.Equal(b) {
		t.Fatal("different meta compared equal")
	}
	if convo.User("a").Equal(convo.User("b")) || !convo.User("a").Equal(convo.User("a")) {
		t.Fatal("text equality")
	}
	if (convo.History{convo.User("a")}).Equal(convo.History{convo.User("a"), convo.User("a")}) {
		t.Fatal("histories of different length")
	}
}

func TestMessageFromMap(t *testing.T) {
	m, err := convo.MessageFromMap(map[string]any{
		"role": "human",
		"name": "Alice",
		"parts": []any{
			map[string]any{"type": "text", "text": "hi"},
			map[any]any{"type": "tool_call", "id": "c", "name": "f", "args": map[any]any{"n": 1}},
		},
		"time": time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Role != convo.RoleUser || m.Parts[1].Name != "f" || string(m.Parts[1].Args) != `{"n":1}` || m.Time.Hour() != 10 {
		t.Fatalf("got %+v", m)
	}
	for _, tt := range []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{"parts": []any{}}, "missing role"},
		{map[string]any{"role": "user", "parts": []any{map[string]any{"type": 3}}}, "parts[0].type: got number, want string"},
		{map[string]any{"role": "user", "meta": map[any]any{1: "x"}}, "meta: map key 1 is not a string"},
		{map[string]any{"role": "user", "x": func() {}}, "message: json: unsupported type"},
		{map[string]any{"role": "user", "content": "hi", "parts": []any{}}, `content: a message has "content" or "parts", not both`},
		{map[string]any{"role": "user", "content": 3}, "content: want a string, a part object or an array of parts, got number"},
		{map[string]any{"role": "user", "metadata": map[string]any{}, "meta": map[string]any{}}, `metadata: a message has "metadata" or "meta", not both`},
		{map[string]any{"role": "user", "metadata": "x"}, "meta must be a JSON object"},
		{map[string]any{"role": "user", "content": []any{true}}, "content[0]: want a string or a part object, got boolean"},
		{map[string]any{"role": "user", "content": []any{map[string]any{"type": 3}}}, "parts[0].type: got number, want string"},
	} {
		_, err := convo.MessageFromMap(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want %q", tt.in, err, tt.want)
		}
	}
	// content, as chat APIs spell a message, is coerced, never lost.
	for _, tt := range []struct {
		content any
		want    []convo.Part
	}{
		{"hi", []convo.Part{convo.Text("hi")}},
		{[]any{"a", map[string]any{"type": "text", "text": "b"}}, []convo.Part{convo.Text("a"), convo.Text("b")}},
		// One part object, not in an array, is that one part.
		{map[string]any{"type": "text", "text": "one"}, []convo.Part{convo.Text("one")}},
		{map[any]any{"type": "image", "media_type": "image/png", "url": "https://x/y.png"}, []convo.Part{convo.ImageURL("image/png", "https://x/y.png")}},
	} {
		m, err := convo.MessageFromMap(map[string]any{"role": "user", "content": tt.content})
		if err != nil {
			t.Fatalf("content %v: %v", tt.content, err)
		}
		if want := convo.User("", tt.want...); !m.Equal(want) || len(m.Extra) != 0 {
			t.Errorf("content %v: got %+v, want %+v", tt.content, m, want)
		}
	}
	// The seed's {role, content, metadata}: metadata is the message's
	// metadata, not an unknown member.
	m, err = convo.MessageFromMap(map[string]any{"role": "assistant", "content": "ok", "metadata": map[string]any{"run": "r1"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Meta) != `{"run":"r1"}` || len(m.Extra) != 0 || m.Text() != "ok" {
		t.Fatalf("metadata: meta %s, extra %v, text %q", m.Meta, m.Extra, m.Text())
	}
	_, err = convo.HistoryFromMaps([]map[string]any{{"role": "user"}, {"role": "nobody"}})
	if err == nil || !strings.Contains(err.Error(), "messages[1].role") {
		t.Fatalf("HistoryFromMaps: %v", err)
	}
}

func TestEstimatedBytesRealistic(t *testing.T) {
	for i, m := range realisticHistory(200) {
		b, _ := m.MarshalJSON()
		est := m.EstimatedBytes()
		if diff := est - len(b); diff < -len(b)/20-8 || diff > len(b)/20+8 {
			t.Fatalf("message %d: estimate %d, real %d", i, est, len(b))
		}
	}
}

// TestFieldOrder checks that Message and Part declare their fields in the
// order the canonical format writes them, so that encoding a long history
// reads each struct from front to back (see BenchmarkColdHistory in
// bench/growth), and that every field is written.
func TestFieldOrder(t *testing.T) {
	part := convo.Part{
		Type: convo.TypeApproval, Server: "s", ID: "i", CallID: "c", Name: "n",
		Text: "t", MediaType: "m", Data: "eA==", URL: "u", FileID: "f", Detail: "d",
		Citations: []convo.Citation{{Kind: convo.CiteURL, URL: "u"}},
		Value:     json.RawMessage(`1`), Args: json.RawMessage(`{}`), ArgsRaw: "a",
		Parts: []convo.Part{convo.Text("r")}, Error: true, Approved: true, Reason: "r",
		Summary: []string{"s"}, Signature: "s", Encrypted: "e", Provider: "p", Model: "m",
		Cache: &convo.Cache{}, Native: convo.Native{"x": json.RawMessage(`{}`)},
		Extra: convo.Fields{{Key: "later", Value: json.RawMessage(`1`)}},
	}
	msg := convo.Message{
		Role: convo.RoleAssistant, ID: "i", Name: "n", Time: time.Unix(1, 0),
		Phase: convo.PhaseCommentary, Effort: "low", Scope: "s", Compacted: 1,
		Origin: &convo.Origin{Provider: "p"}, Usage: &convo.Usage{Input: 1}, Cost: &convo.Cost{USD: 1}, Finish: convo.FinishStop,
		Parts: []convo.Part{part}, Meta: json.RawMessage(`{}`),
		Native: convo.Native{"x": json.RawMessage(`{}`)},
		Extra:  convo.Fields{{Key: "later", Value: json.RawMessage(`1`)}},
	}
	for _, c := range []struct {
		v         any
		unwritten []string // fields the canonical object never holds
	}{{part, []string{"Raw"}}, {msg, nil}} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		typ := reflect.TypeOf(c.v)
		var written []string
		for _, k := range topKeys(t, b) {
			f, ok := typ.FieldByNameFunc(func(name string) bool { return snake(name) == k })
			if !ok {
				f, _ = typ.FieldByName("Extra")
			}
			written = append(written, f.Name)
		}
		written = slices.Compact(written)
		var declared []string
		for f := range typ.Fields() {
			if !slices.Contains(c.unwritten, f.Name) {
				declared = append(declared, f.Name)
			}
		}
		if !slices.Equal(written, declared) {
			t.Errorf("%s: fields declared\n\t%v\nbut written\n\t%v", typ.Name(), declared, written)
		}
	}
}

// topKeys returns the member names of the JSON object b, in order.
func topKeys(t *testing.T, b []byte) []string {
	var raw []string
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return raw
}

// snake turns a Go field name into its canonical member name: CallID is
// call_id.
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) && unicode.IsLower(rune(name[i-1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
