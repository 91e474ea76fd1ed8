// Package gateway is the HTTP proxy of "convo gateway": applications keep
// their provider's official SDK and change its base URL to the gateway's;
// every exchange is recorded losslessly in a store.Store, and a client of
// one provider can be routed to another's API.
//
// The gateway speaks each provider's protocol to clients — OpenAI Chat
// Completions and Responses, Anthropic Messages, Gemini generateContent and
// Ollama /api/chat, plain and streamed — and routes each request by its
// model to an upstream (Config). When the client's protocol is the
// upstream's, the request and reply bytes pass through unchanged, the
// reply streamed to the client chunk by chunk as it arrives while a copy
// is kept for the recording. Otherwise the request and the reply are
// translated, and a request that continues a recorded conversation gets
// back the recorded reply where the client's protocol could not carry it
// (reasoning signatures, encrypted reasoning).
//
// Recording happens off the request path: a handler hands the exchange to
// a bounded queue that one writer drains into the store. A request whose
// history extends a stored conversation of the same tenant — recognised by
// the fingerprint of what the provider sees of it, equal across protocols
// — is appended to it; the Convo-Conversation request header names one
// explicitly. Every response carries Convo-Conversation and
// Convo-Message-Ids (the ids the request's new messages and the reply are
// stored under); a request for several candidate replies (n,
// candidateCount) also Convo-Candidate-Conversations and
// Convo-Candidate-Message-Ids, naming the forks of the conversation that
// keep the candidates after the first.
//
// docs/gateway.md describes the configuration, the recording model and the
// queue's behaviour.
package gateway

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/prom"
	"github.com/convo-go/convo/pricing"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/telemetry"
)

// Defaults for Options left zero.
const (
	DefaultMaxBodyBytes  = 32 << 20 // as convo serve
	DefaultMaxReplyBytes = 64 << 20
	DefaultQueueSize     = 4096
	DefaultQueueBytes    = 64 << 20
	DefaultBatchDelay    = 20 * time.Millisecond
	DefaultTimeout       = 10 * time.Minute
	DefaultSpoolMaxBytes = 1 << 30
)

// Options configure a Gateway.
type Options struct {
	Config Config
	// Store receives the recorded conversations.
	Store store.Store
	// Tokens maps gateway tokens to the tenant they act for, as in
	// convo serve. A client sends its token in a Convo-Token header and
	// keeps its provider key where its SDK sends it (Authorization:
	// Bearer, x-api-key, x-goog-api-key or Gemini's key=), or sends the
	// token there instead of a key.
	Tokens map[string]string
	// Anonymous lets requests without a gateway token through as tenant
	// "". What such a request carries where its SDK sends an API key is
	// then the client's own provider key.
	//
	// A client's provider key is forwarded, in the upstream protocol's
	// own header, only to the upstream its request is routed to, only
	// when that upstream has no key of its own and speaks the same
	// provider's API (the key means nothing to another provider); it is
	// never logged, stored, put in a span or a metric.
	Anonymous bool
	// MaxBodyBytes bounds a request body (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxReplyBytes bounds the copy of a reply kept for recording
	// (0: DefaultMaxReplyBytes). A longer reply still reaches the client
	// whole; its recording is an error message saying it was too long.
	MaxReplyBytes int64
	// QueueSize bounds the exchanges waiting to be recorded
	// (0: DefaultQueueSize). When it is full, a new recording is dropped
	// and counted (Stats.Dropped): the client is never held up.
	QueueSize int
	// QueueBytes bounds the memory the exchanges waiting to be recorded
	// hold — their replies' bytes and their messages, estimated
	// (0: DefaultQueueBytes). A recording that would pass it is dropped
	// like one that finds the queue full, unless nothing else is queued.
	QueueBytes int64
	// BatchDelay is how long the writer, finding the queue empty, waits
	// for more exchanges before committing what it holds (0:
	// DefaultBatchDelay; negative: it does not wait). One commit per
	// exchange costs a store most of its writing time at low load; a few
	// milliseconds gather several (at 200 exchanges a second, 20 ms
	// rather than 5 halved what recording costs the gateway's CPU). A
	// request that waits for its tenant's recordings cuts the wait short.
	BatchDelay time.Duration
	// Timeout bounds one upstream exchange (0: DefaultTimeout).
	Timeout time.Duration
	// Client makes the upstream requests (nil: a client of its own, which
	// keeps an idle connection to an upstream for each stream it had open
	// at once, up to 1,024, where the standard library keeps two).
	Client *http.Client
	// Getenv reads the upstream keys' environment variables (nil:
	// os.Getenv).
	Getenv func(string) string
	// SignBedrock signs a request to a Bedrock upstream (AWS SigV4; the
	// command wires the AWS SDK's signer). A Bedrock upstream needs it.
	SignBedrock func(req *http.Request, body []byte) error
	// Logger receives a line per exchange and the recording errors; keys
	// and bodies are never logged. Nil means slog.Default().
	Logger *slog.Logger
	// Metrics, when set, receives the gateway's Prometheus metrics
	// (requests, time to first byte, upstream latency, the recording
	// queue, store latency), and GET /metrics serves what it gathers,
	// without a token. docs/gateway.md lists the metrics.
	Metrics *prometheus.Registry
	// SpoolDir, when set, is the directory of the spool: what the store
	// cannot take — it fails, or its writes stall while the queue fills —
	// is appended there, on local disk, and written to the store in
	// order once it can; what a stopped gateway left there is written
	// after it starts again. Empty: no spool (a recording the store
	// cannot take is dropped or fails). docs/gateway.md, "Durability".
	SpoolDir string
	// SpoolMaxBytes bounds the spool's files (0: DefaultSpoolMaxBytes).
	// Past it, recordings are dropped, counted and logged.
	SpoolMaxBytes int64
	// Telemetry, when set, makes an OpenTelemetry span of every recorded
	// exchange after the GenAI semantic conventions (see package
	// telemetry), a child of the client's trace when its request carried
	// one. Spans are made as exchanges are recorded; a dropped recording's
	// span is made at the drop and marked (telemetry.AttrRecordingDropped).
	Telemetry *telemetry.Tracer
	// Pricer prices each recorded reply from its usage and model (its
	// convo.Cost, kept with it in the store and put on its span). Nil, or
	// a model it has no price for, leaves the cost unknown. With
	// Metrics, the replies' tokens and cost are counted by tenant and
	// model (convo_tokens_total, convo_cost_usd_total).
	Pricer *pricing.Pricer
	// Models describes the models a translated request goes to
	// (provider.Request.Target): their maximum output, how they think,
	// what they refuse while thinking. Nil is the shipped catalogue.
	// Requests passed through are sent as the client wrote them.
	Models *catalog.Catalog
}

// Gateway is the proxy, an http.Handler. Close it to drain the recordings.
type Gateway struct {
	opts    Options
	ups     map[string]*upstream
	tokens  map[[sha256.Size]byte]string
	rec     *recorder
	client  *http.Client
	log     *slog.Logger
	mux     *http.ServeMux
	policy  policy
	metrics *metrics // nil without Options.Metrics
	budgets *budgets // nil without budgets
	handed  flights  // the exchanges under way by the Responses reply id they gave
}

// upstream is a configured upstream with its key.
type upstream struct {
	Upstream
	proto *protocol
	key   string
	// variants are the upstream as each client protocol of its family
	// (Upstream.Protocol "openai") passes through to it; nil for an
	// upstream of one protocol.
	variants map[*protocol]*upstream
}

// Stats counts recordings.
type Stats struct {
	Recorded int64 // exchanges written to the store
	Dropped  int64 // exchanges not recorded because the queue was full (without a spool), the spool full, or the gateway closing
	Failed   int64 // exchanges the store refused (logged)
	Spooled  int64 // exchanges written to the spool (each Recorded too once replayed)
	Retried  int64 // spooled exchanges whose write to the store failed and was tried again
}

// setDefaults fills in what was left zero.
func (opts *Options) setDefaults() {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxReplyBytes <= 0 {
		opts.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.QueueBytes <= 0 {
		opts.QueueBytes = DefaultQueueBytes
	}
	if opts.BatchDelay == 0 {
		opts.BatchDelay = DefaultBatchDelay
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
}

// New returns a Gateway. It reads the upstream keys from the environment
// now, and refuses a configuration that cannot work.
func New(opts Options) (*Gateway, error) {
	if opts.Store == nil {
		return nil, errors.New("gateway: nil store")
	}
	if err := opts.Config.check(); err != nil {
		return nil, err
	}
	if len(opts.Tokens) == 0 && !opts.Anonymous {
		return nil, errors.New("gateway: no tokens (set Anonymous for a gateway without authentication)")
	}
	opts.setDefaults()
	g := &Gateway{opts: opts, ups: map[string]*upstream{}, tokens: map[[sha256.Size]byte]string{}, log: opts.Logger}
	if g.log == nil {
		g.log = slog.Default()
	}
	for _, u := range opts.Config.Upstreams {
		up := newUpstream(u, opts.Getenv)
		if up.proto.eventstream && opts.SignBedrock == nil {
			return nil, fmt.Errorf("gateway: upstream %q: Bedrock requests must be signed, and no signer was given", u.Name)
		}
		g.ups[u.Name] = up
	}
	var err error
	if g.policy, err = opts.Config.Record.compile(); err != nil {
		return nil, err
	}
	for tok, tenant := range opts.Tokens {
		g.tokens[sha256.Sum256([]byte(tok))] = tenant
	}
	g.client = opts.Client
	if g.client == nil {
		// No overall timeout: a stream lasts as long as it lasts; the
		// context of each exchange bounds it (Options.Timeout).
		g.client = &http.Client{Transport: upstreamTransport()}
	}
	g.rec = newRecorder(opts.Store, opts.QueueSize, opts.QueueBytes, opts.BatchDelay, g.log)
	g.rec.tel = opts.Telemetry
	g.rec.policy = g.policy
	if g.rec.spend, err = newSpend(opts); err != nil {
		return nil, fmt.Errorf("gateway: registering metrics: %w", err)
	}
	if g.budgets, err = newBudgets(opts, g.tokens, g.log); err != nil {
		g.rec.close(context.Background())
		return nil, err
	}
	g.mux = http.NewServeMux()
	if opts.Metrics != nil {
		if g.metrics, err = g.newMetrics(opts.Metrics); err != nil {
			return nil, fmt.Errorf("gateway: registering metrics: %w", err)
		}
		g.rec.st = prom.Store{Store: opts.Store, H: g.metrics.store}
	}
	if opts.SpoolDir != "" {
		// After the store is wrapped: the replayer starts at once.
		if err := g.rec.openDurable(opts.SpoolDir, opts.SpoolMaxBytes); err != nil {
			g.rec.close(context.Background())
			return nil, err
		}
	}
	for _, e := range []struct{ route, protocol string }{
		{"POST /v1/chat/completions", "openai-chat"},
		{"POST /v1/responses", "openai-responses"},
		{"POST /v1/messages", "anthropic"},
		{"POST /v1beta/models/{call}", "gemini"},
		{"POST /api/chat", "ollama"},
	} {
		g.mux.HandleFunc(e.route, g.metered(e.route, e.protocol, g.endpoint(e.protocol)))
	}
	g.mux.HandleFunc("GET /v1/models", g.models)
	g.mux.HandleFunc("GET /healthz", g.healthz)
	g.mux.HandleFunc("GET /readyz", g.readyz)
	for _, route := range responseRoutes {
		g.mux.HandleFunc(route, g.metered(route, "openai-responses", g.responseResource))
	}
	return g, nil
}

// Stats returns the recording counters.
func (g *Gateway) Stats() Stats {
	s := Stats{Recorded: g.rec.recorded.Load(), Dropped: g.rec.dropped.Load(), Failed: g.rec.failed.Load()}
	if d := g.rec.dur; d != nil {
		s.Spooled, s.Retried = d.spooled.Load(), d.retried.Load()
	}
	return s
}

// Close stops recording new exchanges and waits until every exchange
// answered so far is written, or ctx ends. Call it after the HTTP server's
// Shutdown, so the handlers in flight have handed their exchanges over.
// With a spool, what the store does not take before ctx ends stays in
// the spool for the next start.
func (g *Gateway) Close(ctx context.Context) error {
	err := g.rec.close(ctx)
	if g.rec.dur != nil {
		if derr := g.rec.closeDurable(ctx); err == nil {
			err = derr
		}
	}
	return err
}

// ServeHTTP serves the client-facing endpoints.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mux.ServeHTTP(w, r)
}

// route returns the upstream for a model.
func (g *Gateway) route(model string) *upstream {
	for _, rt := range g.opts.Config.Routes {
		if ok, _ := path.Match(rt.Model, model); ok {
			return g.ups[rt.Upstream]
		}
	}
	return nil
}

// models lists the routes' models in the OpenAI shape.
func (g *Gateway) models(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := g.authenticate(r); !ok {
		writeError(w, protocols["openai-chat"], http.StatusUnauthorized, g.refusedToken(r))
		return
	}
	b := append([]byte(nil), `{"object":"list","data":[`...)
	for i, rt := range g.opts.Config.Routes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = jsonx.AppendString(b, rt.Model)
		b = append(b, `,"object":"model","created":0,"owned_by":`...)
		b = jsonx.AppendString(b, rt.Upstream)
		b = append(b, '}')
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, "]}"...))
}

// writeError answers with an error in the client's protocol.
func writeError(w http.ResponseWriter, p *protocol, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(p.errorBody(status, msg))
}

// exchange is one client request being served.
type exchange struct {
	client *protocol
	up     *upstream
	tenant string
	// key is the client's own provider key, sent where its SDK sends one,
	// when that is not its gateway token; "" when there is none. It goes
	// to no one but the upstream (upstreamRequest), and nowhere else.
	key    string
	model  string
	stream bool
	// warns are what translating the request changed or left out,
	// logged with the exchange.
	warns []provider.Warning
	// charges are the spend counters of the budgets the exchange is
	// under, which its reply's cost is charged to.
	charges []string
	body    []byte
	history convo.History
	// req is the whole request, decoded once for a translated exchange
	// (its History is history); nil when it could not be.
	req      *provider.Request
	reqWarns []provider.Warning
	// settings is the request without its messages, to record (see
	// RequestMeta); nil when it could not be read whole.
	settings *provider.Request
	asked    int64 // the replies the request asked for (n, candidateCount)
	// continued is how many messages of history the stored conversation
	// holds, when the request continues one; continuedFP is their
	// fingerprint when the conversation was found by it ("" when the
	// request does not extend what is stored).
	continued   int
	continuedFP string
	// refused is the answer the request gets instead of going upstream
	// (a previous_response_id the gateway cannot resolve), or nil.
	refused *refusal
	// previousID and openaiConv are the request's previous_response_id
	// and the id of its conversation (OpenAI Responses), or "".
	previousID, openaiConv string
	// rebuilt: history is more than the body reads as (a
	// previous_response_id resolved), so the recording keeps the messages
	// rather than the body.
	rebuilt bool
	// flight is the fingerprint of the request's history, under which the
	// exchange is noted as under way (recorder.flights) until it ends.
	flight  string
	rec     *record
	start   time.Time
	upStart time.Time // when the upstream request was sent
}

// endpoint serves the client endpoint of protocol name; x comes with its
// start time.
func (g *Gateway) endpoint(name string) func(http.ResponseWriter, *http.Request, *exchange) {
	cp := protocols[name]
	return func(w http.ResponseWriter, r *http.Request, x *exchange) {
		x.client = cp
		tenant, key, ok := g.authenticate(r)
		if !ok {
			writeError(w, cp, http.StatusUnauthorized, g.refusedToken(r))
			return
		}
		x.tenant, x.key = tenant, key
		if !g.underBudget(w, r, x) {
			return
		}
		mode, err := g.recordMode(r, x)
		if err != nil {
			writeError(w, cp, http.StatusBadRequest, err.Error())
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.opts.MaxBodyBytes))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeError(w, cp, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", g.opts.MaxBodyBytes))
				return
			}
			writeError(w, cp, http.StatusBadRequest, "reading the request body: "+err.Error())
			return
		}
		x.body = body
		model, stream, asked, err := peek(body)
		if err != nil {
			writeError(w, cp, http.StatusBadRequest, "request body: "+err.Error())
			return
		}
		x.model, x.stream = model, stream != nil && *stream
		if name == "openai-chat" || name == "gemini" {
			x.asked = asked // the client protocols that can ask for several replies
		}
		switch name {
		case "gemini":
			call := r.PathValue("call")
			m, method, _ := strings.Cut(call, ":")
			x.model = m
			switch method {
			case "generateContent":
			case "streamGenerateContent":
				x.stream = true
			default:
				writeError(w, cp, http.StatusNotFound, "unknown method "+method)
				return
			}
		case "ollama":
			x.stream = stream == nil || *stream // Ollama streams unless told not to
		}
		if id := r.Header.Get("Convo-Conversation"); id != "" && !validConvID(id) {
			writeError(w, cp, http.StatusBadRequest, "Convo-Conversation: want 1 to 256 bytes of printable text without white space or / ? # % \\")
			return
		}
		if !g.pick(w, x) {
			return
		}
		g.prepare(r, x)
		if x.flight != "" {
			g.rec.flights.start(x.tenant, x.flight)
			defer g.rec.flights.end(x.tenant, x.flight) // once queued for recording (or not recorded)
		}
		x.rec.mode = mode
		g.startSpan(r, x)
		if x.up.proto == cp {
			g.passThrough(w, r, x)
		} else {
			g.translate(w, r, x)
		}
		g.logExchange(x)
	}
}

// logExchange logs x's line, once it is answered.
func (g *Gateway) logExchange(x *exchange) {
	// Attributes, not key-value arguments: nothing is boxed into
	// interfaces, every exchange.
	attrs := [...]slog.Attr{slog.String("tenant", x.tenant), slog.String("client", x.client.name),
		slog.String("upstream", x.up.Name), slog.String("model", x.model), slog.Bool("stream", x.stream),
		slog.String("conversation", x.rec.conv), slog.Int64("ms", time.Since(x.start).Milliseconds()), {}, {}}
	n := len(attrs) - 2
	if len(x.warns) > 0 {
		// On the exchange's line, not one of their own: a translated
		// request to Anthropic without max_tokens has one every time.
		attrs[n], attrs[n+1] = slog.Int("warnings", len(x.warns)), slog.String("warning", x.warns[0].String())
		n += 2
	}
	g.log.LogAttrs(context.Background(), slog.LevelInfo, "gateway", attrs[:n]...)
}

// recordMode is the recording mode of x's request (policy.mode), except
// that a request under a budget is recorded at least as metadata: a
// budget is charged from the record, so one that kept nothing would spend
// without limit. What it may keep private is its content.
func (g *Gateway) recordMode(r *http.Request, x *exchange) (RecordMode, error) {
	mode, err := g.policy.mode(r)
	if mode == RecordOff && len(x.charges) > 0 {
		mode = RecordMetadata
	}
	return mode, err
}

// underBudget notes the budgets x is under, and answers the client (429)
// when one of them is spent.
func (g *Gateway) underBudget(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	applying, charges := g.budgets.applying(r, x.tenant)
	if len(applying) == 0 {
		return true
	}
	// The tenant's replies answered and not yet recorded count first:
	// without this wait a client quicker than the writer (BatchDelay and
	// a commit) would spend past the budget by whatever it asks
	// meanwhile; with it, only the requests in flight can.
	if q := g.rec.queuedBefore(x.tenant); q != (handedOver{}) {
		_, _ = g.rec.waitWritten(r.Context(), q)
	}
	if o := g.budgets.over(r.Context(), applying); o != nil {
		g.budgets.refuse(w, x.client, o)
		return false
	}
	x.charges = charges
	return true
}

// pick sets the upstream of x by its model, and answers the client when
// there is none or the request cannot go to it without a key.
func (g *Gateway) pick(w http.ResponseWriter, x *exchange) bool {
	if x.up = g.route(x.model); x.up == nil {
		writeError(w, x.client, http.StatusNotFound, fmt.Sprintf("no route for model %q", x.model))
		return false
	}
	if v := x.up.variants[x.client]; v != nil {
		x.up = v // the endpoint of the client's own protocol
	}
	if msg := x.keyless(); msg != "" {
		writeError(w, x.client, http.StatusUnauthorized, msg)
		return false
	}
	return true
}

// prepare decodes the request's history and decides where it is recorded,
// so the response headers can name the conversation and message ids before
// the reply starts.
func (g *Gateway) prepare(r *http.Request, x *exchange) {
	rec := &record{tenant: x.tenant, client: x.client, upstream: x.up.proto, streamed: x.stream, replyID: store.NewID("msg"), charges: x.charges}
	x.rec = rec
	if x.asked > 1 && severalReplies(x.up.proto.name) {
		rec.cands = &candidates{forks: make([]fork, min(x.asked, maxCandidates)-1)}
		for i := range rec.cands.forks {
			rec.cands.forks[i] = fork{conv: store.NewID("conv"), replyID: store.NewID("msg")}
		}
	}
	err := g.decodeRequest(x)
	rec.settings = x.settings
	if x.up.proto != x.client {
		x.openaiConv = "" // translate refuses it
	}
	if x.previousID != "" || x.openaiConv != "" {
		x.refused = g.previous(r.Context(), x)
	}
	if err != nil {
		// The upstream may still take what convo cannot read: the
		// exchange goes through and is recorded as what was understood.
		g.log.Warn("gateway: request history not readable", "client", x.client.name, "err", err)
		x.history = nil
	}
	n := 0
	t := prefixes(x.history, x.client.looseIDs)
	id := r.Header.Get("Convo-Conversation")
	if id == "" && x.openaiConv != "" {
		id = openaiConvID(x.openaiConv)
	}
	if id != "" {
		rec.conv = id
		stored, fp, err := g.rec.stored(r.Context(), x.tenant, id, t)
		switch {
		case err != nil:
			g.log.Warn("gateway: conversation lookup failed", "err", err)
		case stored >= 0:
			rec.exists, n, x.continuedFP = true, stored, fp
		}
	} else {
		conv, stored, fp, err := g.rec.lookup(r.Context(), x.tenant, t)
		if err != nil {
			g.log.Warn("gateway: conversation lookup failed", "err", err)
		}
		if conv != "" {
			rec.conv, rec.exists, n, x.continuedFP = conv, true, stored, fp
		} else {
			rec.conv = store.NewID("conv")
		}
	}
	rec.fp = t.whole
	if len(x.history) > 0 {
		x.flight = rec.fp.sum()
	}
	for i := n; i < len(x.history); i++ {
		m := x.history[i]
		if m.ID == "" {
			m.ID = store.NewID("msg")
		}
		rec.msgs = append(rec.msgs, m)
	}
	if len(x.history) > 0 && !x.rebuilt {
		rec.req, rec.skip = x.body, n
	}
	if rec.exists && n > 0 {
		x.continued = n
		g.pairResults(r.Context(), x, n)
	}
}

// decodeRequest reads the request's history into x.history. A request
// that will be translated is decoded whole, once: the history is the
// whole request's (the same decoder reads it), kept in x.req for the
// conversion.
func (g *Gateway) decodeRequest(x *exchange) error {
	opts := provider.Options{Repair: true}
	translated := x.up.proto != x.client
	// The whole request is read, not only its history: its settings are
	// recorded too (RequestMeta), and reading them costs little beside
	// the messages.
	if from, err := all.LookupRequest(x.client.name); err == nil {
		if req, warns, err := from.DecodeRequest(x.body, opts); err == nil {
			x.history = req.History
			if translated {
				x.req, x.reqWarns = req, warns
			}
			x.settings = settingsOf(req)
			if translated || x.client.namesReplies {
				x.previousID, x.openaiConv = nativeString(req.Native, "previous_response_id"), openaiConversation(req.Native)
			}
			return nil
		}
		// translate reports the error; the history may still be
		// readable, for the recording.
	}
	codec, err := all.Lookup(x.client.name)
	if err == nil {
		x.history, _, err = codec.Decode(x.body, opts)
	}
	return err
}

// pairResults gives the new tool results the ids of the stored calls they
// answer, where the client's protocol has no call ids (Ollama) and convo
// made some up when it read the request: the stored calls have other
// made-up ids, and results must name them.
func (g *Gateway) pairResults(ctx context.Context, x *exchange, n int) {
	made := map[string]string{} // made-up id in the request -> stored id
	calls := x.history[n-1].ToolCalls()
	for _, c := range calls {
		if realID(c.ID) == "" {
			made[c.ID] = ""
		}
	}
	if len(made) == 0 {
		return
	}
	// The reply kept for a translated exchange's next request is the
	// stored conversation's last message when their fingerprints agree.
	last, fp, ok := g.rec.replies.peek(x.tenant, x.rec.conv)
	if !ok || fp == "" || fp != x.continuedFP {
		var h convo.History
		if h, _, ok = g.rec.tail(ctx, x.tenant, x.rec.conv, 1); ok {
			last = h[0]
		}
	}
	if !ok {
		return
	}
	stored := last.ToolCalls()
	if len(stored) != len(calls) {
		return
	}
	for i, sc := range calls {
		if _, ok := made[sc.ID]; ok && stored[i].Name == sc.Name {
			made[sc.ID] = stored[i].ID
		}
	}
	x.rec.req = nil // the messages differ from the request's now: keep them
	for i := range x.rec.msgs {
		m := &x.rec.msgs[i]
		if !m.IsToolResult() {
			continue
		}
		parts := append([]convo.Part(nil), m.Parts...)
		for j := range parts {
			if id := made[parts[j].ID]; id != "" && parts[j].Type == convo.TypeToolResult {
				parts[j].ID = id
			}
		}
		m.Parts = parts
	}
}

// validConvID reports whether id can name a stored conversation (see
// store.Conversation.ID).
func validConvID(id string) bool {
	if len(id) > store.MaxIDBytes || !utf8.ValidString(id) {
		return false
	}
	for _, c := range id {
		if c <= ' ' || c == 0x7f || strings.ContainsRune("/?#%\\", c) || !unicode.IsPrint(c) {
			return false
		}
	}
	return true
}

// headers sets the Convo-Conversation and Convo-Message-Ids headers.
func (x *exchange) headers(h http.Header) {
	h.Set("Convo-Conversation", x.rec.conv)
	ids := make([]string, 0, len(x.rec.msgs)+1)
	for _, m := range x.rec.msgs {
		ids = append(ids, m.ID)
	}
	h.Set("Convo-Message-Ids", strings.Join(append(ids, x.rec.replyID), ","))
	if c := x.rec.cands; c != nil {
		convs, replies := make([]string, len(c.forks)), make([]string, len(c.forks))
		for i, f := range c.forks {
			convs[i], replies[i] = f.conv, f.replyID
		}
		h.Set("Convo-Candidate-Conversations", strings.Join(convs, ","))
		h.Set("Convo-Candidate-Message-Ids", strings.Join(replies, ","))
	}
}

// maxCandidates bounds the replies of one exchange the headers name ahead
// (OpenAI's largest n).
const maxCandidates = 128

// severalReplies reports whether an upstream protocol can return several
// candidate replies to one request.
func severalReplies(proto string) bool { return proto == "openai-chat" || proto == "gemini" }
