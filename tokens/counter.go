package tokens

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/codec"
	"github.com/convo-go/convo/internal/jsonx"
)

// Options configure a Counter.
type Options struct {
	// Registry supplies the model facts; nil means Default().
	Registry *Registry
	// Estimate counts a model the registry does not know with the
	// "estimate" family instead of failing with ErrUnknownModel.
	Estimate bool
	// Upper makes MessageTokens and RequestTokens, the numbers package fit
	// budgets with, return the upper end of an estimate's error bound, so a
	// history fitted with an estimating counter stays within the window
	// however the estimate errs within its bound.
	Upper bool
	// Cache remembers the count of every message content the counter has
	// seen, so counting a history again after it grew costs only the new
	// messages. Use it for a counter that lives as long as a session.
	Cache bool
	// Progress, when not nil, is called as Count and Cheap go, from the
	// calling goroutine, with how many messages of the history are counted
	// so far; a command line shows progress with it.
	Progress func(done int)
}

// Counter counts the tokens a history takes in a request to one model. It
// is safe for concurrent use.
type Counter struct {
	model Model
	fam   Family
	image ImageRule
	enc   tokenizer.Codec
	upper bool
	// progress is Options.Progress.
	progress func(done int)
	// roleTokens caches the tokens of each role word, which the exact
	// framing counts on every message.
	roleTokens map[string]int
	cache      *memo
}

// NewCounter returns a counter for the model called name, looked up in
// opts.Registry (the shipped facts when nil).
func NewCounter(name string, opts Options) (*Counter, error) {
	r := opts.Registry
	if r == nil {
		r = Default()
	}
	m, err := r.Lookup(name)
	if err != nil {
		if !opts.Estimate {
			return nil, err
		}
		if m, err = r.Estimated(name); err != nil {
			return nil, err
		}
	}
	return r.CounterFor(m, opts)
}

// CounterFor returns a counter for m, a model of one of r's families (from
// Lookup, or built by the caller).
func (r *Registry) CounterFor(m Model, opts Options) (*Counter, error) {
	f, ok := r.families[m.Family]
	if !ok {
		return nil, fmt.Errorf("model %s: unknown family %q", m.Name, m.Family)
	}
	m = r.resolve(m, "")
	enc, err := encoding(m.Tokenizer)
	if err != nil {
		return nil, err
	}
	c := &Counter{model: m, fam: f, image: *m.Image, enc: enc, upper: opts.Upper, progress: opts.Progress}
	if f.Exact {
		c.roleTokens = map[string]int{}
		for _, role := range []string{"system", "developer", "user", "assistant", "tool"} {
			c.roleTokens[role] = c.bpe(role)
		}
	}
	if opts.Cache {
		c.cache = newMemo()
	}
	return c, nil
}

var (
	encMu   sync.Mutex
	encs    = map[string]tokenizer.Codec{}
	encList = map[string]tokenizer.Encoding{O200kBase: tokenizer.O200kBase, Cl100kBase: tokenizer.Cl100kBase}
)

// encoding returns the shared codec of a vocabulary, building it once.
func encoding(name string) (tokenizer.Codec, error) {
	encMu.Lock()
	defer encMu.Unlock()
	if c, ok := encs[name]; ok {
		return c, nil
	}
	e, ok := encList[name]
	if !ok {
		return nil, fmt.Errorf("tokenizer %q is not embedded (want %s or %s)", name, O200kBase, Cl100kBase)
	}
	c, err := tokenizer.Get(e)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	encs[name] = c
	return c, nil
}

// Model returns the model the counter counts for.
func (c *Counter) Model() Model { return c.model }

// Family returns the model's family.
func (c *Counter) Family() Family { return c.fam }

// Exact reports whether the counter counts with the model's own tokenizer.
// Even then a count can be an estimate when a message holds something
// without a published rule (an image of unknown size, audio); each count
// says so.
func (c *Counter) Exact() bool { return c.fam.Exact }

// CountsReasoning reports whether the model's requests carry earlier
// reasoning, so that it takes room (Anthropic thinking blocks do; OpenAI
// requests carry none). Package fit skips counting what dropping reasoning
// saves when it saves nothing.
func (c *Counter) CountsReasoning() bool { return c.fam.Reasoning }

// Bound is the relative error bound of the counter's estimates: 0 for an
// exact counter, 0.2 for ±20%.
func (c *Counter) Bound() float64 { return c.fam.Bound }

// bpe counts s with the base vocabulary. The codecs tokenize any string;
// their error is for invalid UTF-8 in strict mode, which is not used.
func (c *Counter) bpe(s string) int {
	if s == "" {
		return 0
	}
	return countChunked(c.enc.Count, s, chunkBytes)
}

// Text returns the tokens of s alone, without any message framing: exact
// for an exact family, the family's estimate otherwise.
func (c *Counter) Text(s string) int {
	return c.scale(c.bpe(s))
}

func (c *Counter) scale(n int) int {
	if c.fam.Exact || n == 0 {
		return n
	}
	return int(math.Ceil(float64(n) * c.fam.Factor))
}

// Upper returns the upper end of the error bound of an estimate n: n itself
// for an exact counter.
func (c *Counter) Upper(n int) int {
	if c.fam.Exact || c.fam.Bound == 0 {
		return n
	}
	return int(math.Ceil(float64(n) * (1 + c.fam.Bound)))
}

// RequestTokens returns the tokens a request adds once, whatever its
// messages: the priming of the reply. With Options.Upper an estimate's
// upper bound is returned.
func (c *Counter) RequestTokens() int {
	if c.upper {
		return c.Upper(c.fam.PerRequest)
	}
	return c.fam.PerRequest
}

// MessageTokens returns the tokens m takes in a request, its framing
// included; 0 for a message that is not sent (an error message, or one with
// nothing a model can take). With Options.Upper an estimate's upper bound is
// returned. It is what package fit budgets with.
func (c *Counter) MessageTokens(m convo.Message) int {
	mc := c.message(m)
	if c.upper && !mc.exact {
		return c.Upper(mc.tokens)
	}
	return mc.tokens
}

// Message counts one message as it would be sent, without the rest of its
// history (so a turn-scoped system message counts even if its turn ended).
func (c *Counter) Message(m convo.Message) MessageCount {
	return c.message(m).public(0, m.Role, false)
}

// MessageCount is one message's share of a count.
type MessageCount struct {
	Index int        `json:"index"`
	Role  convo.Role `json:"role"`
	// Tokens includes the message's framing and its media; Media is the part
	// from images and other media.
	Tokens int  `json:"tokens"`
	Media  int  `json:"media,omitempty"`
	Exact  bool `json:"exact"`
	// Sent is false for a message the request leaves out (an error
	// message, an expired turn-scoped system message, nothing sendable) and,
	// in a cheap count, for messages inside the usage baseline; Note says
	// why.
	Sent     bool            `json:"sent"`
	Note     string          `json:"note,omitempty"`
	Warnings []codec.Warning `json:"-"`
}

// Result is the count of a history for one model.
type Result struct {
	Model     string `json:"model"`
	Family    string `json:"family"`
	Tokenizer string `json:"tokenizer"`
	// Exact is true when every number is the model's own count; otherwise
	// the total is an estimate within Bound (relative) of the real count.
	Exact bool    `json:"exact"`
	Bound float64 `json:"bound"`
	// Basis says how the total was reached: "tokenizer" (the real BPE and
	// published framing), "estimate" (a family estimate), or "usage" (a
	// reported usage baseline plus the messages after it).
	Basis string `json:"basis"`
	// Tokens is the whole prompt: messages and Request.
	Tokens int `json:"tokens"`
	// Request is the once-per-request part of Tokens (the reply priming).
	Request int `json:"request"`
	// Baseline is the usage reported on messages[BaselineAt] that a cheap
	// count starts from; BaselineAt is -1 when none was used.
	Baseline   int64          `json:"baseline,omitempty"`
	BaselineAt int            `json:"baseline_at"`
	Context    int            `json:"context,omitempty"`
	Messages   []MessageCount `json:"messages"`
	// Warnings say what was estimated and why (an image that could not be
	// read, media without a formula).
	Warnings []codec.Warning `json:"-"`
}

// Max returns the upper end of the total's error bound: Tokens when exact.
func (r Result) Max() int {
	if r.Bound == 0 {
		return r.Tokens
	}
	return int(math.Ceil(float64(r.Tokens) * (1 + r.Bound)))
}

// Count counts h as a request to the model would carry it: error messages
// and turn-scoped system messages whose turn ended are left out (as every
// codec leaves them out), summaries count as the user text they are sent
// as, and the reply priming is added once.
func (c *Counter) Count(h convo.History) Result {
	res := c.newResult(len(h))
	c.countFrom(&res, h, 0)
	return res
}

// Cheap counts h from the usage the provider last reported: the input and
// output tokens of the last assistant message that carries usage stand for
// everything up to and including that message, and only the messages after
// it are counted. It is far cheaper than Count on a long history, and as
// good as the provider's own count of the earlier messages, provided they
// have not changed since (a history fitted or compacted since must be
// counted with Count). Without any usage it is Count. The result is never
// exact: framing at the baseline differs by a few tokens, and the reported
// output includes reasoning the next request may not carry.
func (c *Counter) Cheap(h convo.History) Result {
	b := -1
	var base int64
	for i := len(h) - 1; i >= 0; i-- {
		if u := h[i].Usage; h[i].Role == convo.RoleAssistant && u != nil && u.Input+u.Output > 0 {
			b, base = i, u.Input+u.Output
			break
		}
	}
	if b < 0 {
		return c.Count(h)
	}
	res := c.newResult(len(h))
	res.Exact, res.Basis = false, "usage"
	res.Baseline, res.BaselineAt = base, b
	for i := 0; i <= b; i++ {
		res.Messages = append(res.Messages, MessageCount{Index: i, Role: h[i].Role, Exact: false, Note: "in the usage baseline of messages[" + strconv.Itoa(b) + "]"})
	}
	res.Tokens = int(min(base, math.MaxInt32))
	c.countFrom(&res, h, b+1)
	return res
}

func (c *Counter) newResult(n int) Result {
	basis := "tokenizer"
	if !c.fam.Exact {
		basis = "estimate"
	}
	return Result{
		Model: c.model.Name, Family: c.fam.Name, Tokenizer: c.model.Tokenizer,
		Exact: c.fam.Exact, Bound: c.fam.Bound, Basis: basis,
		BaselineAt: -1, Context: c.model.Context,
		Messages: make([]MessageCount, 0, n),
	}
}

func (c *Counter) countFrom(res *Result, h convo.History, from int) {
	expired := h.Expired()
	for i := from; i < len(h); i++ {
		m := h[i]
		var mc MessageCount
		switch {
		case m.Role == convo.RoleError:
			mc = MessageCount{Index: i, Role: m.Role, Exact: true, Note: "not sent: error message"}
		case expired[i]:
			mc = MessageCount{Index: i, Role: m.Role, Exact: true, Note: "not sent: its turn is over"}
		default:
			mc = c.message(m).public(i, m.Role, true)
		}
		if !mc.Exact {
			res.Exact = false
		}
		res.Tokens += mc.Tokens
		res.Warnings = append(res.Warnings, mc.Warnings...)
		res.Messages = append(res.Messages, mc)
		if c.progress != nil {
			c.progress(i + 1)
		}
	}
	res.Request = c.fam.PerRequest
	res.Tokens += res.Request
}

// count is the cached result of counting one message.
type count struct {
	tokens, media int
	exact, sent   bool
	note          string
	warns         []codec.Warning // paths relative to the message ("parts[1]")
}

// public is the count of messages[i]; inHistory puts the message's place
// in front of its warnings' paths.
func (mc count) public(i int, role convo.Role, inHistory bool) MessageCount {
	out := MessageCount{Index: i, Role: role, Tokens: mc.tokens, Media: mc.media, Exact: mc.exact, Sent: mc.sent, Note: mc.note}
	if len(mc.warns) == 0 {
		return out
	}
	prefix := ""
	if inHistory {
		prefix = "messages[" + strconv.Itoa(i) + "]."
	}
	out.Warnings = make([]codec.Warning, len(mc.warns))
	for k, w := range mc.warns {
		w.Path = prefix + w.Path
		out.Warnings[k] = w
	}
	return out
}

func (c *Counter) message(m convo.Message) count {
	if m.Role == convo.RoleError {
		return count{exact: true, note: "not sent: error message"}
	}
	if c.cache == nil {
		return c.countMessage(m)
	}
	key := c.cache.key(m)
	if mc, ok := c.cache.get(key); ok {
		return mc
	}
	mc := c.countMessage(m)
	c.cache.put(key, mc)
	return mc
}

// tally accumulates one message's count. Text tokens are kept apart from
// framing and media because an estimating family scales only text.
type tally struct {
	c       *Counter
	text    int // base-vocabulary tokens of text the message sends
	framing int
	media   int
	exact   bool
	warns   []codec.Warning
}

func (t *tally) warn(path, format string, args ...any) {
	t.warns = append(t.warns, codec.Warnf(path, format, args...))
}

func (c *Counter) countMessage(m convo.Message) count {
	t := tally{c: c, exact: c.fam.Exact}
	f := &c.fam
	if m.Role == convo.RoleTool {
		// Every result is a message of its own on the wire (OpenAI sends
		// one tool message per call; the others one block per result).
		n := 0
		for j := range m.Parts {
			p := &m.Parts[j]
			path := "parts[" + strconv.Itoa(j) + "]"
			if p.Type != convo.TypeToolResult {
				t.part(path, p)
				continue
			}
			n++
			t.framing += f.PerMessage
			if f.Exact {
				t.text += c.roleTokens["tool"]
			} else {
				t.framing += f.PerToolCall
			}
			for k := range p.Parts {
				t.part(path+".parts["+strconv.Itoa(k)+"]", &p.Parts[k])
			}
		}
		if n == 0 && t.text == 0 && t.media == 0 {
			return count{exact: true, note: "not sent: no tool results"}
		}
		return t.done()
	}
	before := len(t.warns)
	for j := range m.Parts {
		t.part("parts["+strconv.Itoa(j)+"]", &m.Parts[j])
	}
	if t.text == 0 && t.media == 0 && t.framing == 0 && m.Role != convo.RoleAssistant {
		// Prepare leaves such a message out ("nothing in it can be sent").
		mc := count{exact: true, note: "not sent: nothing in it can be sent"}
		mc.warns = t.warns[before:]
		return mc
	}
	t.framing += f.PerMessage
	if f.Exact {
		t.text += c.roleTokens[wireRole(m)]
	}
	if m.Name != "" {
		t.framing += f.PerName
		t.text += c.bpe(m.Name)
	}
	return t.done()
}

func (t *tally) done() count {
	tokens := t.c.scale(t.text) + t.framing + t.media
	return count{tokens: tokens, media: t.media, exact: t.exact, sent: true, warns: t.warns}
}

// wireRole is the role an OpenAI request carries m with.
func wireRole(m convo.Message) string {
	switch m.Role {
	case convo.RoleSystem:
		if bytes.Contains(m.Native["openai"], []byte(`"role":"developer"`)) {
			return "developer"
		}
		return "system"
	case convo.RoleAssistant:
		return "assistant"
	}
	return "user" // user, and summaries, which are sent as user text
}

func (t *tally) part(path string, p *convo.Part) {
	c, f := t.c, &t.c.fam
	if p.Raw != nil || !p.Type.Known() {
		// The target's own opaque block goes back verbatim; anything else
		// is left out by every codec.
		if block, ok := codec.OpaqueBlock(c.model.Provider, *p); ok {
			t.text += c.bpe(string(block))
			t.exact = false
			t.warn(path, "%s block counted as an estimate from its JSON", p.Type)
		}
		return
	}
	if p.Server != "" && p.Provider != c.model.Provider {
		// Another provider ran this tool: Prepare leaves it out of the
		// request (server-tool-dropped), so it takes no tokens.
		return
	}
	switch p.Type {
	case convo.TypeText, convo.TypeRefusal:
		t.text += c.bpe(p.Text)
	case convo.TypeJSON:
		t.text += c.bpe(compactJSON(p.Value))
	case convo.TypeReasoning:
		if !f.Reasoning {
			return // this family's requests do not carry earlier reasoning
		}
		if p.Text != "" {
			t.text += c.bpe(p.Text)
		} else {
			t.text += c.bpe(strings.Join(p.Summary, "\n"))
		}
	case convo.TypeToolCall:
		t.framing += f.PerToolCall
		t.text += c.bpe(p.Name) + c.bpe(argsText(p))
	case convo.TypeToolResult:
		// Out of place (outside a tool message): its content is still sent.
		for k := range p.Parts {
			t.part(path+".parts["+strconv.Itoa(k)+"]", &p.Parts[k])
		}
	case convo.TypeImage:
		t.imagePart(path, p)
	case convo.TypeFile:
		if p.Text != "" {
			t.text += c.bpe(p.Text)
			if f.Exact {
				t.exact = false
				t.warn(path, "inline text document counted as plain text (an estimate: its wire framing is not published)")
			}
			return
		}
		t.otherMedia(path, p)
	case convo.TypeAudio, convo.TypeVideo:
		t.otherMedia(path, p)
	}
}

func (t *tally) otherMedia(path string, p *convo.Part) {
	t.media += t.c.fam.Media
	t.exact = false
	t.warn(path, "%s part counted as an estimate of %d tokens: no published rule from its header", p.Type, t.c.fam.Media)
}

func (t *tally) imagePart(path string, p *convo.Part) {
	rule := t.c.image
	if rule.Method == "tile" && p.Detail == "low" {
		// Low detail costs the same whatever the size.
		t.media += rule.Low
		return
	}
	if rule.Method == "fixed" {
		t.media += rule.Tokens
		t.exact = t.exact && rule.exactImages()
		return
	}
	if p.Data == "" {
		src := "a URL"
		if p.FileID != "" {
			src = "a file id"
		}
		t.media += rule.Unknown
		t.exact = false
		t.warn(path, "image by %s: its size is unknown offline, counted as an estimate of %d tokens", src, rule.Unknown)
		return
	}
	w, h, _, err := imageSizeBase64(p.Data)
	if err != nil {
		t.media += rule.Unknown
		t.exact = false
		t.warn(path, "image size unreadable (%v), counted as an estimate of %d tokens", err, rule.Unknown)
		return
	}
	t.media += rule.Cost(w, h, p.Detail)
	if !rule.exactImages() {
		t.exact = false
	}
}

// compactJSON is a JSON value as codecs send it: compacted. A value that is
// not valid JSON (which Validate reports) is counted as it is.
func compactJSON(v json.RawMessage) string {
	c, err := jsonx.Compact(v, 0)
	if err != nil {
		return string(v)
	}
	return string(c)
}

// argsText is a tool call's arguments as the OpenAI codecs send them: the
// original string the model produced when it was kept (in native
// openai.function.arguments or openai.function_call.arguments) and still
// says the same as Args, else Args
// compacted, else the malformed raw text, else "{}".
func argsText(p *convo.Part) string {
	if p.Args == nil {
		if p.ArgsRaw != "" {
			return p.ArgsRaw
		}
		return "{}"
	}
	args := compactJSON(p.Args)
	if nat := p.Native["openai"]; nat != nil {
		type fn struct {
			Arguments *string `json:"arguments"`
		}
		var orig struct {
			Function     fn `json:"function"`
			FunctionCall fn `json:"function_call"` // the deprecated form
		}
		if json.Unmarshal(nat, &orig) == nil {
			for _, a := range []*string{orig.Function.Arguments, orig.FunctionCall.Arguments} {
				if a != nil && compactJSON(json.RawMessage(*a)) == args {
					return *a
				}
			}
		}
	}
	return args
}
