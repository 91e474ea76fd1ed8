package server_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/convo-go/convo/store"
)

func TestSearch(t *testing.T) {
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		c := ts.create(t, ts.alice, `[{"role":"user","id":"u1","parts":[{"type":"text","text":"Weather in Paris?"}]},
			{"role":"assistant","id":"a1","parts":[{"type":"text","text":"Sunny in Paris, 21 °C."}]}]`)
		ts.create(t, ts.bob, `[{"role":"user","id":"b1","parts":[{"type":"text","text":"Paris, for Bob only"}]}]`)

		type page struct {
			Hits []struct {
				Conversation struct {
					ID       string `json:"id"`
					Messages int    `json:"messages"`
				} `json:"conversation"`
				Message    string   `json:"message"`
				Index      int      `json:"index"`
				Role       string   `json:"role"`
				Snippet    string   `json:"snippet"`
				Highlights [][2]int `json:"highlights"`
			} `json:"hits"`
			Next string `json:"next"`
		}
		var p page
		ts.do(t, "GET", "/convo/v1/search?q=paris", ts.alice, nil).want(t, http.StatusOK).decode(t, &p)
		if len(p.Hits) != 2 || p.Next != "" {
			t.Fatalf("search: %+v", p)
		}
		h := p.Hits[0]
		if h.Conversation.ID != c.ID || h.Conversation.Messages != 2 || h.Message != "a1" || h.Index != 1 || h.Role != "assistant" ||
			h.Snippet != "Sunny in Paris, 21 °C." || len(h.Highlights) != 1 || h.Snippet[h.Highlights[0][0]:h.Highlights[0][1]] != "Paris" {
			t.Fatalf("hit: %+v", h)
		}
		// Paging.
		ts.do(t, "GET", "/convo/v1/search?q=paris&limit=1", ts.alice, nil).want(t, http.StatusOK).decode(t, &p)
		if len(p.Hits) != 1 || p.Hits[0].Message != "a1" || p.Next == "" {
			t.Fatalf("first page: %+v", p)
		}
		ts.do(t, "GET", "/convo/v1/search?q=paris&limit=1&after="+url.QueryEscape(p.Next), ts.alice, nil).want(t, http.StatusOK).decode(t, &p)
		if len(p.Hits) != 1 || p.Hits[0].Message != "u1" || p.Next != "" {
			t.Fatalf("second page: %+v", p)
		}
		// Each tenant sees only its own.
		ts.do(t, "GET", "/convo/v1/search?q=bob", ts.alice, nil).want(t, http.StatusOK).decode(t, &p)
		if len(p.Hits) != 0 {
			t.Fatalf("alice found bob's message: %+v", p)
		}
		ts.do(t, "GET", "/convo/v1/search?q=paris", ts.bob, nil).want(t, http.StatusOK).decode(t, &p)
		if len(p.Hits) != 1 || p.Hits[0].Message != "b1" {
			t.Fatalf("bob's search: %+v", p)
		}
		ts.do(t, "GET", "/convo/v1/search", ts.alice, nil).problem(t, http.StatusBadRequest, "bad-request")
		ts.do(t, "GET", "/convo/v1/search?q=paris&limit=0", ts.alice, nil).problem(t, http.StatusBadRequest, "bad-request")
		ts.do(t, "GET", "/convo/v1/search?q=%3F%21", ts.alice, nil).problem(t, http.StatusUnprocessableEntity, "invalid")
		ts.do(t, "GET", "/convo/v1/search?q=paris&after=junk", ts.alice, nil).problem(t, http.StatusUnprocessableEntity, "invalid")
		ts.do(t, "GET", "/convo/v1/search?q=paris", "", nil).problem(t, http.StatusUnauthorized, "unauthorized")
	})
}
