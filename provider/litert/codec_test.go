package litert

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// messagesOf returns the messages array of body: body itself, or its
// "messages" member.
func messagesOf(t codectest.TB, body []byte) []byte {
	t.Helper()
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		return b
	}
	var req struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("%v", err)
	}
	return req.Messages
}

// TestRoundTrip decodes every request in testdata/requests, checks the
// history against its golden canonical form, and encodes it back: the
// messages must be the same JSON.
func TestRoundTrip(t *testing.T) {
	codectest.RoundTrip(t, Conversation(), "testdata/requests/*.json", messagesOf)
}

// TestEncode encodes the canonical histories in testdata/encode, which hold
// what other providers produce, and compares request and warnings with
// their golden files. Each file name says the options: *.strict, *.repair,
// *.placeholder, *.text (reasoning sent as text).
func TestEncode(t *testing.T) {
	codectest.EncodeGoldens(t, Conversation(), "testdata/encode/*.convo.json")
}

// TestResultNames: a result without a name of its own (OpenAI results have
// none) is sent with its call's name.
func TestResultNames(t *testing.T) {
	h := convo.History{
		convo.User("weather?"),
		convo.Assistant("", convo.ToolCall("c1", "get_weather", json.RawMessage(`{"city":"Paris"}`))),
		convo.ToolResults(convo.Part{Type: convo.TypeToolResult, ID: "c1", Parts: []convo.Part{convo.Text("18")}}),
	}
	out, _, err := Conversation().Encode(h, provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"get_weather"`)) || bytes.Count(out, []byte(`"get_weather"`)) != 2 {
		t.Errorf("result not named after its call: %s", out)
	}
}

// TestEncodeErrorPath: an error while mapping names the caller's message,
// even after Prepare left messages out before it.
func TestEncodeErrorPath(t *testing.T) {
	h := convo.History{
		convo.ErrorMessage("rate limited"),
		convo.User("bad \xff text"),
	}
	_, _, err := Conversation().Encode(h, provider.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "messages[1].parts[0].text: invalid UTF-8") {
		t.Errorf("got %v", err)
	}
}
