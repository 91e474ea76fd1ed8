package gemini

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
)

// NewAccumulator returns an accumulator for one streamGenerateContent
// reply. Each event is a whole GenerateContentResponse whose candidate holds
// only the new parts. Consecutive text parts are joined, and so are
// consecutive thought parts, but only while neither carries anything but
// text: a part with a thoughtSignature (even an empty one, as Gemini sends
// at the end of a turn) or any other member stays a part of its own, so
// every signature is sent back on the part it came on. Empty text parts
// that carry nothing are dropped. finishReason, usageMetadata and the
// candidate's other members are taken from the last chunk that has them.
func (generateContent) NewAccumulator(opts provider.Options) provider.Accumulator {
	return newAccumulator(opts)
}

func newAccumulator(opts provider.Options) *accumulator {
	a := &accumulator{opts: opts}
	a.pr.r = &a.reader
	a.pr.stream = true
	return a
}

type accumulator struct {
	opts   provider.Options
	reader jsonx.Reader
	pr     partReader
	resp   response // reused for every chunk
	events int

	parts []convo.Part
	// The last part may be an open run of text or thought deltas; its text
	// is built here (strings.Builder never copies what it has handed out,
	// so Snapshot is cheap and the run stays linear).
	run     strings.Builder
	runOpen bool
	// call is the functionCall being streamed in pieces (its part's
	// index and arguments so far), or nil.
	call *streamedCall

	finish    string
	blocked   bool
	model, id string
	hasUsage  bool
	usage     convo.Usage
	usageRaw  []byte  // reused: a message copies what it keeps
	candExtra []field // last value of each member, in the order first seen (copies)
	respExtra []field
	apiErr    *provider.APIError
	err       error // the first error: the stream cannot go on after it
	warns     []provider.Warning
	warned    bool // extra candidates reported
}

// Add folds one stream event (one GenerateContentResponse) into the reply.
func (a *accumulator) Add(ev provider.Event) error {
	if a.err != nil {
		return fmt.Errorf("stream already failed: %w", a.err)
	}
	n := a.events
	a.events++
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 || string(data) == "[DONE]" {
		return nil // keep-alives; Gemini sends no end marker
	}
	lim := a.opts.DecodeLimits()
	if int64(len(data)) > lim.MaxBytes {
		a.err = fmt.Errorf("chunk %d: more than %d bytes: %w", n, lim.MaxBytes, jsonx.ErrTooLarge)
		return a.err
	}
	a.reader.Reset(data, lim.MaxDepth)
	err := a.pr.readResponse(&a.resp)
	if err == nil {
		err = a.reader.ExpectEnd()
	}
	if err != nil {
		a.err = fmt.Errorf("chunk %d: %w", n, err)
		return a.err
	}
	resp := &a.resp
	if resp.apiErr != nil {
		a.apiErr = resp.apiErr
		a.err = resp.apiErr
		return a.err
	}
	if resp.extraCand > 0 && !a.warned {
		a.warned = true
		a.warns = append(a.warns, provider.Warnf("candidates", "candidates besides the first left out"))
	}
	for j := range resp.parts {
		if err := a.addPart(&resp.parts[j]); err != nil {
			a.err = fmt.Errorf("chunk %d: candidates[0].content.parts[%d].functionCall: %w", n, j, err)
			return a.err
		}
	}
	if resp.finish != "" {
		a.finish = resp.finish
	}
	a.blocked = a.blocked || resp.blocked
	// Every chunk repeats these; a string is made only when they change.
	if len(resp.model) > 0 && string(resp.model) != a.model {
		a.model = string(resp.model)
	}
	if len(resp.id) > 0 && string(resp.id) != a.id {
		a.id = string(resp.id)
	}
	if resp.hasUsage {
		a.hasUsage, a.usage = true, resp.usage
		a.usageRaw = append(a.usageRaw[:0], resp.usageRaw...)
	}
	a.candExtra = setFields(a.candExtra, resp.candExtra)
	a.respExtra = setFields(a.respExtra, resp.respExtra)
	return nil
}

// AddPiece folds one stream event into the reply and says what it changed
// in the parts: a chunk whose parts only extend the open run of text or
// thought is a piece of the last part.
func (a *accumulator) AddPiece(ev provider.Event) (provider.Piece, error) {
	n, open, from, call, id := len(a.parts), a.runOpen, a.run.Len(), a.call, a.id
	if err := a.Add(ev); err != nil {
		return provider.Piece{}, err
	}
	switch {
	case len(a.parts) != n || a.runOpen != open || a.call != nil || call != nil || a.id != id:
		return provider.Piece{Other: true}, nil
	case !open || a.run.Len() == from:
		return provider.Piece{}, nil
	}
	return provider.Piece{Kind: provider.DeltaText, Index: n - 1, Text: a.run.String()[from:]}, nil
}

// setFields records the latest value of each member, copying it out of
// the chunk (into the buffer of the previous value, which no message
// shares: messages copy what they keep).
func setFields(dst, src []field) []field {
next:
	for _, f := range src {
		for i := range dst {
			if bytes.Equal(dst[i].key, f.key) {
				dst[i].raw = append(dst[i].raw[:0], f.raw...)
				continue next
			}
		}
		dst = append(dst, field{key: bytes.Clone(f.key), raw: bytes.Clone(f.raw)})
	}
	return dst
}

type streamedCall struct {
	index int // in a.parts
	args  *argsBuilder
}

// addPart folds one part of a chunk into the message.
func (a *accumulator) addPart(wp *wirePart) error {
	if wp.kind == "functionCall" {
		if wp.part.Name == "" {
			return a.piece(wp)
		}
		if a.call != nil {
			return fmt.Errorf("call %q began before the streamed call %q was closed", wp.part.Name, a.parts[a.call.index].Name)
		}
	}
	plain := wp.kind == "text" && !wp.hasSig && len(wp.extra) == 0 && (!wp.hasTh || wp.thought)
	if plain {
		if len(wp.text) == 0 {
			return nil // nothing in it: no text, no signature
		}
		if a.runOpen && (a.parts[len(a.parts)-1].Type == convo.TypeReasoning) == wp.thought {
			a.run.Write(wp.text)
			return nil
		}
		a.closeRun()
		p := convo.Part{Type: convo.TypeText}
		if wp.thought {
			p = convo.Part{Type: convo.TypeReasoning, Provider: ProviderID}
		}
		a.parts = append(a.parts, p)
		a.run.Write(wp.text)
		a.runOpen = true
		return nil
	}
	// A signed or otherwise annotated part is never joined to its
	// neighbours, so its signature stays exactly where it came.
	a.closeRun()
	a.parts = append(a.parts, convo.Part{})
	j := len(a.parts) - 1
	p := &a.parts[j]
	wp.fill(p)
	if p.Type == convo.TypeToolCall && !wp.hasID {
		// Filled in when the reply is built: the response id may come
		// later than the call.
		mark(p, SyntheticID)
	}
	if p.Type == convo.TypeToolCall && wp.cont {
		a.call = &streamedCall{index: j, args: newArgsBuilder()}
		if err := a.call.args.seed(p.Args); err != nil {
			return err
		}
	}
	return nil
}

// piece folds a name-less functionCall: partial arguments of the call
// being streamed, and, without willContinue, its end.
func (a *accumulator) piece(wp *wirePart) error {
	if a.call == nil {
		return errors.New("functionCall has no name and no streamed call is open (a name-less piece must follow a call with willContinue)")
	}
	for _, pa := range wp.partial {
		if err := a.call.args.apply(pa); err != nil {
			return err
		}
	}
	if !wp.cont {
		a.parts[a.call.index].Args = a.call.args.root.json(nil)
		a.call = nil
	}
	return nil
}

func (a *accumulator) closeRun() {
	if !a.runOpen {
		return
	}
	a.parts[len(a.parts)-1].Text = a.run.String()
	a.run = strings.Builder{}
	a.runOpen = false
}

// build returns the message so far. The parts are a copy, so later events
// do not change a snapshot.
func (a *accumulator) build() convo.Message {
	parts := make([]convo.Part, len(a.parts))
	copy(parts, a.parts)
	if a.runOpen {
		parts[len(parts)-1].Text = a.run.String()
	}
	if a.call != nil {
		// The arguments so far, as the JSON text they begin with (as
		// other providers stream arguments): a prefix of the final ones.
		parts[a.call.index].Args, parts[a.call.index].ArgsRaw = nil, a.call.args.prefix()
	}
	for j := range parts {
		p := &parts[j]
		if p.Type == convo.TypeToolCall && p.ID == "" {
			p.ID = replyCallID(p, j, a.id)
		}
	}
	m := meta{
		finish: a.finish, blocked: a.blocked, model: a.model, id: a.id,
		candExtra: a.candExtra, respExtra: a.respExtra, apiErr: a.apiErr,
	}
	if a.hasUsage {
		u := a.usage
		m.usage, m.usageRaw = &u, a.usageRaw
	}
	return m.message(parts)
}

// Snapshot returns the reply as accumulated so far, for display.
func (a *accumulator) Snapshot() convo.Message { return a.build() }

// Message returns the final message, or the partial one with an error when
// the stream failed or ended early.
func (a *accumulator) Message() (convo.Message, []provider.Warning, error) {
	m := a.build()
	warns := a.warns
	switch {
	case a.err != nil:
		return m, warns, a.err
	case a.finish == "" && !a.blocked:
		return m, warns, fmt.Errorf("gemini: the stream ended after %d events, before a finishReason: %w", a.events, provider.ErrIncomplete)
	case a.call != nil:
		m.Parts[a.call.index].Args, m.Parts[a.call.index].ArgsRaw = a.call.args.root.json(nil), ""
		warns = append(slices.Clip(warns), provider.Warnf(index("parts", a.call.index),
			"streamed functionCall %q never closed: its arguments are kept as they stood", a.parts[a.call.index].Name))
	}
	return m, warns, a.opts.Check(warns)
}

// ReadStream reads a whole streamGenerateContent reply from r: Server-Sent
// Events (?alt=sse), or the JSON array of responses the endpoint sends
// without alt=sse.
func (generateContent) ReadStream(r io.Reader, opts provider.Options) (convo.Message, []provider.Warning, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	acc := newAccumulator(opts)
	first, err := firstByte(br)
	if err != nil && !errors.Is(err, io.EOF) {
		return acc.build(), nil, err
	}
	if first == '[' {
		return readArray(br, acc, opts)
	}
	return stream.Feed(stream.NewSSE(br), acc)
}

// firstByte returns the first byte that is not white space (or a BOM)
// without consuming it.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.Discard(1)
		case 0xef:
			if bom, _ := br.Peek(3); string(bom) == "\xef\xbb\xbf" {
				br.Discard(3)
				continue
			}
			return b[0], nil
		default:
			return b[0], nil
		}
	}
}

// readArray reads the JSON-array form of a stream: the whole array, then
// each element as one event.
func readArray(br *bufio.Reader, acc *accumulator, opts provider.Options) (convo.Message, []provider.Warning, error) {
	lim := opts.DecodeLimits()
	data, err := io.ReadAll(io.LimitReader(br, lim.MaxBytes+1))
	if err != nil {
		m, warns, _ := acc.Message()
		return m, warns, err
	}
	if int64(len(data)) > lim.MaxBytes {
		return acc.build(), nil, fmt.Errorf("stream of more than %d bytes: %w", lim.MaxBytes, jsonx.ErrTooLarge)
	}
	r := jsonx.NewReader(data, lim.MaxDepth)
	var addErr error
	err = r.ReadArray(func(i int) error {
		r.Peek()
		start := r.Offset()
		if err := r.Skip(); err != nil {
			return err
		}
		addErr = acc.Add(provider.Event{Data: data[start:r.Offset()]})
		return addErr
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	var je *jsonx.Error
	if err != nil && addErr == nil && errors.As(err, &je) && je.Offset >= len(bytes.TrimRight(data, " \t\r\n")) {
		// The array stops at the end of the input: the stream was cut.
		err = fmt.Errorf("%w: %w", err, provider.ErrIncomplete)
	}
	m, warns, merr := acc.Message()
	if err != nil {
		return m, warns, err
	}
	return m, warns, merr
}
