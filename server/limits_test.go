package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
)

// TestListLimitsAtTheMaximum: a listing asked for the documented maximum
// gets exactly that many and a cursor to the rest, one over it is refused,
// and the store itself clamps a larger limit to its maximum with a cursor.
func TestListLimitsAtTheMaximum(t *testing.T) {
	each(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		st := open(t)
		ts := newServer(t, st, nil)
		n := store.MaxListLimit + 3
		writes := make([]store.Write, n)
		for i := range writes {
			writes[i] = store.Write{Tenant: ts.aliceTenant, ID: fmt.Sprintf("c%04d", i), Create: true,
				Messages: []convo.Message{convo.User(fmt.Sprintf("needle %d", i))}}
		}
		for i, r := range st.Batch(t.Context(), writes) {
			if r.Err != nil {
				t.Fatalf("write %d: %v", i, r.Err)
			}
		}

		// The store: more than the maximum is the maximum, with a cursor.
		page, next, err := st.List(t.Context(), ts.aliceTenant, store.ListOptions{Limit: 5 * store.MaxListLimit})
		if err != nil || len(page) != store.MaxListLimit || next == "" {
			t.Fatalf("List(limit %d): %d conversations, next %q, %v", 5*store.MaxListLimit, len(page), next, err)
		}
		if rest, next, err := st.List(t.Context(), ts.aliceTenant, store.ListOptions{Limit: 5 * store.MaxListLimit, After: next}); err != nil || len(rest) != 3 || next != "" {
			t.Fatalf("the page after: %d conversations, next %q, %v", len(rest), next, err)
		}

		// The API: 1000 is the documented maximum.
		var l struct {
			Conversations []conversation
			Next          string
		}
		ts.do(t, "GET", fmt.Sprintf("/convo/v1/conversations?limit=%d", store.MaxListLimit), ts.alice, nil).want(t, 200).decode(t, &l)
		if len(l.Conversations) != store.MaxListLimit || l.Next == "" {
			t.Fatalf("limit=%d: %d conversations, next %q", store.MaxListLimit, len(l.Conversations), l.Next)
		}
		ts.do(t, "GET", "/convo/v1/conversations?limit=1000&after="+l.Next, ts.alice, nil).want(t, 200).decode(t, &l)
		if len(l.Conversations) != 3 || l.Next != "" {
			t.Fatalf("the page after: %d conversations, next %q", len(l.Conversations), l.Next)
		}
		ts.do(t, "GET", fmt.Sprintf("/convo/v1/conversations?limit=%d", store.MaxListLimit+1), ts.alice, nil).problem(t, 400, "bad-request")

		// Search: at most MaxSearchLimit hits a page, with a cursor.
		var hits struct {
			Hits []struct{ Message string }
			Next string
		}
		ts.do(t, "GET", fmt.Sprintf("/convo/v1/search?q=needle&limit=%d", store.MaxSearchLimit), ts.alice, nil).want(t, 200).decode(t, &hits)
		if len(hits.Hits) != store.MaxSearchLimit || hits.Next == "" {
			t.Fatalf("search limit=%d: %d hits, next %q", store.MaxSearchLimit, len(hits.Hits), hits.Next)
		}
		ts.do(t, "GET", fmt.Sprintf("/convo/v1/search?q=needle&limit=%d", store.MaxSearchLimit+1), ts.alice, nil).problem(t, 400, "bad-request")
		sh, snext, err := st.Search(t.Context(), ts.aliceTenant, "needle", store.SearchOptions{Limit: 5 * store.MaxSearchLimit})
		if err != nil || len(sh) != store.MaxSearchLimit || snext == "" {
			t.Fatalf("Search(limit %d): %d hits, next %q, %v", 5*store.MaxSearchLimit, len(sh), snext, err)
		}
	})
}

// TestBodyLimitChunked: a body sent without Content-Length (chunked) is
// held to the body limit as it is read: 413 too-large once it passes it,
// while one just under it is read.
func TestBodyLimitChunked(t *testing.T) {
	const limit = 4 << 10
	ts := newServer(t, backends(t)[0].open(t), func(o *server.Options) { o.MaxBodyBytes = limit })
	body := func(size int) []byte {
		pre := `{"title":"`
		post := `","messages":[` + userHi + `]}`
		return []byte(pre + strings.Repeat("x", size-len(pre)-len(post)) + post)
	}
	for _, tc := range []struct {
		size   int
		status int
	}{{limit, http.StatusCreated}, {limit + 1, http.StatusRequestEntityTooLarge}, {64 * limit, http.StatusRequestEntityTooLarge}} {
		status, got := postChunked(t, ts, body(tc.size))
		if status != tc.status {
			t.Errorf("%d bytes chunked: status %d, want %d: %.300s", tc.size, status, tc.status, got)
		}
		if tc.status == http.StatusRequestEntityTooLarge && !strings.Contains(got, "too-large") {
			t.Errorf("%d bytes chunked: %.300s", tc.size, got)
		}
	}
}

// postChunked sends body to the create route with Transfer-Encoding:
// chunked and no Content-Length, on a connection of its own (the server
// may close it before the body is all sent), and returns the answer.
func postChunked(t *testing.T, ts *tserver, body []byte) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		w := bufio.NewWriter(conn)
		fmt.Fprintf(w, "POST /convo/v1/conversations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", ts.alice)
		cw := httputil.NewChunkedWriter(w)
		for b := body; len(b) > 0; b = b[min(len(b), 1000):] {
			if _, err := cw.Write(b[:min(len(b), 1000)]); err != nil {
				return // the server has answered and closed
			}
		}
		cw.Close()
		w.WriteString("\r\n")
		w.Flush()
	}()
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
