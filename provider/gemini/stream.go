package gemini

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
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
	a.resp.keepAll = true
	return a
}

type accumulator struct {
	opts   provider.Options
	reader jsonx.Reader
	pr     partReader
	resp   response // reused for every chunk
	events int

	first candAcc    // the candidate with index 0
	more  []*candAcc // the others (candidateCount > 1), in index order

	blocked   bool
	model, id string
	hasUsage  bool
	usage     convo.Usage
	usageRaw  []byte // reused: a message copies what it keeps
	respExtra []field
	apiErr    *provider.APIError
	err       error // the first error: the stream cannot go on after it
	warns     []provider.Warning
	warned    bool // extra candidates reported
}

// candAcc is one candidate's reply as accumulated.
type candAcc struct {
	index int64
	parts []convo.Part
	// The last part may be an open run of text or thought deltas; its text
	// is built here (strings.Builder never copies what it has handed out,
	// so Snapshot is cheap and the run stays linear).
	run     strings.Builder
	runOpen bool
	// call is the functionCall being streamed in pieces (its part's
	// index and arguments so far), or nil.
	call   *streamedCall
	finish string
	extra  []field // last value of each member, in the order first seen (copies)
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
	if err == nil {
		err = a.candidates(&a.resp)
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
	a.respExtra = setFields(a.respExtra, resp.respExtra)
	return nil
}

// AddPiece folds one stream event into the reply and says what it changed
// in the parts: a chunk whose parts only extend the open run of text or
// thought is a piece of the last part, and one whose parts only begin a
// new run (the run before it, if any, unchanged) is that new part.
func (a *accumulator) AddPiece(ev provider.Event) (provider.Piece, error) {
	f := &a.first
	n, open, from, call, id, model := len(f.parts), f.runOpen, f.run.Len(), f.call, a.id, a.model
	if err := a.Add(ev); err != nil {
		return provider.Piece{}, err
	}
	switch {
	case f.call != nil || call != nil || a.id != id || a.model != model:
		return provider.Piece{Other: true}, nil
	case len(f.parts) == n+1 && f.runOpen && (!open || len(f.parts[n-1].Text) == from):
		// A new run, as build shows it.
		p := f.parts[n]
		p.Text = f.run.String()
		if p.Type == convo.TypeReasoning {
			p.Model = a.model // as meta.message sets it
		}
		return provider.Piece{Kind: provider.DeltaPartStart, Index: n, Part: &p}, nil
	case len(f.parts) != n || f.runOpen != open:
		return provider.Piece{Other: true}, nil
	case !open || f.run.Len() == from:
		return provider.Piece{}, nil
	}
	return provider.Piece{Kind: provider.DeltaText, Index: n - 1, Text: f.run.String()[from:]}, nil
}

// candidates folds the candidates of one chunk into theirs.
func (a *accumulator) candidates(resp *response) error {
	if resp.apiErr != nil {
		return nil
	}
	if resp.extraCand > 0 && !a.warned {
		a.warned = true
		a.warns = append(a.warns, provider.Warnf("candidates", "candidates besides the first left out (CandidatesAccumulator.Messages returns them all)"))
	}
	if err := a.first.add(resp.parts, resp.finish, resp.candExtra); err != nil {
		return fmt.Errorf("candidates[0].content.parts%w", err)
	}
	for k := range resp.more[:resp.nmore] {
		c := &resp.more[k]
		if err := a.candidate(c.index).add(c.parts, c.finish, c.extra); err != nil {
			return fmt.Errorf("candidates[index %d].content.parts%w", c.index, err)
		}
	}
	return nil
}

// candidate returns the candidate with the given index, made when it is
// new; the list stays in index order.
func (a *accumulator) candidate(index int64) *candAcc {
	if index == 0 {
		return &a.first
	}
	i, found := slices.BinarySearchFunc(a.more, index, func(c *candAcc, k int64) int { return cmp.Compare(c.index, k) })
	if !found {
		a.more = slices.Insert(a.more, i, &candAcc{index: index})
	}
	return a.more[i]
}

// add folds one chunk's parts and members of the candidate. An error
// begins with the part's place ("[j].functionCall: …").
func (c *candAcc) add(parts []wirePart, finish string, extra []field) error {
	for j := range parts {
		if err := c.addPart(&parts[j]); err != nil {
			return fmt.Errorf("[%d].functionCall: %w", j, err)
		}
	}
	if finish != "" {
		c.finish = finish
	}
	c.extra = setFields(c.extra, extra)
	return nil
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
func (a *candAcc) addPart(wp *wirePart) error {
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
	if p.Type == convo.TypeToolCall && !wp.hasID && !wp.server {
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
func (a *candAcc) piece(wp *wirePart) error {
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

func (a *candAcc) closeRun() {
	if !a.runOpen {
		return
	}
	a.parts[len(a.parts)-1].Text = a.run.String()
	a.run = strings.Builder{}
	a.runOpen = false
}

// build returns the candidate's message so far; the usage, which counts
// every candidate, goes with the first. The parts are a copy, so later
// events do not change a snapshot.
func (a *accumulator) build(c *candAcc) convo.Message {
	parts := make([]convo.Part, len(c.parts))
	copy(parts, c.parts)
	if c.runOpen {
		parts[len(parts)-1].Text = c.run.String()
	}
	if c.call != nil {
		// The arguments so far, as the JSON text they begin with (as
		// other providers stream arguments): a prefix of the final ones.
		parts[c.call.index].Args, parts[c.call.index].ArgsRaw = nil, c.call.args.prefix()
	}
	for j := range parts {
		p := &parts[j]
		if p.Type == convo.TypeToolCall && p.ID == "" && !p.IsServerTool() {
			p.ID = replyCallID(p, j, a.id)
		}
	}
	m := meta{
		finish: c.finish, blocked: a.blocked, model: a.model, id: a.id,
		candExtra: c.extra, respExtra: a.respExtra, apiErr: a.apiErr, streamed: true,
	}
	if a.hasUsage && c == &a.first {
		u := a.usage
		m.usage, m.usageRaw = &u, a.usageRaw
	}
	return m.message(parts)
}

// Snapshot returns the reply as accumulated so far, for display.
func (a *accumulator) Snapshot() convo.Message { return a.build(&a.first) }

// Candidates returns how many candidates came so far
// (provider.CandidatesAccumulator).
func (a *accumulator) Candidates() int { return 1 + len(a.more) }

// SnapshotCandidate returns the i-th candidate in index order as
// accumulated so far (provider.CandidatesAccumulator).
func (a *accumulator) SnapshotCandidate(i int) convo.Message {
	if i == 0 {
		return a.build(&a.first)
	}
	return a.build(a.more[i-1])
}

// Message returns the final message, or the partial one with an error when
// the stream failed or ended early.
func (a *accumulator) Message() (convo.Message, []provider.Warning, error) {
	m, warns, err := a.message(&a.first, a.warns)
	if err != nil {
		return m, warns, err
	}
	return m, warns, a.opts.Check(warns)
}

// message returns candidate c's final message, with warns and what it adds.
func (a *accumulator) message(c *candAcc, warns []provider.Warning) (convo.Message, []provider.Warning, error) {
	m := a.build(c)
	switch {
	case a.err != nil:
		return m, warns, a.err
	case c.finish == "" && !a.blocked:
		return m, warns, fmt.Errorf("gemini: the stream ended after %d events, before a finishReason: %w", a.events, provider.ErrIncomplete)
	case c.call != nil:
		m.Parts[c.call.index].Args, m.Parts[c.call.index].ArgsRaw = c.call.args.root.json(nil), ""
		path := index("parts", c.call.index)
		if c != &a.first {
			path = fmt.Sprintf("candidates[index %d].%s", c.index, path)
		}
		warns = append(slices.Clip(warns), provider.Warnf(path,
			"streamed functionCall %q never closed: its arguments are kept as they stood", c.parts[c.call.index].Name))
	}
	return m, warns, nil
}

// Messages returns every candidate's final message, in index order
// (provider.CandidatesAccumulator); the first is Message's, without the
// warning that the others were left out.
func (a *accumulator) Messages() ([]convo.Message, []provider.Warning, error) {
	return wire.CandidateMessages(append([]*candAcc{&a.first}, a.more...), a.warns, "candidates", a.err, a.opts,
		a.message, func(c *candAcc) string { return fmt.Sprintf("candidate %d", c.index) })
}

// ReadStream reads a whole streamGenerateContent reply from r: Server-Sent
// Events (?alt=sse), or the JSON array of responses the endpoint sends
// without alt=sse.
func (generateContent) ReadStream(r io.Reader, opts provider.Options) (convo.Message, []provider.Warning, error) {
	r, err := provider.CheckStream(r, Name)
	if err != nil {
		return convo.Message{}, nil, err
	}
	br := bufio.NewReaderSize(r, 64<<10)
	acc := newAccumulator(opts)
	first, err := firstByte(br)
	if err != nil && !errors.Is(err, io.EOF) {
		return acc.Snapshot(), nil, err
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
		return acc.Snapshot(), nil, fmt.Errorf("stream of more than %d bytes: %w", lim.MaxBytes, jsonx.ErrTooLarge)
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
