// Package server is the HTTP API of "convo serve": an http.Handler over a
// store.Store.
//
// It serves two APIs side by side:
//
//   - the native API under /convo/v1/: conversations in convo's canonical
//     format, appends with a version precondition, message listing, forks,
//     and export in any provider's request format through the codecs;
//   - a subset of the OpenAI Conversations API under /v1/conversations
//     (create, retrieve, update, delete; create, list, retrieve and delete
//     items in the Responses input-item format), so the official OpenAI
//     clients work against the server unchanged.
//
// Every request but the health check carries a bearer token, which names
// its tenant. A tenant never sees, changes or learns of another tenant's
// conversations: they answer 404, exactly as an id that never existed.
// Errors are RFC 9457 problem details (application/problem+json).
//
// The handlers are thin: they parse, check limits and validity, and call the
// store and the codecs. docs/server.md describes the API; docs/openapi.yaml
// is its OpenAPI document.
package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/prom"
	"github.com/convo-go/convo/pricing"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/server/ui"
	"github.com/convo-go/convo/store"
)

// Default limits, used when Options leave them zero.
const (
	// DefaultMaxBodyBytes bounds a request body: room for a few inline
	// images, not for a denial of service.
	DefaultMaxBodyBytes = 32 << 20
	// DefaultMaxMessageBytes bounds one message in canonical JSON.
	DefaultMaxMessageBytes = 16 << 20
)

// ItemCodec converts between convo messages and OpenAI Responses input
// items, one JSON object per item. The OpenAI-compatible API needs it; the
// Responses codec provides both functions (see ItemFuncs).
type ItemCodec interface {
	EncodeItems(h convo.History, opts provider.Options) ([]json.RawMessage, []provider.Warning, error)
	DecodeItems(items []json.RawMessage, opts provider.Options) (convo.History, []provider.Warning, error)
}

// ItemFuncs makes an ItemCodec of two functions, such as the Responses
// codec's package-level EncodeItems and DecodeItems.
type ItemFuncs struct {
	Encode func(h convo.History, opts provider.Options) ([]json.RawMessage, []provider.Warning, error)
	Decode func(items []json.RawMessage, opts provider.Options) (convo.History, []provider.Warning, error)
}

// EncodeItems calls f.Encode.
func (f ItemFuncs) EncodeItems(h convo.History, opts provider.Options) ([]json.RawMessage, []provider.Warning, error) {
	return f.Encode(h, opts)
}

// DecodeItems calls f.Decode.
func (f ItemFuncs) DecodeItems(items []json.RawMessage, opts provider.Options) (convo.History, []provider.Warning, error) {
	return f.Decode(items, opts)
}

// Options configure a Server.
type Options struct {
	// Tokens maps bearer tokens to the tenant they act for.
	Tokens map[string]string
	// Anonymous lets requests without an Authorization header through, as
	// the tenant "" (the tenant of single-user programs such as
	// "convo store"). It is meant for a server on a loopback address used
	// by one person. A request with a wrong token is refused either way.
	Anonymous bool
	// MaxBodyBytes bounds a request body (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxMessageBytes bounds one message, in canonical JSON
	// (0: DefaultMaxMessageBytes).
	MaxMessageBytes int64
	// MaxInflightBytes bounds the request bodies held at once by all
	// requests together (0: DefaultMaxInflightBytes). A body that does not
	// fit is refused with 503 and Retry-After, before it is read when its
	// length is known.
	MaxInflightBytes int64
	// BodyTimeout bounds the time a client takes to send a request body
	// (0: DefaultBodyTimeout); a slower one is answered 408.
	BodyTimeout time.Duration
	// RequestTimeout bounds a whole request, from its first byte to its
	// answer (0: DefaultRequestTimeout). The store's work is cancelled
	// when it passes.
	RequestTimeout time.Duration
	// Formats are the provider formats export offers, looked up by name
	// (provider.Lookup); all.Formats() lists every one convo ships.
	Formats []provider.Format
	// Items converts OpenAI Responses input items for the OpenAI-compatible
	// API. Nil makes those routes answer 501 Not Implemented.
	Items ItemCodec
	// Metrics, when set, receives the server's Prometheus metrics
	// (requests by route and status, their latency, the store's latency,
	// request body bytes in flight), and GET /metrics serves what it
	// gathers, without a token. docs/server.md lists the metrics.
	Metrics *prometheus.Registry
	// Logger receives one line per request and the details of internal
	// errors, which clients never see. Nil means slog.Default().
	Logger *slog.Logger
	// UI serves the transcript viewer (package server/ui) under /ui/,
	// with the same tokens and tenants as the API.
	UI bool
	// Replay, when set, replays recorded turns on other models
	// (POST /convo/v1/conversations/{id}/replay, and "Replay from here"
	// in the viewer); nil answers those routes 501 Not Implemented.
	Replay *replay.Replayer
	// Pricer prices the assistant messages appended or created with
	// usage and no cost, from their usage and model, as the gateway
	// prices what it records (convo.Message.Cost). A message that carries
	// a cost keeps it; nil, or a model without a known price, leaves the
	// cost unknown.
	Pricer *pricing.Pricer
}

// Server is the HTTP API over a store. Make one with New; it is an
// http.Handler safe for concurrent use.
type Server struct {
	st      store.Store
	raw     store.Store // the store as given, for the interfaces st may hide (prom.Store)
	opts    Options
	tokens  map[[sha256.Size]byte]string
	log     *slog.Logger
	mux     *http.ServeMux
	handler http.Handler
	// inflight counts the bytes of request bodies held (MaxInflightBytes).
	inflight atomic.Int64
	metrics  *metrics // nil without Options.Metrics
}

// New returns a Server over st. It reports an error for options that cannot
// work, such as a token mapped to an empty tenant.
func New(st store.Store, opts Options) (*Server, error) {
	if st == nil {
		return nil, errors.New("server: nil store")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.MaxInflightBytes <= 0 {
		opts.MaxInflightBytes = DefaultMaxInflightBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{st: st, raw: st, opts: opts, log: opts.Logger, mux: http.NewServeMux()}
	// Tokens are kept as hashes so a lookup takes the same time whatever
	// prefix of a real token a caller guesses.
	s.tokens = make(map[[sha256.Size]byte]string, len(opts.Tokens))
	for tok, tenant := range opts.Tokens {
		if err := checkToken(tok, tenant); err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		s.tokens[sha256.Sum256([]byte(tok))] = tenant
	}
	if opts.Metrics != nil {
		m, err := s.newMetrics(opts.Metrics)
		if err != nil {
			return nil, fmt.Errorf("server: registering metrics: %w", err)
		}
		s.metrics = m
		s.st = prom.Store{Store: st, H: m.store}
	}
	allow := map[string][]string{} // pattern → methods, for 405 answers
	var patterns []string
	for _, rt := range s.routes() {
		var h http.Handler = rt.h
		if !rt.public {
			h = s.authenticate(h)
		}
		s.mux.Handle(rt.method+" "+rt.pattern, h)
		if allow[rt.pattern] == nil {
			patterns = append(patterns, rt.pattern)
		}
		allow[rt.pattern] = append(allow[rt.pattern], rt.method)
	}
	// A pattern without a method matches only when no method does, so
	// these answer the methods a path does not serve, as problems.
	for _, p := range patterns {
		methods := strings.Join(allow[p], ", ")
		if slices.Contains(allow[p], "GET") {
			methods += ", HEAD"
		}
		s.mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", methods)
			s.problem(w, r, &apiError{status: http.StatusMethodNotAllowed, kind: "method-not-allowed",
				detail: r.Method + " is not served here; try " + methods})
		})
	}
	if opts.UI {
		v, err := ui.New(st, ui.Options{Tokens: opts.Tokens, Anonymous: opts.Anonymous, Formats: s.formatNames,
			Export: s.exportFor, Logger: opts.Logger, Replay: opts.Replay})
		if err != nil {
			return nil, fmt.Errorf("server: %w", err)
		}
		s.mux.Handle(ui.Prefix, v)
	}
	s.mux.HandleFunc("/", s.notFound)
	s.handler = s.recoverer(s.logRequests(s.guard(s.mux)))
	return s, nil
}

// ServeHTTP serves the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// route is one operation of the API. The table in routes is what the mux
// serves and what the OpenAPI test compares with docs/openapi.yaml.
type route struct {
	method, pattern string
	h               http.HandlerFunc
	public          bool // served without a token
}

func (s *Server) routes() []route {
	return []route{
		{method: "GET", pattern: "/healthz", h: s.health, public: true},
		{method: "GET", pattern: "/readyz", h: s.ready, public: true},

		{method: "POST", pattern: "/convo/v1/conversations", h: s.createConversation},
		{method: "GET", pattern: "/convo/v1/conversations", h: s.listConversations},
		{method: "GET", pattern: "/convo/v1/conversations/{id}", h: s.getConversation},
		{method: "PATCH", pattern: "/convo/v1/conversations/{id}", h: s.updateConversation},
		{method: "DELETE", pattern: "/convo/v1/conversations/{id}", h: s.deleteConversation},
		{method: "POST", pattern: "/convo/v1/conversations/{id}/messages", h: s.appendMessages},
		{method: "GET", pattern: "/convo/v1/conversations/{id}/messages", h: s.listMessages},
		{method: "GET", pattern: "/convo/v1/conversations/{id}/messages/{message}", h: s.getMessage},
		{method: "DELETE", pattern: "/convo/v1/conversations/{id}/messages/{message}", h: s.deleteMessage},
		{method: "POST", pattern: "/convo/v1/conversations/{id}/fork", h: s.fork},
		{method: "GET", pattern: "/convo/v1/conversations/{id}/export", h: s.export},
		{method: "GET", pattern: "/convo/v1/formats", h: s.formats},
		{method: "GET", pattern: "/convo/v1/search", h: s.search},
		{method: "GET", pattern: "/convo/v1/usage", h: s.usage},
		{method: "POST", pattern: "/convo/v1/conversations/{id}/replay", h: s.replayTurn},
		{method: "GET", pattern: "/convo/v1/conversations/{id}/replay", h: s.replayComparison},
		{method: "GET", pattern: "/convo/v1/replay/routes", h: s.replayRoutes},

		{method: "POST", pattern: "/v1/conversations", h: s.oaCreate},
		{method: "GET", pattern: "/v1/conversations/{id}", h: s.oaGet},
		{method: "POST", pattern: "/v1/conversations/{id}", h: s.oaUpdate},
		{method: "DELETE", pattern: "/v1/conversations/{id}", h: s.oaDelete},
		{method: "POST", pattern: "/v1/conversations/{id}/items", h: s.oaCreateItems},
		{method: "GET", pattern: "/v1/conversations/{id}/items", h: s.oaListItems},
		{method: "GET", pattern: "/v1/conversations/{id}/items/{item}", h: s.oaGetItem},
		{method: "DELETE", pattern: "/v1/conversations/{id}/items/{item}", h: s.oaDeleteItem},
	}
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// ready answers whether the server can serve now: its store answers a
// ping within a few seconds. /healthz says only that the process is up,
// so an orchestrator restarts on that and routes traffic on this.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if p, ok := s.st.(store.Pinger); ok {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := p.Ping(ctx); err != nil {
			s.log.Warn("not ready: the store does not answer", "err", err)
			s.problem(w, r, storeUnavailable())
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "store": "ok"})
}

// readyTimeout bounds the store's ping on /readyz: a probe must answer
// before its own timeout (a second by default in Kubernetes is too short
// for a pool that dials; probes are usually given a few).
const readyTimeout = 3 * time.Second

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.problem(w, r, &apiError{status: http.StatusNotFound, kind: "not-found", detail: "no such route"})
}

// tenantKey is the context key of the request's tenant.
type tenantKey struct{}

// tenant returns the tenant authenticate put in r's context.
func tenant(r *http.Request) string {
	t, _ := r.Context().Value(tenantKey{}).(string)
	return t
}

// authenticate resolves the bearer token to a tenant, or refuses the
// request with 401.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		var ten string
		switch {
		case h == "" && s.opts.Anonymous:
			ten = ""
		case h == "":
			s.unauthorized(w, r, "missing bearer token")
			return
		default:
			scheme, tok, ok := strings.Cut(h, " ")
			tok = strings.TrimSpace(tok)
			if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
				s.unauthorized(w, r, "the Authorization header is not a bearer token")
				return
			}
			t, found := s.tokens[sha256.Sum256([]byte(tok))]
			if !found {
				s.unauthorized(w, r, "unknown bearer token")
				return
			}
			ten = t
		}
		if lw, ok := w.(*logWriter); ok {
			lw.tenant = ten
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tenantKey{}, ten)))
	})
}

func (s *Server) unauthorized(w http.ResponseWriter, r *http.Request, detail string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="convo"`)
	s.problem(w, r, &apiError{status: http.StatusUnauthorized, kind: "unauthorized", detail: detail, close: true})
}

// logWriter records the status and size of a response for the request log.
type logWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
	tenant string
}

func (w *logWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *logWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		lw := &logWriter{ResponseWriter: w}
		x := &exchange{}
		next.ServeHTTP(lw, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x)))
		took := time.Since(start)
		s.metrics.request(x.route, r.Method, lw.status, took)
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method),
			slog.String("path", loggedPath(r.URL.Path)),
			slog.Int("status", lw.status),
			slog.Int64("bytes", lw.bytes),
			slog.String("tenant", lw.tenant),
			slog.Duration("took", took))
	})
}

// recoverer turns a panic in a handler into a 500 problem, so one bad
// request never takes the process down or leaves a client without answer.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("panic serving request", "method", r.Method, "path", loggedPath(r.URL.Path), "panic", v)
			s.problem(w, r, &apiError{status: http.StatusInternalServerError, kind: "internal", detail: "internal error"})
		}()
		next.ServeHTTP(w, r)
	})
}

// checkTenant accepts a tenant name: printable, no spaces, at most 200 bytes.
func checkTenant(t string) error {
	if t == "" {
		return errors.New("empty tenant")
	}
	if len(t) > 200 {
		return fmt.Errorf("tenant %.20q...: longer than 200 bytes", t)
	}
	for _, c := range t {
		if c <= ' ' || c == 0x7f {
			return fmt.Errorf("tenant %q: has a space or control character", t)
		}
	}
	return nil
}

func checkToken(tok, tenant string) error {
	if tok == "" {
		return errors.New("empty token")
	}
	for _, c := range tok {
		if c <= ' ' || c == 0x7f {
			return errors.New("a token has a space or control character")
		}
	}
	return checkTenant(tenant)
}

// price fills in the cost of the assistant messages with usage and no
// cost, where Options.Pricer knows their model's price.
func (s *Server) price(msgs convo.History) {
	if s.opts.Pricer == nil {
		return
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Role != convo.RoleAssistant || m.Usage == nil || m.Cost != nil {
			continue
		}
		if c, ok := s.opts.Pricer.Cost(*m); ok {
			m.Cost = &c
		}
	}
}
