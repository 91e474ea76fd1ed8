// Package replay runs a recorded turn again — on another model, or on the
// same one with other settings — and keeps the answer as a fork of the
// conversation, beside the original, with a comparison of the two.
//
// A replay takes a stored conversation at a message, rebuilds the request
// as it was recorded up to there (the history; the tools, tool choice,
// output format and settings the conversation's metadata keeps under
// RequestKey; settings given as overrides), converts it for the target
// model's provider, sends it through the same upstreams and routes as the
// gateway (gateway.Config) with package send, and stores the reply in a
// fork linked to its origin:
//
//	r, err := replay.New(replay.Options{Store: st, Config: cfg})
//	res, err := r.Replay(ctx, replay.Request{Conversation: "conv_1", Model: "gpt-5-mini",
//		Set: []replay.Setting{{Name: "temperature", Value: json.RawMessage("0.2")}}})
//	fmt.Println(res.Compare.TextSimilarity, res.Compare.SameToolCalls)
//
// The reply is never acted on: tool calls in it are shown, not run. A
// failure — the upstream's error, a timeout, a refused request — is stored
// on the fork as an error message and reported in Result.Replay.Error; a
// cut reply is kept only marked as failed, never as a whole one.
package replay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/send"
	"github.com/convo-go/convo/store"
)

// Metadata members a replay's fork has.
const (
	// KeyMeta is a fork's replay key: a hash of its origin, the place
	// replayed from, the model and the overrides. It is a top-level string
	// member, which the stores index, so a replay already made is found
	// by it (see Replayer.Existing) and not made twice.
	KeyMeta = "convo_replay_key"
	// InfoMeta holds what the fork is a replay of (see Info).
	InfoMeta = "convo_replay"
	// RequestKey is the conversation metadata member that keeps the
	// settings of the conversation's requests: a provider.Request as JSON
	// without its messages (tools, tool_choice, output, max_tokens,
	// temperature, reasoning, …), as the gateway records them
	// (gateway.RequestMeta). A replay sends them again; without it only
	// the history is known, and the tools are declared from the calls in
	// it (a warning says so).
	RequestKey = gateway.RequestMeta
)

// DefaultTimeout bounds one replay's upstream exchange.
const DefaultTimeout = 2 * time.Minute

// DefaultMaxTokens is the reply bound sent when the request has none and
// the target requires one (Anthropic), as the gateway does.
const DefaultMaxTokens = 4096

// ErrNotReplayable is the error of a conversation whose recorded content
// is not there to send again: recorded in metadata mode, or expired.
var ErrNotReplayable = errors.New("cannot be replayed")

// PriceFunc returns what a reply's usage cost on a model, exactly, and
// whether the price is known; without one, no cost is shown. convo replay
// and convo serve price with package pricing (the model catalogue).
type PriceFunc func(provider, model string, u convo.Usage) (usd convo.Money, ok bool)

// Options configure a Replayer.
type Options struct {
	// Store holds the conversations replayed and the forks made.
	Store store.Store
	// Config names the upstreams and routes, as the gateway's: the
	// target model's route picks the upstream, the upstream's key_env
	// its key.
	Config gateway.Config
	// Getenv reads the upstream keys (nil: os.Getenv).
	Getenv func(string) string
	// HTTP makes the upstream requests (nil: http.DefaultClient).
	HTTP *http.Client
	// Timeout bounds one upstream exchange (0: DefaultTimeout).
	Timeout time.Duration
	// SignBedrock signs requests to a Bedrock upstream (AWS SigV4).
	SignBedrock func(req *http.Request, body []byte) error
	// Price, when set, gives the cost of each side's usage.
	Price PriceFunc
	// Models describes the target models (provider.Request.Target): their
	// maximum output, how they think. Nil is the shipped catalogue.
	Models *catalog.Catalog
	// Now is the clock (nil: time.Now); tests set it.
	Now func() time.Time
}

// Replayer replays recorded turns. It is safe for concurrent use.
type Replayer struct {
	opts    Options
	clients map[string]*send.Client // by upstream name
	// noKey holds, by upstream name, why an upstream whose key variable
	// is empty cannot be replayed on: an error for the models routed
	// there only, so that the default upstreams serve whichever have keys.
	noKey map[string]error
}

// New checks the upstreams and routes and reads the upstreams' keys. An
// upstream whose key variable is empty is an error for the replays routed
// to it, not here.
func New(opts Options) (*Replayer, error) {
	if opts.Store == nil {
		return nil, errors.New("replay: nil store")
	}
	if err := opts.Config.Validate(); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Replayer{opts: opts, clients: map[string]*send.Client{}, noKey: map[string]error{}}
	for _, u := range opts.Config.Upstreams {
		if u.KeyEnv != "" && opts.Getenv(u.KeyEnv) == "" {
			r.noKey[u.Name] = fmt.Errorf("replay: upstream %q: $%s is empty", u.Name, u.KeyEnv)
			continue
		}
		c, err := r.client(u)
		if err != nil {
			return nil, err
		}
		r.clients[u.Name] = c
	}
	return r, nil
}

// client is a send.Client for an upstream of the gateway's configuration:
// its base URL as the gateway takes it (the SDKs' form), its key.
func (r *Replayer) client(u gateway.Upstream) (*send.Client, error) {
	key := ""
	if u.KeyEnv != "" {
		key = r.opts.Getenv(u.KeyEnv)
	}
	c, err := send.New(u.Protocol, key)
	if err != nil {
		return nil, fmt.Errorf("replay: upstream %q: %w", u.Name, err)
	}
	// The gateway's upstream URLs are the SDKs' base URLs; send's include
	// the API version for these two.
	c.BaseURL = strings.TrimRight(u.URL, "/") + map[string]string{"anthropic": "/v1", "gemini": "/v1beta"}[u.Protocol]
	c.HTTP = r.opts.HTTP
	if u.Protocol == "bedrock" {
		if r.opts.SignBedrock == nil {
			return nil, fmt.Errorf("replay: upstream %q: Bedrock requests must be signed, and no signer was given", u.Name)
		}
		c.Sign = send.SignerFunc(r.opts.SignBedrock)
	}
	return c, nil
}

// Models returns the model globs of the routes, in order: what a model
// picker offers.
func (r *Replayer) Models() []Route {
	out := make([]Route, 0, len(r.opts.Config.Routes))
	for _, rt := range r.opts.Config.Routes {
		out = append(out, Route{Model: rt.Model, Upstream: rt.Upstream, Protocol: r.clients[rt.Upstream].Format.Name()})
	}
	return out
}

// Route is a configured route: models matching the glob Model go to
// Upstream, which speaks Protocol.
type Route struct {
	Model    string `json:"model"`
	Upstream string `json:"upstream"`
	Protocol string `json:"protocol"`
}

// route returns the upstream a model goes to.
func (r *Replayer) route(model string) (string, *send.Client, error) {
	for _, rt := range r.opts.Config.Routes {
		if ok, _ := path.Match(rt.Model, model); ok {
			if err := r.noKey[rt.Upstream]; err != nil {
				return "", nil, err
			}
			return rt.Upstream, r.clients[rt.Upstream], nil
		}
	}
	return "", nil, invalidf("replay: no route for model %q", model)
}

// Request says what to replay.
type Request struct {
	Tenant       string
	Conversation string
	// At is the id of the message to replay from: an assistant (or error)
	// message is answered again from the history before it; a user or
	// tool message is sent with the history before it, and its answer is
	// the one compared. "" replays the last turn.
	At string
	// Model is the target model (a route must match it).
	Model string
	// Set overrides the recorded settings, in order (see Setting).
	Set []Setting
}

// Setting overrides one member of the recorded request: Name is a
// provider.Request JSON member (temperature, max_tokens, top_p, top_k,
// seed, stop, reasoning, tool_choice, output, parallel_tool_calls, …) and
// Value its JSON value; a null value removes it.
type Setting struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// ParseSetting reads NAME=VALUE: VALUE is JSON when it parses as JSON
// (0.2, true, {"effort":"low"}, ["END"]), else a string.
func ParseSetting(s string) (Setting, error) {
	name, v, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return Setting{}, fmt.Errorf("setting %q: want NAME=VALUE", s)
	}
	raw := json.RawMessage(v)
	if !json.Valid(raw) {
		raw, _ = json.Marshal(v) // a string cannot fail
	}
	return Setting{Name: name, Value: raw}, nil
}

// Key is the replay key of a fork: its origin, the number of messages it
// was forked at, the model and the overrides.
func Key(tenant, conversation string, at int, model string, set []Setting) string {
	h := sha256.New()
	fmt.Fprintf(h, "%q %q %d %q", tenant, conversation, at, model)
	for _, s := range set {
		fmt.Fprintf(h, " %q=%s", s.Name, compactJSON(s.Value))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Info is what a replay's fork records of itself, under InfoMeta.
type Info struct {
	Origin    string    `json:"origin"`
	At        int       `json:"at"`                   // messages of the origin the fork holds before the reply
	AtMessage string    `json:"at_message,omitempty"` // the id of the first message replayed (the original answer), if any
	Model     string    `json:"model"`
	Upstream  string    `json:"upstream"`
	Protocol  string    `json:"protocol"`
	Set       []Setting `json:"set,omitempty"`
	LatencyMS int64     `json:"latency_ms"`
	Time      time.Time `json:"time"`
	Error     string    `json:"error,omitempty"`
}

// Replay replays one turn and returns the comparison. A replay already
// made with the same origin, place, model and overrides is not made again:
// its fork is compared instead (Result.Skipped). A fork whose replay
// failed is made again, and the failed one removed.
func (r *Replayer) Replay(ctx context.Context, q Request) (*Result, error) {
	c, h, p, err := r.load(ctx, q)
	if err != nil {
		return nil, err
	}
	key := Key(q.Tenant, q.Conversation, p, q.Model, q.Set)
	if prev, ok, err := r.Existing(ctx, q.Tenant, key); err != nil {
		return nil, err
	} else if ok {
		res, err := r.Compare(ctx, q.Tenant, prev.ID)
		if err != nil {
			return nil, err
		}
		if res.Replay.Error == "" {
			res.Skipped = true
			return res, nil
		}
		// A failed replay is tried again; the failed fork goes once the
		// new one is stored.
		defer func() { _ = r.opts.Store.Delete(context.WithoutCancel(ctx), q.Tenant, prev.ID) }()
	}
	name, client, err := r.route(q.Model)
	if err != nil {
		return nil, err
	}
	req, warns, err := r.rebuild(c, h, p, q, client.Format.Name())
	if err != nil {
		return nil, err
	}
	reply, latency, sendWarns, sendErr := r.send(ctx, client, req)
	warns = append(warns, sendWarns...)
	info := Info{Origin: c.ID, At: p, Model: q.Model, Upstream: name, Protocol: client.Format.Name(), Set: q.Set,
		LatencyMS: latency.Milliseconds(), Time: r.opts.Now().UTC()}
	if p < len(h) {
		info.AtMessage = h[p].ID
	}
	if sendErr != nil && ctx.Err() != nil {
		// Interrupted, not failed: nothing is stored, and running the
		// replay again makes it.
		return nil, fmt.Errorf("replay: %w", ctx.Err())
	}
	if sendErr != nil {
		info.Error = failure(sendErr)
	}
	fork, err := r.store(ctx, q.Tenant, c, key, info, reply)
	if err != nil {
		return nil, err
	}
	res, err := r.Compare(ctx, q.Tenant, fork)
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		res.Warnings = append(res.Warnings, w.String())
	}
	return res, nil
}

// load reads the conversation and finds the place to replay from: p
// messages are sent.
func (r *Replayer) load(ctx context.Context, q Request) (store.Conversation, convo.History, int, error) {
	h, c, err := r.opts.Store.Load(ctx, q.Tenant, q.Conversation, 0)
	if err != nil {
		return c, nil, 0, fmt.Errorf("replay: conversation %q: %w", q.Conversation, err)
	}
	if q.Model == "" {
		return c, nil, 0, invalidf("replay: no model")
	}
	p, err := cut(h, q.At)
	if err != nil {
		return c, nil, 0, invalidf("replay: conversation %q: %v", q.Conversation, err)
	}
	if at, ok := store.ContentExpired(c); ok {
		return c, nil, 0, fmt.Errorf("replay: conversation %q %w: its content expired on %s", q.Conversation, ErrNotReplayable, at.Format(time.DateOnly))
	}
	end := p // the messages sent, and the answer compared
	for end < len(h) && answer(h[end]) {
		end++
	}
	for i, m := range h[:end] {
		if why := missing(m); why != "" {
			return c, nil, 0, fmt.Errorf("replay: conversation %q %w: messages[%d] holds no content (%s)", q.Conversation, ErrNotReplayable, i, why)
		}
	}
	if p == 0 {
		return c, nil, 0, invalidf("replay: conversation %q: nothing to send before that message", q.Conversation)
	}
	return c, h, p, nil
}

// cut returns how many messages of h are sent to replay from message id
// (see Request.At).
func cut(h convo.History, id string) (int, error) {
	if id == "" {
		// The last turn: after the last message that is not an answer.
		p := len(h)
		for p > 0 && answer(h[p-1]) {
			p--
		}
		return p, nil
	}
	for i, m := range h {
		if m.ID == id {
			if answer(m) {
				return i, nil
			}
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("no message %q", id)
}

// answer reports whether m is part of a provider's answer: an assistant
// message, or the error recorded for a failed one.
func answer(m convo.Message) bool { return m.Role == convo.RoleAssistant || m.Role == convo.RoleError }

// missing says why m's content is not recorded, or "" when it is.
func missing(m convo.Message) string {
	raw := m.Native["convo"]
	if len(m.Parts) > 0 || raw == nil {
		return ""
	}
	var note struct {
		Content string `json:"content"`
	}
	if json.Unmarshal(raw, &note) != nil || note.Content == "" {
		return ""
	}
	return note.Content
}

// send makes the upstream exchange.
func (r *Replayer) send(ctx context.Context, c *send.Client, req *provider.Request) (convo.Message, time.Duration, []provider.Warning, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	start := time.Now()
	m, warns, err := c.Send(ctx, nil, req)
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("timed out after %s", r.opts.Timeout)
	}
	return m, time.Since(start), warns, err
}

// failure is the text an upstream failure is recorded with.
func failure(err error) string {
	var api *provider.APIError
	if errors.As(err, &api) {
		return api.Error()
	}
	return strings.TrimPrefix(err.Error(), "send: ")
}

// store makes the fork: the origin's first info.At messages, then the
// reply and the failure, if any.
func (r *Replayer) store(ctx context.Context, tenant string, c store.Conversation, key string, info Info, reply convo.Message) (string, error) {
	meta, err := json.Marshal(map[string]any{KeyMeta: key, InfoMeta: info})
	if err != nil {
		return "", fmt.Errorf("replay: %w", err)
	}
	title := c.Title
	if title == "" {
		title = c.ID
	}
	// The store's work is not abandoned with the caller's context: the
	// exchange was made, and is kept.
	sctx := context.WithoutCancel(ctx)
	fork, err := r.opts.Store.Fork(sctx, tenant, c.ID, info.At, store.Conversation{Title: title + " · replay on " + info.Model, Meta: meta})
	if err != nil {
		return "", fmt.Errorf("replay: forking %q: %w", c.ID, err)
	}
	msgs := withReply(reply, info.Error, r.opts.Now().UTC())
	if _, err := r.opts.Store.Append(sctx, tenant, fork.ID, store.AnyVersion, msgs...); err != nil {
		_ = r.opts.Store.Delete(sctx, tenant, fork.ID)
		return "", fmt.Errorf("replay: storing the reply: %w", err)
	}
	return fork.ID, nil
}

// withReply is what a fork gets after the origin's messages: the reply,
// and the failure as an error message after it — or, where nothing but
// their results may follow tool calls, on a cut reply itself, marked
// finished by an error.
func withReply(reply convo.Message, fail string, now time.Time) []convo.Message {
	var out []convo.Message
	if len(reply.Parts) > 0 || (fail == "" && reply.Role == convo.RoleAssistant) {
		m := reply
		m.Role, m.ID, m.Time = convo.RoleAssistant, store.NewID("msg"), now
		if fail != "" {
			m.Finish = convo.FinishError // cut: never shown as a whole reply
			if len(m.ToolCalls()) > 0 {
				msg, _ := json.Marshal(fail) // a string cannot fail
				m.Native = m.Native.With("convo", "error", msg)
				return append(out, m)
			}
		}
		out = append(out, m)
	}
	if fail != "" {
		e := convo.ErrorMessage(fail)
		e.ID, e.Time = store.NewID("msg"), now
		out = append(out, e)
	}
	return out
}

// Existing returns the fork made by the replay with key (see Key), if
// there is one.
func (r *Replayer) Existing(ctx context.Context, tenant, key string) (store.Conversation, bool, error) {
	meta, _ := json.Marshal(map[string]string{KeyMeta: key}) // strings cannot fail
	cs, _, err := r.opts.Store.List(ctx, tenant, store.ListOptions{Limit: 1, Meta: meta})
	if err != nil || len(cs) == 0 {
		return store.Conversation{}, false, err
	}
	return cs[0], true, nil
}

// compactJSON is v without insignificant white space, for keys.
func compactJSON(v json.RawMessage) string {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return string(v)
	}
	b, _ := json.Marshal(x) // read from JSON: cannot fail
	return string(b)
}

// invalidError is a replay request that cannot be made as asked (no
// route, no such message, a bad setting): store.ErrInvalid to errors.Is,
// so a server answers it as the client's mistake.
type invalidError struct{ msg string }

func (e invalidError) Error() string        { return e.msg }
func (e invalidError) Is(target error) bool { return target == store.ErrInvalid }

func invalidf(format string, args ...any) error {
	return invalidError{fmt.Sprintf(format, args...)}
}
