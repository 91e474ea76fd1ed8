package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
)

// TestTenantIsolation checks every route that names a conversation: another
// tenant's conversation answers exactly as one that does not exist — same
// status, same problem — and stays unchanged; listings leave it out.
func TestTenantIsolation(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := replayServer(t, open(t)) // every route served, replays too
		c := ts.create(t, ts.alice, `[{"role":"user","id":"u1","parts":[{"type":"text","text":"secret"}]},{"role":"assistant","id":"a1","parts":[{"type":"text","text":"ok"}]}]`)
		before, beforeDesc := ts.load(t, ts.aliceTenant, c.ID)

		type call struct{ method, path, body string }
		// One request per route; ID stands for the conversation id.
		calls := map[string]call{
			"GET /convo/v1/conversations/{id}":                       {"GET", "/convo/v1/conversations/ID", ""},
			"PATCH /convo/v1/conversations/{id}":                     {"PATCH", "/convo/v1/conversations/ID", `{"title":"mine now","meta":{"x":1}}`},
			"DELETE /convo/v1/conversations/{id}":                    {"DELETE", "/convo/v1/conversations/ID", ""},
			"POST /convo/v1/conversations/{id}/messages":             {"POST", "/convo/v1/conversations/ID/messages", `{"version":1,"messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`},
			"GET /convo/v1/conversations/{id}/messages":              {"GET", "/convo/v1/conversations/ID/messages", ""},
			"GET /convo/v1/conversations/{id}/messages/{message}":    {"GET", "/convo/v1/conversations/ID/messages/u1", ""},
			"DELETE /convo/v1/conversations/{id}/messages/{message}": {"DELETE", "/convo/v1/conversations/ID/messages/u1?version=1", ""},
			"POST /convo/v1/conversations/{id}/fork":                 {"POST", "/convo/v1/conversations/ID/fork", `{"at":1}`},
			"POST /convo/v1/conversations/{id}/fork (before)":        {"POST", "/convo/v1/conversations/ID/fork", `{"before":"a1"}`},
			"GET /convo/v1/conversations/{id}/export":                {"GET", "/convo/v1/conversations/ID/export", ""},
			"GET /convo/v1/conversations/{id}/export (codec)":        {"GET", "/convo/v1/conversations/ID/export?format=anthropic", ""},
			"POST /convo/v1/conversations/{id}/replay":               {"POST", "/convo/v1/conversations/ID/replay", `{"model":"gpt-x"}`},
			"GET /convo/v1/conversations/{id}/replay":                {"GET", "/convo/v1/conversations/ID/replay", ""},
			"GET /v1/conversations/{id}":                             {"GET", "/v1/conversations/ID", ""},
			"POST /v1/conversations/{id}":                            {"POST", "/v1/conversations/ID", `{"metadata":{"x":"1"}}`},
			"DELETE /v1/conversations/{id}":                          {"DELETE", "/v1/conversations/ID", ""},
			"POST /v1/conversations/{id}/items":                      {"POST", "/v1/conversations/ID/items", `{"items":[{"type":"message","role":"user","content":"hi"}]}`},
			"GET /v1/conversations/{id}/items":                       {"GET", "/v1/conversations/ID/items", ""},
			"GET /v1/conversations/{id}/items/{item}":                {"GET", "/v1/conversations/ID/items/u1", ""},
			"DELETE /v1/conversations/{id}/items/{item}":             {"DELETE", "/v1/conversations/ID/items/u1", ""},
		}
		for _, route := range server.Routes() {
			if strings.Contains(route, "{id}") {
				if _, ok := calls[route]; !ok {
					t.Errorf("route %s has no tenant isolation case", route)
				}
			}
		}
		for name, cl := range calls {
			t.Run(name, func(t *testing.T) {
				foreign := ts.do(t, cl.method, strings.Replace(cl.path, "ID", c.ID, 1), ts.bob, bodyOrNil(cl.body))
				missing := ts.do(t, cl.method, strings.Replace(cl.path, "ID", "conv_doesnotexist", 1), ts.alice, bodyOrNil(cl.body))
				pf := foreign.problem(t, http.StatusNotFound, "not-found")
				pm := missing.problem(t, http.StatusNotFound, "not-found")
				pf.Instance, pm.Instance = "", ""
				if pf.Detail != pm.Detail || pf.Title != pm.Title || pf.Type != pm.Type || (pf.Error == nil) != (pm.Error == nil) {
					t.Errorf("another tenant's conversation answers %+v, a missing one %+v", pf, pm)
				}
				if strings.Contains(pf.Detail, c.ID) || pf.Error != nil && strings.Contains(pf.Error.Message, c.ID) {
					t.Errorf("the answer names the conversation: %s", foreign.body)
				}
			})
		}
		after, afterDesc := ts.load(t, ts.aliceTenant, c.ID)
		if !after.Equal(before) || afterDesc.Version != beforeDesc.Version || afterDesc.Title != beforeDesc.Title ||
			string(afterDesc.Meta) != string(beforeDesc.Meta) || !afterDesc.Updated.Equal(beforeDesc.Updated) {
			t.Errorf("another tenant changed the conversation: %+v → %+v", beforeDesc, afterDesc)
		}

		var list struct {
			Conversations []conversation `json:"conversations"`
		}
		ts.do(t, "GET", "/convo/v1/conversations", ts.bob, nil).want(t, 200).decode(t, &list)
		for _, lc := range list.Conversations {
			if lc.ID == c.ID {
				t.Error("another tenant's listing shows the conversation")
			}
		}
		ts.do(t, "GET", "/convo/v1/conversations?title=test", ts.bob, nil).want(t, 200).decode(t, &list)
		if len(list.Conversations) != 0 {
			t.Errorf("another tenant's filtered listing shows %d conversations", len(list.Conversations))
		}
		// Bob may use the same id for his own conversation; each sees his own.
		ts.do(t, "POST", "/convo/v1/conversations", ts.bob, `{"id":"`+c.ID+`","title":"bob's"}`).want(t, 201)
		var mine conversation
		ts.do(t, "GET", "/convo/v1/conversations/"+c.ID, ts.alice, nil).want(t, 200).decode(t, &mine)
		if mine.Title != "test" || mine.Messages != 2 {
			t.Errorf("alice sees %+v", mine)
		}
	})
}

func bodyOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
