package ui_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// replayEnv is a viewer whose replays go to a fake OpenAI Chat upstream
// that answers with a recorded reply calling get_capital; tokens name
// two tenants.
func replayEnv(t *testing.T) *env {
	t.Helper()
	reply, err := os.ReadFile("../../provider/openai/testdata/recorded/chat/pydantic-tool-calls.json")
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	t.Cleanup(up.Close)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ui.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r, err := replay.New(replay.Options{Store: st, Config: gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "oa", Protocol: "openai-chat", URL: up.URL}},
		Routes:    []gateway.Route{{Model: "gpt-4o-mini", Upstream: "oa"}, {Model: "gpt-*", Upstream: "oa"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.New(st, server.Options{Tokens: map[string]string{"tok-a": "acme", "tok-b": "bravo"}, UI: true, Formats: all.Formats(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Replay: r})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{Server: httptest.NewServer(h), st: st}
	t.Cleanup(e.Close)
	return e
}

func signIn(t *testing.T, e *env, tok string) *http.Client {
	t.Helper()
	c := e.client(t)
	post(t, c, e.URL+"/ui/signin", url.Values{"token": {tok}}).want(t, http.StatusSeeOther)
	return c
}

func capitals() convo.History {
	answer := convo.Assistant("London, of course.")
	answer.Origin, answer.Usage, answer.Finish = &convo.Origin{Provider: "openai", Model: "gpt-4o"}, &convo.Usage{Input: 90, Output: 5}, convo.FinishStop
	h := convo.History{convo.System("Be brief."), convo.User("Capital of England?"), answer}
	for i := range h {
		h[i].ID = "m" + string(rune('0'+i))
	}
	return h
}

func TestReplayViewer(t *testing.T) {
	e := replayEnv(t)
	e.create(t, "acme", "caps", "Capitals", capitals())
	c := signIn(t, e, "tok-a")

	// Every message but the system prompt offers a replay.
	p := get(t, c, e.URL+"/ui/c/caps").want(t, http.StatusOK)
	p.has(t, `href="/ui/c/caps/replay?at=m1"`, `href="/ui/c/caps/replay?at=m2"`)
	if strings.Contains(p.body, "replay?at=m0") {
		t.Error("the system prompt offers a replay")
	}
	// The form: the models of the routes and of the conversation.
	f := get(t, c, e.URL+"/ui/c/caps/replay?at=m2").want(t, http.StatusOK)
	f.has(t, `<option value="gpt-4o-mini">`, `<option value="gpt-4o">`, "<code>gpt-*</code> → oa (openai-chat)", "This answer is asked again", "London, of course.")
	if csp := f.header.Get("Content-Security-Policy"); !strings.Contains(csp, "style-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	tok := f.csrf(t)

	// Without the CSRF token, or from another site: refused, nothing sent.
	post(t, c, e.URL+"/ui/c/caps/replay", url.Values{"at": {"m2"}, "model": {"gpt-4o-mini"}}).want(t, http.StatusForbidden)
	post(t, c, e.URL+"/ui/c/caps/replay", url.Values{"csrf": {tok}, "at": {"m2"}, "model": {"gpt-4o-mini"}}, "Sec-Fetch-Site", "cross-site").want(t, http.StatusForbidden)
	// Bad settings.
	post(t, c, e.URL+"/ui/c/caps/replay", url.Values{"csrf": {tok}, "at": {"m2"}, "model": {"gpt-4o-mini"}, "settings": {"top_p"}}).
		want(t, http.StatusBadRequest).has(t, "settings, line 1")
	post(t, c, e.URL+"/ui/c/caps/replay", url.Values{"csrf": {tok}, "at": {"m2"}, "model": {"claude"}}).
		want(t, http.StatusBadRequest).has(t, "no route for model")

	res := post(t, c, e.URL+"/ui/c/caps/replay", url.Values{"csrf": {tok}, "at": {"m2"}, "model": {"gpt-4o-mini"},
		"temperature": {"0.3"}, "settings": {"seed=7\n"}}).want(t, http.StatusSeeOther)
	loc := res.header.Get("Location")
	if !strings.HasPrefix(loc, "/ui/c/conv_") || !strings.HasSuffix(loc, "/compare") {
		t.Fatalf("redirect to %q", loc)
	}
	cmp := get(t, c, e.URL+loc).want(t, http.StatusOK)
	cmp.has(t, "Replay on gpt-4o-mini", `href="/ui/c/caps?at=2#m-2">Capitals</a>`, "<code>temperature=0.3</code>, <code>seed=7</code>",
		"<td>gpt-4o</td><td>gpt-4o-mini</td>", "<td>stop</td><td>tool_use</td>", `<span class="badge warn">different</span>`,
		"<td>90 / 5</td><td>104 / 16</td>", "<td>not recorded</td><td>", " ms</td>", "<td>—</td><td>—</td>", `<code class="fn">get_capital</code>`,
		`<del>London, of course.</del>`, `<p class="difftext"></p>`, "static/replay.css")
	// The fork names what it is.
	fork := strings.TrimSuffix(strings.TrimPrefix(loc, "/ui/c/"), "/compare")
	get(t, c, e.URL+"/ui/c/"+fork).want(t, http.StatusOK).has(t, "replay on <b>gpt-4o-mini</b>", `/compare">compare with the original</a>`)
	var info replay.Info
	fc, _ := e.st.Get(context.Background(), "acme", fork)
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(fc.Meta, &meta)
	if json.Unmarshal(meta[replay.InfoMeta], &info) != nil || info.Origin != "caps" || len(info.Set) != 2 {
		t.Errorf("fork meta %s", fc.Meta)
	}

	// Another tenant sees none of it.
	b := signIn(t, e, "tok-b")
	get(t, b, e.URL+loc).want(t, http.StatusNotFound)
	get(t, b, e.URL+"/ui/c/caps/replay?at=m2").want(t, http.StatusNotFound)
	btok := get(t, b, e.URL+"/ui/").csrf(t)
	post(t, b, e.URL+"/ui/c/caps/replay", url.Values{"csrf": {btok}, "at": {"m2"}, "model": {"gpt-4o-mini"}}).want(t, http.StatusNotFound)
	// A conversation that is not a replay has no comparison.
	get(t, c, e.URL+"/ui/c/caps/compare").want(t, http.StatusBadRequest)
}

func TestReplayViewerNotReplayable(t *testing.T) {
	e := replayEnv(t)
	h := capitals()
	e.create(t, "acme", "meta", "Metadata only", convo.History{store.WithoutContent(h[2], "not recorded")})
	c := signIn(t, e, "tok-a")
	tok := get(t, c, e.URL+"/ui/c/meta/replay?at=m2").want(t, http.StatusOK).csrf(t)
	post(t, c, e.URL+"/ui/c/meta/replay", url.Values{"csrf": {tok}, "at": {"m2"}, "model": {"gpt-4o-mini"}}).
		want(t, http.StatusUnprocessableEntity).has(t, "cannot be replayed")
}

func TestNoReplayWithoutUpstreams(t *testing.T) {
	e := newEnv(t, nil)
	e.create(t, "", "caps", "Capitals", capitals())
	c := e.client(t)
	if p := get(t, c, e.URL+"/ui/c/caps").want(t, http.StatusOK); strings.Contains(p.body, "Replay from here") {
		t.Error("a server without upstreams offers replays")
	}
	get(t, c, e.URL+"/ui/c/caps/replay?at=m2").want(t, http.StatusNotFound)
}
