package ollama

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// DecodeReply decodes a ChatResponse body into one assistant message:
// thinking, content, images and tool calls as parts; prompt_eval_count and
// eval_count as Usage; done_reason normalised as Finish (tool_use when the
// reply calls tools) and kept raw in Native with created_at, the durations
// and the log probabilities. An {"error": …} body is an error.
func (chat) DecodeReply(body []byte, opts provider.Options) (convo.Message, []provider.Warning, error) {
	if err := provider.CheckReply(body, Name); err != nil {
		return convo.Message{}, nil, err
	}
	a := newAccumulator(opts)
	if int64(len(body)) > a.limit {
		return convo.Message{}, nil, fmt.Errorf("ollama reply of more than %d bytes: %w", a.limit, jsonx.ErrTooLarge)
	}
	a.events = 1
	if err := a.line(body); err != nil {
		return convo.Message{}, nil, err
	}
	if !a.shaped {
		// An object of no format DetectReply knows (an error of another
		// API, {}): reading it would give an empty message.
		return convo.Message{}, nil, errors.New(`not a chat response: no "message" and no "done"`)
	}
	m := a.build()
	warns := a.warns
	if !a.done {
		warns = append(warns, provider.Warnf("done", "the reply is not done: a single line of a streamed reply?"))
	}
	return m, warns, opts.Check(warns)
}

// NewAccumulator returns an accumulator for the NDJSON lines of one
// streamed reply, each given to Add as an event's Data.
func (chat) NewAccumulator(opts provider.Options) provider.Accumulator {
	return newAccumulator(opts)
}

// ReadStream reads a streamed reply, NDJSON as Ollama sends it
// (application/x-ndjson), from r and accumulates it.
func (chat) ReadStream(r io.Reader, opts provider.Options) (convo.Message, []provider.Warning, error) {
	r, err := provider.CheckStream(r, Name)
	if err != nil {
		return convo.Message{}, nil, err
	}
	return stream.Feed(stream.NewNDJSON(r), newAccumulator(opts))
}

// accumulator folds the lines of a streamed reply. Content and thinking
// arrive as deltas and are appended; tool calls arrive whole and are
// listed; the done line brings done_reason and the counts.
type accumulator struct {
	opts  provider.Options
	limit int64
	r     jsonx.Reader
	w     wireMsg

	events    int
	size      int64
	model     string
	createdAt []byte
	role      string
	content   []byte
	thinking  []byte
	images    []string
	calls     []wireCall
	extra     wire.Members
	done      bool
	shaped    bool // a "message" or "done" member was read: a ChatResponse, not any object
	reason    string
	hasReason bool
	metrics   [4][]byte // total, load, prompt_eval and eval durations
	prompt    int64
	eval      int64
	hasUsage  bool
	logprobs  []byte // the elements of every logprobs array, comma-separated
	remote    wire.Members
	err       error
	warns     []provider.Warning
	late      bool // a line came after the done line
}

var metricKeys = [4]string{"total_duration", "load_duration", "prompt_eval_duration", "eval_duration"}

func newAccumulator(opts provider.Options) *accumulator {
	return &accumulator{opts: opts, limit: opts.DecodeLimits().MaxBytes}
}

// Add folds one NDJSON line into the reply.
func (a *accumulator) Add(ev provider.Event) error {
	if a.err != nil {
		return a.err
	}
	a.events++
	a.size += int64(len(ev.Data))
	if a.size > a.limit {
		a.err = fmt.Errorf("ollama reply of more than %d bytes: %w", a.limit, jsonx.ErrTooLarge)
		return a.err
	}
	if a.done && !a.late {
		a.late = true
		a.warns = append(a.warns, provider.Warnf(fmt.Sprintf("line %d", a.events), "data after the done line"))
	}
	if err := a.line(ev.Data); err != nil {
		var se *provider.APIError
		if !errors.As(err, &se) {
			err = convo.ErrorAt(err, fmt.Sprintf("line %d", a.events))
		}
		a.err = err
		return err
	}
	return nil
}

func (a *accumulator) line(data []byte) error {
	r := &a.r
	r.Reset(data, a.opts.DecodeLimits().MaxDepth)
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "error":
			return streamError(r)
		case "model":
			s, _, err := optString(r)
			if string(s) != a.model {
				a.model = string(s)
			}
			return convo.ErrorAt(err, "model")
		case "created_at":
			s, _, err := optString(r)
			a.createdAt = append(a.createdAt[:0], s...)
			return convo.ErrorAt(err, "created_at")
		case "message":
			a.shaped = true
			if r.ReadNull() {
				return nil
			}
			return convo.ErrorAt(a.message(), "message")
		case "done":
			a.shaped = true
			if r.ReadNull() {
				return nil
			}
			b, err := r.ReadBool()
			a.done = a.done || b
			return convo.ErrorAt(err, "done")
		case "done_reason":
			s, ok, err := optString(r)
			if ok {
				a.reason, a.hasReason = string(s), true
			}
			return convo.ErrorAt(err, "done_reason")
		case "prompt_eval_count":
			return convo.ErrorAt(a.count(&a.prompt), "prompt_eval_count")
		case "eval_count":
			return convo.ErrorAt(a.count(&a.eval), "eval_count")
		case "total_duration":
			return convo.ErrorAt(a.metric(0), "total_duration")
		case "load_duration":
			return convo.ErrorAt(a.metric(1), "load_duration")
		case "prompt_eval_duration":
			return convo.ErrorAt(a.metric(2), "prompt_eval_duration")
		case "eval_duration":
			return convo.ErrorAt(a.metric(3), "eval_duration")
		case "logprobs":
			if r.ReadNull() {
				return nil
			}
			return convo.ErrorAt(r.ReadArray(func(int) error {
				if len(a.logprobs) > 0 {
					a.logprobs = append(a.logprobs, ',')
				}
				var err error
				a.logprobs, err = r.AppendRaw(a.logprobs)
				return err
			}), "logprobs")

		case "remote_model", "remote_host":
			k := string(key)
			v, err := r.ReadRaw()
			if err == nil {
				a.remote = a.remote.Set(k, v)
			}
			return convo.ErrorAt(err, k)
		}
		if err := r.Skip(); err != nil {
			return convo.ErrorAt(err, string(key))
		}
		return nil
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	return err
}

// streamError reads the value of an "error" member (an {"error": …} body
// or line) as the *provider.APIError it reports.
func streamError(r *jsonx.Reader) error {
	if r.Peek() == jsonx.String {
		msg, err := r.ReadString()
		if err != nil {
			return convo.ErrorAt(err, "error")
		}
		return &provider.APIError{Provider: ProviderID, Message: msg}
	}
	raw, err := r.ReadRaw()
	if err != nil {
		return convo.ErrorAt(err, "error")
	}
	return &provider.APIError{Provider: ProviderID, Message: string(raw)}
}

func (a *accumulator) count(dst *int64) error {
	if a.r.ReadNull() {
		return nil
	}
	n, err := a.r.ReadInt()
	if err == nil && n < 0 {
		err = fmt.Errorf("negative token count %d", n)
	}
	*dst = n
	a.hasUsage = true
	return err
}

func (a *accumulator) metric(i int) error {
	if a.r.ReadNull() {
		return nil
	}
	num, err := a.r.ReadNumber()
	a.metrics[i] = append(a.metrics[i][:0], num...)
	return err
}

// message folds the "message" of one line: content and thinking are
// appended, images and tool calls added.
func (a *accumulator) message() error {
	w := &a.w
	*w = wireMsg{calls: w.calls[:0], extra: w.extra[:0]}
	if err := readMessage(&a.r, w); err != nil {
		return err
	}
	if len(w.role) > 0 && a.role == "" {
		a.role = string(w.role)
	}
	a.content = append(a.content, w.content...)
	a.thinking = append(a.thinking, w.thinking...)
	a.images = append(a.images, w.images...)
	// The calls own their memory (strings and fresh raw values): only the
	// slice holding them is reused.
	a.calls = append(a.calls, w.calls...)
	for _, m := range w.extra {
		a.extra = a.extra.Set(m.Key, m.Val)
	}
	return nil
}

// AddPiece folds one line into the reply and says what it changed in the
// parts: a line that only extends the thinking or the content already
// begun is a piece of its part (thinking first, then content; see build).
func (a *accumulator) AddPiece(ev provider.Event) (provider.Piece, error) {
	th, co, im, ca, model := len(a.thinking), len(a.content), len(a.images), len(a.calls), a.model
	if err := a.Add(ev); err != nil {
		return provider.Piece{}, err
	}
	grewTh, grewCo := len(a.thinking) > th, len(a.content) > co
	switch {
	case len(a.images) != im || len(a.calls) != ca || a.model != model || grewTh && grewCo,
		grewTh && th == 0, grewCo && co == 0:
		return provider.Piece{Other: true}, nil
	case grewTh:
		return provider.Piece{Kind: provider.DeltaText, Text: string(a.thinking[th:])}, nil
	case grewCo:
		p := provider.Piece{Kind: provider.DeltaText, Text: string(a.content[co:])}
		if th > 0 {
			p.Index = 1
		}
		return p, nil
	}
	return provider.Piece{}, nil
}

// Snapshot returns the message as accumulated so far.
func (a *accumulator) Snapshot() convo.Message { return a.build() }

// Message returns the accumulated message. A stream that reported an error,
// or ended before its done line, gives the partial message and an error.
func (a *accumulator) Message() (convo.Message, []provider.Warning, error) {
	m := a.build()
	switch {
	case a.err != nil:
		return m, a.warns, a.err
	case a.events == 0:
		return m, a.warns, fmt.Errorf("ollama: the stream was empty: %w", provider.ErrIncomplete)
	case !a.done:
		return m, a.warns, fmt.Errorf("ollama: the stream was cut off after %d lines, before its done line: %w", a.events, provider.ErrIncomplete)
	}
	return m, a.warns, a.opts.Check(a.warns)
}

// build returns the message accumulated so far.
func (a *accumulator) build() convo.Message {
	m := convo.Message{Role: convo.RoleAssistant}
	m.Parts = make([]convo.Part, 0, 2+len(a.images)+len(a.calls))
	if len(a.thinking) > 0 {
		m.Parts = append(m.Parts, reasoningPart(string(a.thinking), a.model))
	}
	if len(a.content) > 0 {
		m.Parts = append(m.Parts, convo.Text(string(a.content)))
	}
	m.Parts = append(m.Parts, imageParts(a.images)...)
	for j := range a.calls {
		c := &a.calls[j]
		// Ids Ollama left out are made from what the call says (model,
		// name, arguments) and its place, as Gemini's and LiteRT-LM's are:
		// never from the line's time, which changes from line to line, so a
		// call has the same id in every snapshot, in the final message and
		// in the same reply read whole.
		m.Parts = append(m.Parts, c.part(provider.SynthID(0, j, a.model+"\x00"+c.name+"\x00"+string(c.args))))
	}
	if len(m.Parts) == 0 {
		m.Parts = nil
	}
	m.Origin = &convo.Origin{Provider: ProviderID, Model: a.model}
	if a.hasUsage {
		m.Usage = &convo.Usage{Input: a.prompt, Output: a.eval}
	}
	if a.done {
		m.Finish = a.finish()
	}
	if t, err := time.Parse(time.RFC3339Nano, string(a.createdAt)); err == nil {
		m.Time = t.UTC()
	}
	var n wire.Members
	if a.role != "" && a.role != "assistant" {
		n = append(n, wire.Member{Key: "role", Val: jsonx.AppendString(nil, a.role)})
	}
	if len(a.createdAt) > 0 {
		n = append(n, wire.Member{Key: "created_at", Val: jsonx.AppendString(nil, string(a.createdAt))})
	}
	if a.hasReason {
		n = append(n, wire.Member{Key: "done_reason", Val: jsonx.AppendString(nil, a.reason)})
	}
	for i, v := range a.metrics {
		if v != nil {
			n = append(n, wire.Member{Key: metricKeys[i], Val: append([]byte(nil), v...)})
		}
	}
	if a.logprobs != nil {
		n = append(n, wire.Member{Key: "logprobs", Val: append(append([]byte{'['}, a.logprobs...), ']')})
	}
	n = append(n, a.remote...)
	for _, x := range a.extra {
		if !replyKeys[x.Key] && x.Key != "role" {
			n = append(n, x)
		}
	}
	m.Native = n.Native(ProviderID)
	return m
}

// finish normalises done_reason. Ollama has no tool-use reason: a reply
// that calls tools ends with "stop".
func (a *accumulator) finish() convo.Finish {
	switch strings.ToLower(a.reason) {
	case "length":
		return convo.FinishLength
	case "stop", "":
		if len(a.calls) > 0 {
			return convo.FinishToolUse
		}
		return convo.FinishStop
	}
	// "load" and "unload" answer requests that load or unload a model.
	return convo.FinishOther
}
