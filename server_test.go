package convo_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

func readServerGolden(t *testing.T) convo.History {
	t.Helper()
	src, err := os.ReadFile("testdata/v1/server-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := convo.Unmarshal(src)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestServerToolsGolden(t *testing.T) {
	h := readServerGolden(t)
	if err := h.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	want := convo.ServerToolCall(convo.ServerWebSearch, "anthropic", "srvtoolu_1", "web_search", json.RawMessage(`{"query":"Go release notes"}`))
	if got := h[1].Parts[0]; !got.Equal(want) {
		t.Errorf("call = %+v, want %+v", got, want)
	}
	if got := h[1].Parts[5]; got.Server != convo.ServerMCP || !got.Error || got.Parts[0].Text != "not found" {
		t.Errorf("mcp result = %+v", got)
	}
	// A provider-run call is answered by the provider: the history does
	// not end on pending calls, the messages are final answers, and the
	// agent's accessors leave them out.
	if p := h.Pending(); len(p) != 0 {
		t.Errorf("Pending = %+v, want none", p)
	}
	for _, i := range []int{1, 3} {
		m := h[i]
		if m.HasToolCalls() || len(m.ToolCalls()) != 0 || len(m.ToolResults()) != 0 || !m.IsFinalAnswer() {
			t.Errorf("messages[%d]: provider-run tools counted as the caller's", i)
		}
	}
	if n := len(h[1].ServerTools()); n != 6 {
		t.Errorf("ServerTools = %d parts, want 6", n)
	}
	if got := h[3].Parts[3]; got.Server != "x_future_tool" || len(got.Extra) != 1 {
		t.Errorf("a kind convo does not list = %+v", got)
	}
	// server means something only on tool calls and results.
	if got := h[3].Parts[4]; got.Server != "" || len(got.Extra) != 1 || got.Extra[0].Key != "server" {
		t.Errorf("text part with a server member = %+v", got)
	}
}

// TestServerToolsOldReader: a reader older than the server member keeps it
// as an unknown member of the tool_call or tool_result, written back after
// the known ones; reading that back here gives the same parts. The old
// reader is modelled by the same reader meeting a member it does not know.
func TestServerToolsOldReader(t *testing.T) {
	h := readServerGolden(t)
	want, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	old, err := convo.Unmarshal(bytes.ReplaceAll(want, []byte(`"server":`), []byte(`"x_old_server":`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := old[1].Parts[0]; got.Server != "" || got.Extra.Get("x_old_server") == nil {
		t.Fatalf("old reader's part = %+v", got)
	}
	written, err := convo.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	back, err := convo.Unmarshal(bytes.ReplaceAll(written, []byte(`"x_old_server":`), []byte(`"server":`)))
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(h) {
		t.Errorf("written back by an old reader, the history changed:\n%s", written)
	}
}

func TestServerToolsValidate(t *testing.T) {
	call := convo.ServerToolCall(convo.ServerWebSearch, "anthropic", "s1", "web_search", json.RawMessage(`{}`))
	res := convo.ServerToolResult(convo.ServerWebSearch, "anthropic", "s1", "", convo.Text("r"))
	user := convo.User("q")
	asst := func(ps ...convo.Part) convo.Message { return convo.Message{Role: convo.RoleAssistant, Parts: ps} }
	tool := func(ps ...convo.Part) convo.Message { return convo.Message{Role: convo.RoleTool, Parts: ps} }
	for _, tc := range []struct {
		name string
		h    convo.History
		want string // "" for valid
	}{
		{"call and result", convo.History{user, asst(call, res, convo.Text("a"))}, ""},
		{"call alone (pause_turn)", convo.History{user, asst(call), user}, ""},
		{"result before its call", convo.History{user, asst(res, call)},
			`messages[1].parts[0]: provider-run tool result "s1" answers no provider-run call before it in its message`},
		{"result in a tool message", convo.History{user, asst(call), tool(res)},
			"messages[2].parts[0]: provider-run tool_result in a tool message (it belongs in the assistant message that made the call)"},
		{"client result for a server call", convo.History{user, asst(call), tool(convo.ToolResult("s1", "web_search", "x"))},
			`messages[2].parts[0]: tool result "s1" answers no call of the preceding assistant message`},
		{"server on a text part", convo.History{user, asst(convo.Part{Type: convo.TypeText, Text: "a", Server: "web_search"})},
			"messages[1].parts[0]: server on a text part (only tool calls and results are run by a provider)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.h.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate = %v, want %s", err, tc.want)
			}
		})
	}
}
