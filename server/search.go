package server

import (
	"net/http"

	"github.com/convo-go/convo/store"
)

// hitJSON is one search result of the native API.
type hitJSON struct {
	Conversation conversationJSON `json:"conversation"`
	Message      string           `json:"message"`
	Index        int              `json:"index"`
	Role         string           `json:"role"`
	Snippet      string           `json:"snippet"`
	Highlights   [][2]int         `json:"highlights"`
}

// hitList is a page of search results.
type hitList struct {
	Hits []hitJSON `json:"hits"`
	Next string    `json:"next,omitempty"`
}

// GET /convo/v1/search?q=&limit=&after=
func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !q.Has("q") {
		s.problem(w, r, badRequest("query parameter q: missing: give the words to search for"))
		return
	}
	limit, err := queryInt(r, "limit", 0, 1, store.MaxSearchLimit)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	hits, next, err := s.st.Search(r.Context(), tenant(r), q.Get("q"), store.SearchOptions{Limit: int(limit), After: q.Get("after")})
	if err != nil {
		s.problem(w, r, err)
		return
	}
	out := hitList{Hits: make([]hitJSON, len(hits)), Next: next}
	for i, h := range hits {
		hl := h.Highlights
		if hl == nil {
			hl = [][2]int{}
		}
		out.Hits[i] = hitJSON{Conversation: describe(h.Conversation), Message: h.MessageID, Index: h.Index,
			Role: string(h.Role), Snippet: h.Snippet, Highlights: hl}
	}
	writeJSON(w, http.StatusOK, out)
}
