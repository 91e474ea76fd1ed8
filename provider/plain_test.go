package provider

import (
	"encoding/json"
	"testing"

	"github.com/convo-go/convo"
)

// TestPlainParts checks preparer.plain against preparer.part: every part
// plain lets through untouched is one part keeps as it is, without a
// warning, for a target that changes ids and media and one that does not;
// and the common parts take the short way.
func TestPlainParts(t *testing.T) {
	image := convo.Image("image/png", []byte("png"))
	sub := convo.ToolResultParts("c1", "look", convo.Text("seen"), image)
	withServer := convo.ToolCall("c2", "search", json.RawMessage(`{}`))
	withServer.Server = "web_search"
	withServer.Provider = "anthropic"
	unknown := convo.Part{Type: "hologram", Raw: json.RawMessage(`{"type":"hologram"}`)}
	parts := []convo.Part{
		convo.Text("hello"), convo.Refusal("no"), convo.JSON(json.RawMessage(`{"a":1}`)),
		convo.ToolCall("call 1", "look", json.RawMessage(`{"q":"x"}`)),
		convo.ToolResult("call 1", "look", "found"), convo.ToolError("call 1", "look", "failed"),
		sub, withServer, convo.Reasoning("thinking"), image,
		convo.ApprovalRequest("r1", "call 1", "look", nil), convo.Approve("r1"), unknown,
	}
	targets := map[string]Target{
		"keeps all": {Provider: "openai"},
		"changes ids and refuses media": {Provider: "anthropic",
			ID:    func(id string) string { return SanitizeID(id, 64) },
			Media: func(convo.Part, bool) bool { return false }},
	}
	for name, tg := range targets {
		for j := range parts {
			p := &preparer{t: tg}
			q := &parts[j]
			if !p.plain(q) {
				continue
			}
			np, keep, err := p.part(loc{}.part(j), *q, false)
			if err != nil || !keep || !samePart(np, *q) || len(p.warns) > 0 {
				t.Errorf("%s: %s part is plain, but part gives keep %v, same %v, warnings %v, error %v",
					name, q.Type, keep, samePart(np, *q), p.warns, err)
			}
		}
	}
	p := &preparer{t: Target{}}
	for _, q := range parts[:5] {
		if !p.plain(&q) {
			t.Errorf("a %s part takes the long way", q.Type)
		}
	}
}
