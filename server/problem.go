package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// ProblemTypePrefix begins the type URI of every problem the server reports,
// e.g. "urn:convo:problem:version-conflict". docs/server.md lists them.
const ProblemTypePrefix = "urn:convo:problem:"

// apiError is a failed request: what the problem document says.
type apiError struct {
	status int
	kind   string // the type URI after ProblemTypePrefix
	detail string
	errs   []fieldError // validation problems, each with its place
	// version is the conversation's current version, for conflicts.
	version *int64
	// noRetry tells OpenAI clients, which retry every 409, not to.
	noRetry bool
	// close ends the connection after the answer, so a body the server
	// will not read is not drained first (a slow sender could hold the
	// connection as long as it liked).
	close bool
	// retryAfter, when positive, is the Retry-After of the answer, in
	// seconds.
	retryAfter int
}

func (e *apiError) Error() string { return e.detail }

// fieldError is one problem with a place in the request or conversation.
type fieldError struct {
	Path   string `json:"path"`
	Detail string `json:"detail"`
}

// problemDoc is an RFC 9457 problem details object. Error is the OpenAI
// error object, added on the OpenAI-compatible routes so OpenAI clients
// report the message.
type problemDoc struct {
	Type     string       `json:"type"`
	Title    string       `json:"title"`
	Status   int          `json:"status"`
	Detail   string       `json:"detail,omitempty"`
	Instance string       `json:"instance,omitempty"`
	Errors   []fieldError `json:"errors,omitempty"`
	Version  *int64       `json:"version,omitempty"`
	Error    *openAIError `json:"error,omitempty"`
}

type openAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, kind: "bad-request", detail: sprintf(format, args...)}
}

func invalid(format string, args ...any) *apiError {
	return &apiError{status: http.StatusUnprocessableEntity, kind: "invalid", detail: sprintf(format, args...)}
}

func notFound(what string) *apiError {
	return &apiError{status: http.StatusNotFound, kind: "not-found", detail: what + " not found"}
}

func tooLarge(format string, args ...any) *apiError {
	return &apiError{status: http.StatusRequestEntityTooLarge, kind: "too-large", close: true, detail: sprintf(format, args...)}
}

func conflict(current int64, format string, args ...any) *apiError {
	return &apiError{status: http.StatusConflict, kind: "version-conflict", detail: sprintf(format, args...), version: &current}
}

// validationError turns a convo.ValidationError into a 422 listing every
// problem.
func validationError(ve *convo.ValidationError) *apiError {
	e := invalid("the messages are not valid: %s", ve.Error())
	for _, p := range ve.Problems {
		e.errs = append(e.errs, fieldError{Path: p.Path, Detail: p.Msg})
	}
	return e
}

// problem writes err as a problem document. Errors that are not an
// *apiError come from the store (mapped by storeError) or are internal: they
// are logged, and the client learns only that something failed.
func (s *Server) problem(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = s.storeError(r, err)
	}
	doc := problemDoc{
		Type:     ProblemTypePrefix + ae.kind,
		Title:    http.StatusText(ae.status),
		Status:   ae.status,
		Detail:   ae.detail,
		Instance: r.URL.Path,
		Errors:   ae.errs,
		Version:  ae.version,
	}
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		doc.Error = &openAIError{Message: ae.detail, Type: openAIErrorType(ae.status)}
		code := strings.ReplaceAll(ae.kind, "-", "_")
		doc.Error.Code = &code
	}
	if ae.noRetry || ae.status == http.StatusConflict && ae.kind != "version-conflict" {
		w.Header().Set("X-Should-Retry", "false")
	}
	b, _ := json.Marshal(doc)
	h := w.Header()
	if ae.close {
		h.Set("Connection", "close")
		// net/http reads what is left of a small body before closing;
		// a deadline already past makes it close at once instead.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	if ae.retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(ae.retryAfter))
	}
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	h.Del("Content-Length")
	w.WriteHeader(ae.status)
	w.Write(append(b, '\n'))
}

func openAIErrorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// storeError maps an error of the store to a problem. The not-found detail
// is the same for a conversation that never existed and for one of another
// tenant: nothing tells them apart.
func (s *Server) storeError(r *http.Request, err error) *apiError {
	var ve *convo.ValidationError
	switch {
	case errors.Is(err, store.ErrNotFound):
		switch {
		case r.PathValue("message") != "":
			return notFound("conversation or message")
		case r.PathValue("item") != "":
			return notFound("conversation or item")
		}
		return notFound("conversation")
	case errors.Is(err, store.ErrConflict):
		e := &apiError{status: http.StatusConflict, kind: "version-conflict",
			detail: "the conversation changed since the version you read: read it again"}
		return e
	case errors.Is(err, store.ErrExists):
		return &apiError{status: http.StatusConflict, kind: "exists", detail: trimStorePrefix(err)}
	case errors.As(err, &ve):
		return validationError(ve)
	case errors.Is(err, store.ErrInvalid):
		return invalid("%s", trimStorePrefix(err))
	case errors.Is(err, store.ErrUnavailable):
		s.log.Warn("store unavailable", "method", r.Method, "path", loggedPath(r.URL.Path), "err", err)
		return storeUnavailable()
	case errors.Is(err, context.DeadlineExceeded):
		s.log.Warn("request took longer than allowed", "path", loggedPath(r.URL.Path), "limit", s.opts.RequestTimeout)
		return &apiError{status: http.StatusServiceUnavailable, kind: "unavailable", retryAfter: 1,
			detail: sprintf("the request took longer than %v", s.opts.RequestTimeout)}
	case errors.Is(err, context.Canceled):
		s.log.Debug("request ended before the store answered", "path", loggedPath(r.URL.Path), "err", err)
		return &apiError{status: http.StatusServiceUnavailable, kind: "unavailable", detail: "the request was cancelled"}
	}
	s.log.Error("store error", "method", r.Method, "path", loggedPath(r.URL.Path), "tenant", tenant(r), "err", err)
	return &apiError{status: http.StatusInternalServerError, kind: "internal", detail: "internal error"}
}

// storeUnavailable is the answer while the database cannot be reached: a
// client should try again shortly, and can tell this from a bug (500).
func storeUnavailable() *apiError {
	return &apiError{status: http.StatusServiceUnavailable, kind: "unavailable", retryAfter: unavailableRetry,
		detail: "the store is unavailable: try again shortly"}
}

// unavailableRetry is the Retry-After, in seconds, while the store is down:
// long enough not to hammer a database coming back, short enough that a
// client is not kept waiting after it has.
const unavailableRetry = 5

// trimStorePrefix keeps an invalid-input error of the store meant for its
// caller, without the backend's package prefix.
func trimStorePrefix(err error) string {
	msg := err.Error()
	for _, p := range []string{"sqlite: ", "postgres: ", "store: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}
