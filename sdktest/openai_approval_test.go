package sdktest

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	oai "github.com/convo-go/convo/provider/openai"
)

// TestOpenAIResponsesSDKApprovals: MCP approval items the SDK writes decode
// into approval parts, and what convo encodes from them unmarshals into the
// SDK's ResponseNewParams and marshals back equal.
func TestOpenAIResponsesSDKApprovals(t *testing.T) {
	params := responses.ResponseNewParams{
		Model: openai.ChatModelGPT4_1,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Roll 2d4+1", responses.EasyInputMessageRoleUser),
			{OfMcpApprovalRequest: &responses.ResponseInputItemMcpApprovalRequestParam{
				ID: "mcpr_1", ServerLabel: "dmcp", Name: "roll", Arguments: `{"diceRollExpression":"2d4 + 1"}`,
			}},
			{OfMcpApprovalResponse: &responses.ResponseInputItemMcpApprovalResponseParam{
				ApprovalRequestID: "mcpr_1", Approve: false, Reason: openai.String("not now"), ID: openai.String("mcpa_1"),
			}},
		}},
	}
	body, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := oai.Responses().Decode(body, provider.Options{})
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, body)
	}
	if err := h.Validate(); err != nil {
		t.Fatalf("decoded history: %v", err)
	}
	if p := h[1].Parts[0]; p.Type != convo.TypeApprovalRequest || p.ID != "mcpr_1" || p.Name != "roll" {
		t.Errorf("request = %+v", p)
	}
	if p := h[2].Parts[0]; p.Type != convo.TypeApproval || p.ID != "mcpr_1" || p.Approved || p.Reason != "not now" {
		t.Errorf("answer = %+v", p)
	}
	out, warns, err := oai.Responses().Encode(h, provider.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatalf("encode: %v %v", err, warns)
	}
	oaiSame(t, "input", oaiMembers(t, out, "input"), oaiMembers(t, body, "input"))

	typed := oaiTyped(t, out)
	var back responses.ResponseNewParams
	if err := json.Unmarshal(typed, &back); err != nil {
		t.Fatalf("SDK refuses the encoded request: %v\n%s", err, typed)
	}
	items := back.Input.OfInputItemList
	if len(items) != 3 || items[1].OfMcpApprovalRequest == nil || items[2].OfMcpApprovalResponse == nil {
		t.Fatalf("SDK read the items as %+v", items)
	}
	if r := items[2].OfMcpApprovalResponse; r.Reason.Value != "not now" || r.ApprovalRequestID != "mcpr_1" {
		t.Errorf("SDK read the answer as %+v", r)
	}
	again, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	oaiSame(t, "SDK re-marshal", oaiMembers(t, again, "input"), oaiMembers(t, typed, "input"))
}

// TestOpenAIResponsesSDKApprovalReply: an mcp_approval_request output item
// the SDK reads as ResponseOutputItemMcpApprovalRequest is read by convo's
// reply reader as an approval_request part with the same fields.
func TestOpenAIResponsesSDKApprovalReply(t *testing.T) {
	body := []byte(`{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-4.1",
"output":[{"type":"mcp_approval_request","id":"mcpr_5","server_label":"dmcp","name":"roll","arguments":"{\"n\":2}"}]}`)
	var resp responses.Response
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	want := resp.Output[0].AsMcpApprovalRequest()
	m, _, err := oai.Responses().DecodeReply(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := m.Parts[0]
	var args, wantArgs any
	_ = json.Unmarshal(p.Args, &args)
	_ = json.Unmarshal([]byte(want.Arguments), &wantArgs)
	var nat struct {
		ServerLabel string `json:"server_label"`
	}
	_ = json.Unmarshal(p.Native["openai"], &nat)
	if p.Type != convo.TypeApprovalRequest || p.ID != want.ID || p.Name != want.Name || nat.ServerLabel != want.ServerLabel ||
		!jsonEqual(args, wantArgs) {
		t.Errorf("convo read %+v, SDK read %+v", p, want)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestOpenAIResponsesSDKApprovalWritten: what convo writes for an
// approval_request part — EncodeResponsesReply's output item and the
// stream encoder's output_item.added/.done events — the SDK reads as a
// ResponseOutputItemMcpApprovalRequest with the part's values.
func TestOpenAIResponsesSDKApprovalWritten(t *testing.T) {
	body := []byte(`{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-4.1",
"output":[{"type":"mcp_approval_request","id":"mcpr_5","arguments":"{\"n\": 2}","name":"roll","server_label":"dmcp"}]}`)
	m, _, err := oai.Responses().DecodeReply(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check := func(where string, it responses.ResponseOutputItemUnion) {
		got := it.AsMcpApprovalRequest()
		if it.Type != "mcp_approval_request" || got.ID != "mcpr_5" || got.Name != "roll" || got.ServerLabel != "dmcp" || got.Arguments != `{"n": 2}` {
			t.Errorf("%s: the SDK read %+v", where, got)
		}
	}
	var resp responses.Response
	if err := json.Unmarshal(oai.EncodeResponsesReply(m, provider.StreamOptions{}), &resp); err != nil || len(resp.Output) != 1 {
		t.Fatalf("%v %+v", err, resp.Output)
	}
	check("EncodeResponsesReply", resp.Output[0])
	seen := 0
	for _, ev := range sseEvents(encodeDeltas(t, "openai-responses", provider.MessageDeltas(m))) {
		var e responses.ResponseStreamEventUnion
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			t.Fatal(err)
		}
		switch e.Type {
		case "response.output_item.added", "response.output_item.done":
			check(e.Type, e.Item)
			seen++
		case "response.completed":
			check(e.Type, e.Response.Output[0])
			seen++
		}
	}
	if seen != 3 {
		t.Errorf("%d events with the item, want 3", seen)
	}
}
