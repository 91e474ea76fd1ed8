package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/openai"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// benchServer is the handler over a SQLite store, called directly (no
// network), with a conversation of n user/assistant messages.
func benchServer(b *testing.B, n int) (http.Handler, string) {
	b.Helper()
	st, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	h, err := server.New(st, server.Options{
		Tokens:  map[string]string{"tok": "bench"},
		Formats: []provider.Format{openai.Chat(), openai.Responses(), anthropic.Messages()},
		Items:   server.ItemFuncs{Encode: openai.EncodeItems, Decode: openai.DecodeItems},
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	msgs := make(convo.History, n)
	for i := range msgs {
		if i%2 == 0 {
			msgs[i] = convo.User(fmt.Sprintf("question %d: what is the weather like in Paris today?", i))
		} else {
			msgs[i] = convo.Assistant(fmt.Sprintf("answer %d: mild, 18 °C, a light breeze from the west.", i))
		}
	}
	c, err := st.Create(b.Context(), store.Conversation{Tenant: "bench"}, msgs...)
	if err != nil {
		b.Fatal(err)
	}
	return h, c.ID
}

func serve(b *testing.B, h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Authorization", "Bearer tok")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code >= 300 {
		b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
	}
	return w
}

// BenchmarkAppend appends one message per request, each at the version the
// previous answer gave (the store writes durably: fsync per commit).
func BenchmarkAppend(b *testing.B) {
	h, id := benchServer(b, 0)
	path := "/convo/v1/conversations/" + id + "/messages"
	version := 1
	b.ReportAllocs()
	for b.Loop() {
		serve(b, h, "POST", path, fmt.Sprintf(`{"version":%d,"messages":[{"role":"user","parts":[{"type":"text","text":"hello there"}]}]}`, version))
		version++
	}
}

// BenchmarkListMessages reads a page of 100 messages from the middle of a
// 1,000-message conversation.
func BenchmarkListMessages(b *testing.B) {
	h, id := benchServer(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		serve(b, h, "GET", "/convo/v1/conversations/"+id+"/messages?from=500&limit=100", "")
	}
}

// BenchmarkPage reads one message, and the first page of items, at the
// start, middle and end of a 30,000-message conversation: with ranged
// loads a page costs what it holds wherever it is (ns/op and B/op about
// equal across positions). "gaps" is the same after a deletion, when
// positions are no longer indexes and the store counts its way there.
func BenchmarkPage(b *testing.B) {
	const n = 30000
	h, id := benchServer(b, n)
	for _, at := range []int{0, n / 2, n - 1} {
		b.Run(fmt.Sprintf("message/from=%d", at), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serve(b, h, "GET", fmt.Sprintf("/convo/v1/conversations/%s/messages?from=%d&limit=1", id, at), "")
			}
		})
	}
	for _, order := range []string{"asc", "desc"} {
		b.Run("items/order="+order, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serve(b, h, "GET", "/v1/conversations/"+id+"/items?limit=20&order="+order, "")
			}
		})
	}
	w := serve(b, h, "GET", "/convo/v1/conversations/"+id+"/messages?from=1&limit=1", "")
	var page struct {
		Version  int
		Messages []struct{ ID string }
	}
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest("DELETE", fmt.Sprintf("/convo/v1/conversations/%s/messages/%s?version=%d", id, page.Messages[0].ID, page.Version), nil)
	req.Header.Set("Authorization", "Bearer tok")
	h.ServeHTTP(httptest.NewRecorder(), req)
	for _, at := range []int{0, n / 2, n - 2} {
		b.Run(fmt.Sprintf("gaps/message/from=%d", at), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				serve(b, h, "GET", fmt.Sprintf("/convo/v1/conversations/%s/messages?from=%d&limit=1", id, at), "")
			}
		})
	}
}

// BenchmarkExport exports a 1,000-message conversation.
func BenchmarkExport(b *testing.B) {
	for _, format := range []string{"convo", "anthropic"} {
		b.Run(format, func(b *testing.B) {
			h, id := benchServer(b, 1000)
			b.ReportAllocs()
			for b.Loop() {
				serve(b, h, "GET", "/convo/v1/conversations/"+id+"/export?format="+format, "")
			}
		})
	}
}

// BenchmarkListItems lists the first page of OpenAI items of a
// 1,000-message conversation (which encodes every message).
func BenchmarkListItems(b *testing.B) {
	h, id := benchServer(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		serve(b, h, "GET", "/v1/conversations/"+id+"/items?limit=20", "")
	}
}
