package openai_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
	"github.com/convo-go/convo/provider/openai"
)

// approvalBody is a Responses request that answers MCP approval requests:
// the model's request (with a server label convo keeps in Native), an
// approval, a denial with a reason, and one with an empty reason.
const approvalBody = `{"input":[
{"role":"user","content":"Roll 2d4+1"},
{"type":"mcp_approval_request","id":"mcpr_1","server_label":"dmcp","name":"roll","arguments":"{\"diceRollExpression\":\"2d4 + 1\"}"},
{"type":"mcp_approval_response","approval_request_id":"mcpr_1","approve":true},
{"type":"mcp_approval_request","id":"mcpr_2","server_label":"dmcp","name":"roll","arguments":"{ \"x\": 1 }"},
{"type":"mcp_approval_response","approval_request_id":"mcpr_2","approve":false,"reason":"not now"},
{"type":"mcp_approval_request","id":"mcpr_3","server_label":"dmcp","name":"roll","arguments":"{}"},
{"type":"mcp_approval_response","id":"mcpa_3","approval_request_id":"mcpr_3","approve":false,"reason":""}
]}`

func normJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestResponsesApprovals(t *testing.T) {
	f := openai.Responses()
	h, warns, err := f.Decode([]byte(approvalBody), provider.Options{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("Decode: %v %v", err, warns)
	}
	if err := h.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if len(h) != 7 {
		t.Fatalf("got %d messages, want 7", len(h))
	}
	req := h[1].Parts[0]
	if h[1].Role != convo.RoleAssistant || req.Type != convo.TypeApprovalRequest || req.ID != "mcpr_1" || req.Name != "roll" ||
		string(req.Args) != `{"diceRollExpression":"2d4 + 1"}` || string(req.Native["openai"]) != `{"server_label":"dmcp"}` {
		t.Errorf("approval request = %+v", req)
	}
	if a := h[2].Parts[0]; h[2].Role != convo.RoleUser || a.Type != convo.TypeApproval || a.ID != "mcpr_1" || !a.Approved || a.Native != nil {
		t.Errorf("approval = %+v", a)
	}
	if a := h[4].Parts[0]; a.Type != convo.TypeApproval || a.Approved || a.Reason != "not now" {
		t.Errorf("denial = %+v", a)
	}
	if a := h[6].Parts[0]; a.Reason != "" || string(a.Native["openai"]) != `{"id":"mcpa_3","reason":""}` {
		t.Errorf("denial with empty reason = %+v", a)
	}
	body, warns, err := f.Encode(h, provider.Options{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("Encode: %v %v", err, warns)
	}
	if got, want := normJSON(t, body), normJSON(t, []byte(approvalBody)); got != want {
		t.Errorf("round trip:\n got %s\nwant %s", got, want)
	}
}

// TestResponsesApprovalsBuilt encodes approvals built with the root
// constructors, as a caller answering a request would.
func TestResponsesApprovalsBuilt(t *testing.T) {
	req := convo.ApprovalRequest("mcpr_9", "", "search", json.RawMessage(`{"q":"go"}`))
	req.Native = convo.Native{"openai": json.RawMessage(`{"server_label":"docs"}`)}
	h := convo.History{
		{Role: convo.RoleUser, Parts: []convo.Part{convo.Text("find go docs")}},
		{Role: convo.RoleAssistant, Parts: []convo.Part{req}},
		{Role: convo.RoleUser, Parts: []convo.Part{convo.Deny("mcpr_9", "too broad")}},
	}
	body, warns, err := openai.Responses().Encode(h, provider.Options{})
	if err != nil || len(warns) != 0 {
		t.Fatalf("Encode: %v %v", err, warns)
	}
	for _, want := range []string{
		`{"type":"mcp_approval_request","id":"mcpr_9","name":"search","arguments":"{\"q\":\"go\"}","server_label":"docs"}`,
		`{"type":"mcp_approval_response","approval_request_id":"mcpr_9","approve":false,"reason":"too broad"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body lacks %s:\n%s", want, body)
		}
	}
}

func TestResponsesApprovalErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"input":[{"type":"mcp_approval_request","name":"x","arguments":"{}"}]}`, `input[0]: mcp_approval_request has no "id"`},
		{`{"input":[{"type":"mcp_approval_response","approve":true}]}`, `input[0]: mcp_approval_response has no "approval_request_id"`},
		{`{"input":[{"type":"mcp_approval_response","approval_request_id":"a","approve":"yes"}]}`, `input[0].approve`},
	} {
		_, _, err := openai.Responses().Decode([]byte(tc.body), provider.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%s) = %v, want %q", tc.body, err, tc.want)
		}
	}
}

// TestResponsesReplyApprovalRequest reads a reply whose output asks for
// approval, whole and streamed.
func TestResponsesReplyApprovalRequest(t *testing.T) {
	item := `{"type":"mcp_approval_request","id":"mcpr_5","server_label":"dmcp","name":"roll","arguments":"{\"n\":2}"}`
	body := `{"id":"resp_1","object":"response","status":"completed","model":"gpt-4.1","output":[` + item + `]}`
	check := func(name string, m convo.Message) {
		t.Helper()
		if len(m.Parts) != 1 {
			t.Fatalf("%s: parts = %+v", name, m.Parts)
		}
		p := m.Parts[0]
		if p.Type != convo.TypeApprovalRequest || p.ID != "mcpr_5" || p.Name != "roll" || string(p.Args) != `{"n":2}` ||
			!strings.Contains(string(p.Native["openai"]), `"server_label":"dmcp"`) {
			t.Errorf("%s: part = %+v", name, p)
		}
	}
	m, _, err := openai.Responses().DecodeReply([]byte(body), provider.Options{})
	if err != nil {
		t.Fatalf("DecodeReply: %v", err)
	}
	check("DecodeReply", m)
	stream := "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"model\":\"gpt-4.1\",\"output\":[]}}\n\n" +
		"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":" + item + "}\n\n" +
		"event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":" + item + "}\n\n" +
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":" + body + "}\n\n"
	m, _, err = openai.Responses().ReadStream(strings.NewReader(stream), provider.Options{})
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	check("ReadStream", m)
}

// approvalParts returns the approval_request parts of m.
func approvalParts(m convo.Message) []convo.Part {
	var ps []convo.Part
	for _, p := range m.Parts {
		if p.Type == convo.TypeApprovalRequest {
			ps = append(ps, p)
		}
	}
	return ps
}

// TestResponsesStreamApprovalRequest: the mcp_approval_request item of a
// recorded stream folds into an approval_request part, and the Responses
// stream encoder and EncodeResponsesReply write it back as the same item,
// which reads back as the same part (server_label and the arguments as
// sent kept).
func TestResponsesStreamApprovalRequest(t *testing.T) {
	chunks, err := os.ReadFile("testdata/recorded/responses/vercel-openai-mcp-tool-approval.1.chunks.txt")
	if err != nil {
		t.Fatal(err)
	}
	sse := codectest.SSEFromChunks(chunks, true)
	var out bytes.Buffer
	m, _ := codectest.Transcode(t, provider.NewDeltaReader(openai.Responses().NewAccumulator(provider.Options{})), sse, openai.NewResponsesStreamEncoder(&out, provider.StreamOptions{}))
	want := approvalParts(m)
	if len(want) != 1 || want[0].ID != "mcpr_04a97b4fce127879006949a83ac9308195a7f7b69ea82e91fe" || want[0].Name != "create_short_url" || !strings.Contains(string(want[0].Native["openai"]), `"server_label":"zip1"`) {
		t.Fatalf("approval requests read: %+v", want)
	}
	streamed, _, err := openai.Responses().ReadStream(bytes.NewReader(out.Bytes()), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := openai.Responses().DecodeReply(openai.EncodeResponsesReply(m, provider.StreamOptions{}), provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]convo.Message{"stream encoder": streamed, "EncodeResponsesReply": whole} {
		ps := approvalParts(got)
		if len(ps) != 1 || !ps[0].Equal(want[0]) {
			t.Errorf("%s: %+v\nwant %+v", name, ps, want)
		}
	}
	if !bytes.Contains(out.Bytes(), []byte(`"type":"response.output_item.added","sequence_number":`)) || !bytes.Contains(out.Bytes(), []byte(`"type":"mcp_approval_request","arguments":"{\"alias\":\"\"`)) {
		t.Errorf("no mcp_approval_request item in\n%s", out.Bytes())
	}
}
