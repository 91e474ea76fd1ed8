package ui_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/server/ui/internal/fixture"
	"github.com/convo-go/convo/store"
)

// serve answers one request in process, as from a loopback client.
func serve(b *testing.B, h http.Handler, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "http://127.0.0.1"+path, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s: %d %.300s", path, rec.Code, rec.Body.String())
	}
	return rec
}

// BenchmarkConversationPage serves the first page of a conversation of
// 10,000 messages: "first-view" by a server that has not shown it before
// (its totals are summed from a load of the whole conversation), "cached"
// while its totals are known (the reader comes back), "changed" after
// every append (the new messages are added to the totals), and a page from
// the middle.
func BenchmarkConversationPage(b *testing.B) {
	e := newEnv(b, nil)
	c := e.create(b, "", "long", "Long", fixture.Long(10000))
	h := e.Config.Handler
	b.Run("messages=10000/first-view", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			fresh, err := server.New(e.st, server.Options{Anonymous: true, UI: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			serve(b, fresh, "/ui/c/long")
		}
	})
	b.Run("messages=10000/cached", func(b *testing.B) {
		serve(b, h, "/ui/c/long")
		b.ReportAllocs()
		for b.Loop() {
			serve(b, h, "/ui/c/long")
		}
	})
	b.Run("messages=10000/changed", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			var err error
			c, err = e.st.Append(context.Background(), "", "long", c.Version, convo.User("one more"), convo.Assistant("ok"))
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			serve(b, h, "/ui/c/long")
		}
	})
	b.Run("messages=10000/page=100", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			serve(b, h, "/ui/c/long?from=5000")
		}
	})
}

// BenchmarkListPage serves the first page of a tenant's 100,000
// conversations and a page after 99,000 of them: keyset paging costs the
// same at either end.
func BenchmarkListPage(b *testing.B) {
	e := newEnv(b, nil)
	const n, writers = 100_000, 64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				_, err := e.st.Create(context.Background(), store.Conversation{Title: "c"}, convo.User("hello"), convo.Assistant("hi"))
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	after := ""
	for range 99 {
		_, next, err := e.st.List(context.Background(), "", store.ListOptions{Limit: store.MaxListLimit, After: after})
		if err != nil {
			b.Fatal(err)
		}
		after = next
	}
	h := e.Config.Handler
	for _, tc := range []struct{ name, path string }{{"first", "/ui/"}, {"after=99000", "/ui/?after=" + after}} {
		b.Run("conversations=100000/"+tc.name, func(b *testing.B) {
			if rec := serve(b, h, tc.path); strings.Count(rec.Body.String(), `class="card"`) != 50 {
				b.Fatal("not a page of 50")
			}
			b.ReportAllocs()
			for b.Loop() {
				serve(b, h, tc.path)
			}
		})
	}
}
