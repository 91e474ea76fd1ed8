package convo_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

func TestApprovalGoldenValidates(t *testing.T) {
	src, err := os.ReadFile("testdata/v1/approvals.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := convo.Unmarshal(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	req := h[1].Parts[1]
	want := convo.ApprovalRequest("apr_1", "call_1", "delete_files", json.RawMessage(`{"glob":"/var/log/*.1"}`))
	if !req.Equal(want) {
		t.Errorf("request = %+v, want %+v", req, want)
	}
	if got, want := h[2].Parts[0], convo.Deny("apr_1", "keep them until the audit"); !got.Equal(want) {
		t.Errorf("denial = %+v, want %+v", got, want)
	}
	if got := h[5].Parts[0]; !got.Approved || got.Reason != "" || len(got.Extra) != 1 || got.Extra[0].Key != "x_future" {
		t.Errorf("approval with a null reason and a future member = %+v", got)
	}
	// call_id, approved and reason mean something only on approval parts;
	// elsewhere they stay extra members, as they were before.
	if got := h[6].Parts[1]; got.CallID != "" || got.Approved || got.Reason != "" || len(got.Extra) != 3 {
		t.Errorf("text part with approval members = %+v", got)
	}
}

// TestApprovalOldReader: a reader older than the approval parts does not
// know their types; its unknown-part handling keeps them whole, so what it
// writes back reads here as the same parts. The old reader is modelled by
// the same reader meeting types it does not know.
func TestApprovalOldReader(t *testing.T) {
	src, err := os.ReadFile("testdata/v1/approvals.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := convo.Unmarshal(src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	hide := strings.NewReplacer(`"type":"approval_request"`, `"type":"x_old_approval_request"`, `"type":"approval"`, `"type":"x_old_approval"`)
	show := strings.NewReplacer(`"type":"x_old_approval_request"`, `"type":"approval_request"`, `"type":"x_old_approval"`, `"type":"approval"`)
	old, err := convo.Unmarshal([]byte(hide.Replace(string(want))))
	if err != nil {
		t.Fatal(err)
	}
	raw := 0
	for _, m := range old {
		for _, p := range m.Parts {
			if p.Raw != nil {
				raw++
			}
		}
	}
	if raw != 6 {
		t.Fatalf("old reader kept %d parts whole, want the 6 approval parts", raw)
	}
	written, err := convo.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if got := show.Replace(string(written)); got != string(want) {
		t.Errorf("old reader's round trip changed the document:\n got %s\nwant %s", got, want)
	}
}

func TestApprovalDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`[{"role":"user","parts":[{"type":"approval","id":"a","approved":"yes"}]}]`, `messages[0].parts[0].approved: want true or false`},
		{`[{"role":"user","parts":[{"approved":1,"type":"approval","id":"a"}]}]`, `messages[0].parts[0].approved: want true or false`},
		{`[{"role":"user","parts":[{"type":"approval","id":"a","reason":7}]}]`, `messages[0].parts[0].reason: want a string`},
		{`[{"role":"assistant","parts":[{"type":"approval_request","id":"a","name":"n","call_id":{}}]}]`, `messages[0].parts[0].call_id: want a string`},
	} {
		_, err := convo.Unmarshal([]byte(tc.doc))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %s", tc.doc, err, tc.want)
		}
	}
}

func TestApprovalValidate(t *testing.T) {
	args := json.RawMessage(`{}`)
	call := convo.ToolCall("c1", "rm", args)
	req := convo.ApprovalRequest("r1", "c1", "rm", args)
	asst := func(ps ...convo.Part) convo.Message { return convo.Message{Role: convo.RoleAssistant, Parts: ps} }
	user := func(ps ...convo.Part) convo.Message { return convo.Message{Role: convo.RoleUser, Parts: ps} }
	tool := func(ps ...convo.Part) convo.Message { return convo.Message{Role: convo.RoleTool, Parts: ps} }
	final := asst(convo.Text("done"))
	for _, tc := range []struct {
		name string
		h    convo.History
		want string // "" for valid; else the first problem
	}{
		{"pending request", convo.History{user(convo.Text("go")), asst(call, req)}, ""},
		{"approved, result after the answer", convo.History{asst(call, req), user(convo.Approve("r1")), tool(convo.ToolResult("c1", "rm", "ok")), final}, ""},
		{"denied, no result", convo.History{asst(call, req), user(convo.Deny("r1", "no")), final}, ""},
		{"denied, error result", convo.History{asst(call, req), user(convo.Deny("r1", "")), tool(convo.ToolError("c1", "rm", "denied")), final}, ""},
		{"request without a call", convo.History{asst(convo.ApprovalRequest("r1", "", "mcp", args)), user(convo.Approve("r1")), final}, ""},
		{"approved, no result", convo.History{asst(call, req), user(convo.Approve("r1")), final},
			`messages[0].parts[0]: tool call "c1" (rm) has no result before messages[2]`},
		{"unanswered gated call", convo.History{asst(call, req), user(convo.Text("hm")), final},
			`messages[0].parts[0]: tool call "c1" (rm) has no result before messages[1]`},
		{"ungated call before the answer", convo.History{asst(call, req, convo.ToolCall("c2", "ls", args)), user(convo.Approve("r1")), tool(convo.ToolResult("c1", "rm", "ok"))},
			`messages[0].parts[2]: tool call "c2" (ls) has no result before messages[1]`},
		{"answer without a request", convo.History{user(convo.Deny("r9", ""))},
			`messages[0].parts[0]: approval answers request "r9", which no earlier assistant message made`},
		{"answer before its request", convo.History{user(convo.Approve("r1")), asst(convo.ApprovalRequest("r1", "", "x", args))},
			`messages[0].parts[0]: approval answers request "r1", which no earlier assistant message made`},
		{"answered twice", convo.History{asst(convo.ApprovalRequest("r1", "", "x", args)), user(convo.Approve("r1")), final, user(convo.Deny("r1", ""))},
			`messages[3].parts[0]: approval request "r1" (messages[0].parts[0]) is already answered`},
		{"duplicate request id", convo.History{asst(convo.ApprovalRequest("r1", "", "x", args), convo.ApprovalRequest("r1", "", "y", args))},
			`messages[0].parts[1]: approval request id "r1" is already used at messages[0].parts[0]`},
		{"gates a call elsewhere", convo.History{asst(convo.ApprovalRequest("r1", "c9", "x", args))},
			`messages[0].parts[0]: approval request gates call "c9", which is not in its message`},
		{"request in a user message", convo.History{user(convo.ApprovalRequest("r1", "", "x", args))},
			`messages[0].parts[0]: approval_request in a user message (only assistant messages ask for approval)`},
		{"answer in an assistant message", convo.History{asst(convo.ApprovalRequest("r1", "", "x", args)), asst(convo.Approve("r1"))},
			`messages[1].parts[0]: approval in a assistant message (a person answers in a user message)`},
		{"request without id and name", convo.History{asst(convo.Part{Type: convo.TypeApprovalRequest})},
			`messages[0].parts[0]: approval request has no id`},
		{"answer without id", convo.History{user(convo.Part{Type: convo.TypeApproval})},
			`messages[0].parts[0]: approval has no id (of the request it answers)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.h.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want == "":
			case err == nil:
				t.Fatalf("Validate accepted it, want %s", tc.want)
			default:
				ve := err.(*convo.ValidationError)
				if got := ve.Problems[0].Path + ": " + ve.Problems[0].Msg; got != tc.want {
					t.Fatalf("first problem %q, want %q (all: %v)", got, tc.want, ve.Problems)
				}
			}
		})
	}
}

func TestApprovalConstructorsRoundTrip(t *testing.T) {
	h := convo.History{
		{Role: convo.RoleAssistant, Parts: []convo.Part{convo.ToolCall("c", "f", json.RawMessage(`{"a":1}`)), convo.ApprovalRequest("r", "c", "f", json.RawMessage(`{"a":1}`))}},
		{Role: convo.RoleUser, Parts: []convo.Part{convo.Deny("r", "not now"), convo.Approve("other")}},
	}
	b, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"type":"approval_request","id":"r","call_id":"c","name":"f","args":{"a":1}}`,
		`{"type":"approval","id":"r","approved":false,"reason":"not now"}`, `{"type":"approval","id":"other","approved":true}`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("encoding lacks %s:\n%s", want, b)
		}
	}
	back, err := convo.Unmarshal(b)
	if err != nil || !back.Equal(h) {
		t.Fatalf("round trip: %v\n%+v", err, back)
	}
}
