package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
)

// slowRequest opens a connection to ts, sends the head of a request that
// announces a body of length bytes, and the first part of that body, then
// sends nothing more: a slow (or stalled) sender.
func slowRequest(t *testing.T, ts *tserver, method, path, token string, length int, part string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, path, length)
	if token != "" {
		head += "Authorization: Bearer " + token + "\r\n"
	}
	if _, err := io.WriteString(c, head+"\r\n"+part); err != nil {
		t.Fatal(err)
	}
	return c
}

// answered reports whether c has the start of a response waiting,
// without waiting for one.
func answered(c net.Conn) bool {
	c.SetReadDeadline(time.Now().Add(time.Millisecond))
	defer c.SetReadDeadline(time.Time{})
	var b [1]byte
	n, _ := c.Read(b[:])
	return n > 0
}

// answer reads the response on c within a few seconds (a server that
// waits for the rest of the body never answers), and when checkClosed,
// whether the server then closed the connection.
func answer(t *testing.T, c net.Conn, checkClosed bool) (*http.Response, bool) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer while the body is incomplete: %v", err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if !checkClosed {
		return res, false
	}
	_, err = br.ReadByte()
	return res, err == io.EOF
}

// TestUnauthorizedDoesNotWaitForBody: a request without a valid token is
// answered 401 at once and the connection closed, however slowly its body
// comes.
func TestUnauthorizedDoesNotWaitForBody(t *testing.T) {
	ts := newServer(t, backends(t)[0].open(t), nil)
	c := slowRequest(t, ts, "POST", "/convo/v1/conversations", "wrong", 100000, `{"messages":[`)
	res, closed := answer(t, c, true)
	if res.StatusCode != 401 || !res.Close || !closed {
		t.Fatalf("status %d, Connection: close %v, closed %v", res.StatusCode, res.Close, closed)
	}
}

// TestSlowBody: a body that does not arrive within BodyTimeout is a 408,
// and the connection is closed.
func TestSlowBody(t *testing.T) {
	ts := newServer(t, backends(t)[0].open(t), func(o *server.Options) { o.BodyTimeout = 200 * time.Millisecond })
	c := slowRequest(t, ts, "POST", "/convo/v1/conversations", ts.alice, 1000, `{"messages":[`)
	res, closed := answer(t, c, true)
	if res.StatusCode != 408 || !closed {
		t.Fatalf("status %d, closed %v", res.StatusCode, closed)
	}
	// Bodies sent in time still work, on a new connection.
	ts.create(t, ts.alice, "")
}

// TestTooLargeBeforeReading: a Content-Length over the limit is refused
// before any of the body is sent.
func TestTooLargeBeforeReading(t *testing.T) {
	ts := newServer(t, backends(t)[0].open(t), func(o *server.Options) { o.MaxBodyBytes = 1000 })
	c := slowRequest(t, ts, "POST", "/convo/v1/conversations", ts.alice, 5000, "")
	res, closed := answer(t, c, true)
	if res.StatusCode != 413 || !res.Close || !closed {
		t.Fatalf("status %d, Connection: close %v, closed %v", res.StatusCode, res.Close, closed)
	}
}

// blockingStore answers Get only when the request's context ends.
type blockingStore struct{ store.Store }

func (b blockingStore) Get(ctx context.Context, tenant, id string) (store.Conversation, error) {
	<-ctx.Done()
	return store.Conversation{}, ctx.Err()
}

// TestRequestTimeout: the store's work is cancelled when the request's
// time is up, and the client hears so.
func TestRequestTimeout(t *testing.T) {
	ts := newServer(t, blockingStore{backends(t)[0].open(t)}, func(o *server.Options) { o.RequestTimeout = 200 * time.Millisecond })
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/convo/v1/conversations/x", nil)
	req.Header.Set("Authorization", "Bearer "+ts.alice)
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != 503 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
}

// TestInflightBudget: bodies held at once are bounded; one that does not
// fit is a 503 with Retry-After, and the budget comes back when the
// request holding it ends.
func TestInflightBudget(t *testing.T) {
	ts := newServer(t, backends(t)[0].open(t), func(o *server.Options) { o.MaxInflightBytes = 1500 })
	body := `{"messages":[` + userHi + `]}`
	body += strings.Repeat(" ", 1000-len(body))
	holder := slowRequest(t, ts, "POST", "/convo/v1/conversations", ts.alice, len(body), body[:10])
	// The holder's reservation is taken once its handler runs; wait for it
	// by retrying until the second request is refused. A holder whose
	// handler ran while a retry held its bytes was refused itself (it has
	// an answer already): it starts again.
	var res response
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		res = ts.do(t, "POST", "/convo/v1/conversations", ts.alice, body)
		if res.status == 503 {
			break
		}
		if answered(holder) {
			holder.Close()
			holder = slowRequest(t, ts, "POST", "/convo/v1/conversations", ts.alice, len(body), body[:10])
		}
		time.Sleep(10 * time.Millisecond)
	}
	res.problem(t, 503, "busy")
	if res.header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After")
	}
	// The holder finishes; its bytes return to the budget.
	io.WriteString(holder, body[10:])
	if r, _ := answer(t, holder, false); r.StatusCode != 201 {
		t.Fatalf("holder: status %d", r.StatusCode)
	}
	ts.do(t, "POST", "/convo/v1/conversations", ts.alice, body).want(t, 201)
}

// TestLongPathLogged: a log line holds a few KiB of a path, not all of it.
func TestLongPathLogged(t *testing.T) {
	ts := newServer(t, backends(t)[0].open(t), nil)
	ts.do(t, "GET", "/convo/v1/conversations/"+strings.Repeat("a", 200<<10), ts.alice, nil).want(t, 404)
	for line := range strings.Lines(ts.logs.String()) {
		if len(line) > 4<<10 {
			t.Errorf("a log line of %d bytes", len(line))
		}
	}
	waitLog(t, ts, "bytes)")
}

// countingStore counts the messages the server loads.
type countingStore struct {
	store.Store
	loaded atomic.Int64
}

func (c *countingStore) Load(ctx context.Context, tenant, id string, from int) (convo.History, store.Conversation, error) {
	h, conv, err := c.Store.Load(ctx, tenant, id, from)
	c.loaded.Add(int64(len(h)))
	return h, conv, err
}

func (c *countingStore) LoadRange(ctx context.Context, tenant, id string, from, n int) (convo.History, store.Conversation, error) {
	h, conv, err := c.Store.LoadRange(ctx, tenant, id, from, n)
	c.loaded.Add(int64(len(h)))
	return h, conv, err
}

func (c *countingStore) Message(ctx context.Context, tenant, id, messageID string) (convo.Message, error) {
	m, err := c.Store.Message(ctx, tenant, id, messageID)
	if err == nil {
		c.loaded.Add(1)
	}
	return m, err
}

// TestItemCost: getting or deleting one OpenAI item loads its message, not
// the conversation; an id a provider gave an item inside a message is
// found by walking from the newest items, and one that is not there costs
// the whole walk.
func TestItemCost(t *testing.T) {
	st := &countingStore{Store: backends(t)[0].open(t)}
	ts := newServer(t, st, nil)
	const n = 400
	msgs := make([]convo.Message, n)
	for i := range msgs {
		msgs[i] = convo.User(fmt.Sprint("m", i))
		if i%2 == 1 {
			msgs[i] = convo.Assistant(fmt.Sprint("m", i))
		}
	}
	// The last answer is two items: its text and a tool call.
	msgs[n-1] = convo.Assistant("calling", convo.ToolCall("call_1", "f", json.RawMessage(`{}`)))
	c, err := st.Create(t.Context(), store.Conversation{Tenant: ts.aliceTenant}, msgs...)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := st.Store.Load(t.Context(), ts.aliceTenant, c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	base := "/v1/conversations/" + c.ID + "/items/"
	for _, tc := range []struct {
		method, item string
		status       int
		max          int64
	}{
		{"GET", h[3].ID, 200, 1},
		{"GET", h[n-1].ID + ":1", 200, 1},
		{"DELETE", h[0].ID, 200, 1},
		{"DELETE", h[n-1].ID + ":0", 400, 1},
		{"GET", "msg_none", 404, n},
	} {
		st.loaded.Store(0)
		ts.do(t, tc.method, base+tc.item, ts.alice, nil).want(t, tc.status)
		if got := st.loaded.Load(); got > tc.max {
			t.Errorf("%s %s loaded %d messages, want at most %d", tc.method, tc.item, got, tc.max)
		}
	}
	if _, err := st.Store.Message(t.Context(), ts.aliceTenant, c.ID, h[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the deleted item's message: %v", err)
	}
}

// TestPageCost: a page of messages or items loads what the page needs
// from the store, not the conversation from the page on (or all of it).
func TestPageCost(t *testing.T) {
	st := &countingStore{Store: backends(t)[0].open(t)}
	ts := newServer(t, st, nil)
	const n = 400
	msgs := make([]convo.Message, n)
	for i := range msgs {
		msgs[i] = convo.User(fmt.Sprint("m", i))
		if i%2 == 1 {
			msgs[i] = convo.Assistant(fmt.Sprint("m", i))
		}
	}
	c, err := st.Create(t.Context(), store.Conversation{Tenant: ts.aliceTenant}, msgs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		max  int64
	}{
		{"/convo/v1/conversations/" + c.ID + "/messages?from=0&limit=1", 1},
		{"/convo/v1/conversations/" + c.ID + "/messages?from=200&limit=10", 10},
		{"/v1/conversations/" + c.ID + "/items?limit=20", 21},
		{"/v1/conversations/" + c.ID + "/items?limit=20&order=asc", 21},
	} {
		st.loaded.Store(0)
		ts.do(t, "GET", tc.path, ts.alice, nil).want(t, 200)
		if got := st.loaded.Load(); got > tc.max {
			t.Errorf("%s loaded %d messages, want at most %d", tc.path, got, tc.max)
		}
	}
	// A cursor is found by walking from the end the order starts at.
	var page struct {
		LastID  string `json:"last_id"`
		HasMore bool   `json:"has_more"`
		Data    []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	ts.do(t, "GET", "/v1/conversations/"+c.ID+"/items?limit=20&order=asc", ts.alice, nil).decode(t, &page)
	st.loaded.Store(0)
	res := ts.do(t, "GET", "/v1/conversations/"+c.ID+"/items?limit=20&order=asc&after="+page.LastID, ts.alice, nil).want(t, 200)
	if got := st.loaded.Load(); got > 100 {
		t.Errorf("the second page loaded %d messages", got)
	}
	res.decode(t, &page)
	if len(page.Data) != 20 || !page.HasMore {
		t.Errorf("second page: %d items, has_more %v", len(page.Data), page.HasMore)
	}
}
