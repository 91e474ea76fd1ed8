package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
)

// The OpenAI-compatible API through raw HTTP: what the SDK test in sdktest
// does not reach (limits, refusals, the shapes of listed items).

type oaList struct {
	Object  string            `json:"object"`
	Data    []json.RawMessage `json:"data"`
	FirstID string            `json:"first_id"`
	LastID  string            `json:"last_id"`
	HasMore bool              `json:"has_more"`
}

func itemIDs(t *testing.T, l oaList) []string {
	t.Helper()
	var ids []string
	for _, raw := range l.Data {
		var it struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &it); err != nil || it.ID == "" {
			t.Fatalf("item without id: %s", raw)
		}
		ids = append(ids, it.ID)
	}
	return ids
}

func TestOpenAIConversations(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		var c struct {
			ID        string            `json:"id"`
			Object    string            `json:"object"`
			CreatedAt int64             `json:"created_at"`
			Metadata  map[string]string `json:"metadata"`
		}
		ts.do(t, "POST", "/v1/conversations", ts.alice, `{"metadata":{"topic":"demo"}}`).want(t, 200).decode(t, &c)
		if c.Object != "conversation" || c.CreatedAt == 0 || c.Metadata["topic"] != "demo" {
			t.Fatalf("created %+v", c)
		}
		// The native API sees the same conversation, metadata as meta.
		var nc conversation
		ts.do(t, "GET", "/convo/v1/conversations/"+c.ID, ts.alice, nil).want(t, 200).decode(t, &nc)
		if string(nc.Meta) != `{"topic":"demo"}` {
			t.Errorf("native meta %s", nc.Meta)
		}
		// Metadata is OpenAI's: strings, at most 16, bounded lengths.
		many := map[string]string{}
		for i := range 17 {
			many[fmt.Sprint("k", i)] = "v"
		}
		manyJSON, _ := json.Marshal(map[string]any{"metadata": many})
		for _, body := range []string{
			`{"metadata":{"n":1}}`,
			`{"metadata":{"` + strings.Repeat("k", 65) + `":"v"}}`,
			`{"metadata":{"k":"` + strings.Repeat("v", 513) + `"}}`,
			string(manyJSON),
			`{"metadata":[]}`,
			`{"metadata":{"k":"v"},"name":"x"}`,
		} {
			p := ts.do(t, "POST", "/v1/conversations/"+c.ID, ts.alice, body).problem(t, 400, "bad-request")
			if p.Error == nil || p.Error.Type != "invalid_request_error" || p.Error.Message != p.Detail {
				t.Errorf("%s: OpenAI error %+v", body, p.Error)
			}
		}
		ts.do(t, "POST", "/v1/conversations/"+c.ID, ts.alice, `{}`).problem(t, 400, "bad-request")
		ts.do(t, "POST", "/v1/conversations/"+c.ID, ts.alice, `{"metadata":{"topic":"other"}}`).want(t, 200).decode(t, &c)
		if len(c.Metadata) != 1 || c.Metadata["topic"] != "other" {
			t.Errorf("updated metadata %v", c.Metadata)
		}
		// A conversation made natively, without metadata, shows {}.
		plain := ts.create(t, ts.alice, "")
		r := ts.do(t, "GET", "/v1/conversations/"+plain.ID, ts.alice, nil).want(t, 200)
		if !strings.Contains(string(r.body), `"metadata":{}`) {
			t.Errorf("no metadata shows as %s", r.body)
		}
		var del struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Deleted bool   `json:"deleted"`
		}
		ts.do(t, "DELETE", "/v1/conversations/"+c.ID, ts.alice, nil).want(t, 200).decode(t, &del)
		if del.ID != c.ID || del.Object != "conversation.deleted" || !del.Deleted {
			t.Errorf("delete %+v", del)
		}
		p := ts.do(t, "GET", "/v1/conversations/"+c.ID, ts.alice, nil).problem(t, 404, "not-found")
		if p.Error == nil || p.Error.Code == nil || *p.Error.Code != "not_found" {
			t.Errorf("OpenAI error %+v", p.Error)
		}
	})
}

func TestOpenAIItems(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		var c struct {
			ID string `json:"id"`
		}
		ts.do(t, "POST", "/v1/conversations", ts.alice,
			`{"items":[{"type":"message","role":"developer","content":"Be brief."},{"type":"message","role":"user","content":"Weather in Paris?"}]}`).want(t, 200).decode(t, &c)
		items := "/v1/conversations/" + c.ID + "/items"

		// A model turn: reasoning and two parallel calls become one
		// assistant message; the outputs one tool message each.
		turn := `{"items":[
			{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Call both."}],"encrypted_content":"gAAAA"},
			{"type":"function_call","id":"fc_1","call_id":"call_1","name":"weather","arguments":"{\"city\":\"Paris\"}"},
			{"type":"function_call","id":"fc_2","call_id":"call_2","name":"time","arguments":"{}"}]}`
		var added oaList
		ts.do(t, "POST", items, ts.alice, turn).want(t, 200).decode(t, &added)
		if got := strings.Join(itemIDs(t, added), ","); got != "rs_1,fc_1,fc_2" || added.FirstID != "rs_1" || added.LastID != "fc_2" || added.Object != "list" {
			t.Fatalf("added %s (first %s, last %s)", got, added.FirstID, added.LastID)
		}
		// The calls wait for their outputs; a user message now is refused.
		p := ts.do(t, "POST", items, ts.alice, `{"items":[{"type":"message","role":"user","content":"hello?"}]}`).problem(t, 422, "invalid")
		if len(p.Errors) == 0 || p.Error == nil {
			t.Errorf("refusal %+v", p)
		}
		ts.do(t, "POST", items, ts.alice, `{"items":[
			{"type":"function_call_output","call_id":"call_1","output":"18 C"},
			{"type":"function_call_output","call_id":"call_2","output":"noon"},
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"18 C at noon.","annotations":[]}]}]}`).want(t, 200).decode(t, &added)
		if len(added.Data) != 3 {
			t.Fatalf("added %d items, want 3: %s", len(added.Data), added.Data)
		}

		h, _ := ts.load(t, ts.aliceTenant, c.ID)
		roles := make([]string, len(h))
		for i, m := range h {
			roles[i] = string(m.Role)
		}
		if strings.Join(roles, ",") != "system,user,assistant,tool,tool,assistant" {
			t.Fatalf("stored roles %v", roles)
		}
		if len(h[2].Parts) != 3 || h[2].Parts[0].Encrypted != "gAAAA" {
			t.Errorf("the model turn is not one message with its reasoning: %+v", h[2])
		}

		// Listing: newest first by default, ascending on request, paged by
		// item id; every item has an id, a type and a status.
		var all oaList
		ts.do(t, "GET", items+"?order=asc&limit=100", ts.alice, nil).want(t, 200).decode(t, &all)
		ids := itemIDs(t, all)
		if len(ids) != 8 || all.HasMore {
			t.Fatalf("listed %v (has_more %v)", ids, all.HasMore)
		}
		if ids[0] != h[0].ID || ids[2] != "rs_1" || ids[3] != "fc_1" || ids[4] != "fc_2" {
			t.Errorf("ids %v", ids)
		}
		for _, raw := range all.Data {
			var it map[string]any
			json.Unmarshal(raw, &it)
			if it["type"] == nil || (it["type"] == "message" || it["type"] == "function_call") && it["status"] != "completed" {
				t.Errorf("item %s lacks type or status", raw)
			}
			if c, ok := it["content"]; ok {
				if _, isString := c.(string); isString {
					t.Errorf("item %s has string content", raw)
				}
			}
		}
		var page oaList
		ts.do(t, "GET", items+"?limit=3", ts.alice, nil).want(t, 200).decode(t, &page)
		desc := itemIDs(t, page)
		if len(desc) != 3 || desc[0] != ids[7] || desc[2] != ids[5] || !page.HasMore || page.LastID != ids[5] {
			t.Fatalf("first desc page %v (has_more %v), all %v", desc, page.HasMore, ids)
		}
		ts.do(t, "GET", items+"?limit=3&after="+page.LastID, ts.alice, nil).want(t, 200).decode(t, &page)
		if got := itemIDs(t, page); len(got) != 3 || got[0] != ids[4] {
			t.Errorf("second desc page %v", got)
		}
		ts.do(t, "GET", items+"?order=asc&after="+ids[6], ts.alice, nil).want(t, 200).decode(t, &page)
		if got := itemIDs(t, page); len(got) != 1 || got[0] != ids[7] || page.HasMore {
			t.Errorf("last asc page %v", got)
		}
		ts.do(t, "GET", items+"?after=nope", ts.alice, nil).problem(t, 400, "bad-request")
		ts.do(t, "GET", items+"?order=sideways", ts.alice, nil).problem(t, 400, "bad-request")
		ts.do(t, "GET", items+"?limit=101", ts.alice, nil).problem(t, 400, "bad-request")

		// Retrieve one item; the id is the one given, or the message's.
		var one map[string]any
		ts.do(t, "GET", items+"/fc_2", ts.alice, nil).want(t, 200).decode(t, &one)
		if one["call_id"] != "call_2" || one["name"] != "time" {
			t.Errorf("fc_2 = %v", one)
		}
		ts.do(t, "GET", items+"/"+ids[1], ts.alice, nil).want(t, 200).decode(t, &one)
		if one["role"] != "user" {
			t.Errorf("%s = %v", ids[1], one)
		}
		ts.do(t, "GET", items+"/nope", ts.alice, nil).problem(t, 404, "not-found")

		// An item sharing its message cannot be deleted alone; one alone can.
		p = ts.do(t, "DELETE", items+"/fc_1", ts.alice, nil).problem(t, 400, "item-not-alone")
		if !strings.Contains(p.Detail, h[2].ID) {
			t.Errorf("detail %q does not name the message", p.Detail)
		}
		ts.do(t, "DELETE", items+"/"+ids[7], ts.alice, nil).want(t, 200)
		ts.do(t, "GET", items+"/"+ids[7], ts.alice, nil).problem(t, 404, "not-found")
		if h2, _ := ts.load(t, ts.aliceTenant, c.ID); len(h2) != 5 {
			t.Errorf("%d messages after deleting one", len(h2))
		}

		// Items convo cannot keep whole are refused, not stored in part.
		for _, body := range []string{
			`{"items":[{"type":"message","role":"user","content":[{"type":"input_text"}]}]}`,
			`{"items":[{"role":"nobody","content":"x"}]}`,
			`{"items":[1]}`,
			`{"items":{}}`,
			`{"items":[]}`,
			`{}`,
		} {
			r := ts.do(t, "POST", items, ts.alice, body)
			if r.status != 400 && r.status != 422 {
				t.Errorf("%s: status %d: %s", body, r.status, r.body)
			}
		}
		if h2, _ := ts.load(t, ts.aliceTenant, c.ID); len(h2) != 5 {
			t.Errorf("refused items stored: %d messages", len(h2))
		}
	})
}

// TestOpenAIItemsOfNativeMessages lists the items of a conversation written
// through the native API: every message kind has items (error messages
// none), and media Responses cannot take shows as a placeholder rather than
// failing the listing.
func TestOpenAIItemsOfNativeMessages(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		c := ts.create(t, ts.alice, `[
			{"role":"system","id":"s","parts":[{"type":"text","text":"Be brief."}]},
			{"role":"user","id":"u","parts":[{"type":"text","text":"hi"},{"type":"video","media_type":"video/mp4","url":"https://example.com/v.mp4"}]},
			{"role":"error","id":"e","parts":[{"type":"text","text":"timeout"}]},
			{"role":"summary","id":"sum","compacted":1,"parts":[{"type":"text","text":"they said hi"}]},
			{"role":"assistant","id":"a","parts":[{"type":"text","text":"Let me look."},{"type":"tool_call","id":"c1","name":"f","args":{}}]}]`)
		var l oaList
		ts.do(t, "GET", "/v1/conversations/"+c.ID+"/items?order=asc", ts.alice, nil).want(t, 200).decode(t, &l)
		got := strings.Join(itemIDs(t, l), ",")
		if got != "s,u,sum,a:0,a:1" {
			t.Fatalf("items %s:\n%s", got, l.Data)
		}
		if !strings.Contains(string(l.Data[1]), "omitted") {
			t.Errorf("video not a placeholder: %s", l.Data[1])
		}
		if !strings.Contains(string(l.Data[4]), `"call_id":"c1"`) {
			t.Errorf("a:1 is not the call: %s", l.Data[4])
		}
		// The pending call has no output item: the stand-in result is cut.
		for _, raw := range l.Data {
			if strings.Contains(string(raw), "function_call_output") {
				t.Errorf("stand-in output listed: %s", raw)
			}
		}
		// A tool message alone lists its outputs, not the stand-in calls.
		res := `{"role":"tool","id":"t","parts":[{"type":"tool_result","id":"c1","name":"f","parts":[{"type":"text","text":"ok"}]}]}`
		ts.do(t, "POST", "/convo/v1/conversations/"+c.ID+"/messages", ts.alice, `{"version":1,"messages":[`+res+`]}`).want(t, 200)
		var one map[string]any
		ts.do(t, "GET", "/v1/conversations/"+c.ID+"/items/t", ts.alice, nil).want(t, 200).decode(t, &one)
		if one["type"] != "function_call_output" || one["call_id"] != "c1" {
			t.Errorf("item t = %v", one)
		}
		ts.do(t, "GET", "/v1/conversations/"+c.ID+"/items/e", ts.alice, nil).problem(t, 404, "not-found")
	})
}

func TestOpenAIWithoutItemCodec(t *testing.T) {
	ts := newServer(t, backends(t)[0].open(t), func(o *server.Options) { o.Items = nil })
	var c struct {
		ID string `json:"id"`
	}
	ts.do(t, "POST", "/v1/conversations", ts.alice, `{"metadata":{"a":"b"}}`).want(t, 200).decode(t, &c)
	for _, r := range []response{
		ts.do(t, "POST", "/v1/conversations", ts.alice, `{"items":[{"type":"message","role":"user","content":"hi"}]}`),
		ts.do(t, "POST", "/v1/conversations/"+c.ID+"/items", ts.alice, `{"items":[]}`),
		ts.do(t, "GET", "/v1/conversations/"+c.ID+"/items", ts.alice, nil),
		ts.do(t, "GET", "/v1/conversations/"+c.ID+"/items/x", ts.alice, nil),
		ts.do(t, "DELETE", "/v1/conversations/"+c.ID+"/items/x", ts.alice, nil),
	} {
		r.problem(t, 501, "not-implemented")
	}
	ts.do(t, "GET", "/v1/conversations/"+c.ID, ts.alice, nil).want(t, 200)
}
