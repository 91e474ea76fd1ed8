package litert

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// DecodeReply decodes the complete message of a reply. LiteRT-LM reports
// neither usage nor a stop reason in it: Finish is tool_use when the reply
// calls tools and stop otherwise, and Origin's model is Options.Model.
func (conversation) DecodeReply(body []byte, opts provider.Options) (convo.Message, []provider.Warning, error) {
	if err := provider.CheckReply(body, Name); err != nil {
		return convo.Message{}, nil, err
	}
	lim, err := opts.CheckSize(body, "litert reply")
	if err != nil {
		return convo.Message{}, nil, err
	}
	r := jsonx.NewReader(body, lim.MaxDepth)
	var w wireMsg
	if err := readMessage(r, &w); err != nil {
		return convo.Message{}, nil, err
	}
	if err := r.ExpectEnd(); err != nil {
		return convo.Message{}, nil, err
	}
	if err := replyError(&w); err != nil {
		return convo.Message{}, nil, err
	}
	if w.hasRole && roleOf(w.role) != convo.RoleAssistant {
		return convo.Message{}, nil, convo.ErrorAt(fmt.Errorf("a reply comes from the assistant, not %q", w.role), "role")
	}
	if !w.hasRole && len(w.parts) == 0 && !w.hasCalls && !w.hasThought {
		// An object of no format DetectReply knows (an error of another
		// API, {}): reading it would give an empty message.
		return convo.Message{}, nil, errors.New(`not a message: no "role", "content" or "tool_calls"`)
	}
	m, err := reply(&w, opts)
	if err != nil {
		return convo.Message{}, nil, err
	}
	return m, nil, nil
}

// NewAccumulator returns an accumulator for the chunks of one streamed
// reply, each chunk's JSON given to Add as an event's Data.
func (conversation) NewAccumulator(opts provider.Options) provider.Accumulator {
	return &accumulator{opts: opts, limit: opts.DecodeLimits().MaxBytes}
}

// ReadStream reads streamed chunks, one message JSON per line (blank lines
// skipped), from r and accumulates them.
func (conversation) ReadStream(r io.Reader, opts provider.Options) (convo.Message, []provider.Warning, error) {
	r, err := provider.CheckStream(r, Name)
	if err != nil {
		return convo.Message{}, nil, err
	}
	return stream.Feed(stream.NewNDJSON(r), &accumulator{opts: opts, limit: opts.DecodeLimits().MaxBytes})
}

// replyError returns the error of an {"error": …} line (a member "error"
// on an object without a role) as a *provider.APIError. LiteRT-LM reports
// errors as a status beside the chunk (the C callback's error_msg, a Kotlin
// onError); a captured stream records one as such a line.
func replyError(w *wireMsg) error {
	if w.hasRole {
		return nil
	}
	v, ok := w.extra.Get("error")
	if !ok {
		return nil
	}
	if len(v) > 0 && v[0] == '"' {
		if s, err := unquote(v, nil); err == nil {
			return &provider.APIError{Provider: ProviderID, Message: s}
		}
	}
	return &provider.APIError{Provider: ProviderID, Message: string(v)}
}

// reply builds the assistant message of a complete reply.
func reply(w *wireMsg, opts provider.Options) (convo.Message, error) {
	m, err := messageOf(0, w, convo.RoleAssistant, nil)
	if err != nil {
		return m, err
	}
	saltIDs(m.Parts)
	m.Origin = &convo.Origin{Provider: ProviderID, Model: opts.Model}
	m.Finish = convo.FinishStop
	if m.HasToolCalls() {
		m.Finish = convo.FinishToolUse
	}
	for i := range m.Parts {
		if m.Parts[i].Type == convo.TypeReasoning {
			m.Parts[i].Model = opts.Model
		}
	}
	return m, nil
}

// saltIDs gives the calls LiteRT-LM sent without an id ids made from the
// whole reply as well as the call's place: a reply carries no id or time of
// its own, and two replies calling the same tool must not share an id.
func saltIDs(ps []convo.Part) {
	var h64 uint64
	first := true
	var r jsonx.Reader
	for j := range ps {
		p := &ps[j]
		if p.Type != convo.TypeToolCall || p.Native[ProviderID] == nil {
			continue
		}
		if n, err := wire.ReadNative(p.Native, ProviderID, &r); err != nil || !n.Absent("id") {
			continue
		}
		if first {
			h := fnv.New64a()
			for k := range ps {
				q := &ps[k]
				h.Write([]byte(q.Type))
				h.Write([]byte{0})
				h.Write([]byte(q.Text))
				h.Write([]byte{0})
				h.Write([]byte(q.Name))
				h.Write([]byte{0})
				h.Write(q.Args)
				h.Write([]byte(q.ArgsRaw))
				h.Write([]byte{0})
			}
			h64, first = h.Sum64(), false
		}
		var b [8]byte
		for k := range b {
			b[k] = byte(h64 >> (8 * k))
		}
		p.ID = provider.SynthID(0, j, hex.EncodeToString(b[:])+"/"+p.Name)
	}
}

// accumulator folds the chunks of a streamed reply. LiteRT-LM delivers
// only the newest piece in each: text deltas as content text parts,
// channel text (thinking) in "channels", tool calls whole; an empty
// message ends the stream.
type accumulator struct {
	opts  provider.Options
	limit int64
	r     jsonx.Reader
	w     wireMsg

	events  int
	size    int64
	model   bool // some chunk said role "model"
	parts   []accPart
	thought []byte
	chans   []channel
	calls   []wireCall
	extra   wire.Members
	ended   bool
	late    bool
	err     error
	warns   []provider.Warning
}

// accPart is a content part of the reply: a text part grows with each
// delta in text; any other part is kept as read.
type accPart struct {
	text []byte
	part wirePart
}

type channel struct {
	name string
	text []byte
}

// Add folds one chunk into the reply.
func (a *accumulator) Add(ev provider.Event) error {
	if a.err != nil {
		return a.err
	}
	a.events++
	a.size += int64(len(ev.Data))
	if a.size > a.limit {
		a.err = fmt.Errorf("litert reply of more than %d bytes: %w", a.limit, jsonx.ErrTooLarge)
		return a.err
	}
	if err := a.chunk(ev.Data); err != nil {
		var se *provider.APIError
		if !errors.As(err, &se) {
			err = convo.ErrorAt(err, fmt.Sprintf("chunk %d", a.events))
		}
		a.err = err
		return err
	}
	return nil
}

func (a *accumulator) chunk(data []byte) error {
	if a.ended && !a.late {
		a.late = true
		a.warns = append(a.warns, provider.Warnf(fmt.Sprintf("chunk %d", a.events), "data after the final empty message"))
	}
	// The C++ runtime's end of stream is an empty Message: {} or, where a
	// Message is plain JSON, null.
	if string(bytes.TrimSpace(data)) == "null" {
		a.ended = true
		return nil
	}
	w := &a.w
	w.reset()
	r := &a.r
	r.Reset(data, a.opts.DecodeLimits().MaxDepth)
	if err := readMessage(r, w); err != nil {
		return err
	}
	if err := r.ExpectEnd(); err != nil {
		return err
	}
	if err := replyError(w); err != nil {
		return err
	}
	if w.role == "" && len(w.parts) == 0 && len(w.calls) == 0 && !w.hasThought && len(w.channels) == 0 {
		a.ended = true
		return nil
	}
	if w.hasRole && roleOf(w.role) != convo.RoleAssistant {
		return convo.ErrorAt(fmt.Errorf("a reply comes from the assistant, not %q", w.role), "role")
	}
	if w.role == "model" {
		a.model = true
	}
	for k := range w.parts {
		a.addPart(&w.parts[k])
	}
	if err := a.addThought(w); err != nil {
		return err
	}
	for _, c := range w.channels {
		s, err := unquote(c.Val, nil)
		if err != nil {
			return convo.ErrorAt(err, "channels."+c.Key)
		}
		a.channel(c.Key, s)
	}
	a.calls = append(a.calls, w.calls...)
	for _, x := range w.extra {
		// reasoning_content repeats the thought channel's text in every
		// reasoning chunk; the complete message does not have it.
		if x.Key != "reasoning_content" {
			a.extra = a.extra.Set(x.Key, x.Val)
		}
	}
	return nil
}

// addPart adds a chunk's part: text continues the text before it; any
// other part is copied, as the chunk's raw and text point into its data.
func (a *accumulator) addPart(p *wirePart) {
	if p.kind == kindText && len(p.extra) == 0 {
		if n := len(a.parts); n > 0 && a.parts[n-1].text != nil {
			a.parts[n-1].text = append(a.parts[n-1].text, p.text...)
			return
		}
		a.parts = append(a.parts, accPart{text: append(make([]byte, 0, 64), p.text...)})
		return
	}
	part := *p
	if part.raw != nil {
		part.raw = append([]byte(nil), part.raw...)
	}
	if part.text != nil {
		part.text = append([]byte(nil), part.text...)
	}
	a.parts = append(a.parts, accPart{part: part})
}

// addThought adds a chunk's thought: its thought member, or for a
// reasoning chunk without channels, the text of reasoning_content alone.
func (a *accumulator) addThought(w *wireMsg) error {
	switch {
	case w.hasThought:
		a.thought = append(a.thought, w.thought...)
	case len(w.channels) == 0:
		if v, ok := w.extra.Get("reasoning_content"); ok && len(v) > 0 && v[0] == '"' {
			s, err := unquote(v, nil)
			if err != nil {
				return convo.ErrorAt(err, "reasoning_content")
			}
			a.thought = append(a.thought, s...)
		}
	}
	return nil
}

func (a *accumulator) channel(name, text string) {
	for i := range a.chans {
		if a.chans[i].name == name {
			a.chans[i].text = append(a.chans[i].text, text...)
			return
		}
	}
	a.chans = append(a.chans, channel{name: name, text: []byte(text)})
}

// AddPiece folds one chunk into the reply and says what it changed in the
// parts: a chunk that only extends the thought already begun, or the text
// that ends the content, is a piece of its part (the thought first, then
// the content parts; see messageOf).
func (a *accumulator) AddPiece(ev provider.Event) (provider.Piece, error) {
	n, th, last := len(a.parts), len(a.thought), a.lastText()
	if err := a.Add(ev); err != nil {
		return provider.Piece{}, err
	}
	grewTh, grewText := len(a.thought) > th, len(a.lastText()) > len(last)
	switch {
	case len(a.parts) != n || len(a.w.calls) > 0 || len(a.w.channels) > 0 || grewTh && grewText,
		grewTh && th == 0, grewText && len(last) == 0:
		return provider.Piece{Other: true}, nil
	case grewTh:
		return provider.Piece{Kind: provider.DeltaText, Text: string(a.thought[th:])}, nil
	case grewText:
		p := provider.Piece{Kind: provider.DeltaText, Index: n - 1, Text: string(a.lastText()[len(last):])}
		if th > 0 {
			p.Index++
		}
		return p, nil
	}
	return provider.Piece{}, nil
}

// lastText returns the text of the last part when it is a run of text.
func (a *accumulator) lastText() []byte {
	if n := len(a.parts); n > 0 {
		return a.parts[n-1].text
	}
	return nil
}

// Snapshot returns the message as accumulated so far.
func (a *accumulator) Snapshot() convo.Message {
	m, _ := a.build()
	return m
}

// Message returns the accumulated message. A stream that reported an error,
// or ended before its final empty message, gives the partial message and an
// error.
func (a *accumulator) Message() (convo.Message, []provider.Warning, error) {
	m, err := a.build()
	switch {
	case err != nil:
		return m, a.warns, err
	case a.err != nil:
		return m, a.warns, a.err
	case a.events == 0:
		return m, a.warns, fmt.Errorf("litert: the stream was empty: %w", provider.ErrIncomplete)
	case !a.ended:
		return m, a.warns, fmt.Errorf("litert: the stream was cut off after %d chunks, before its final empty message: %w", a.events, provider.ErrIncomplete)
	}
	return m, a.warns, a.opts.Check(a.warns)
}

// build returns the message accumulated so far, made as the complete
// message of the same reply is: the same code reads both.
func (a *accumulator) build() (convo.Message, error) {
	w := wireMsg{role: "assistant", hasRole: true, form: formArray, calls: a.calls, extra: a.extra}
	if a.model {
		w.role = "model"
	}
	w.parts = make([]wirePart, len(a.parts))
	for i := range a.parts {
		if a.parts[i].text != nil {
			w.parts[i] = wirePart{kind: kindText, typ: "text", hasType: true, text: a.parts[i].text, hasText: true}
		} else {
			w.parts[i] = a.parts[i].part
		}
	}
	if len(a.thought) > 0 {
		w.thought, w.hasThought = a.thought, true
	}
	for _, c := range a.chans {
		w.channels = append(w.channels, wire.Member{Key: c.name, Val: jsonx.AppendString(nil, string(c.text))})
	}
	m, err := reply(&w, a.opts)
	if err != nil {
		m = convo.Message{Role: convo.RoleAssistant, Origin: &convo.Origin{Provider: ProviderID, Model: a.opts.Model}}
	}
	if !a.ended || a.err != nil {
		m.Finish = ""
	}
	return m, err
}
