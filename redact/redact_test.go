package redact

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

func builtin(t testing.TB, extra ...Rule) *Redactor {
	t.Helper()
	r, err := New(append(Builtin(), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestString(t *testing.T) {
	r := builtin(t)
	tests := []struct {
		name, in, want string
		counts         Counts
	}{
		{"openai", "key sk-abcdefghijklmnopqrstuvwxyz0123 here", "key [REDACTED:openai-key] here", Counts{OpenAIKey: 1}},
		{"openai project", "sk-proj-AbC_dEf-0123456789abcdefghij", "[REDACTED:openai-key]", Counts{OpenAIKey: 1}},
		{"anthropic", "x=sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAA-BBBB", "x=[REDACTED:anthropic-key]", Counts{AnthropicKey: 1}},
		{"google", "?key=AIzaSyA1234567890abcdefghijklmnopqrstuv&x", "?key=[REDACTED:google-api-key]&x", Counts{GoogleKey: 1}},
		{"aws", "AKIAIOSFODNN7EXAMPLE and ASIAIOSFODNN7EXAMPLE", "[REDACTED:aws-access-key-id] and [REDACTED:aws-access-key-id]", Counts{AWSKeyID: 2}},
		{"aws too long", "AKIAIOSFODNN7EXAMPLEX", "AKIAIOSFODNN7EXAMPLEX", nil},
		{"bearer", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc.def", "Authorization: [REDACTED:bearer-token]", Counts{BearerToken: 1}},
		{"bearer short", "the bearer of news", "the bearer of news", nil},
		{"email", "write to ada.lovelace+ai@example.co.uk.", "write to [REDACTED:email].", Counts{Email: 1}},
		{"card", "card 4111 1111 1111 1111 exp", "card [REDACTED:card-number] exp", Counts{CardNumber: 1}},
		{"card dashes", "5500-0000-0000-0004", "[REDACTED:card-number]", Counts{CardNumber: 1}},
		{"card fails luhn", "order 4111111111111112", "order 4111111111111112", nil},
		{"short number", "call 0123456789", "call 0123456789", nil},
		{"nothing", "hello, world", "hello, world", nil},
		{"marker kept", "[REDACTED:email] stays", "[REDACTED:email] stays", nil},
		{"two rules", "a@b.io sk-abcdefghijklmnopqrstuvwxyz", "[REDACTED:email] [REDACTED:openai-key]", Counts{Email: 1, OpenAIKey: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, counts := r.String(tt.in)
			if got != tt.want || !reflect.DeepEqual(counts, tt.counts) {
				t.Errorf("String(%q) = %q, %v; want %q, %v", tt.in, got, counts, tt.want, tt.counts)
			}
		})
	}
}

func TestConfiguredRule(t *testing.T) {
	rule, err := Regexp("employee-id", `\bEMP-\d{6}\b`)
	if err != nil {
		t.Fatal(err)
	}
	r := builtin(t, rule)
	got, c := r.String("badge EMP-004211 ok")
	if got != "badge [REDACTED:employee-id] ok" || c["employee-id"] != 1 {
		t.Errorf("got %q %v", got, c)
	}
	// A rule that matches the marker itself must not loop or nest.
	greedy, _ := Regexp("word", `REDACTED|\w+@`)
	r = builtin(t, greedy)
	got, _ = r.String("x a@b.io")
	if got != "x [REDACTED:email]" {
		t.Errorf("greedy rule: %q", got)
	}
}

func TestBadRules(t *testing.T) {
	if _, err := Regexp("bad name", "x"); err == nil {
		t.Error("a name with a space was accepted")
	}
	if _, err := Regexp("x", "("); err == nil || !strings.Contains(err.Error(), `rule "x"`) {
		t.Errorf("bad expression: %v", err)
	}
	if _, err := New(Rule{Name: "x"}); err == nil {
		t.Error("a rule without a pattern was accepted")
	}
}

func TestMessage(t *testing.T) {
	r := builtin(t)
	call := convo.ToolCall("call_1", "send", json.RawMessage(`{"to":"bob@example.com","card":4111111111111111,"n":3}`))
	reasoning := convo.Part{Type: convo.TypeReasoning, Text: "user is a@b.io", Signature: "sig-a@b.io", Encrypted: "enc-a@b.io",
		Summary: []string{"mail a@b.io", "fine"}}
	img := convo.Image("image/png", []byte("a@b.io"))
	m := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Text("plain"), reasoning, call, img},
		Extra: convo.Fields{{Key: "x_note", Value: json.RawMessage(`"from c@d.io"`)}}}
	orig := m.Clone()
	got, counts := r.Message(m)
	if !reflect.DeepEqual(m, orig) {
		t.Fatal("Message changed its argument")
	}
	if counts[Email] != 4 || counts[CardNumber] != 1 {
		t.Errorf("counts %v", counts)
	}
	doc, err := convo.AppendMessage(nil, got)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","parts":[{"type":"text","text":"plain"},` +
		`{"type":"reasoning","text":"user is [REDACTED:email]","summary":["mail [REDACTED:email]","fine"],"signature":"sig-a@b.io","encrypted":"enc-a@b.io","native":{"convo":{"redacted":{"email":2}}}},` +
		`{"type":"tool_call","id":"call_1","name":"send","args":{"to":"[REDACTED:email]","card":"[REDACTED:card-number]","n":3},"native":{"convo":{"redacted":{"card-number":1,"email":1}}}},` +
		`{"type":"image","media_type":"image/png","data":"YUBiLmlv"}],` +
		`"native":{"convo":{"redacted":{"email":1}}},"x_note":"from [REDACTED:email]"}`
	if string(doc) != want {
		t.Errorf("got\n%s\nwant\n%s", doc, want)
	}
	if &got.Parts[0] == &m.Parts[0] {
		t.Error("the parts slice is shared with the caller's")
	}
	if err := (convo.History{convo.User("hi"), got}).Validate(); err != nil {
		t.Errorf("redacted message invalid: %v", err)
	}
	if Redacted(got.Parts[1].Native)[Email] != 2 {
		t.Errorf("Redacted = %v", Redacted(got.Parts[1].Native))
	}
	again, c := r.Message(got)
	if c != nil || !reflect.DeepEqual(again, got) {
		t.Errorf("second pass changed %v", c)
	}
}

func TestNestedAndAccumulated(t *testing.T) {
	r := builtin(t)
	res := convo.ToolResultParts("c1", "lookup", convo.Text("owner x@y.org"))
	m := convo.ToolResults(res)
	got, counts := r.Message(m)
	if counts[Email] != 1 {
		t.Fatalf("counts %v", counts)
	}
	if got.Parts[0].Native != nil {
		t.Error("the tool_result is marked though only its nested part changed")
	}
	if Redacted(got.Parts[0].Parts[0].Native)[Email] != 1 {
		t.Error("the nested text part is not marked")
	}
	// A second redactor with another rule adds to the record.
	rule, _ := Regexp("owner", `owner`)
	r2, _ := New(rule)
	got2, _ := r2.Message(got)
	if c := Redacted(got2.Parts[0].Parts[0].Native); c[Email] != 1 || c["owner"] != 1 {
		t.Errorf("accumulated record %v", c)
	}
}

func TestHistoryShares(t *testing.T) {
	r := builtin(t)
	h := convo.History{convo.User("nothing here"), convo.User("mail a@b.io")}
	got, c := r.History(h)
	if c[Email] != 1 || h[1].Text() != "mail a@b.io" || got[1].Text() != "mail [REDACTED:email]" {
		t.Fatalf("got %v %v", got, c)
	}
	same, c := r.History(convo.History{convo.User("clean")})
	if c != nil || same[0].Text() != "clean" {
		t.Error("clean history changed")
	}
}

func TestJSONNumbersAndEscapes(t *testing.T) {
	r := builtin(t)
	in := json.RawMessage(`{"a<b":"\u00e9 a@b.io","n":-1.5e3,"k":[4111111111111111,"x"]}`)
	got, c := r.json(in)
	want := `{"a<b":"é [REDACTED:email]","n":-1.5e3,"k":["[REDACTED:card-number]","x"]}`
	if string(got) != want || c[Email] != 1 || c[CardNumber] != 1 {
		t.Errorf("got %s %v", got, c)
	}
}

func ExampleRedactor_Message() {
	r, _ := New(Builtin()...)
	m, counts := r.Message(convo.User("my key is sk-proj-0123456789abcdefghijklmn, mail me at ada@example.com"))
	doc, _ := convo.AppendMessage(nil, m)
	fmt.Println(string(doc))
	fmt.Println(counts)
	// Output:
	// {"role":"user","parts":[{"type":"text","text":"my key is [REDACTED:openai-key], mail me at [REDACTED:email]","native":{"convo":{"redacted":{"email":1,"openai-key":1}}}}]}
	// map[email:1 openai-key:1]
}

func TestCitations(t *testing.T) {
	r := builtin(t)
	text := convo.Text("See the note.")
	text.Citations = []convo.Citation{
		{Kind: convo.CiteURL, URL: "https://example.com/?key=sk-abcdefghijklmnopqrstuvwxyz0123", Title: "notes", Text: "write to ada@example.com"},
		{Kind: convo.CiteDocument, Title: "clean", Text: "nothing to hide"},
	}
	m := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{text}}
	orig := m.Clone()
	got, counts := r.Message(m)
	if !reflect.DeepEqual(m, orig) {
		t.Fatal("Message changed its argument")
	}
	if counts[Email] != 1 || counts[OpenAIKey] != 1 {
		t.Errorf("counts %v", counts)
	}
	c := got.Parts[0].Citations
	if c[0].Text != "write to [REDACTED:email]" || c[0].URL != "https://example.com/?key=[REDACTED:openai-key]" {
		t.Errorf("citation kept secrets: %+v", c[0])
	}
	if !c[1].Equal(orig.Parts[0].Citations[1]) {
		t.Errorf("clean citation changed: %+v", c[1])
	}
	if Redacted(got.Parts[0].Native)[Email] != 1 {
		t.Errorf("the part does not say what was redacted: %v", Redacted(got.Parts[0].Native))
	}
	if again, n := r.Message(got); n != nil || !reflect.DeepEqual(again, got) {
		t.Errorf("second pass changed %v", n)
	}
}
