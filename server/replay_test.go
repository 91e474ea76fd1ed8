package server_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
)

// replayServer is a server whose replays go to a fake OpenAI Chat
// upstream answering with a recorded reply.
func replayServer(t *testing.T, st store.Store) *tserver {
	t.Helper()
	reply, err := os.ReadFile("../provider/openai/testdata/recorded/chat/vercel-openai-text.json")
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	t.Cleanup(up.Close)
	r, err := replay.New(replay.Options{Store: st, Config: gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "oa", Protocol: "openai-chat", URL: up.URL}},
		Routes:    []gateway.Route{{Model: "gpt-*", Upstream: "oa"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return newServer(t, st, func(o *server.Options) { o.Replay = r })
}

func TestReplayAPI(t *testing.T) {
	each(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		ts := replayServer(t, open(t))
		c := ts.create(t, ts.alice, "["+userHi+","+assistHi+"]")
		path := "/convo/v1/conversations/" + c.ID + "/replay"
		body := `{"model":"gpt-4.1-nano","set":{"temperature":0.2,"max_tokens":100}}`

		// Another tenant's conversation is not found, and nothing is sent.
		ts.do(t, "POST", path, ts.bob, body).problem(t, http.StatusNotFound, "not-found")

		var res replay.Result
		r := ts.do(t, "POST", path, ts.alice, body).want(t, http.StatusCreated)
		r.decode(t, &res)
		if res.Conversation != c.ID || res.Fork == "" || r.header.Get("Location") != "/convo/v1/conversations/"+res.Fork ||
			res.Replay.Model != "gpt-4.1-nano" || res.Original.Text != "hello" || !strings.HasPrefix(res.Replay.Text, "**Holiday") {
			t.Fatalf("result %+v", res)
		}
		// The same replay again: the fork made before.
		var again replay.Result
		ts.do(t, "POST", path, ts.alice, body).want(t, http.StatusOK).decode(t, &again)
		if !again.Skipped || again.Fork != res.Fork {
			t.Errorf("again: %+v", again)
		}
		// The comparison, by the fork; not for the other tenant.
		var cmp replay.Result
		ts.do(t, "GET", "/convo/v1/conversations/"+res.Fork+"/replay", ts.alice, nil).want(t, http.StatusOK).decode(t, &cmp)
		if cmp.Fork != res.Fork || cmp.Compare.TextSimilarity != res.Compare.TextSimilarity {
			t.Errorf("comparison %+v", cmp)
		}
		ts.do(t, "GET", "/convo/v1/conversations/"+res.Fork+"/replay", ts.bob, nil).problem(t, http.StatusNotFound, "not-found")
		ts.do(t, "GET", "/convo/v1/conversations/"+c.ID+"/replay", ts.alice, nil).problem(t, http.StatusUnprocessableEntity, "invalid")

		var routes struct{ Data []replay.Route }
		ts.do(t, "GET", "/convo/v1/replay/routes", ts.alice, nil).want(t, http.StatusOK).decode(t, &routes)
		if len(routes.Data) != 1 || routes.Data[0].Model != "gpt-*" || routes.Data[0].Protocol != "openai-chat" {
			t.Errorf("routes %+v", routes)
		}
	})
}

func TestReplayAPIErrors(t *testing.T) {
	st := backends(t)[0].open(t)
	ts := replayServer(t, st)
	c := ts.create(t, ts.alice, "["+userHi+","+assistHi+"]")
	meta := ts.create(t, ts.alice, "")
	path := "/convo/v1/conversations/" + c.ID + "/replay"
	for _, tc := range []struct {
		path, body string
		status     int
		kind, want string
	}{
		{path, `{}`, 400, "bad-request", "model: required"},
		{path, `{"model":"gpt-x","seed":1}`, 400, "bad-request", `unknown member "seed"`},
		{path, `{"model":"gpt-x","set":[1]}`, 400, "bad-request", "want an object"},
		{path, `{"model":"claude"}`, 422, "invalid", `no route for model "claude"`},
		{path, `{"model":"gpt-x","at":"msg_nope"}`, 422, "invalid", `no message "msg_nope"`},
		{path, `{"model":"gpt-x","set":{"temprature":1}}`, 422, "invalid", "temprature"},
		{"/convo/v1/conversations/" + meta.ID + "/replay", `{"model":"gpt-x"}`, 422, "invalid", "nothing to send"},
	} {
		p := ts.do(t, "POST", tc.path, ts.alice, tc.body).problem(t, tc.status, tc.kind)
		if !strings.Contains(p.Detail, tc.want) {
			t.Errorf("%s: detail %q, want %q", tc.body, p.Detail, tc.want)
		}
	}
	// Expired content cannot be replayed.
	if _, err := st.(store.ContentExpirer).ExpireContent(t.Context(), ts.aliceTenant, c.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	p := ts.do(t, "POST", path, ts.alice, `{"model":"gpt-x"}`).problem(t, 422, "invalid")
	if !strings.Contains(p.Detail, "cannot be replayed") {
		t.Errorf("expired: %q", p.Detail)
	}

	// A server without upstreams says so.
	plain := newServer(t, st, nil)
	plain.do(t, "POST", path, plain.alice, `{"model":"gpt-x"}`).problem(t, http.StatusNotImplemented, "not-implemented")
	plain.do(t, "GET", "/convo/v1/replay/routes", plain.alice, nil).problem(t, http.StatusNotImplemented, "not-implemented")
}
