package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/convo-go/convo/store"
)

// GET /convo/v1/usage?by=model|conversation|tenant|day&since=&until=&limit=
//
// The tokens and cost of the caller's tenant's assistant messages, added
// up by the grouping (none: one total) over the time range (RFC 3339, or
// a UTC day YYYY-MM-DD; since included, until excluded): a JSON array in
// the shape of `convo store usage --json` (store.UsageJSON). A tenant sees
// only its own usage: by=tenant is its one row.
func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	ur, ok := s.raw.(store.UsageReporter) // s.st, with metrics, hides it
	if !ok {
		s.problem(w, r, &apiError{status: http.StatusNotImplemented, kind: "not-implemented", detail: "this store does not answer usage questions"})
		return
	}
	q, err := usageQuery(r)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	q.Tenant = tenant(r)
	rows, err := ur.Usage(r.Context(), q)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, store.UsageRowsJSON(q.By, rows))
}

// usageQuery reads the parameters of GET /convo/v1/usage.
func usageQuery(r *http.Request) (store.UsageQuery, error) {
	v := r.URL.Query()
	q := store.UsageQuery{By: store.UsageGroup(v.Get("by"))}
	if !q.By.Known() {
		return q, badRequest("by=%q: want model, conversation, tenant or day", v.Get("by"))
	}
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		s := v.Get(p.name)
		if s == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
				return q, badRequest("%s=%q: want an RFC 3339 time or a UTC day YYYY-MM-DD", p.name, s)
			}
		}
		*p.t = t
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return q, badRequest("limit=%q: want a positive number", s)
		}
		q.Limit = n
	}
	return q, nil
}
