package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/sqlite"
	"github.com/convo-go/convo/store/storetest"

	_ "modernc.org/sqlite"
)

// cutProxy is a TCP proxy between a store and its database that a test can
// cut: every connection through it is closed, and new ones are accepted and
// closed at once, until it is mended. The database itself is never touched
// (other tests share it).
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go p.serve()
	return p
}

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := p.down
		p.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.track(c, up)
		go func() { io.Copy(up, c); up.Close(); c.Close() }()
		go func() { io.Copy(c, up); up.Close(); c.Close() }()
	}
}

func (p *cutProxy) track(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		p.conns[c] = true
	}
}

// cut closes every connection and refuses new ones.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *cutProxy) mend() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// TestStoreDownPostgres: while PostgreSQL cannot be reached, reads and
// appends are 503 unavailable with Retry-After, /readyz says so and
// /healthz stays up; once it can be reached again the server serves as
// before, without a restart.
func TestStoreDownPostgres(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	st, err := postgres.Open(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := newServer(t, st, nil)
	c := ts.create(t, ts.alice, "["+userHi+"]")
	ts.do(t, "GET", "/readyz", "", nil).want(t, 200)

	proxy.cut()
	checkDown(t, ts, c)

	proxy.mend()
	checkUp(t, ts, c)
}

// TestStoreDownSQLite: SQLite's analogue of a database out of reach is one
// locked by another process past the busy timeout: a write then is 503
// unavailable with Retry-After, and succeeds once the lock is gone.
func TestStoreDownSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "convo.db")
	st, err := sqlite.Options{BusyTimeout: 50 * time.Millisecond}.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := newServer(t, st, nil)
	c := ts.create(t, ts.alice, "["+userHi+"]")

	// Another process's write transaction, as sqlite3 would hold it.
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	r := ts.do(t, "POST", "/convo/v1/conversations/"+c.ID+"/messages", ts.alice, fmt.Sprintf(`{"version":%d,"messages":[%s]}`, c.Version, userHi))
	r.problem(t, 503, "unavailable")
	if r.header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	ts.do(t, "POST", "/convo/v1/conversations/"+c.ID+"/messages", ts.alice, fmt.Sprintf(`{"version":%d,"messages":[%s]}`, c.Version, userHi)).want(t, 200)
}

// checkDown checks every kind of answer while the store is down.
func checkDown(t *testing.T, ts *tserver, c conversation) {
	t.Helper()
	id := c.ID
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "/convo/v1/conversations/" + id, ""},
		{"GET", "/convo/v1/conversations/" + id + "/messages", ""},
		{"GET", "/convo/v1/conversations", ""},
		{"POST", "/convo/v1/conversations/" + id + "/messages", fmt.Sprintf(`{"version":%d,"messages":[%s]}`, c.Version, userHi)},
		{"POST", "/convo/v1/conversations", `{"messages":[` + userHi + `]}`},
		{"GET", "/v1/conversations/" + id + "/items", ""},
	} {
		var body any
		if rq.body != "" {
			body = rq.body
		}
		r := ts.do(t, rq.method, rq.path, ts.alice, body)
		p := r.problem(t, 503, "unavailable")
		if r.header.Get("Retry-After") == "" || !strings.Contains(p.Detail, "store is unavailable") {
			t.Errorf("%s %s: Retry-After %q, detail %q", rq.method, rq.path, r.header.Get("Retry-After"), p.Detail)
		}
	}
	r := ts.do(t, "GET", "/readyz", "", nil)
	r.problem(t, 503, "unavailable")
	if r.header.Get("Retry-After") == "" {
		t.Error("/readyz: no Retry-After")
	}
	ts.do(t, "GET", "/healthz", "", nil).want(t, 200)
}

// checkUp checks that the server serves again once the store is back; the
// pool may need a moment to dial, so the first answers may still be 503.
func checkUp(t *testing.T, ts *tserver, c conversation) {
	t.Helper()
	id := c.ID
	deadline := time.Now().Add(30 * time.Second)
	for ts.do(t, "GET", "/readyz", "", nil).status != 200 {
		if time.Now().After(deadline) {
			t.Fatal("/readyz not ready 30 s after the store came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.do(t, "POST", "/convo/v1/conversations/"+id+"/messages", ts.alice, fmt.Sprintf(`{"version":%d,"messages":[%s]}`, c.Version, userHi)).want(t, 200)
	ts.do(t, "GET", "/convo/v1/conversations/"+id+"/messages", ts.alice, nil).want(t, 200)
}
