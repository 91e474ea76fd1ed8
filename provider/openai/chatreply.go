package openai

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

var _ provider.ReplyCodec = chat{}

// DecodeReply decodes a Chat Completions response body (a chat.completion
// object) into one assistant message: the first choice's reasoning_content,
// content, refusal and tool calls as parts; usage (with cached and
// reasoning tokens); finish_reason normalised, the raw reason kept in
// Native; Origin with the model and response id; Time from "created".
// The message's annotations (url_citation) become the citations of its
// text part. Response-only fields (finish_reason, annotations that do not
// map, the audio reply, logprobs) are kept under native.openai.response,
// which is never sent in a request. An {"error": …} body is an *provider.APIError.
func (chat) DecodeReply(body []byte, opts provider.Options) (convo.Message, []provider.Warning, error) {
	if err := provider.CheckReply(body, ChatName); err != nil {
		return convo.Message{}, nil, err
	}
	m, warns, err := decodeChatReply(body, opts)
	if err != nil {
		return m, warns, err
	}
	return m, warns, opts.Check(warns)
}

// NewAccumulator returns an accumulator for the chunks of one streamed
// Chat Completions reply: each SSE event's data (a chat.completion.chunk, or
// [DONE]) given to Add.
func (chat) NewAccumulator(opts provider.Options) provider.Accumulator {
	return newChatAcc(opts)
}

// ReadStream reads a streamed Chat Completions reply (Server-Sent Events)
// from r, such as an HTTP body, and accumulates it.
func (chat) ReadStream(r io.Reader, opts provider.Options) (convo.Message, []provider.Warning, error) {
	r, err := provider.CheckStream(r, ChatName)
	if err != nil {
		return convo.Message{}, nil, err
	}
	// The accumulator copies what it keeps of a chunk: it need not have
	// a copy of each.
	return stream.FeedSSE(r, newChatAcc(opts), true)
}

// DecodeReplies decodes a Chat Completions response body into one assistant
// message per choice, in choice-index order: a request with n > 1 gets n
// replies. Each is what DecodeReply makes of its choice; the response's
// usage, which counts every choice, is on the first only.
func (chat) DecodeReplies(body []byte, opts provider.Options) ([]convo.Message, []provider.Warning, error) {
	if err := provider.CheckReply(body, ChatName); err != nil {
		return nil, nil, err
	}
	ms, warns, err := decodeChatReplies(body, opts, true)
	if err != nil {
		return ms, warns, err
	}
	return ms, warns, opts.Check(warns)
}

func decodeChatReply(body []byte, opts provider.Options) (convo.Message, []provider.Warning, error) {
	ms, warns, err := decodeChatReplies(body, opts, false)
	if len(ms) == 0 {
		return convo.Message{}, warns, err
	}
	return ms[0], warns, err
}

// chatReply holds the members of a chat.completion object while it is read.
type chatReply struct {
	all         bool // keep every choice, not only index 0
	id, model   string
	created     int64
	choices     []chatChoice
	have        bool // the choice with index 0 was read
	usage       *convo.Usage
	apiErr      *provider.APIError
	extraChoice bool
}

// decodeChatReplies decodes the choice with index 0, or with all every
// choice, sorted by index.
func decodeChatReplies(body []byte, opts provider.Options, all bool) ([]convo.Message, []provider.Warning, error) {
	l, err := opts.CheckSize(body, "request body")
	if err != nil {
		return nil, nil, err
	}
	d := &chatDec{r: jsonx.NewReader(body, l.MaxDepth), maxDepth: l.MaxDepth}
	w := chatReply{all: all}
	err = d.r.ReadObject(func(key []byte) error { return d.replyMember(&w, key) })
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err != nil {
		return nil, d.warns, err
	}
	if w.apiErr != nil && !w.have {
		return []convo.Message{{Role: convo.RoleAssistant}}, d.warns, w.apiErr
	}
	if !w.have {
		return nil, d.warns, errors.New(`reply has no choice with index 0`)
	}
	if w.extraChoice {
		d.warns = append(d.warns, provider.Warnf("choices", "choices other than index 0 left out: a message holds one reply (DecodeReplies returns them all)"))
	}
	ms, err := w.messages()
	if err != nil {
		return nil, d.warns, err
	}
	return ms, d.warns, apiErrOrNil(w.apiErr)
}

// replyMember reads one member of a chat.completion object into w.
func (d *chatDec) replyMember(w *chatReply, key []byte) error {
	switch string(key) {
	case "id", "model":
		if d.r.ReadNull() {
			return nil
		}
		s, err := d.r.ReadString()
		if string(key) == "id" {
			w.id = s
		} else {
			w.model = s
		}
		return atKey(err, key)
	case "created":
		if d.r.ReadNull() {
			return nil
		}
		n, err := d.r.ReadInt()
		w.created = n
		return atKey(err, key)
	case "usage":
		u, err := readUsage(d.r)
		w.usage = u
		return atKey(err, key)
	case "error":
		if d.r.ReadNull() {
			return nil
		}
		e, err := readAPIError(d.r)
		w.apiErr = e
		return atKey(err, key)
	case "choices":
		if d.r.Peek() != jsonx.Array {
			return atKey(d.r.Errorf("want an array of choices, got %s", d.r.Peek()), key)
		}
		return atKey(d.r.ReadArray(func(i int) error { return atIndex(d.addChoice(w, i), i) }), key)
	}
	return d.r.Skip()
}

// addChoice reads choice i, keeping it when w wants it; a second choice
// with the same index is an error.
func (d *chatDec) addChoice(w *chatReply, i int) error {
	c, err := d.choice(i)
	if err != nil {
		return err
	}
	if !w.all && (c.index != 0 || w.have) {
		w.extraChoice = true
		return nil
	}
	for _, o := range w.choices {
		if o.index == c.index {
			return fmt.Errorf("a second choice with index %d", c.index)
		}
	}
	w.have = w.have || c.index == 0
	w.choices = append(w.choices, c)
	return nil
}

// messages returns the kept choices as messages in index order, the
// response's usage on the first.
func (w *chatReply) messages() ([]convo.Message, error) {
	choices := w.choices
	sort.SliceStable(choices, func(a, b int) bool { return choices[a].index < choices[b].index })
	ms := make([]convo.Message, len(choices))
	for k, c := range choices {
		m := c.msg
		if m.Role != convo.RoleAssistant {
			return nil, fmt.Errorf("choices[%d].message: role %q, want assistant", c.index, m.Role)
		}
		replyNatives(&m, c.finish, c.logprobs)
		m.Origin = &convo.Origin{Provider: ProviderID, Model: w.model, ResponseID: w.id}
		if k == 0 {
			m.Usage = w.usage
		}
		m.Time = unixTime(w.created)
		if len(c.finish) > 0 && c.finish[0] == '"' {
			m.Finish = chatFinish(decodeStr(c.finish), m.HasToolCalls())
		}
		ms[k] = m
	}
	return ms, nil
}

// apiErrOrNil keeps a nil *provider.APIError from becoming a non-nil error.
func apiErrOrNil(e *provider.APIError) error {
	if e == nil {
		return nil
	}
	return e
}

type chatChoice struct {
	index            int64
	msg              convo.Message
	finish, logprobs []byte
}

func (d *chatDec) choice(i int) (chatChoice, error) {
	c := chatChoice{index: int64(i)}
	hasMsg := false
	err := d.r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "index":
			n, err := d.r.ReadInt()
			c.index = n
			return atKey(err, key)
		case "message":
			m, err := d.message(0)
			c.msg, hasMsg = m, true
			return atKey(err, key)
		case "finish_reason":
			raw, err := d.r.ReadRaw()
			c.finish = raw
			return atKey(err, key)
		case "logprobs":
			raw, err := d.r.ReadRaw()
			c.logprobs = raw
			return atKey(err, key)
		}
		return d.r.Skip()
	})
	if err == nil && !hasMsg {
		err = errors.New(`choice has no "message"`)
	}
	return c, err
}

// chatFinish normalises a Chat finish_reason.
func chatFinish(reason string, calls bool) convo.Finish {
	switch reason {
	case "stop":
		if calls {
			// Some compatible servers end a tool-calling reply with stop.
			return convo.FinishToolUse
		}
		return convo.FinishStop
	case "length":
		return convo.FinishLength
	case "tool_calls", "function_call":
		return convo.FinishToolUse
	case "content_filter":
		return convo.FinishContentFilter
	case "":
		return ""
	}
	return convo.FinishOther
}

// replyNatives sorts a reply message's native fields: those a request can
// send back stay; response-only ones (annotations that are not the text's
// citations, the audio reply beyond its id, the raw finish reason,
// logprobs) move under "response", which encoders never send.
func replyNatives(m *convo.Message, finish, logprobs []byte) {
	var nr natReader
	n, _ := nr.of(m.Native)
	var keep, resp natBuilder
	if len(finish) > 0 && string(finish) != "null" {
		resp.add("finish_reason", finish)
	}
	for _, x := range n.m {
		switch string(x.key) {
		case "annotations":
			if string(x.val) != "[]" && !liftAnnotations(m, x.val) {
				resp.addKey(x.key, x.val)
			}
		case "audio":
			resp.addKey(x.key, x.val)
			a, _ := nr.read(x.val)
			if v, ok := a.get("id"); ok {
				keep.add("audio", append(append([]byte(`{"id":`), v...), '}'))
			}
		default:
			keep.addKey(x.key, x.val)
		}
	}
	if lp := normalLogprobs(logprobs); lp != nil {
		resp.add("logprobs", lp)
	}
	if len(resp.buf) > 0 {
		keep.add("response", append(append([]byte{'{'}, resp.buf...), '}'))
	}
	m.Native = keep.native(true)
}

// liftAnnotations makes a reply's annotations the citations of its text,
// when it has one text part and each annotation maps; otherwise they stay
// native, as they came.
func liftAnnotations(m *convo.Message, raw []byte) bool {
	text := -1
	for i := range m.Parts {
		if m.Parts[i].Type == convo.TypeText {
			if text >= 0 {
				return false
			}
			text = i
		}
	}
	if text < 0 {
		return false
	}
	cs, ok := readChatAnnotations(raw)
	if ok {
		m.Parts[text].Citations = cs
	}
	return ok
}

// normalLogprobs keeps the content and refusal token lists of a choice's
// logprobs, leaving out empty and null ones, so a reply read whole and one
// gathered from a stream's chunks keep the same value.
func normalLogprobs(raw []byte) []byte {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	p := logprobsParts(raw)
	return logprobsJSON(p.content, p.refusal)
}

// logprobsJSON writes the normalised logprobs object from the elements of
// its two lists, or nil when both are empty.
func logprobsJSON(content, refusal []byte) []byte {
	if len(content) == 0 && len(refusal) == 0 {
		return nil
	}
	out := []byte{'{'}
	if len(content) > 0 {
		out = append(append(append(out, `"content":[`...), content...), ']')
	}
	if len(refusal) > 0 {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, `"refusal":[`...), refusal...), ']')
	}
	return append(out, '}')
}

// chatAcc folds the chunks of a streamed Chat Completions reply. Text
// arrives in deltas appended to buffers; tool calls are assembled by their
// index (id, type and name from the first fragment, arguments
// concatenated); the finish reason comes on the last chunk of the choice
// and usage on a final chunk without choices. The final message is decoded
// from the chat.completion body the chunks add up to, so it equals
// DecodeReply of the reply read whole.
type chatAcc struct {
	opts          provider.Options
	limit         int64
	rd, sub, sub2 jsonx.Reader // the chunk, its delta, a tool call's function

	events, chunks int
	size           int64
	id, model      string
	created        int64
	usage          *convo.Usage

	first choiceAcc    // the choice with index 0: the reply
	more  []*choiceAcc // the others (n > 1), in index order
	cur   *choiceAcc   // the choice of the delta being read

	done, sawChoice bool
	err             error
	warns           []provider.Warning
	warned          map[string]bool

	// What the chunk being read changed in the parts, for AddPiece: the
	// one text that grew and its length before, the stream index of the
	// call it belongs to (or -1), and whether anything else changed.
	grown     *textBuf
	grownFrom int
	grownCall int64
	changed   bool

	shape chunkShape // the fast path of chunks that repeat another
}

// choiceAcc is one choice of the reply as the chunks so far add it up.
type choiceAcc struct {
	index                       int64
	role                        string
	content, refusal, reasoning textBuf
	calls                       []callAcc
	fn                          *callAcc     // the deprecated function_call
	annotations                 []byte       // elements, comma-separated
	extra                       wire.Members // other delta members, merged (mergeDelta)
	audio                       audioAcc
	logContent, logRefusal      []byte
	finish                      []byte // raw finish_reason
}

type callAcc struct {
	index      int64
	id, typ    string
	name, args textBuf
}

type audioAcc struct {
	set              bool
	id, expires      []byte // raw JSON values
	data, transcript textBuf
}

func newChatAcc(opts provider.Options) *chatAcc {
	return &chatAcc{opts: opts, limit: opts.DecodeLimits().MaxBytes}
}

// CopiesData says the accumulator keeps nothing of a chunk's data: it
// copies what it keeps (provider.DataCopier; foldBoth checks it on every
// recorded stream, its data overwritten once folded).
func (a *chatAcc) CopiesData() {}

func (a *chatAcc) warnOnce(key, path, format string, args ...any) {
	if a.warned[key] {
		return
	}
	if a.warned == nil {
		a.warned = map[string]bool{}
	}
	a.warned[key] = true
	a.warns = append(a.warns, provider.Warnf(path, format, args...))
}

// Add folds one SSE event's data into the reply.
func (a *chatAcc) Add(ev provider.Event) error {
	if a.err != nil {
		return a.err
	}
	a.events++
	a.size += int64(len(ev.Data))
	if a.size > a.limit {
		a.err = fmt.Errorf("chat reply stream of more than %d bytes: %w", a.limit, jsonx.ErrTooLarge)
		return a.err
	}
	data := ev.Data
	if string(data) == "[DONE]" {
		a.done = true
		return nil
	}
	if a.done {
		a.warnOnce("late", fmt.Sprintf("event %d", a.events-1), "data after [DONE] read anyway")
	}
	if a.fast(data) {
		a.chunks++
		return nil
	}
	a.rd.Reset(data, a.opts.DecodeLimits().MaxDepth)
	a.shape.begin()
	if err := a.chunk(); err != nil {
		var ae *provider.APIError
		if !errors.As(err, &ae) {
			err = fmt.Errorf("chunk %d: %w", a.chunks, err)
		}
		a.err = err
		return err
	}
	a.shape.keep(data)
	a.chunks++
	return nil
}

// AddPiece folds one SSE event's data into the reply and says what it
// changed in the parts. A chunk that only extends the text, refusal or
// reasoning already begun, or the arguments of a call already begun, is
// a piece of the part the decoder makes of it (in the order reasoning,
// text, refusal, calls by index; see assistantParts); one that begins a
// text after every other part is that new part, and one that begins the
// arguments of a call is their first piece (provider.Piece.First).
func (a *chatAcc) AddPiece(ev provider.Event) (provider.Piece, error) {
	f := &a.first
	a.grown, a.grownCall, a.changed = nil, -1, false
	if err := a.Add(ev); err != nil {
		return provider.Piece{}, err
	}
	t := a.grown
	switch {
	case a.changed || f.audio.set:
		return provider.Piece{Other: true}, nil
	case t == nil || t.Len() == a.grownFrom:
		// Nothing, or an empty text, which is no part.
		return provider.Piece{}, nil
	}
	p := provider.Piece{Kind: provider.DeltaText, Text: t.Since(a.grownFrom)}
	for i, before := range []*textBuf{&f.reasoning, &f.content, &f.refusal} {
		if before == t {
			if a.grownFrom == 0 {
				return a.textStart(i, p.Index, t), nil
			}
			return p, nil
		}
		if before.set && before.Len() > 0 {
			p.Index++
		}
	}
	// The arguments of a call announced with none ("") begin: the piece
	// is what they are now (provider.Piece.First).
	p.Kind, p.First = provider.DeltaArgs, a.grownFrom == 0
	for i := range f.calls {
		if f.calls[i].index < a.grownCall {
			p.Index++
		}
	}
	return p, nil
}

// textStart is the piece of a text of the reply that began, the k-th of
// reasoning, content and refusal, at index: a new part, as the decoder
// makes it of the text (see chatDec.message and assistantParts), when it
// comes after every other part; else the reader takes a snapshot.
func (a *chatAcc) textStart(k, index int, t *textBuf) provider.Piece {
	f := &a.first
	if len(f.calls) > 0 || f.fn != nil {
		return provider.Piece{Other: true}
	}
	for _, after := range []*textBuf{&f.reasoning, &f.content, &f.refusal}[k+1:] {
		if after.Len() > 0 {
			return provider.Piece{Other: true}
		}
	}
	var part convo.Part
	switch text := t.String(); k {
	case 0:
		part = convo.Part{Type: convo.TypeReasoning, Text: text, Provider: ProviderID}
	case 1:
		part = convo.Text(text)
	default:
		part = convo.Part{Type: convo.TypeRefusal, Text: text}
	}
	return provider.Piece{Kind: provider.DeltaPartStart, Index: index, Part: &part}
}

func (a *chatAcc) chunk() error {
	r := &a.rd
	var apiErr *provider.APIError
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "id":
			if r.ReadNull() {
				return nil
			}
			s, err := r.ReadStringBytes()
			if len(s) == 0 {
				// A repeat would warn if a later chunk set the id.
				a.shape.spoil()
			}
			switch {
			case err != nil:
			case a.id == "":
				a.id = string(s)
			case a.id != string(s):
				a.warnOnce("id", "id", "chunks of two responses (%q, then %q): read as one", a.id, s)
			}
			return atKey(err, key)
		case "model":
			if r.ReadNull() {
				return nil
			}
			s, err := r.ReadStringBytes()
			if err == nil && a.model == "" {
				a.model = string(s)
			}
			return atKey(err, key)
		case "created":
			if r.ReadNull() {
				return nil
			}
			n, err := r.ReadInt()
			if a.created == 0 {
				a.created = n
			}
			return atKey(err, key)
		case "choices":
			if r.ReadNull() {
				return nil
			}
			return atKey(r.ReadArray(func(i int) error {
				if i > 0 {
					a.shape.spoil()
				}
				return atIndex(a.choice(), i)
			}), key)
		case "usage":
			u, err := readUsage(r)
			if u != nil {
				a.usage = u // cumulative where a server repeats it: the last wins
				a.shape.spoil()
			}
			return atKey(err, key)
		case "error":
			if r.ReadNull() {
				return nil
			}
			a.shape.spoil()
			e, err := readAPIError(r)
			apiErr = e
			return atKey(err, key)
		}
		return a.skip(r, 0)
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	if err != nil {
		return err
	}
	if apiErr != nil {
		return apiErr
	}
	return nil
}

func (a *chatAcc) choice() error {
	r := &a.rd
	index := int64(0)
	// The delta may come before the index: read it into a scratch state
	// and fold it in once the index is known.
	var start, end int
	var finish []byte
	var logprobs []byte
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "index":
			n, err := r.ReadInt()
			if n != 0 {
				a.shape.spoil()
			}
			index = n
			return atKey(err, key)
		case "delta":
			r.Peek()
			start = r.Offset()
			err := r.Skip()
			end = r.Offset()
			return atKey(err, key)
		case "finish_reason", "logprobs":
			if r.ReadNull() {
				return nil
			}
			a.shape.spoil()
			raw, err := r.ReadRaw()
			if string(key) == "finish_reason" {
				finish = raw
			} else {
				logprobs = raw
			}
			return atKey(err, key)
		}
		return a.skip(r, 0)
	})
	if err != nil {
		return err
	}
	if index != 0 {
		a.warnOnce("choices", "choices", "choices other than index 0 left out: a message holds one reply (AccumulatedReplies returns them all)")
	} else {
		a.sawChoice = true
	}
	c := a.choiceAt(index)
	// What another choice's delta changes is no piece of the reply's
	// parts: AddPiece must not see it.
	grown, from, call, changed := a.grown, a.grownFrom, a.grownCall, a.changed
	defer func() {
		if c != &a.first {
			a.grown, a.grownFrom, a.grownCall, a.changed = grown, from, call, changed
		}
	}()
	a.cur = c
	if end > start {
		sub := &a.sub
		sub.Reset(r.Bytes()[start:end], a.opts.DecodeLimits().MaxDepth)
		if err := atKey(a.delta(sub, start), []byte("delta")); err != nil {
			return err
		}
	}
	if len(finish) > 0 {
		c.finish = finish
	}
	if lp := logprobs; len(lp) > 0 && lp[0] == '{' {
		a.changed = true
		n := logprobsParts(lp)
		c.logContent = appendList(c.logContent, n.content)
		c.logRefusal = appendList(c.logRefusal, n.refusal)
	}
	return nil
}

// choiceAt returns the choice with the given index, made when it is new;
// the others stay in index order.
func (a *chatAcc) choiceAt(index int64) *choiceAcc {
	if index == 0 {
		return &a.first
	}
	i, found := slices.BinarySearchFunc(a.more, index, func(c *choiceAcc, k int64) int { return cmp.Compare(c.index, k) })
	if !found {
		a.more = slices.Insert(a.more, i, &choiceAcc{index: index})
	}
	return a.more[i]
}

// logParts are the elements of a logprobs object's two token lists,
// comma-separated.
type logParts struct{ content, refusal []byte }

func logprobsParts(raw []byte) logParts {
	var p logParts
	r := jsonx.NewReader(raw, 0)
	_ = r.ReadObject(func(key []byte) error {
		var dst *[]byte
		switch string(key) {
		case "content":
			dst = &p.content
		case "refusal":
			dst = &p.refusal
		default:
			return r.Skip()
		}
		if r.Peek() != jsonx.Array {
			return r.Skip()
		}
		return r.ReadArray(func(int) error {
			if len(*dst) > 0 {
				*dst = append(*dst, ',')
			}
			var err error
			*dst, err = r.AppendRaw(*dst)
			return err
		})
	})
	return p
}

// appendList appends comma-separated list elements to another such list.
func appendList(dst, elems []byte) []byte {
	if len(elems) == 0 {
		return dst
	}
	if len(dst) > 0 {
		dst = append(dst, ',')
	}
	return append(dst, elems...)
}

// delta folds a choice's delta, read by r at offset base of the chunk.
func (a *chatAcc) delta(r *jsonx.Reader, base int) error {
	return r.ReadObject(func(key []byte) error {
		var dst *textBuf
		switch string(key) {
		case "role":
			if r.ReadNull() {
				return nil
			}
			s, err := r.ReadStringBytes()
			if err == nil && a.cur.role == "" {
				a.cur.role = string(s)
			}
			return atKey(err, key)
		case "content":
			dst = &a.cur.content
		case "refusal":
			dst = &a.cur.refusal
		case "reasoning_content":
			dst = &a.cur.reasoning
		case "tool_calls":
			if r.ReadNull() {
				return nil
			}
			a.shape.spoil()
			return atKey(r.ReadArray(func(i int) error { return atIndex(a.toolCall(r), i) }), key)
		case "function_call":
			if r.ReadNull() {
				return nil
			}
			if a.cur.fn == nil {
				a.cur.fn = &callAcc{}
			}
			a.shape.spoil()
			a.changed = true
			return atKey(a.fnDelta(r, a.cur.fn, "arguments"), key)
		case "annotations":
			if r.ReadNull() {
				return nil
			}
			a.shape.spoil()
			a.changed = true
			return atKey(r.ReadArray(func(int) error {
				if len(a.cur.annotations) > 0 {
					a.cur.annotations = append(a.cur.annotations, ',')
				}
				var err error
				a.cur.annotations, err = r.AppendRaw(a.cur.annotations)
				return err
			}), key)
		case "audio":
			if r.ReadNull() {
				return nil
			}
			a.shape.spoil()
			a.changed = true
			return atKey(a.audioDelta(r), key)
		default:
			// Kept and merged, so a streamed reply holds what the same
			// reply read whole keeps in its native members.
			if r.ReadNull() {
				return nil
			}
			a.shape.spoil()
			a.changed = true
			v, err := r.ReadRaw()
			if err == nil {
				a.cur.extra = a.cur.extra.Set(string(key), mergeDelta(a.cur.extra.Value(string(key)), v))
			}
			return atKey(err, key)
		}
		return atKey(a.deltaText(r, dst, base), key)
	})
}

// deltaText appends a piece of text of the delta read by r (at offset base
// of the chunk) to dst, noting it as a hole of the chunk (chunkShape).
func (a *chatAcc) deltaText(r *jsonx.Reader, dst *textBuf, base int) error {
	if r.ReadNull() {
		return nil
	}
	start := r.Offset()
	s, err := r.ReadStringScratch()
	if err == nil {
		a.add(dst, s, -1)
		a.shape.hole(base+start, base+r.Offset(), dst)
	}
	return err
}

// add appends a piece of text to t, a text of the message or the
// arguments of the call at stream index call, and notes it for AddPiece.
func (a *chatAcc) add(t *textBuf, s []byte, call int64) {
	switch {
	case a.grown == nil:
		a.grown, a.grownFrom, a.grownCall = t, t.Len(), call
	case a.grown != t:
		a.changed = true
	}
	t.add(s)
}

func (a *chatAcc) toolCall(r *jsonx.Reader) error {
	var index int64
	var id, typ []byte
	var start, end int
	var inner string
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "index":
			n, err := r.ReadInt()
			index = n
			return atKey(err, key)
		case "id", "type":
			if r.ReadNull() {
				return nil
			}
			s, err := r.ReadStringBytes()
			if string(key) == "id" {
				id = s
			} else {
				typ = s
			}
			return atKey(err, key)
		case "function", "custom":
			if r.ReadNull() {
				return nil
			}
			inner = string(key)
			r.Peek()
			start = r.Offset()
			err := r.Skip()
			end = r.Offset()
			return atKey(err, key)
		}
		return r.Skip()
	})
	if err != nil {
		return err
	}
	if index < 0 {
		index = 0 // some compatible servers send -1 for a single call
	}
	n := len(a.cur.calls)
	c := a.call(index)
	if len(id) > 0 && c.id != string(id) {
		c.id, a.changed = string(id), true
	}
	if len(typ) > 0 && c.typ != string(typ) {
		c.typ, a.changed = string(typ), true
	}
	if len(a.cur.calls) != n {
		a.changed = true
	}
	if inner != "" {
		if c.typ == "" {
			c.typ, a.changed = inner, true
		}
		argsKey := "arguments"
		if inner == "custom" {
			argsKey = "input"
		}
		sub := &a.sub2
		sub.Reset(r.Bytes()[start:end], a.opts.DecodeLimits().MaxDepth)
		return atKey(a.fnDelta(sub, c, argsKey), []byte(inner))
	}
	return nil
}

// call returns the call at a stream index, adding it in arrival order.
func (a *chatAcc) call(index int64) *callAcc {
	for i := range a.cur.calls {
		if a.cur.calls[i].index == index {
			return &a.cur.calls[i]
		}
	}
	a.cur.calls = append(a.cur.calls, callAcc{index: index})
	return &a.cur.calls[len(a.cur.calls)-1]
}

// fnDelta folds a fragment of a function (or custom) object: name and
// arguments pieces are concatenated, as the SDK's accumulator does.
func (a *chatAcc) fnDelta(r *jsonx.Reader, c *callAcc, argsKey string) error {
	return r.ReadObject(func(key []byte) error {
		var dst *textBuf
		switch string(key) {
		case "name":
			dst = &c.name
		case argsKey:
			dst = &c.args
		default:
			return r.Skip()
		}
		if r.ReadNull() {
			return nil
		}
		s, err := r.ReadStringBytes()
		if err == nil && dst == &c.name {
			a.changed = true
			dst.add(s)
		} else if err == nil {
			a.add(dst, s, c.index)
		}
		return atKey(err, key)
	})
}

func (a *chatAcc) audioDelta(r *jsonx.Reader) error {
	a.cur.audio.set = true
	return r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "id", "expires_at":
			raw, err := r.ReadRaw()
			if string(raw) != "null" {
				if string(key) == "id" {
					a.cur.audio.id = raw
				} else {
					a.cur.audio.expires = raw
				}
			}
			return atKey(err, key)
		case "data", "transcript":
			if r.ReadNull() {
				return nil
			}
			s, err := r.ReadStringBytes()
			if err == nil {
				if string(key) == "data" {
					a.cur.audio.data.add(s)
				} else {
					a.cur.audio.transcript.add(s)
				}
			}
			return atKey(err, key)
		}
		return r.Skip()
	})
}

// body writes the chat.completion object the chunks so far add up to,
// with choice c as its only choice (index 0); the usage, which counts every
// choice, goes with the first. The texts in long are written as a stand-in
// (see standIns).
func (a *chatAcc) body(c *choiceAcc, long []*textBuf) []byte {
	n := 256 + len(c.annotations) + len(c.logContent)
	for _, t := range []*textBuf{&c.content, &c.refusal, &c.reasoning} {
		if !slices.Contains(long, t) {
			n += t.Len()
		}
	}
	b := make([]byte, 0, n)
	b = append(b, `{"id":`...)
	b = jsonx.AppendString(b, a.id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = jsonx.AppendInt(b, a.created)
	b = append(b, `,"model":`...)
	b = jsonx.AppendString(b, a.model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":`...)
	role := c.role
	if role == "" {
		role = "assistant"
	}
	b = jsonx.AppendString(b, role)
	b = append(b, `,"content":`...)
	b = appendOptText(b, &c.content, long)
	b = append(b, `,"refusal":`...)
	b = appendOptText(b, &c.refusal, long)
	if c.reasoning.set && c.reasoning.Len() > 0 {
		b = append(b, `,"reasoning_content":`...)
		b = appendOptText(b, &c.reasoning, long)
	}
	b = c.appendCalls(b)
	if c.fn != nil {
		b = append(b, `,"function_call":{"name":`...)
		b = c.fn.name.AppendJSON(b)
		b = append(b, `,"arguments":`...)
		b = c.fn.args.AppendJSON(b)
		b = append(b, '}')
	}
	if len(c.annotations) > 0 {
		b = append(b, `,"annotations":[`...)
		b = append(b, c.annotations...)
		b = append(b, ']')
	}
	b = c.appendAudio(b)
	for _, m := range c.extra {
		b = append(b, ',')
		b = jsonx.AppendString(b, m.Key)
		b = append(b, ':')
		b = append(b, m.Val...)
	}
	b = append(b, `},"finish_reason":`...)
	if c.finish != nil {
		b = append(b, c.finish...)
	} else {
		b = append(b, "null"...)
	}
	if lp := logprobsJSON(c.logContent, c.logRefusal); lp != nil {
		b = append(b, `,"logprobs":`...)
		b = append(b, lp...)
	}
	b = append(b, "}]"...)
	if a.usage != nil && c == &a.first {
		b = append(b, `,"usage":`...)
		b = appendUsageJSON(b, a.usage, true)
	}
	return append(b, '}')
}

// appendCalls writes the tool_calls member of the body, the calls in
// stream index order.
func (a *choiceAcc) appendCalls(b []byte) []byte {
	if len(a.calls) == 0 {
		return b
	}
	calls := append([]callAcc(nil), a.calls...)
	sort.SliceStable(calls, func(i, j int) bool { return calls[i].index < calls[j].index })
	b = append(b, `,"tool_calls":[`...)
	for i := range calls {
		c := &calls[i]
		if i > 0 {
			b = append(b, ',')
		}
		typ := c.typ
		if typ == "" {
			typ = "function"
		}
		b = append(b, `{"id":`...)
		b = jsonx.AppendString(b, c.id)
		b = append(b, `,"type":`...)
		b = jsonx.AppendString(b, typ)
		argsKey := "arguments"
		if typ == "custom" {
			argsKey = "input"
		} else {
			typ = "function"
		}
		b = append(b, ',')
		b = jsonx.AppendString(b, typ)
		b = append(b, `:{"name":`...)
		b = c.name.AppendJSON(b)
		b = append(b, ',')
		b = jsonx.AppendString(b, argsKey)
		b = append(b, ':')
		b = c.args.AppendJSON(b)
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

// appendAudio writes the audio member of the body.
func (a *choiceAcc) appendAudio(b []byte) []byte {
	if !a.audio.set {
		return b
	}
	b = append(b, `,"audio":{`...)
	if a.audio.id != nil {
		b = append(append(b, `"id":`...), a.audio.id...)
	}
	if a.audio.data.set {
		b = jsonx.AppendKey(b, "data")
		b = a.audio.data.AppendJSON(b)
	}
	if a.audio.expires != nil {
		b = jsonx.AppendKey(b, "expires_at")
		b = append(b, a.audio.expires...)
	}
	if a.audio.transcript.set {
		b = jsonx.AppendKey(b, "transcript")
		b = a.audio.transcript.AppendJSON(b)
	}
	return append(b, '}')
}

// appendOptText writes a gathered text as a JSON string, or null when no
// part of it arrived or it is empty (as a reply read whole has it).
func appendOptText(b []byte, t *textBuf, long []*textBuf) []byte {
	switch {
	case !t.set || t.Len() == 0:
		return append(b, "null"...)
	case slices.Contains(long, t):
		return append(b, `"`+textStandIn+`"`...)
	}
	return t.AppendJSON(b)
}

// textStandIn is what body writes for a long text, which message puts in the
// decoded message's part itself (see standIns).
const textStandIn = "."

// longText is the length from which message does not write a text into
// the body it decodes.
const longText = 64 << 10

// standIns returns the long texts of choice c that the body it decodes
// can carry as a stand-in: the content, refusal and reasoning, each of
// which becomes one part of its own type and nothing else of the message
// depends on (annotations, which cite the content, leave it in the body).
// Written into the body and read back, each would be copied twice more: a
// 40 MB reply's text some 80 MB.
func (c *choiceAcc) standIns() (long []*textBuf) {
	for _, t := range []*textBuf{&c.content, &c.refusal, &c.reasoning} {
		if t.Len() >= longText && (t != &c.content || len(c.annotations) == 0) {
			long = append(long, t)
		}
	}
	return long
}

// fill puts the long texts body wrote as stand-ins into m's parts: the
// text, refusal and reasoning part each was decoded as. It reports false
// when a part is not where body put it.
func (c *choiceAcc) fill(m *convo.Message, long []*textBuf) bool {
	for _, t := range long {
		typ := convo.TypeText
		switch t {
		case &c.refusal:
			typ = convo.TypeRefusal
		case &c.reasoning:
			typ = convo.TypeReasoning
		}
		at := -1
		for i := range m.Parts {
			if m.Parts[i].Type == typ {
				if at >= 0 || m.Parts[i].Text != textStandIn {
					return false
				}
				at = i
			}
		}
		if at < 0 {
			return false
		}
		m.Parts[at].Text = t.String()
	}
	return true
}

// Snapshot returns the message gathered so far (for showing partial text).
func (a *chatAcc) Snapshot() convo.Message { return a.SnapshotCandidate(0) }

// Candidates returns how many choices came so far
// (provider.CandidatesAccumulator).
func (a *chatAcc) Candidates() int { return 1 + len(a.more) }

// SnapshotCandidate returns the i-th choice in index order as gathered so
// far (provider.CandidatesAccumulator).
func (a *chatAcc) SnapshotCandidate(i int) convo.Message {
	c := &a.first
	if i > 0 {
		c = a.more[i-1]
	}
	m, _, _ := decodeChatReply(a.body(c, nil), a.bodyOpts())
	return m
}

// bodyOpts are the options body is decoded with: it is as large as the
// stream, which was already held to the limit.
func (a *chatAcc) bodyOpts() provider.Options {
	return provider.Options{Limits: convo.Limits{MaxBytes: 1 << 62, MaxDepth: a.opts.DecodeLimits().MaxDepth}}
}

// Message returns the final message. A stream that reported an error, or
// ended before the choice's finish reason, gives the partial message and an
// error.
func (a *chatAcc) Message() (convo.Message, []provider.Warning, error) {
	m, warns, err := a.message(&a.first, a.warns)
	if err != nil {
		return m, warns, err
	}
	return m, warns, a.opts.Check(warns)
}

// message returns choice c's final message, with warns and what decoding
// it adds.
func (a *chatAcc) message(c *choiceAcc, warns []provider.Warning) (convo.Message, []provider.Warning, error) {
	long := c.standIns()
	m, w, err := decodeChatReply(a.body(c, long), a.bodyOpts())
	if len(long) > 0 && !c.fill(&m, long) {
		m, w, err = decodeChatReply(a.body(c, nil), a.bodyOpts())
	}
	warns = append(warns, w...)
	switch {
	case a.err != nil:
		return m, warns, a.err
	case err != nil:
		return m, warns, err
	case a.chunks == 0:
		return m, warns, fmt.Errorf("openai: the stream held no chunk: %w", provider.ErrIncomplete)
	case c.finish == nil:
		return m, warns, fmt.Errorf("openai: the stream was cut off after %d chunks, before the finish reason: %w", a.chunks, provider.ErrIncomplete)
	}
	return m, warns, nil
}

// Messages returns every choice's final message, in index order
// (provider.CandidatesAccumulator); the first is Message's, without the
// warning that the others were left out.
func (a *chatAcc) Messages() ([]convo.Message, []provider.Warning, error) {
	return wire.CandidateMessages(append([]*choiceAcc{&a.first}, a.more...), a.warns, "choices", a.err, a.opts,
		a.message, func(c *choiceAcc) string { return fmt.Sprintf("choice %d", c.index) })
}
