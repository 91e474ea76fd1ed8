package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
)

func TestHealth(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		r := ts.do(t, "GET", "/healthz", "", nil).want(t, http.StatusOK)
		if string(r.body) != `{"status":"ok"}`+"\n" {
			t.Errorf("body %q", r.body)
		}
		ts.do(t, "POST", "/healthz", "", "{}").problem(t, http.StatusMethodNotAllowed, "method-not-allowed")
	})
}

func TestAuthentication(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		st := open(t)
		ts := newServer(t, st, nil)
		send := func(header string) response {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", ts.URL+"/convo/v1/conversations", nil)
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			res, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			return response{status: res.StatusCode, header: res.Header, body: b}
		}
		for _, tt := range []struct {
			name, header string
			status       int
		}{
			{"none", "", 401},
			{"basic", "Basic YWxpY2U6cHc=", 401},
			{"empty bearer", "Bearer ", 401},
			{"unknown token", "Bearer nope", 401},
			{"prefix of a token", "Bearer " + ts.alice[:len(ts.alice)-1], 401},
			{"token", "Bearer " + ts.alice, 200},
			{"lower-case scheme", "bearer " + ts.alice, 200},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := send(tt.header)
				if r.status != tt.status {
					t.Fatalf("status %d, want %d", r.status, tt.status)
				}
				if tt.status == 401 && r.header.Get("WWW-Authenticate") != `Bearer realm="convo"` {
					t.Errorf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
				}
			})
		}
		ts.do(t, "GET", "/convo/v1/conversations", "", nil).problem(t, 401, "unauthorized")
		ts.do(t, "GET", "/v1/conversations/x", "wrong", nil).problem(t, 401, "unauthorized")

		// Anonymous access serves tenant "" to requests without a token,
		// and still refuses a wrong one.
		anon := newServer(t, st, func(o *server.Options) { o.Anonymous = true })
		c := anon.create(t, "", "["+userHi+"]")
		if _, err := st.Get(t.Context(), "", c.ID); err != nil {
			t.Fatalf("anonymous conversation is not tenant \"\"'s: %v", err)
		}
		anon.do(t, "GET", "/convo/v1/conversations/"+c.ID, "", nil).want(t, 200)
		anon.do(t, "GET", "/convo/v1/conversations/"+c.ID, "wrong", nil).problem(t, 401, "unauthorized")
		anon.do(t, "GET", "/convo/v1/conversations/"+c.ID, anon.alice, nil).problem(t, 404, "not-found")
	})
}

func TestNewRefusesBadOptions(t *testing.T) {
	if _, err := server.New(nil, server.Options{}); err == nil {
		t.Error("New(nil store) succeeded")
	}
	st := backends(t)[0].open(t)
	for _, tokens := range []map[string]string{{"": "alice"}, {"tok": ""}, {"to k": "alice"}, {"tok": "al ice"}} {
		if _, err := server.New(st, server.Options{Tokens: tokens}); err == nil {
			t.Errorf("New accepted tokens %q", tokens)
		}
	}
}

func TestConversationLifecycle(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		r := ts.do(t, "POST", "/convo/v1/conversations", ts.alice,
			`{"title":"Trip","meta":{"project":"apollo","n":1},"messages":[`+userHi+`,`+assistHi+`]}`).want(t, http.StatusCreated)
		var c conversation
		r.decode(t, &c)
		if c.ID == "" || c.Title != "Trip" || c.Version != 1 || c.Messages != 2 || string(c.Meta) != `{"project":"apollo","n":1}` {
			t.Fatalf("created %+v", c)
		}
		if loc := r.header.Get("Location"); loc != "/convo/v1/conversations/"+url.PathEscape(c.ID) {
			t.Errorf("Location %q", loc)
		}
		path := "/convo/v1/conversations/" + c.ID

		var got conversation
		ts.do(t, "GET", path, ts.alice, nil).want(t, 200).decode(t, &got)
		if got.ID != c.ID || got.Messages != 2 || got.Created == "" || !strings.HasSuffix(got.Updated, "Z") {
			t.Errorf("get %+v", got)
		}

		ts.do(t, "PATCH", path, ts.alice, `{"title":"Trip to Rome"}`).want(t, 200).decode(t, &got)
		if got.Title != "Trip to Rome" || string(got.Meta) != `{"project":"apollo","n":1}` || got.Version != 1 {
			t.Errorf("after title change %+v", got)
		}
		ts.do(t, "PATCH", path, ts.alice, `{"meta":{"project":"zeus"}}`).want(t, 200).decode(t, &got)
		if got.Title != "Trip to Rome" || string(got.Meta) != `{"project":"zeus"}` {
			t.Errorf("after meta change %+v", got)
		}

		// A second conversation, for listing and filters.
		other := ts.create(t, ts.alice, "")
		var list struct {
			Conversations []conversation `json:"conversations"`
			Next          string         `json:"next"`
		}
		ts.do(t, "GET", "/convo/v1/conversations", ts.alice, nil).want(t, 200).decode(t, &list)
		if len(list.Conversations) != 2 || list.Conversations[0].ID != other.ID || list.Next != "" {
			t.Fatalf("list %+v", list)
		}
		// Pages of one: the cursor leads through both, newest first, to
		// the end ("" — possibly after an empty page).
		var seen []string
		for q, pages := "?limit=1", 0; ; pages++ {
			if pages > 3 {
				t.Fatalf("paging does not end: %v", seen)
			}
			list.Conversations, list.Next = nil, ""
			ts.do(t, "GET", "/convo/v1/conversations"+q, ts.alice, nil).want(t, 200).decode(t, &list)
			if len(list.Conversations) > 1 {
				t.Fatalf("page of %d with limit=1", len(list.Conversations))
			}
			for _, lc := range list.Conversations {
				seen = append(seen, lc.ID)
			}
			if list.Next == "" {
				break
			}
			q = "?limit=1&after=" + url.QueryEscape(list.Next)
		}
		if len(seen) != 2 || seen[0] != other.ID || seen[1] != c.ID {
			t.Fatalf("pages list %v, want [%s %s]", seen, other.ID, c.ID)
		}
		ts.do(t, "GET", "/convo/v1/conversations?title=Rome", ts.alice, nil).want(t, 200).decode(t, &list)
		if len(list.Conversations) != 1 || list.Conversations[0].ID != c.ID {
			t.Errorf("title filter %+v", list)
		}
		ts.do(t, "GET", "/convo/v1/conversations?meta="+url.QueryEscape(`{"project":"zeus"}`), ts.alice, nil).want(t, 200).decode(t, &list)
		if len(list.Conversations) != 1 || list.Conversations[0].ID != c.ID {
			t.Errorf("meta filter %+v", list)
		}
		ts.do(t, "GET", "/convo/v1/conversations?meta=[1]", ts.alice, nil).problem(t, 400, "bad-request")
		ts.do(t, "GET", "/convo/v1/conversations?limit=0", ts.alice, nil).problem(t, 400, "bad-request")
		ts.do(t, "GET", "/convo/v1/conversations?after=garbage", ts.alice, nil).problem(t, 422, "invalid")

		ts.do(t, "PATCH", path, ts.alice, `{"meta":null}`).want(t, 200).decode(t, &got)
		if got.Meta != nil {
			t.Errorf("meta null left %s", got.Meta)
		}
		ts.do(t, "PATCH", path, ts.alice, `{"meta":[1]}`).problem(t, 400, "bad-request")

		ts.do(t, "DELETE", path, ts.alice, nil).want(t, http.StatusNoContent)
		ts.do(t, "GET", path, ts.alice, nil).problem(t, 404, "not-found")
		ts.do(t, "DELETE", path, ts.alice, nil).problem(t, 404, "not-found")

		// A chosen id is kept, and taken twice is a conflict.
		ts.do(t, "POST", "/convo/v1/conversations", ts.alice, `{"id":"mine"}`).want(t, 201).decode(t, &got)
		if got.ID != "mine" {
			t.Errorf("chosen id became %q", got.ID)
		}
		ts.do(t, "POST", "/convo/v1/conversations", ts.alice, `{"id":"mine"}`).problem(t, 409, "exists")
		// ... but another tenant may choose it too: ids are per tenant.
		ts.do(t, "POST", "/convo/v1/conversations", ts.bob, `{"id":"mine"}`).want(t, 201)
		ts.do(t, "POST", "/convo/v1/conversations", ts.alice, `{"id":"a/b"}`).problem(t, 422, "invalid")
		// An empty body creates an empty conversation.
		ts.do(t, "POST", "/convo/v1/conversations", ts.alice, "").want(t, 201).decode(t, &got)
		if got.Messages != 0 || got.Version != 1 {
			t.Errorf("empty create %+v", got)
		}
	})
}

type appendResult struct {
	Conversation conversation `json:"conversation"`
	IDs          []string     `json:"ids"`
}

func TestAppend(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		c := ts.create(t, ts.alice, "["+userHi+"]")
		path := "/convo/v1/conversations/" + c.ID + "/messages"

		var res appendResult
		ts.do(t, "POST", path, ts.alice, `{"version":1,"messages":[`+callF+`]}`).want(t, 200).decode(t, &res)
		if res.Conversation.Version != 2 || res.Conversation.Messages != 2 || len(res.IDs) != 1 || !strings.HasPrefix(res.IDs[0], "msg_") {
			t.Fatalf("append %+v", res)
		}
		// The call waits for its result; the result comes in the next
		// append, with a chosen id.
		withID := strings.Replace(resultF, `{"role":"tool",`, `{"role":"tool","id":"r1",`, 1)
		ts.do(t, "POST", path, ts.alice, `{"version":2,"messages":[`+withID+`,`+assistHi+`]}`).want(t, 200).decode(t, &res)
		if res.Conversation.Version != 3 || res.Conversation.Messages != 4 || res.IDs[0] != "r1" || len(res.IDs) != 2 {
			t.Fatalf("second append %+v", res)
		}
		h, _ := ts.load(t, ts.aliceTenant, c.ID)
		if len(h) != 4 || h[1].ID != res.IDs[0] && h[2].ID != "r1" || h[3].ID != res.IDs[1] {
			t.Fatalf("stored ids %q %q %q, answered %v", h[1].ID, h[2].ID, h[3].ID, res.IDs)
		}

		// A stale version changes nothing and says what the version is.
		p := ts.do(t, "POST", path, ts.alice, `{"version":2,"messages":[`+userHi+`]}`).problem(t, 409, "version-conflict")
		if p.Version == nil || *p.Version != 3 || !strings.Contains(p.Detail, "version 3, not 2") {
			t.Errorf("conflict %+v", p)
		}
		if h2, _ := ts.load(t, ts.aliceTenant, c.ID); len(h2) != 4 {
			t.Fatalf("a conflicting append stored something: %d messages", len(h2))
		}
		// A message id used twice in the conversation.
		ts.do(t, "POST", path, ts.alice, `{"version":3,"messages":[{"role":"user","id":"r1","parts":[{"type":"text","text":"x"}]}]}`).problem(t, 409, "exists")

		for _, tt := range []struct {
			name, body string
			status     int
			kind       string
			path       string // of the first problem, for 422
		}{
			{name: "no version", body: `{"messages":[` + userHi + `]}`, status: 400, kind: "bad-request"},
			{name: "negative version", body: `{"version":-2,"messages":[` + userHi + `]}`, status: 400, kind: "bad-request"},
			{name: "no messages", body: `{"version":3}`, status: 400, kind: "bad-request"},
			{name: "empty messages", body: `{"version":3,"messages":[]}`, status: 400, kind: "bad-request"},
			{name: "unknown member", body: `{"version":3,"messages":[` + userHi + `],"extra":1}`, status: 400, kind: "bad-request"},
			{name: "bad message", body: `{"version":3,"messages":[` + userHi + `,{"role":"wizard"}]}`, status: 400, kind: "bad-request"},
			{name: "orphan result", body: `{"version":3,"messages":[` + orphanF + `]}`, status: 422, kind: "invalid", path: "messages[0].parts[0]"},
			{name: "call closed without result", body: `{"version":3,"messages":[` + callF + `,` + userHi + `]}`, status: 422, kind: "invalid", path: "messages[0].parts[0]"},
			{name: "phase on user", body: `{"version":3,"messages":[` + userHi + `,{"role":"user","phase":"final"}]}`, status: 422, kind: "invalid", path: "messages[1]"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				p := ts.do(t, "POST", path, ts.alice, tt.body).problem(t, tt.status, tt.kind)
				if tt.path != "" && (len(p.Errors) == 0 || p.Errors[0].Path != tt.path) {
					t.Errorf("errors %+v, want the first at %s", p.Errors, tt.path)
				}
				if h2, c2 := ts.load(t, ts.aliceTenant, c.ID); len(h2) != 4 || c2.Version != 3 {
					t.Errorf("a refused append changed the conversation: %d messages, version %d", len(h2), c2.Version)
				}
			})
		}
		if p := ts.do(t, "POST", path, ts.alice, `{"version":3,"messages":[{"role":"user","parts":[{"type":"text","text":1}]}]}`).problem(t, 400, "bad-request"); !strings.Contains(p.Detail, "messages[0].parts[0].text") {
			t.Errorf("decode error %q does not name the place", p.Detail)
		}
		ts.do(t, "POST", "/convo/v1/conversations/nope/messages", ts.alice, `{"version":1,"messages":[`+userHi+`]}`).problem(t, 404, "not-found")
	})
}

// TestConcurrentAppends has writers race for one conversation through the
// HTTP API, each reading the version and retrying on conflict: every
// message lands exactly once and in each writer's order, and conflicts are
// answered, never swallowed.
func TestConcurrentAppends(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		raceAppends(t, []*tserver{ts}, 4, 8)
	})
}

// TestTwoServersOneDatabase runs the race against two server instances,
// each with its own store on one database: what many stateless servers
// behind a load balancer do.
func TestTwoServersOneDatabase(t *testing.T) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			dsn := b.dsn(t)
			one := newServer(t, b.openDSN(t, dsn), nil)
			two := newServerLike(t, b.openDSN(t, dsn), one, nil)
			raceAppends(t, []*tserver{one, two}, 4, 8)
		})
	}
}

// raceAppends has writers append each messages to one conversation, writer
// w through servers[w % len(servers)], and checks the result.
func raceAppends(t *testing.T, servers []*tserver, writers, each int) {
	t.Helper()
	c := servers[0].create(t, servers[0].alice, "")
	var wg sync.WaitGroup
	var mu sync.Mutex
	conflicts := 0
	for w := range writers {
		ts := servers[w%len(servers)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; {
				var cur conversation
				g := ts.do(t, "GET", "/convo/v1/conversations/"+c.ID, ts.alice, nil)
				if g.status != 200 || json.Unmarshal(g.body, &cur) != nil {
					t.Errorf("get: %d %s", g.status, g.body)
					return
				}
				msg := fmt.Sprintf(`{"role":"user","id":"w%d-%d","parts":[{"type":"text","text":"x"}]}`, w, i)
				r := ts.do(t, "POST", "/convo/v1/conversations/"+c.ID+"/messages", ts.alice,
					fmt.Sprintf(`{"version":%d,"messages":[%s]}`, cur.Version, msg))
				switch r.status {
				case 200:
					i++
				case 409:
					mu.Lock()
					conflicts++
					mu.Unlock()
				default:
					t.Errorf("status %d: %s", r.status, r.body)
					return
				}
			}
		}()
	}
	wg.Wait()
	h, sc := servers[len(servers)-1].load(t, servers[0].aliceTenant, c.ID)
	if len(h) != writers*each || sc.Version != int64(1+writers*each) {
		t.Fatalf("%d messages at version %d, want %d", len(h), sc.Version, writers*each)
	}
	next := make([]int, writers)
	for _, m := range h {
		var w, i int
		if _, err := fmt.Sscanf(m.ID, "w%d-%d", &w, &i); err != nil || i != next[w] {
			t.Fatalf("message %q out of order (writer %d expected %d)", m.ID, w, next[w])
		}
		next[w]++
	}
	t.Logf("%d conflicts answered", conflicts)
}

func TestMessages(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		var msgs []string
		for i := range 5 {
			msgs = append(msgs, fmt.Sprintf(`{"role":"user","id":"m%d","parts":[{"type":"text","text":"%d"}]}`, i, i))
		}
		c := ts.create(t, ts.alice, "["+strings.Join(msgs, ",")+"]")
		base := "/convo/v1/conversations/" + c.ID + "/messages"

		type page struct {
			Version  int64             `json:"version"`
			Total    int               `json:"total"`
			From     int               `json:"from"`
			Messages []json.RawMessage `json:"messages"`
			Next     *int              `json:"next"`
		}
		for _, tt := range []struct {
			query      string
			from, n    int
			next       int // -1: none
			firstIndex int
		}{
			{query: "", from: 0, n: 5, next: -1},
			{query: "?limit=2", from: 0, n: 2, next: 2},
			{query: "?from=2&limit=2", from: 2, n: 2, next: 4, firstIndex: 2},
			{query: "?from=4&limit=2", from: 4, n: 1, next: -1, firstIndex: 4},
			{query: "?from=5", from: 5, n: 0, next: -1},
			{query: "?from=99", from: 99, n: 0, next: -1},
		} {
			var p page
			ts.do(t, "GET", base+tt.query, ts.alice, nil).want(t, 200).decode(t, &p)
			if p.Total != 5 || p.From != tt.from || len(p.Messages) != tt.n || p.Version != 1 {
				t.Errorf("%s: page %+v", tt.query, p)
				continue
			}
			if (p.Next == nil) != (tt.next < 0) || p.Next != nil && *p.Next != tt.next {
				t.Errorf("%s: next %v, want %d", tt.query, p.Next, tt.next)
			}
			if tt.n > 0 {
				m, err := convo.UnmarshalMessage(p.Messages[0])
				if err != nil || m.ID != fmt.Sprintf("m%d", tt.firstIndex) {
					t.Errorf("%s: first message %s (%v)", tt.query, p.Messages[0], err)
				}
			}
		}
		ts.do(t, "GET", base+"?from=-1", ts.alice, nil).problem(t, 400, "bad-request")
		ts.do(t, "GET", base+"?limit=1001", ts.alice, nil).problem(t, 400, "bad-request")

		// One message, canonical and lossless.
		r := ts.do(t, "GET", base+"/m3", ts.alice, nil).want(t, 200)
		if string(r.body) != msgs[3]+"\n" {
			t.Errorf("message m3 = %s, want %s", r.body, msgs[3])
		}
		ts.do(t, "GET", base+"/m9", ts.alice, nil).problem(t, 404, "not-found")

		// Deleting takes the version.
		ts.do(t, "DELETE", base+"/m3", ts.alice, nil).problem(t, 400, "bad-request")
		ts.do(t, "DELETE", base+"/m3?version=x", ts.alice, nil).problem(t, 400, "bad-request")
		p := ts.do(t, "DELETE", base+"/m3?version=7", ts.alice, nil).problem(t, 409, "version-conflict")
		if p.Version == nil || *p.Version != 1 {
			t.Errorf("conflict version %v", p.Version)
		}
		var after conversation
		ts.do(t, "DELETE", base+"/m3?version=1", ts.alice, nil).want(t, 200).decode(t, &after)
		if after.Messages != 4 || after.Version != 2 {
			t.Errorf("after delete %+v", after)
		}
		ts.do(t, "GET", base+"/m3", ts.alice, nil).problem(t, 404, "not-found")
		ts.do(t, "DELETE", base+"/m3?version=2", ts.alice, nil).problem(t, 404, "not-found")
	})
}

func TestFork(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		c := ts.create(t, ts.alice, `[{"role":"user","id":"u1","parts":[{"type":"text","text":"x"}]},{"role":"assistant","id":"a1","parts":[{"type":"text","text":"x"}]},{"role":"user","id":"u2","parts":[{"type":"text","text":"x"}]}]`)
		path := "/convo/v1/conversations/" + c.ID + "/fork"

		var f conversation
		r := ts.do(t, "POST", path, ts.alice, `{"at":2}`).want(t, 201)
		r.decode(t, &f)
		if f.ID == c.ID || f.Messages != 2 || f.ForkedFrom != c.ID || f.ForkedAt == nil || *f.ForkedAt != 2 || f.Title != "test" {
			t.Fatalf("fork %+v", f)
		}
		if r.header.Get("Location") != "/convo/v1/conversations/"+f.ID {
			t.Errorf("Location %q", r.header.Get("Location"))
		}
		ts.do(t, "POST", path, ts.alice, `{"before":"a1","title":"branch"}`).want(t, 201).decode(t, &f)
		if f.Messages != 1 || *f.ForkedAt != 1 || f.Title != "branch" {
			t.Fatalf("fork before a1 %+v", f)
		}
		ts.do(t, "POST", path, ts.alice, `{"at":0}`).want(t, 201).decode(t, &f)
		if f.Messages != 0 || f.ForkedAt == nil || *f.ForkedAt != 0 {
			t.Fatalf("fork at 0 %+v", f)
		}
		// The original is untouched.
		if h, oc := ts.load(t, ts.aliceTenant, c.ID); len(h) != 3 || oc.Version != 1 {
			t.Errorf("original changed: %d messages, version %d", len(h), oc.Version)
		}
		ts.do(t, "POST", path, ts.alice, `{}`).problem(t, 400, "bad-request")
		ts.do(t, "POST", path, ts.alice, `{"at":1,"before":"a1"}`).problem(t, 400, "bad-request")
		ts.do(t, "POST", path, ts.alice, `{"at":-1}`).problem(t, 400, "bad-request")
		ts.do(t, "POST", path, ts.alice, `{"at":4}`).problem(t, 422, "invalid")
		ts.do(t, "POST", path, ts.alice, `{"before":"zz"}`).problem(t, 404, "not-found")
	})
}

func TestExport(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		// The example ends with an OpenAI-foreign Anthropic signature: an
		// export to OpenAI drops it with a warning.
		c := ts.create(t, ts.alice, exampleMessages(t))
		path := "/convo/v1/conversations/" + c.ID + "/export"
		want, _ := ts.load(t, ts.aliceTenant, c.ID)

		r := ts.do(t, "GET", path, ts.alice, nil).want(t, 200)
		if r.header.Get("Content-Type") != "application/json" || r.header.Get("Convo-Version") != "1" {
			t.Errorf("headers %v", r.header)
		}
		if got, err := convo.Unmarshal(r.body); err != nil || !got.Equal(want) {
			t.Errorf("canonical export differs (%v):\n%s", err, r.body)
		}
		r = ts.do(t, "GET", path+"?format=lines", ts.alice, nil).want(t, 200)
		if r.header.Get("Content-Type") != "application/jsonl" || strings.Count(string(r.body), "\n") != len(want) {
			t.Errorf("lines export: %s\n%s", r.header.Get("Content-Type"), r.body)
		}
		if got, err := convo.Unmarshal(r.body); err != nil || !got.Equal(want) {
			t.Errorf("lines export differs (%v)", err)
		}

		type export struct {
			Format   string          `json:"format"`
			Version  int64           `json:"version"`
			Request  json.RawMessage `json:"request"`
			Warnings []struct {
				Path    string `json:"path"`
				Message string `json:"message"`
			} `json:"warnings"`
		}
		for _, format := range []string{"anthropic", "openai-chat", "openai-responses"} {
			t.Run(format, func(t *testing.T) {
				var e export
				ts.do(t, "GET", path+"?format="+format, ts.alice, nil).want(t, 200).decode(t, &e)
				codec := ts.codec(t, format)
				body, warns, err := codec.Encode(want, providerOptions())
				if err != nil {
					t.Fatal(err)
				}
				if e.Format != format || e.Version != 1 || !jsonEqual(e.Request, body) || len(e.Warnings) != len(warns) {
					t.Fatalf("export %+v\nwant request %s and %d warnings", e, body, len(warns))
				}
				for i, w := range warns {
					if e.Warnings[i].Path != w.Path || e.Warnings[i].Message != w.Msg {
						t.Errorf("warning %d = %+v, want %v", i, e.Warnings[i], w)
					}
				}
				if format == "anthropic" && len(e.Warnings) != 0 {
					t.Errorf("anthropic reasoning to anthropic warned: %+v", e.Warnings)
				}
				if format != "anthropic" {
					if len(e.Warnings) == 0 {
						t.Error("foreign signed reasoning dropped without a warning")
					}
					p := ts.do(t, "GET", path+"?strict=1&format="+format, ts.alice, nil).problem(t, 422, "invalid")
					// A strict conversion stops at the first rule that warns, so
					// it lists the warnings up to there.
					if len(p.Errors) == 0 || p.Errors[0].Path != e.Warnings[0].Path || p.Errors[0].Detail != e.Warnings[0].Message {
						t.Errorf("strict problem %+v, want the warnings %+v", p, e.Warnings)
					}
				}
			})
		}
		var withText struct {
			Request json.RawMessage `json:"request"`
		}
		ts.do(t, "GET", path+"?format=openai-chat&reasoning=text", ts.alice, nil).want(t, 200).decode(t, &withText)
		if !strings.Contains(string(withText.Request), "Use the tool.") {
			t.Errorf("reasoning=text lost the reasoning text: %s", withText.Request)
		}
		p := ts.do(t, "GET", path+"?format=klingon", ts.alice, nil).problem(t, 400, "bad-request")
		if !strings.Contains(p.Detail, `"klingon"`) || !strings.Contains(p.Detail, "anthropic") {
			t.Errorf("unknown format detail %q", p.Detail)
		}
		for _, q := range []string{"strict=maybe", "reasoning=keep", "media=drop", "system_role=admin", "gemini_bypass=2"} {
			ts.do(t, "GET", path+"?format=anthropic&"+q, ts.alice, nil).problem(t, 400, "bad-request")
		}
		// A call still waiting for its result is what an agent holds
		// before running its tools: exported, with a warning naming
		// Anthropic's rule; an error only when strict; repair answers it.
		pending := ts.create(t, ts.alice, "["+callF+"]")
		var exp struct {
			Request  json.RawMessage            `json:"request"`
			Warnings []struct{ Message string } `json:"warnings"`
		}
		ts.do(t, "GET", "/convo/v1/conversations/"+pending.ID+"/export?format=anthropic", ts.alice, nil).want(t, 200).decode(t, &exp)
		if len(exp.Warnings) != 1 || !strings.Contains(exp.Warnings[0].Message, "Anthropic refuses") || !strings.Contains(string(exp.Request), "tool_use") {
			t.Errorf("pending call export: %s %+v", exp.Request, exp.Warnings)
		}
		ts.do(t, "GET", "/convo/v1/conversations/"+pending.ID+"/export?format=anthropic&strict=true", ts.alice, nil).problem(t, 422, "invalid")
		ts.do(t, "GET", "/convo/v1/conversations/"+pending.ID+"/export?format=anthropic&repair=true", ts.alice, nil).want(t, 200).decode(t, &exp)
		if !strings.Contains(string(exp.Request), "tool_result") {
			t.Errorf("repair did not answer the pending call: %s", exp.Request)
		}

		var formats struct {
			Formats []string `json:"formats"`
		}
		ts.do(t, "GET", "/convo/v1/formats", ts.alice, nil).want(t, 200).decode(t, &formats)
		if strings.Join(formats.Formats, ",") != "convo,lines,markdown,finetune,sharegpt,openai-chat,openai-responses,anthropic" {
			t.Errorf("formats %v", formats.Formats)
		}
	})
}

func TestLimits(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), func(o *server.Options) { o.MaxBodyBytes = 4096; o.MaxMessageBytes = 512 })
		c := ts.create(t, ts.alice, "")
		path := "/convo/v1/conversations/" + c.ID + "/messages"
		big := `{"role":"user","parts":[{"type":"text","text":"` + strings.Repeat("x", 600) + `"}]}`
		p := ts.do(t, "POST", path, ts.alice, `{"version":1,"messages":[`+userHi+`,`+big+`]}`).problem(t, 413, "too-large")
		if !strings.HasPrefix(p.Detail, "messages[1]:") {
			t.Errorf("detail %q does not name the message", p.Detail)
		}
		ts.do(t, "POST", path, ts.alice, `{"version":1,"messages":[`+strings.Repeat(userHi+",", 80)+userHi+`]}`).problem(t, 413, "too-large")
		ts.do(t, "POST", "/v1/conversations/"+c.ID+"/items", ts.alice,
			`{"items":[{"type":"message","role":"user","content":"`+strings.Repeat("x", 600)+`"}]}`).problem(t, 413, "too-large")

		req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.URL+path, strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+ts.alice)
		req.Header.Set("Content-Type", "text/plain")
		res, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("text/plain body: status %d", res.StatusCode)
		}

		for _, tt := range []struct{ name, body, detail string }{
			{"syntax", `{"version":1,`, "not valid JSON"},
			{"duplicate key", `{"version":1,"version":2,"messages":[]}`, `duplicate key "version"`},
			{"not an object", `[1]`, "must be a JSON object"},
			{"empty", ``, "empty"},
			{"trailing garbage", `{"version":1,"messages":[` + userHi + `]} x`, "not valid JSON"},
		} {
			p := ts.do(t, "POST", path, ts.alice, tt.body).problem(t, 400, "bad-request")
			if !strings.Contains(p.Detail, tt.detail) {
				t.Errorf("%s: detail %q does not contain %q", tt.name, p.Detail, tt.detail)
			}
		}
		if h, _ := ts.load(t, ts.aliceTenant, c.ID); len(h) != 0 {
			t.Errorf("refused requests stored %d messages", len(h))
		}
	})
}

func TestRouting(t *testing.T) {
	ts := newServer(t, backends(t)[0].open(t), nil)
	p := ts.do(t, "PUT", "/convo/v1/conversations/x", ts.alice, "{}").problem(t, 405, "method-not-allowed")
	if !strings.Contains(p.Detail, "GET, PATCH, DELETE") {
		t.Errorf("detail %q", p.Detail)
	}
	r := ts.do(t, "PUT", "/convo/v1/conversations/x", ts.alice, "{}")
	if r.header.Get("Allow") != "GET, PATCH, DELETE, HEAD" {
		t.Errorf("Allow %q", r.header.Get("Allow"))
	}
	ts.do(t, "GET", "/nowhere", ts.alice, nil).problem(t, 404, "not-found")
	ts.do(t, "GET", "/", "", nil).problem(t, 404, "not-found")
	r = ts.do(t, "HEAD", "/healthz", "", nil).want(t, 200)
	if len(r.body) != 0 {
		t.Errorf("HEAD answered a body")
	}
}
