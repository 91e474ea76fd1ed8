package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

// Default bounds on time and memory, used when Options leave them zero.
const (
	// DefaultBodyTimeout bounds how long a client may take to send a
	// request body: a body trickled in a byte at a time holds a
	// connection and a goroutine no longer than this.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultRequestTimeout bounds a whole request: reading it, the store's
	// work and writing the response.
	DefaultRequestTimeout = 2 * time.Minute
	// DefaultMaxInflightBytes bounds the request bodies held in memory at
	// once, across all requests: four bodies of the default maximum size.
	DefaultMaxInflightBytes = 4 * DefaultMaxBodyBytes
)

// maxLoggedPath is how much of a request path a log line holds: a path of a
// megabyte is logged as its first bytes and its length.
const maxLoggedPath = 2 << 10

// answerGrace is how long after its deadline a request may still write its
// answer, so a request whose time ran out can say so.
const answerGrace = 5 * time.Second

// exchange is the server's state of one request: its deadline and the
// bytes of the in-flight budget its body holds.
type exchange struct {
	deadline time.Time
	reserved int64
	route    string // the pattern that served it, for metrics
}

type exchangeKey struct{}

// guard bounds a request's time and releases its share of the body budget
// when it ends. The read deadline covers the body only when there is one,
// since a read deadline that passes while the handler works would cancel
// the request's context; readBody moves it to the request's deadline once
// the body is in.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		x, _ := r.Context().Value(exchangeKey{}).(*exchange)
		if x == nil {
			x = &exchange{}
		}
		x.deadline = now.Add(s.opts.RequestTimeout)
		defer func() { s.inflight.Add(-x.reserved) }()
		rc := http.NewResponseController(w)
		// Errors mean the writer has no deadlines (a test recorder); the
		// context deadline below still bounds the work.
		_ = rc.SetWriteDeadline(x.deadline.Add(answerGrace))
		if r.ContentLength != 0 {
			_ = rc.SetReadDeadline(now.Add(min(s.opts.BodyTimeout, s.opts.RequestTimeout)))
		}
		ctx, cancel := context.WithDeadline(context.WithValue(r.Context(), exchangeKey{}, x), x.deadline)
		defer cancel()
		r = r.WithContext(ctx)
		next.ServeHTTP(w, r)
		x.route = r.Pattern // the mux sets it on the request it was given
	})
}

// reserve takes n bytes of the in-flight budget for x, or reports that the
// budget cannot hold them.
func (s *Server) reserve(x *exchange, n int64) bool {
	if s.inflight.Add(n) > s.opts.MaxInflightBytes {
		s.inflight.Add(-n)
		return false
	}
	x.reserved += n
	return true
}

// errBusy is a body refused because the budget of bytes in flight is spent.
var errBusy = errors.New("busy")

// budgetReader reserves budget for each read of a body of unknown length
// (chunked), so it holds only what it has read.
type budgetReader struct {
	s *Server
	x *exchange
	r io.Reader
}

func (b *budgetReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 && !b.s.reserve(b.x, int64(n)) {
		return 0, errBusy
	}
	return n, err
}

// body reads r's body within the body limit, the body deadline and the
// in-flight budget. A body of known length is refused before any of it is
// read if it is too large or the budget cannot hold it.
func (s *Server) body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	if x == nil { // a handler called outside guard (not served by New)
		x = &exchange{deadline: time.Now().Add(s.opts.RequestTimeout)}
	}
	max := s.opts.MaxBodyBytes
	if r.ContentLength > max {
		return nil, tooLarge("the request body is larger than %d bytes", max)
	}
	var b []byte
	var err error
	if r.ContentLength > 0 {
		if !s.reserve(x, r.ContentLength) {
			return nil, busy()
		}
		// The length is known: one buffer of exactly that size, not
		// ReadAll's doublings.
		b = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, b)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("the body ended before its Content-Length: %w", err)
		}
	} else {
		b, err = io.ReadAll(&budgetReader{s: s, x: x, r: http.MaxBytesReader(w, r.Body, max)})
	}
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
	case errors.Is(err, errBusy):
		return nil, busy()
	case errors.As(err, &mbe):
		return nil, tooLarge("the request body is larger than %d bytes", mbe.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, &apiError{status: http.StatusRequestTimeout, kind: "timeout", close: true,
			detail: fmt.Sprintf("the request body did not arrive within %v", s.opts.BodyTimeout)}
	default:
		return nil, badRequest("reading the request body: %v", err)
	}
	// The body is in: from now on only the request's deadline applies.
	_ = http.NewResponseController(w).SetReadDeadline(x.deadline)
	return b, nil
}

func busy() *apiError {
	return &apiError{status: http.StatusServiceUnavailable, kind: "busy", close: true, retryAfter: 1,
		detail: "the server holds as many request bodies as it may: try again shortly"}
}

// loggedPath is a request path cut to maxLoggedPath bytes for a log line.
func loggedPath(p string) string {
	if len(p) <= maxLoggedPath {
		return p
	}
	return p[:maxLoggedPath] + "…(" + strconv.Itoa(len(p)) + " bytes)"
}
