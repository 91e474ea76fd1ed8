package ui_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/server/ui"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// The viewer on its own, over a store, for a program with its own server
// (convo serve mounts it with server.Options.UI).
func Example() {
	dir, _ := os.MkdirTemp("", "convo-ui")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "convo.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	st.Create(ctx, store.Conversation{Tenant: "alice", ID: "trip", Title: "Trip"}, convo.User("Weather in Paris?"))

	v, err := ui.New(st, ui.Options{Tokens: map[string]string{"alice-token": "alice"}})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(ui.Prefix, v)

	// A visitor without the cookie is sent to sign in.
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/ui/c/trip", nil))
	fmt.Println(rec.Code, rec.Header().Get("Location"))

	// With it, the conversation.
	req := httptest.NewRequest("GET", "/ui/c/trip", nil)
	req.AddCookie(&http.Cookie{Name: ui.CookieName, Value: "alice-token"})
	rec = httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	// Output:
	// 303 /ui/signin?next=%2Fui%2Fc%2Ftrip
	// 200 text/html; charset=utf-8
}
