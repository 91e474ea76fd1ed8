package provider_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

func TestPrepareApprovals(t *testing.T) {
	args := json.RawMessage(`{}`)
	asst := func(ps ...convo.Part) convo.Message { return convo.Message{Role: convo.RoleAssistant, Parts: ps} }
	user := func(ps ...convo.Part) convo.Message { return convo.Message{Role: convo.RoleUser, Parts: ps} }
	h := convo.History{
		convo.User("tidy up"),
		asst(call("c1", "rm"), convo.ApprovalRequest("r1", "c1", "rm", args),
			call("c2", "ls"), convo.ApprovalRequest("r2", "c2", "ls", args), call("c3", "df")),
		convo.ToolResults(convo.ToolResult("c3", "df", "40%")),
		user(convo.Deny("r1", "not today"), convo.Approve("r2"), convo.Text("and be quick")),
		convo.ToolResults(convo.ToolResult("c2", "ls", "a b")),
		asst(convo.Text("kept; a b")),
		user(convo.Text("read the wiki")),
		asst(convo.ApprovalRequest("m1", "", "wiki", args)),
	}
	if err := h.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}

	got, warns, err := provider.Prepare(h, target, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := convo.History{
		convo.User("tidy up"),
		asst(call("c1", "rm"), call("c2", "ls"), call("c3", "df")),
		convo.ToolResults(convo.ToolResult("c3", "df", "40%")),
		convo.ToolResults(convo.ToolError("c1", "rm", provider.Denied+": not today")),
		convo.ToolResults(convo.ToolResult("c2", "ls", "a b")),
		user(convo.Text("and be quick")),
		asst(convo.Text("kept; a b")),
		user(convo.Text("read the wiki")),
	}
	if !got.Equal(want) {
		t.Errorf("prepared:\n%+v\nwant\n%+v", got, want)
	}
	wantWarns := `messages[1].parts[1]: approval request "r1" (rm) left out: the target has no tool approvals
messages[1].parts[3]: approval request "r2" (ls) left out: the target has no tool approvals
messages[3].parts[0]: denial of approval request "r1" left out: call "c1" is sent with an error result
messages[3].parts[1]: answer to approval request "r2" left out: the target has no tool approvals
messages[7].parts[0]: approval request "m1" (wiki) is pending: not sent
messages[7]: assistant message left out: nothing in it can be sent`
	if s := warnings(warns); s != wantWarns {
		t.Errorf("warnings:\n%s\nwant\n%s", s, wantWarns)
	}
	for _, w := range warns[:5] {
		if w.Code != provider.CodeApprovalDropped {
			t.Errorf("%s: code %q, want %q", w, w.Code, provider.CodeApprovalDropped)
		}
	}

	// A target that takes approvals gets the request that stands for a
	// call; the gated calls are prepared as for any other target.
	kept, warns, err := provider.Prepare(h, provider.Target{Provider: "openai", Approvals: true}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, h[len(h)-1])
	if !kept.Equal(want) || len(warns) != 4 {
		t.Errorf("with approvals: %v\n%+v", warnings(warns), kept)
	}
}

// TestPrepareApprovalsPlaces: pairing problems after approvals moved results
// are named at their place in the caller's history.
func TestPrepareApprovalsPlaces(t *testing.T) {
	args := json.RawMessage(`{}`)
	h := convo.History{
		convo.User("go"),
		{Role: convo.RoleAssistant, Parts: []convo.Part{call("c1", "rm"), convo.ApprovalRequest("r1", "c1", "rm", args), call("c2", "ls")}},
		{Role: convo.RoleUser, Parts: []convo.Part{convo.Approve("r1")}},
		convo.ToolResults(convo.ToolResult("c1", "rm", "ok")),
		convo.Assistant("done"),
	}
	_, _, err := provider.Prepare(h, target, provider.Options{})
	var ue *provider.UnpairedError
	if !errors.As(err, &ue) || len(ue.Problems) != 1 || ue.Problems[0].Path != "messages[1].parts[2]" {
		t.Fatalf("err = %v, want the unanswered call c2 at messages[1].parts[2]", err)
	}
	got, warns, err := provider.Prepare(h, target, provider.Options{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) == 0 || warns[0].Path != "messages[1].parts[2]" || warns[0].Code != provider.CodeResultInserted {
		t.Errorf("repair warnings: %v", warns)
	}
	if len(got) != 5 || got[3].Role != convo.RoleTool || !got[3].Parts[0].Error || got[4].Role != convo.RoleAssistant {
		t.Errorf("repaired: %+v", got)
	}
}
