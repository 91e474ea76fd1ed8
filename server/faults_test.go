package server_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/convo-go/convo/store"
)

// faultyStore fails or panics in Get, for the error paths a real backend
// reaches only when its database breaks.
type faultyStore struct {
	store.Store
	err   error
	panic bool
}

func (f *faultyStore) Get(ctx context.Context, tenant, id string) (store.Conversation, error) {
	if f.panic {
		panic("the database caught fire")
	}
	return store.Conversation{}, f.err
}

// lockedBuffer collects the server's log, written from its goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInternalErrors checks that a store failure is a 500 that tells the
// client nothing of it, while the log has the details; a panic is a 500 too,
// and the server goes on serving.
func TestInternalErrors(t *testing.T) {
	st := &faultyStore{Store: backends(t)[0].open(t), err: errors.New("disk I/O error at /var/lib/secret.db")}
	ts := newServer(t, st, nil)
	p := ts.do(t, "GET", "/convo/v1/conversations/x", ts.alice, nil).problem(t, 500, "internal")
	if p.Detail != "internal error" {
		t.Errorf("detail %q", p.Detail)
	}
	waitLog(t, ts, "secret.db")

	st.err = context.Canceled
	ts.do(t, "GET", "/convo/v1/conversations/x", ts.alice, nil).problem(t, 503, "unavailable")

	st.panic = true
	ts.do(t, "GET", "/convo/v1/conversations/x", ts.alice, nil).problem(t, 500, "internal")
	waitLog(t, ts, "the database caught fire")
	st.panic = false
	ts.do(t, "GET", "/healthz", "", nil).want(t, 200)

	// A conflict that the store reports without the version: the server
	// reads the current one for the problem.
	st.err = nil
	c := ts.create(t, ts.alice, "")
	st.err = store.ErrNotFound
	p = ts.do(t, "POST", "/convo/v1/conversations/"+c.ID+"/messages", ts.alice, `{"version":9,"messages":[`+userHi+`]}`).problem(t, 409, "version-conflict")
	if p.Version != nil {
		t.Errorf("version %d from a Get that failed", *p.Version)
	}
}

func waitLog(t *testing.T, ts *tserver, want string) {
	t.Helper()
	if !strings.Contains(ts.logs.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, ts.logs.String())
	}
}
