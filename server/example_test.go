package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store/sqlite"
)

// The history service over a SQLite store: create a conversation with a
// message, then export it as an Anthropic request's conversation members.
func Example() {
	dir, err := os.MkdirTemp("", "convo-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "convo.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	h, err := server.New(st, server.Options{Tokens: map[string]string{"secret": "alice"}, Formats: all.Formats(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	ts := httptest.NewServer(h)
	defer ts.Close()

	do := func(method, path, body string, show bool) {
		req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer secret")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if !show { // the description holds the times it was created and updated
			fmt.Println(resp.StatusCode)
			return
		}
		fmt.Println(resp.StatusCode, strings.TrimSpace(string(b)))
	}
	do("POST", "/convo/v1/conversations", `{"id":"weather","messages":[{"role":"user","parts":[{"type":"text","text":"Weather in Paris?"}]}]}`, false)
	do("GET", "/convo/v1/conversations/weather/export?format=anthropic", "", true)
	// Output:
	// 201
	// 200 {"format":"anthropic","version":1,"request":{"messages":[{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]}]},"warnings":[]}
}
