// Package ui is the transcript viewer of "convo serve": server-rendered
// pages over a store.Store that list, search and show conversations, and
// fork, delete and export them.
//
// Everything a conversation holds is treated as hostile. Pages are
// html/template (contextual escaping), Markdown is rendered without raw
// HTML and with links limited to http, https and mailto, inline media are
// data: URLs built only from a checked media type and base64, SVG is shown
// only as an image, and every response carries a Content-Security-Policy
// that allows no inline script or style and no other origin. The one
// script, served from the package's embedded assets, only loads the next
// page of a long conversation and asks before deleting.
//
// Authentication is the API's: a sign-in page takes a bearer token and
// keeps it in an HttpOnly, SameSite=Strict cookie; the token's tenant sees
// its own conversations only, and another tenant's answers 404 as one that
// does not exist. Without tokens (a loopback server) there is no sign-in
// and every page acts for the tenant "". State changes are POSTs carrying a
// CSRF token, refused when the browser says they come from another site.
package ui

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the viewer is served.
const Prefix = "/ui/"

// Page sizes.
const (
	listPage     = 50 // conversations
	messagesPage = 50 // messages of a conversation
)

// CookieName is the cookie that holds a signed-in visitor's token
// (HttpOnly, SameSite=Strict, path Prefix).
const CookieName = "convo_session"

// sessionAge is how long a sign-in lasts.
const sessionAge = 12 * time.Hour

// Options configure the viewer.
type Options struct {
	// Tokens maps bearer tokens to tenants, as for the API. A visitor
	// signs in with one.
	Tokens map[string]string
	// Anonymous serves visitors without a token as the tenant "", for a
	// server on a loopback address (as the API's Options.Anonymous). Such
	// pages are served only to requests addressed to a loopback host, so
	// a web page elsewhere cannot reach them by rebinding its DNS name.
	Anonymous bool
	// Formats lists the export formats, as the export route takes them;
	// called for every page that offers an export.
	Formats func() []string
	// Export writes a conversation of tenant in the format of the
	// request's "format" query parameter, as the API's export route does.
	// Nil hides the export action.
	Export func(w http.ResponseWriter, r *http.Request, tenant, id string)
	// Logger receives internal errors, which visitors never see.
	Logger *slog.Logger
	// Replay, when set, offers "Replay from here" on every message and
	// shows a replay beside its original (nil: neither).
	Replay *replay.Replayer
}

// UI is the viewer, an http.Handler for the paths under Prefix.
type UI struct {
	st     store.Store
	opts   Options
	tokens map[[sha256.Size]byte]string
	anon   []byte // the CSRF key of anonymous visitors
	tmpl   *template.Template
	mux    *http.ServeMux
	stats  *statsCache
	log    *slog.Logger
}

// New returns the viewer over st.
func New(st store.Store, opts Options) (*UI, error) {
	if st == nil {
		return nil, errors.New("ui: nil store")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Formats == nil {
		opts.Formats = func() []string { return nil }
	}
	u := &UI{st: st, opts: opts, log: opts.Logger, mux: http.NewServeMux(), stats: newStatsCache(4096),
		tokens: make(map[[sha256.Size]byte]string, len(opts.Tokens)), anon: make([]byte, 32)}
	rand.Read(u.anon)
	for tok, tenant := range opts.Tokens {
		if tok == "" {
			return nil, errors.New("ui: empty token")
		}
		u.tokens[sha256.Sum256([]byte(tok))] = tenant
	}
	t, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("ui: %w", err)
	}
	u.tmpl = t
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix(Prefix+"static/", http.FileServerFS(static))
	u.mux.Handle("GET "+Prefix+"static/", cacheFor(files, time.Hour))
	u.mux.HandleFunc("GET "+Prefix+"signin", u.signinPage)
	u.mux.HandleFunc("POST "+Prefix+"signin", u.signin)
	u.mux.HandleFunc("POST "+Prefix+"signout", u.signout)
	u.mux.HandleFunc("GET "+Prefix+"{$}", u.session(u.list))
	u.mux.HandleFunc("GET "+Prefix+"usage", u.session(u.usagePage))
	u.mux.HandleFunc("GET "+Prefix+"c/{id}", u.session(u.conversation))
	u.mux.HandleFunc("GET "+Prefix+"c/{id}/messages", u.session(u.messages))
	u.mux.HandleFunc("GET "+Prefix+"c/{id}/export", u.session(u.export))
	u.mux.HandleFunc("POST "+Prefix+"c/{id}/fork", u.session(u.fork))
	u.mux.HandleFunc("POST "+Prefix+"c/{id}/delete", u.session(u.delete))
	u.mux.HandleFunc("GET "+Prefix+"c/{id}/replay", u.session(u.replayPage))
	u.mux.HandleFunc("POST "+Prefix+"c/{id}/replay", u.session(u.replayPost))
	u.mux.HandleFunc("GET "+Prefix+"c/{id}/compare", u.session(u.compare))
	u.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		u.errorPage(w, r, http.StatusNotFound, "Not found", "There is no page here.")
	})
	return u, nil
}

// ServeHTTP serves the viewer, with the security headers on every
// response.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"media-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	u.mux.ServeHTTP(w, r)
}

func cacheFor(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age="+strconv.Itoa(int(d.Seconds())))
		h.ServeHTTP(w, r)
	})
}

// visitor is who a request acts for.
type visitor struct {
	tenant string
	csrf   string
	signed bool // signed in with a token (not anonymous)
}

type visitorKey struct{}

func visitorOf(r *http.Request) visitor {
	v, _ := r.Context().Value(visitorKey{}).(visitor)
	return v
}

// who resolves the request's visitor: the cookie's token, else anonymous
// when allowed.
func (u *UI) who(r *http.Request) (visitor, bool) {
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		if tenant, ok := u.tokens[sha256.Sum256([]byte(c.Value))]; ok {
			return visitor{tenant: tenant, csrf: mac([]byte(c.Value), "csrf"), signed: true}, true
		}
	}
	if u.opts.Anonymous && loopbackHost(r.Host) {
		return visitor{tenant: "", csrf: mac(u.anon, "csrf")}, true
	}
	return visitor{}, false
}

// mac is a hex HMAC-SHA256 of msg under key.
func mac(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// session runs h for a known visitor; others go to the sign-in page. A
// POST must carry the visitor's CSRF token and must not come from another
// site.
func (u *UI) session(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, ok := u.who(r)
		if !ok {
			if len(u.tokens) == 0 {
				u.errorPage(w, r, http.StatusForbidden, "Loopback only",
					"This server has no sign-in: open the viewer at localhost or 127.0.0.1 on the machine it runs on.")
				return
			}
			if r.Method != http.MethodGet {
				u.errorPage(w, r, http.StatusUnauthorized, "Signed out", "Sign in again to do that.")
				return
			}
			http.Redirect(w, r, Prefix+"signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost {
			if !sameSite(r) {
				u.errorPage(w, r, http.StatusForbidden, "Refused", "The request came from another site.")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, 4096)
			if err := r.ParseForm(); err != nil || !hmac.Equal([]byte(r.PostForm.Get("csrf")), []byte(v.csrf)) {
				u.errorPage(w, r, http.StatusForbidden, "Refused", "The form has expired: reload the page and try again.")
				return
			}
		}
		h(w, r.WithContext(context.WithValue(r.Context(), visitorKey{}, v)))
	}
}

// sameSite reports whether a POST comes from a page of this server, as far
// as the browser says: Sec-Fetch-Site, else Origin.
func sameSite(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true // not a browser, or one that sends neither: the CSRF token decides
	}
	o, err := url.Parse(origin)
	return err == nil && o.Host == r.Host
}

// page is what every template gets.
type page struct {
	Title    string
	Visitor  visitor
	Tenant   string
	CSRF     string
	Signed   bool
	Query    string
	Data     any
	Prefix   string
	CanSign  bool
	NextPath string
}

func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.Visitor = visitorOf(r)
	p.Signed, p.Prefix, p.Tenant, p.CSRF = p.Visitor.signed, Prefix, p.Visitor.tenant, p.Visitor.csrf
	var b strings.Builder
	if err := u.tmpl.ExecuteTemplate(&b, name, p); err != nil {
		u.log.Error("ui: rendering", "template", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (u *UI) errorPage(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
	u.render(w, r, status, "error.html", page{Title: title, Data: detail})
}

// fail answers a store error: not found (or another tenant's) is 404,
// invalid input 400, anything else 500 with the details logged.
func (u *UI) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		u.errorPage(w, r, http.StatusNotFound, "Not found", "There is no such conversation.")
	case errors.Is(err, store.ErrInvalid):
		u.errorPage(w, r, http.StatusBadRequest, "Bad request", err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		u.errorPage(w, r, http.StatusServiceUnavailable, "Unavailable", "The request was cancelled.")
	default:
		u.log.Error("ui: store", "method", r.Method, "path", r.URL.Path, "err", err)
		u.errorPage(w, r, http.StatusInternalServerError, "Internal error", "Something went wrong; the server log has the details.")
	}
}

// GET /ui/signin
func (u *UI) signinPage(w http.ResponseWriter, r *http.Request) {
	if len(u.tokens) == 0 {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return
	}
	u.render(w, r, http.StatusOK, "signin.html", page{Title: "Sign in", CanSign: true, NextPath: safeNext(r.URL.Query().Get("next"))})
}

// safeNext keeps a redirect after sign-in on the viewer.
func safeNext(next string) string {
	if !strings.HasPrefix(next, Prefix) || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return Prefix
	}
	return next
}

// POST /ui/signin token=…
func (u *UI) signin(w http.ResponseWriter, r *http.Request) {
	if len(u.tokens) == 0 {
		http.Redirect(w, r, Prefix, http.StatusSeeOther)
		return
	}
	if !sameSite(r) {
		u.errorPage(w, r, http.StatusForbidden, "Refused", "The request came from another site.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		u.errorPage(w, r, http.StatusBadRequest, "Bad request", "The form could not be read.")
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	next := safeNext(r.PostForm.Get("next"))
	if _, ok := u.tokens[sha256.Sum256([]byte(tok))]; !ok || tok == "" {
		u.render(w, r, http.StatusUnauthorized, "signin.html", page{Title: "Sign in", CanSign: true, NextPath: next,
			Data: "That token is not one this server knows."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: tok, Path: Prefix, MaxAge: int(sessionAge.Seconds()),
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// POST /ui/signout
func (u *UI) signout(w http.ResponseWriter, r *http.Request) {
	u.session(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: Prefix, MaxAge: -1,
			HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode})
		target := Prefix + "signin"
		if len(u.tokens) == 0 {
			target = Prefix
		}
		http.Redirect(w, r, target, http.StatusSeeOther)
	})(w, r)
}

// listRow is one conversation of the list.
type listRow struct {
	C     store.Conversation
	Stats stats
}

type listData struct {
	Rows []listRow
	Next string
	Hits []store.Hit
	More string // the next page of search results
	Err  string
}

// GET /ui/?after=  or  /ui/?q=&after=
func (u *UI) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := visitorOf(r)
	if query := strings.TrimSpace(q.Get("q")); query != "" {
		hits, next, err := u.st.Search(r.Context(), v.tenant, query, store.SearchOptions{Limit: listPage, After: q.Get("after")})
		d := listData{Hits: hits, More: next}
		if errors.Is(err, store.ErrInvalid) {
			d.Err = "Nothing to search for: type a word or two."
		} else if err != nil {
			u.fail(w, r, err)
			return
		}
		u.render(w, r, http.StatusOK, "list.html", page{Title: "Search: " + query, Query: query, Data: d})
		return
	}
	cs, next, err := u.st.List(r.Context(), v.tenant, store.ListOptions{Limit: listPage, After: q.Get("after")})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	rows := make([]listRow, len(cs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, c := range cs {
		rows[i].C = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s, err := u.statsOf(r.Context(), v.tenant, c)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				u.log.Warn("ui: summing up a conversation", "id", c.ID, "err", err)
			}
			rows[i].Stats = s
		}()
	}
	wg.Wait()
	u.render(w, r, http.StatusOK, "list.html", page{Title: "Conversations", Data: listData{Rows: rows, Next: next}})
}

// statsOf returns the stats of conversation c at its version: from the
// cache; after appends, the cached ones plus those of the new messages
// alone; else summed from one load of the whole conversation.
func (u *UI) statsOf(ctx context.Context, tenant string, c store.Conversation) (stats, error) {
	key := statsKey{tenant: tenant, id: c.ID, created: c.Created.UnixMicro()}
	e, ok := u.stats.get(key)
	if ok && e.version == c.Version {
		return e.stats, nil
	}
	var h convo.History
	var err error
	if ok && e.count > 0 && c.Messages > e.count {
		// Messages are only ever added at the end, so if the last one
		// summed is still at its index, every one before it is too.
		h, c, err = u.st.LoadRange(ctx, tenant, c.ID, e.count-1, -1)
		if err == nil && len(h) > 0 && h[0].ID == e.lastID {
			e.stats = e.stats.add(statsOf(h[1:]))
			e.version, e.count, e.lastID = c.Version, e.count+len(h)-1, h[len(h)-1].ID
			u.stats.put(key, e)
			return e.stats, nil
		}
	}
	if h, c, err = u.st.Load(ctx, tenant, c.ID, 0); err != nil {
		return stats{}, err
	}
	e = statsEntry{version: c.Version, count: len(h), stats: statsOf(h)}
	if len(h) > 0 {
		e.lastID = h[len(h)-1].ID
	}
	u.stats.put(key, e)
	return e.stats, nil
}

type convData struct {
	C        store.Conversation
	Stats    stats
	Messages []msgView
	From     int
	Next     int // the index of the next page; 0 at the end
	Prev     int // the index of the previous page; -1 at the start
	Formats  []string
	// Replay: messages offer "Replay from here"; ReplayOf is set on a
	// replay's fork.
	Replay   bool
	ReplayOf *replay.Info
}

// loadPage loads the messages of a page from index from: the page, and a
// few messages after it in which results of its last calls may be. The
// stats of the whole conversation come from the cache while its version
// stands, else from one load of the whole.
func (u *UI) loadPage(ctx context.Context, tenant, id string, from int) (store.Conversation, convo.History, convo.History, stats, error) {
	const lookahead = 8
	h, c, err := u.st.LoadRange(ctx, tenant, id, from, messagesPage+lookahead)
	if err != nil {
		return c, nil, nil, stats{}, err
	}
	s, err := u.statsOf(ctx, tenant, c)
	if err != nil {
		return c, nil, nil, stats{}, err
	}
	end := min(messagesPage, len(h))
	// Keep the results of the page's last calls on the page.
	for end < len(h) && h[end].Role == convo.RoleTool {
		end++
	}
	return c, h[:end], h[end:min(end+lookahead, len(h))], s, nil
}

func (u *UI) pageData(r *http.Request, from int) (convData, error) {
	v := visitorOf(r)
	c, msgs, after, s, err := u.loadPage(r.Context(), v.tenant, r.PathValue("id"), from)
	if err != nil {
		return convData{}, err
	}
	d := convData{C: c, Stats: s, Messages: view(msgs, from, after), From: from, Prev: -1}
	if end := from + len(msgs); end < c.Messages {
		d.Next = end
	}
	if from > 0 {
		d.Prev = max(0, from-messagesPage)
	}
	if u.opts.Export != nil {
		d.Formats = u.opts.Formats()
	}
	if d.Replay = u.opts.Replay != nil; d.Replay {
		if info, ok := replay.ForkInfo(c); ok {
			d.ReplayOf = &info
		}
	}
	return d, nil
}

// GET /ui/c/{id}?from=N (or ?at=N: the page holding message N)
func (u *UI) conversation(w http.ResponseWriter, r *http.Request) {
	from, err := indexParam(r, "from")
	if err != nil {
		u.errorPage(w, r, http.StatusBadRequest, "Bad request", err.Error())
		return
	}
	if at, err := indexParam(r, "at"); err != nil {
		u.errorPage(w, r, http.StatusBadRequest, "Bad request", err.Error())
		return
	} else if at > 0 {
		from = at / messagesPage * messagesPage
	}
	d, err := u.pageData(r, from)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	title := d.C.Title
	if title == "" {
		title = "Untitled conversation"
	}
	u.render(w, r, http.StatusOK, "conversation.html", page{Title: title, Data: d})
}

// GET /ui/c/{id}/messages?from=N: the messages of a page and the link to
// the next, for the script that loads pages as the reader scrolls.
func (u *UI) messages(w http.ResponseWriter, r *http.Request) {
	from, err := indexParam(r, "from")
	if err != nil {
		u.errorPage(w, r, http.StatusBadRequest, "Bad request", err.Error())
		return
	}
	d, err := u.pageData(r, from)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	u.render(w, r, http.StatusOK, "page", page{Data: d})
}

func indexParam(r *http.Request, name string) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: want a message index, got %q", name, s)
	}
	return n, nil
}

// POST /ui/c/{id}/fork at=N
func (u *UI) fork(w http.ResponseWriter, r *http.Request) {
	v := visitorOf(r)
	at, err := strconv.Atoi(r.PostForm.Get("at"))
	if err != nil {
		u.errorPage(w, r, http.StatusBadRequest, "Bad request", "at: want a number of messages")
		return
	}
	id := r.PathValue("id")
	c, err := u.st.Get(r.Context(), v.tenant, id)
	if err != nil {
		u.fail(w, r, err)
		return
	}
	title := c.Title
	if title == "" {
		title = "Untitled"
	}
	f, err := u.st.Fork(r.Context(), v.tenant, id, at, store.Conversation{Title: firstWords("Fork of "+title, store.MaxTitleBytes-8)})
	if err != nil {
		u.fail(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix+"c/"+url.PathEscape(f.ID)+"?at="+strconv.Itoa(max(0, at-1))+"#m-"+strconv.Itoa(max(0, at-1)), http.StatusSeeOther)
}

// POST /ui/c/{id}/delete
func (u *UI) delete(w http.ResponseWriter, r *http.Request) {
	v := visitorOf(r)
	if err := u.st.Delete(r.Context(), v.tenant, r.PathValue("id")); err != nil {
		u.fail(w, r, err)
		return
	}
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}

// GET /ui/c/{id}/export?format=F: a download of the export route's answer.
func (u *UI) export(w http.ResponseWriter, r *http.Request) {
	if u.opts.Export == nil {
		u.errorPage(w, r, http.StatusNotFound, "Not found", "This server offers no export.")
		return
	}
	v := visitorOf(r)
	id := r.PathValue("id")
	if _, err := u.st.Get(r.Context(), v.tenant, id); err != nil {
		u.fail(w, r, err)
		return
	}
	d := &download{ResponseWriter: w, name: id + "." + formatName(r.URL.Query().Get("format"))}
	u.opts.Export(d, r, v.tenant, id)
	if d.failed != 0 {
		// The route's problem, on a page: a download would save it as
		// the file.
		var p struct{ Detail string }
		_ = json.Unmarshal(d.problem.Bytes(), &p)
		if p.Detail == "" {
			p.Detail = "The export failed."
		}
		u.errorPage(w, r, d.failed, "Export failed", p.Detail)
	}
}

// formatName is a file-name-safe rendering of a format name.
func formatName(f string) string {
	if f == "" {
		f = "convo"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, f)
}

// download makes a successful answer a file to save, named after the
// conversation, the format and the content type. A failure is kept (its
// status and the start of its problem document) for the viewer to show.
type download struct {
	http.ResponseWriter
	name    string
	wrote   bool
	failed  int
	problem bytes.Buffer
}

func (d *download) WriteHeader(code int) {
	if d.wrote {
		return
	}
	if code != http.StatusOK {
		d.wrote, d.failed = true, code
		return
	}
	ext := ".json"
	ct := d.Header().Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/jsonl"), strings.HasPrefix(ct, "application/x-ndjson"):
		ext = ".jsonl"
	case strings.HasPrefix(ct, "text/markdown"):
		ext = ".md"
	case strings.HasPrefix(ct, "text/"):
		ext = ".txt"
	}
	d.Header().Set("Content-Disposition", mimeDisposition(d.name+ext))
	d.wrote = true
	d.ResponseWriter.WriteHeader(code)
}

func (d *download) Write(b []byte) (int, error) {
	if !d.wrote {
		d.WriteHeader(http.StatusOK)
	}
	if d.failed != 0 {
		if d.problem.Len() < 64<<10 {
			d.problem.Write(b)
		}
		return len(b), nil
	}
	return d.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (d *download) Unwrap() http.ResponseWriter { return d.ResponseWriter }

func mimeDisposition(name string) string {
	safe := strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f || r == '"' || r == '\\' || r == '/' {
			return '_'
		}
		return r
	}, name)
	return `attachment; filename="` + safe + `"; filename*=UTF-8''` + url.PathEscape(name)
}
