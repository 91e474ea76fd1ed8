package ui_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/server/ui/internal/fixture"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/sqlite"
	"github.com/convo-go/convo/store/storetest"
)

// env is a server with the viewer over a SQLite store.
type env struct {
	*httptest.Server
	st store.Store
}

func newEnv(t testing.TB, tokens map[string]string) *env {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ui.db"))
	if err != nil {
		t.Fatal(err)
	}
	return newEnvOver(t, st, tokens)
}

// backends runs f with an env over each store: SQLite, and PostgreSQL when
// CONVO_TEST_POSTGRES names a server.
func backends(t *testing.T, tokens map[string]string, f func(t *testing.T, e *env)) {
	t.Run("sqlite", func(t *testing.T) { f(t, newEnv(t, tokens)) })
	t.Run("postgres", func(t *testing.T) {
		st, err := postgres.Open(t.Context(), storetest.PostgresDSN(t))
		if err != nil {
			t.Fatal(err)
		}
		f(t, newEnvOver(t, st, tokens))
	})
}

func newEnvOver(t testing.TB, st store.Store, tokens map[string]string) *env {
	t.Helper()
	t.Cleanup(func() { st.Close() })
	h, err := server.New(st, server.Options{Tokens: tokens, Anonymous: len(tokens) == 0, UI: true, Formats: all.Formats(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{Server: httptest.NewServer(h), st: st}
	t.Cleanup(e.Close)
	return e
}

func (e *env) create(t testing.TB, tenant, id, title string, h convo.History) store.Conversation {
	t.Helper()
	c, err := e.st.Create(context.Background(), store.Conversation{Tenant: tenant, ID: id, Title: title}, h...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// client is a browser without redirects followed, with a cookie jar.
func (e *env) client(t testing.TB) *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type page struct {
	status int
	header http.Header
	body   string
}

func get(t testing.TB, c *http.Client, u string) page {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return page{res.StatusCode, res.Header, string(b)}
}

func post(t testing.TB, c *http.Client, u string, form url.Values, header ...string) page {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return page{res.StatusCode, res.Header, string(b)}
}

func (p page) want(t testing.TB, status int) page {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d:\n%.2000s", p.status, status, p.body)
	}
	return p
}

func (p page) has(t testing.TB, parts ...string) page {
	t.Helper()
	for _, s := range parts {
		if !strings.Contains(p.body, s) {
			t.Errorf("the page does not hold %q", s)
		}
	}
	return p
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func (p page) csrf(t testing.TB) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatal("no CSRF token on the page")
	}
	return m[1]
}

func TestConversationPage(t *testing.T) {
	backends(t, nil, func(t *testing.T, e *env) {
		e.create(t, "", "every", "A weekend in Lyon", fixture.Every())
		c := e.client(t)
		p := get(t, c, e.URL+"/ui/c/every").want(t, http.StatusOK)
		if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Fatalf("Content-Security-Policy %q", csp)
		}
		p.has(t,
			"<title>A weekend in Lyon · convo</title>",
			`class="msg role-system"`, `turn-scoped`, "System · this turn",
			`class="name">Alice</span>`, `datetime="2026-11-29T09:31:00Z"`,
			`<img src="data:image/png;base64,iVBOR`, `<audio controls preload="metadata" src="data:audio/wav;base64,UklGR`,
			"wishlist.txt", `href="https://example.com/lyon.jpg"`,
			`<details class="reasoning">`, `<span class="badge sig"`, "Redacted reasoning", "encrypted · ", "Planning around the rain",
			`class="badge phase">commentary`, `class="badge phase">final`, "anthropic · claude-sonnet-4-5",
			`<code class="fn">get_weather</code>`, `&#34;city&#34;: &#34;Lyon&#34;`, `<span class="badge ok">result</span>`,
			`<details class="result failed"`, `<span class="badge err">error</span>`, "timetable service unavailable",
			`<th align="left">Day</th>`, `<code class="language-go">`, `<a href="https://www.sncf-connect.com/" rel="nofollow noopener noreferrer">`,
			`&#34;budget_eur&#34;: 600`, `<span class="badge warn">refusal</span>`,
			`<ol class="cites"><li><a href="https://www.museedesconfluences.fr/en/practical-information" rel="noopener noreferrer">Practical information — Musée des Confluences</a> <q>Open Tuesday to Sunday, 10:30 am to 6:30 pm</q></li>`,
			`<li>wishlist.txt <span class="where">document 0, char 0–31</span> <q>museums if it rains</q></li>`,
			`<li>lyon-guide.pdf <span class="where">file file-lyon-guide</span></li>`,
			"8 earlier messages compacted into this summary", `class="msg role-error"`, "529 overloaded_error",
			"in 1,840 · out 212 · cache read 1,024", "<b>2,052</b> tokens", "<b>4,848</b> tokens", "in 4,150",
			`<option value="anthropic">anthropic</option>`,
		)
		// The tool message's results are shown beside their calls; its anchor stays.
		p.has(t, `<div class="anchor" id="m-4"></div>`)
		if strings.Count(p.body, "timetable service unavailable") != 1 {
			t.Error("a tool result is shown twice")
		}
		// Calls waiting for results cannot end a fork; the others can.
		if strings.Contains(p.body, `name="at" value="4"`) || !strings.Contains(p.body, `name="at" value="5"`) {
			t.Error("fork buttons: the message with calls must not have one, its results' must")
		}
		get(t, c, e.URL+"/ui/c/nope").want(t, http.StatusNotFound).has(t, "There is no such conversation.")
		get(t, c, e.URL+"/ui/c/every?from=x").want(t, http.StatusBadRequest)
		get(t, c, e.URL+"/ui/nothing/here").want(t, http.StatusNotFound)
		st := get(t, c, e.URL+"/ui/static/style.css").want(t, http.StatusOK)
		if !strings.HasPrefix(st.header.Get("Content-Type"), "text/css") || st.header.Get("Content-Security-Policy") == "" {
			t.Errorf("style.css headers %v", st.header)
		}
	})
}

var (
	tagWithHandler = regexp.MustCompile(`(?i)<[a-z][^<>]*\son[a-z]+\s*=`)
	scriptURL      = regexp.MustCompile(`(?i)(href|src|action)\s*=\s*["']?\s*(javascript|vbscript|data:text)`)
)

func TestHostileContent(t *testing.T) {
	e := newEnv(t, nil)
	e.create(t, "", "hostile", fixture.HostileTitle, fixture.Hostile())
	c := e.client(t)
	for _, u := range []string{"/ui/c/hostile", "/ui/", "/ui/?q=pwned", "/ui/?q=script", "/ui/c/hostile/messages?from=0"} {
		p := get(t, c, e.URL+u).want(t, http.StatusOK)
		if n := strings.Count(strings.ToLower(p.body), "<script"); n > 1 || n == 1 && !strings.Contains(p.body, `<script src="/ui/static/app.js" defer></script>`) {
			t.Errorf("%s: %d script elements", u, n)
		}
		for _, re := range []*regexp.Regexp{tagWithHandler, scriptURL} {
			if m := re.FindString(p.body); m != "" {
				t.Errorf("%s holds %q", u, m)
			}
		}
		for _, bad := range []string{"<style", "<iframe", "<svg", `<img src=x`, `<b onmouseover`, `<div onclick`} {
			if strings.Contains(strings.ToLower(p.body), bad) {
				t.Errorf("%s holds %q", u, bad)
			}
		}
	}
	// The SVG is shown, as an image only.
	p := get(t, c, e.URL+"/ui/c/hostile").has(t, "&lt;script&gt;window."+fixture.Marker)
	if !strings.Contains(p.body, `<img src="data:image/svg&#43;xml;base64,`) {
		t.Error("the SVG image is not shown as an <img>")
	}
}

func TestSearchPage(t *testing.T) {
	backends(t, nil, func(t *testing.T, e *env) {
		e.create(t, "", "every", "A weekend in Lyon", fixture.Every())
		c := e.client(t)
		p := get(t, c, e.URL+"/ui/?q=museums").want(t, http.StatusOK)
		p.has(t, `href="/ui/c/every?at=8#m-8"`, "<mark>museums</mark>", "A weekend in Lyon")
		get(t, c, e.URL+"/ui/?q=%21%21").want(t, http.StatusOK).has(t, "Nothing to search for")
		get(t, c, e.URL+"/ui/?q=zeppelin").want(t, http.StatusOK).has(t, "No message holds all of these words.")
	})
}

func TestListPaging(t *testing.T) {
	e := newEnv(t, nil)
	for i := range 53 {
		e.create(t, "", "", "", fixture.Long(3+i%5))
	}
	c := e.client(t)
	p := get(t, c, e.URL+"/ui/").want(t, http.StatusOK)
	if n := strings.Count(p.body, `class="card"`); n != 50 {
		t.Fatalf("first page: %d conversations", n)
	}
	next := regexp.MustCompile(`href="/ui/\?after=([^"]+)"`).FindStringSubmatch(p.body)
	if next == nil {
		t.Fatal("no link to the next page")
	}
	p = get(t, c, e.URL+"/ui/?after="+next[1]).want(t, http.StatusOK)
	if n := strings.Count(p.body, `class="card"`); n != 3 || strings.Contains(p.body, "?after=") {
		t.Fatalf("second page: %d conversations", n)
	}
	p.has(t, "Question 0: what about the weather", "messages", "tokens", "gpt-5-mini")
	get(t, c, e.URL+"/ui/?after=junk").want(t, http.StatusBadRequest)
}

func TestMessagePaging(t *testing.T) {
	e := newEnv(t, nil)
	e.create(t, "", "long", "Long", fixture.Long(130))
	c := e.client(t)
	p := get(t, c, e.URL+"/ui/c/long").want(t, http.StatusOK)
	if !strings.Contains(p.body, `id="m-0"`) || strings.Contains(p.body, `id="m-60"`) {
		t.Fatal("the first page is not the first messages")
	}
	more := regexp.MustCompile(`data-page="(/ui/c/long/messages\?from=(\d+))"`).FindStringSubmatch(p.body)
	if more == nil {
		t.Fatal("no link to the next page")
	}
	frag := get(t, c, e.URL+strings.ReplaceAll(more[1], "&amp;", "&")).want(t, http.StatusOK)
	if strings.Contains(frag.body, "<html") || !strings.Contains(frag.body, `id="m-`+more[2]+`"`) {
		t.Fatalf("the next page is not a fragment starting at %s", more[2])
	}
	// ?at=N opens the page holding message N.
	get(t, c, e.URL+"/ui/c/long?at=120").want(t, http.StatusOK).has(t, `id="m-120"`, "Earlier messages")
}

func TestForkDeleteExport(t *testing.T) {
	backends(t, nil, func(t *testing.T, e *env) {
		e.create(t, "", "every", "A weekend in Lyon", fixture.Every())
		c := e.client(t)
		tok := get(t, c, e.URL+"/ui/c/every").csrf(t)

		f := post(t, c, e.URL+"/ui/c/every/fork", url.Values{"csrf": {tok}, "at": {"6"}}).want(t, http.StatusSeeOther)
		loc := f.header.Get("Location")
		id, _, _ := strings.Cut(strings.TrimPrefix(loc, "/ui/c/"), "?")
		fc, err := e.st.Get(context.Background(), "", id)
		if err != nil || fc.Messages != 6 || fc.ForkedFrom != "every" || fc.Title != "Fork of A weekend in Lyon" {
			t.Fatalf("fork at %s: %+v %v", loc, fc, err)
		}
		get(t, c, e.URL+loc).want(t, http.StatusOK).has(t, `forked from <a href="/ui/c/every?at=6">every</a>`)

		// A format that cannot carry something says so on a page, not in a
		// file; placeholders make it carry what it can.
		get(t, c, e.URL+"/ui/c/every/export?format=anthropic").want(t, http.StatusUnprocessableEntity).has(t, "cannot take audio")
		d := get(t, c, e.URL+"/ui/c/every/export?format=anthropic&media=placeholder").want(t, http.StatusOK)
		// A provider format downloads as the request itself (what convo
		// convert --from anthropic reads), not the API's envelope; what the
		// conversion changed is in the headers.
		if cd := d.header.Get("Content-Disposition"); !strings.Contains(cd, `attachment; filename="every.anthropic.json"`) ||
			!strings.HasPrefix(d.body, `{"system":`) || strings.Contains(d.body, `"format":"anthropic"`) || len(d.header.Values("Convo-Warning")) == 0 {
			t.Fatalf("export: %q %v %.200s", cd, d.header.Values("Convo-Warning"), d.body)
		}
		d = get(t, c, e.URL+"/ui/c/every/export?format=lines").want(t, http.StatusOK)
		if cd := d.header.Get("Content-Disposition"); !strings.Contains(cd, `filename="every.lines.jsonl"`) || strings.Count(d.body, "\n") != 10 {
			t.Fatalf("export lines: %q", cd)
		}
		// Whatever the export route offers, the viewer offers and downloads.
		get(t, c, e.URL+"/ui/c/every").has(t, `<option value="markdown">markdown</option>`)
		d = get(t, c, e.URL+"/ui/c/every/export?format=markdown").want(t, http.StatusOK)
		if cd := d.header.Get("Content-Disposition"); !strings.Contains(cd, `filename="every.markdown.md"`) || !strings.Contains(d.body, "Lyon") {
			t.Fatalf("export markdown: %q", cd)
		}
		get(t, c, e.URL+"/ui/c/every/export?format=nope").want(t, http.StatusBadRequest)
		get(t, c, e.URL+"/ui/c/nope/export").want(t, http.StatusNotFound)

		// State changes need the CSRF token and a same-site request.
		post(t, c, e.URL+"/ui/c/every/delete", url.Values{}).want(t, http.StatusForbidden)
		// A token differing in its first character (a random token may begin
		// with any fixed prefix, so flip what is there rather than replace it).
		wrong := string(tok[0]^1) + tok[1:]
		post(t, c, e.URL+"/ui/c/every/delete", url.Values{"csrf": {wrong}}).want(t, http.StatusForbidden)
		post(t, c, e.URL+"/ui/c/every/delete", url.Values{"csrf": {tok}}, "Sec-Fetch-Site", "cross-site").want(t, http.StatusForbidden)
		post(t, c, e.URL+"/ui/c/every/delete", url.Values{"csrf": {tok}}, "Origin", "http://evil.example").want(t, http.StatusForbidden)
		post(t, c, e.URL+"/ui/c/every/fork", url.Values{"csrf": {tok}, "at": {"99"}}).want(t, http.StatusBadRequest)
		if _, err := e.st.Get(context.Background(), "", "every"); err != nil {
			t.Fatal("a refused delete deleted")
		}
		post(t, c, e.URL+"/ui/c/every/delete", url.Values{"csrf": {tok}}, "Sec-Fetch-Site", "same-origin").want(t, http.StatusSeeOther)
		if _, err := e.st.Get(context.Background(), "", "every"); err == nil {
			t.Fatal("delete did not delete")
		}
		get(t, c, e.URL+loc).want(t, http.StatusOK) // the fork keeps its copy
	})
}

func TestSignInAndTenants(t *testing.T) {
	backends(t, map[string]string{"tok-alice": "alice", "tok-bob": "bob"}, func(t *testing.T, e *env) {
		e.create(t, "alice", "a1", "Alice's", fixture.Long(4))
		e.create(t, "bob", "b1", "Bob's secret", fixture.Long(4))
		anon := e.client(t)
		r := get(t, anon, e.URL+"/ui/c/a1").want(t, http.StatusSeeOther)
		if loc := r.header.Get("Location"); loc != "/ui/signin?next=%2Fui%2Fc%2Fa1" {
			t.Fatalf("redirect to %q", loc)
		}
		post(t, anon, e.URL+"/ui/c/a1/delete", url.Values{}).want(t, http.StatusUnauthorized)
		get(t, anon, e.URL+"/ui/signin").want(t, http.StatusOK).has(t, `type="password"`)
		post(t, anon, e.URL+"/ui/signin", url.Values{"token": {"wrong"}}).want(t, http.StatusUnauthorized).has(t, "not one this server knows")
		post(t, anon, e.URL+"/ui/signin", url.Values{"token": {"tok-alice"}}, "Sec-Fetch-Site", "cross-site").want(t, http.StatusForbidden)

		alice := e.client(t)
		in := post(t, alice, e.URL+"/ui/signin", url.Values{"token": {"tok-alice"}, "next": {"/ui/c/a1"}}).want(t, http.StatusSeeOther)
		if loc := in.header.Get("Location"); loc != "/ui/c/a1" {
			t.Fatalf("after sign-in: %q", loc)
		}
		ck := in.header.Get("Set-Cookie")
		for _, want := range []string{"convo_session=tok-alice", "Path=/ui/", "HttpOnly", "SameSite=Strict", "Max-Age="} {
			if !strings.Contains(ck, want) {
				t.Errorf("cookie %q lacks %q", ck, want)
			}
		}
		// An outside next is not followed.
		o := post(t, e.client(t), e.URL+"/ui/signin", url.Values{"token": {"tok-alice"}, "next": {"//evil.example/"}})
		if loc := o.header.Get("Location"); loc != "/ui/" {
			t.Fatalf("next=//evil.example/ redirects to %q", loc)
		}

		p := get(t, alice, e.URL+"/ui/").want(t, http.StatusOK).has(t, "Alice&#39;s", `class="tenant" title="tenant">alice<`)
		if strings.Contains(p.body, "Bob") {
			t.Fatal("alice's list shows bob's conversation")
		}
		if strings.Contains(get(t, alice, e.URL+"/ui/?q=question").body, "/ui/c/b1") {
			t.Fatal("alice's search finds bob's messages")
		}
		// Another tenant's conversation is exactly a missing one.
		foreign := get(t, alice, e.URL+"/ui/c/b1").want(t, http.StatusNotFound)
		missing := get(t, alice, e.URL+"/ui/c/zz").want(t, http.StatusNotFound)
		if foreign.body != missing.body {
			t.Fatal("another tenant's conversation answers unlike a missing one")
		}
		tok := get(t, alice, e.URL+"/ui/c/a1").want(t, http.StatusOK).csrf(t)
		for _, u := range []string{"/ui/c/b1/messages?from=0", "/ui/c/b1/export"} {
			get(t, alice, e.URL+u).want(t, http.StatusNotFound)
		}
		post(t, alice, e.URL+"/ui/c/b1/fork", url.Values{"csrf": {tok}, "at": {"1"}}).want(t, http.StatusNotFound)
		post(t, alice, e.URL+"/ui/c/b1/delete", url.Values{"csrf": {tok}}).want(t, http.StatusNotFound)
		if _, err := e.st.Get(context.Background(), "bob", "b1"); err != nil {
			t.Fatal("alice deleted bob's conversation")
		}
		// Bob's CSRF token is not alice's.
		bob := e.client(t)
		post(t, bob, e.URL+"/ui/signin", url.Values{"token": {"tok-bob"}}).want(t, http.StatusSeeOther)
		post(t, bob, e.URL+"/ui/c/b1/delete", url.Values{"csrf": {tok}}).want(t, http.StatusForbidden)

		out := post(t, alice, e.URL+"/ui/signout", url.Values{"csrf": {tok}}).want(t, http.StatusSeeOther)
		if !strings.Contains(out.header.Get("Set-Cookie"), "Max-Age=0") {
			t.Fatalf("sign-out cookie %q", out.header.Get("Set-Cookie"))
		}
		get(t, alice, e.URL+"/ui/").want(t, http.StatusSeeOther)
	})
}

// TestLoopbackOnly checks that without tokens the viewer answers only
// requests addressed to a loopback host: a page elsewhere cannot rebind its
// name to this server and read it.
func TestLoopbackOnly(t *testing.T) {
	e := newEnv(t, nil)
	req, _ := http.NewRequest("GET", e.URL+"/ui/", nil)
	req.Host = "attacker.example"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("a request for host attacker.example: %d", res.StatusCode)
	}
	get(t, e.client(t), e.URL+"/ui/signin").want(t, http.StatusSeeOther) // no sign-in without tokens
	req.Host = "localhost:1234"
	if res, err = http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("localhost: %v %v", res.StatusCode, err)
	}
	res.Body.Close()
}

// TestStatsFollowChanges checks the totals a page shows after appends
// (summed from the new messages only) and after a deletion (summed again).
func TestStatsFollowChanges(t *testing.T) {
	backends(t, nil, func(t *testing.T, e *env) {
		c := e.create(t, "", "s", "Stats", fixture.Long(4))
		cl := e.client(t)
		get(t, cl, e.URL+"/ui/c/s").has(t, "<b>241</b> tokens")
		m := convo.Assistant("more")
		m.ID, m.Usage, m.Origin = "added", &convo.Usage{Input: 1000, Output: 1}, &convo.Origin{Provider: "anthropic", Model: "new-model"}
		c, err := e.st.Append(context.Background(), "", "s", c.Version, convo.User("again"), m)
		if err != nil {
			t.Fatal(err)
		}
		get(t, cl, e.URL+"/ui/c/s").has(t, "<b>1,242</b> tokens", `<span class="chip model">new-model</span>`, `<span class="chip prov">anthropic</span>`)
		get(t, cl, e.URL+"/ui/").has(t, "1,242 tokens", "6 messages")
		if _, err := e.st.DeleteMessage(context.Background(), "", "s", c.Version, "added"); err != nil {
			t.Fatal(err)
		}
		p := get(t, cl, e.URL+"/ui/c/s").has(t, "<b>241</b> tokens")
		if strings.Contains(p.body, "new-model") {
			t.Fatal("the deleted message's model is still listed")
		}
		// A new conversation under the id of a deleted one has its own stats.
		if err := e.st.Delete(context.Background(), "", "s"); err != nil {
			t.Fatal(err)
		}
		e.create(t, "", "s", "Stats", fixture.Long(2))
		get(t, cl, e.URL+"/ui/c/s").has(t, "<b>120</b> tokens")
	})
}
