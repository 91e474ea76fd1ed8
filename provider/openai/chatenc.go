package openai

import (
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// NewChatStreamEncoder returns an encoder that writes a Chat Completions
// chunk stream (SSE data lines ending with [DONE]) to w from the deltas of
// one reply: content, refusal and reasoning_content pieces, a text's
// citations as an annotations delta once it ends (see EncodeChatReply),
// tool_calls by index with their argument pieces, the finish_reason chunk, and a usage
// chunk (choices: []) unless opts.OmitUsage. Parts Chat has no delta for
// (media, other providers' items) are left out. Each Write writes whole
// chunks. The deltas of several candidates (Delta.Candidate) are written
// as the choices with those indexes, each beginning with its role chunk
// and ending with its finish_reason chunk; the usage chunk and [DONE]
// follow the first one's.
//
// Calls and results of tools a provider ran itself (Part.IsServerTool)
// are left out: Chat has no form for them, and written as function calls
// a client would run them.
func NewChatStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	e := &chatEncoder{w: w, opts: opts}
	// Candidate 0's state, its first parts, the chunks' head and the
	// buffer they are written in are in the encoder itself: one
	// allocation for what most streams need.
	e.cands = e.cand0[:]
	e.cands[0].parts = e.parts0[:0]
	e.head, e.buf = e.head0[:0], e.buf0[:0]
	return e
}

type chatEncoder struct {
	w    io.Writer
	opts provider.StreamOptions
	buf  []byte
	head []byte // {"id":…,"object":…,"created":…,"model":…,
	// cands are the candidates by index; most streams have one. Slices,
	// not maps: a stream is a few parts of one candidate, and a map (and a
	// part's state on the heap) cost allocations every stream.
	cands   []chatCand
	cand0   [1]chatCand
	parts0  [4]chatCall
	head0   [128]byte
	buf0    [512]byte
	usage   *convo.Usage
	done    bool
	started bool
}

// chatCand is what was written of one candidate.
type chatCand struct {
	begun  bool       // its role chunk is written
	ncalls int        // tool calls begun
	runes  int        // runes of content written: where a text's citations count from
	parts  []chatCall // in the order they started
}

// cand returns candidate k's state.
func (e *chatEncoder) cand(k int) *chatCand {
	if k >= len(e.cands) {
		e.cands = append(e.cands, make([]chatCand, k+1-len(e.cands))...)
	}
	return &e.cands[k]
}

// call returns the state of part i of candidate k, or nil before its
// DeltaPartStart. The parts are searched from the last to start, the one
// most deltas are for; a reply has a few.
func (e *chatEncoder) call(k, i int) *chatCall {
	if k >= len(e.cands) {
		return nil
	}
	parts := e.cands[k].parts
	for j := len(parts) - 1; j >= 0; j-- {
		if parts[j].part == i {
			return &parts[j]
		}
	}
	return nil
}

type chatCall struct {
	part  int // the part's index (Delta.Index)
	index int
	args  bool
	typ   convo.PartType
	text  bool
	at    int // a text's first rune in the content
}

func (e *chatEncoder) Write(d provider.Delta) error {
	if e.done || d.Candidate < 0 {
		return nil
	}
	e.buf = e.buf[:0]
	if !e.started && d.Kind != provider.DeltaError {
		e.start(d.Origin)
	}
	k := d.Candidate
	if d.Kind != provider.DeltaError {
		if c := e.cand(k); !c.begun {
			c.begun = true
			e.chunk(k, `{"role":"assistant","content":""}`, "")
		}
	}
	switch d.Kind {
	case provider.DeltaPartStart:
		e.partStart(k, d.Index, d.Part)
	case provider.DeltaText:
		if c := e.call(k, d.Index); c != nil && d.Text != "" {
			c.text = true
			e.text(k, c.typ, d.Text)
		}
	case provider.DeltaArgs:
		if c := e.call(k, d.Index); c != nil && c.typ == convo.TypeToolCall && d.Text != "" {
			c.args = true
			e.args(k, c, d.Text)
		}
	case provider.DeltaPartEnd:
		if c := e.call(k, d.Index); c != nil {
			e.partEnd(k, c, d.Part)
		}
	case provider.DeltaUsage:
		e.usage = d.Usage
	case provider.DeltaFinish:
		e.finish(k, d.Finish)
	case provider.DeltaError:
		e.done = true
		e.buf = append(e.buf, `data: {"error":{"message":`...)
		e.buf = jsonx.AppendString(e.buf, errText(d.Err))
		e.buf = append(e.buf, `,"type":"server_error","param":null,"code":null}}`+"\n\n"...)
	}
	if len(e.buf) == 0 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	return err
}

// start builds the head every chunk begins with (the upstream's chatcmpl
// id and model when it has them) and writes the first chunk, the role.
func (e *chatEncoder) start(o *convo.Origin) {
	e.started = true
	id, model := wire.NewID("chatcmpl-"), e.opts.Model
	if o != nil {
		if strings.HasPrefix(o.ResponseID, "chatcmpl") {
			id = o.ResponseID
		}
		if model == "" {
			model = o.Model
		}
	}
	e.head = append(e.head, `{"id":`...)
	e.head = jsonx.AppendString(e.head, id)
	e.head = append(e.head, `,"object":"chat.completion.chunk","created":`...)
	e.head = strconv.AppendInt(e.head, time.Now().Unix(), 10)
	e.head = append(e.head, `,"model":`...)
	e.head = jsonx.AppendString(e.head, model)
	e.head = append(e.head, ',')
	e.cand(0).begun = true
	e.chunk(0, `{"role":"assistant","content":""}`, "")
}

// partStart opens a part; a tool call gets the next tool_calls index of
// its candidate and a chunk with its id and name.
func (e *chatEncoder) partStart(k, i int, p *convo.Part) {
	typ := p.Type
	if p.IsServerTool() {
		typ = "" // written as a function call, a client would run it
	}
	cd := e.cand(k)
	c := e.call(k, i)
	if c == nil {
		cd.parts = append(cd.parts, chatCall{})
		c = &cd.parts[len(cd.parts)-1]
	}
	*c = chatCall{part: i, typ: typ, at: cd.runes}
	if typ != convo.TypeToolCall {
		return
	}
	c.index = cd.ncalls
	cd.ncalls++
	e.open(k)
	e.buf = append(e.buf, `{"tool_calls":[{"index":`...)
	e.buf = strconv.AppendInt(e.buf, int64(c.index), 10)
	e.buf = append(e.buf, `,"id":`...)
	e.buf = jsonx.AppendString(e.buf, p.ID)
	e.buf = append(e.buf, `,"type":"function","function":{"name":`...)
	e.buf = jsonx.AppendString(e.buf, p.Name)
	e.buf = append(e.buf, `,"arguments":""}}]}`...)
	e.close("")
}

// partEnd writes what a part that ends brought whole rather than in
// pieces: a call's arguments, a text, a reasoning summary, a text's
// citations as annotations.
func (e *chatEncoder) partEnd(k int, c *chatCall, p *convo.Part) {
	switch {
	case c.typ == convo.TypeToolCall && !c.args:
		args := string(p.Args)
		if p.Args == nil {
			args = p.ArgsRaw
		}
		if args != "" {
			e.args(k, c, args)
		}
	case !c.text && p.Type == convo.TypeReasoning && p.Text == "" && len(p.Summary) > 0:
		e.text(k, p.Type, strings.Join(p.Summary, "\n\n"))
	case !c.text && p.Text != "":
		e.text(k, p.Type, p.Text)
	}
	if p.Type == convo.TypeText && len(p.Citations) > 0 {
		// Chat streams annotations as a delta of their own, after the text.
		var r jsonx.Reader
		b, n := appendChatCites(append([]byte(nil), `{"annotations":[`...), p.Citations, p.Text, c.at, &r)
		if n > 0 {
			e.chunk(k, string(append(b, "]}"...)), "")
		}
	}
}

// finish writes candidate k's finish_reason chunk; the first one's is
// followed by the usage chunk and [DONE].
func (e *chatEncoder) finish(k int, f convo.Finish) {
	e.chunk(k, `{}`, chatFinishReason(f))
	if k != 0 {
		return
	}
	e.done = true
	if e.usage != nil && !e.opts.OmitUsage {
		e.buf = append(append(e.buf, "data: "...), e.head...)
		e.buf = append(e.buf, `"choices":[],"usage":`...)
		e.buf = appendUsageJSON(e.buf, e.usage, true)
		e.buf = append(e.buf, "}\n\n"...)
	}
	e.buf = append(e.buf, "data: [DONE]\n\n"...)
}

func (e *chatEncoder) text(k int, t convo.PartType, s string) {
	key := `{"content":`
	switch t {
	case convo.TypeRefusal:
		key = `{"refusal":`
	case convo.TypeReasoning:
		key = `{"reasoning_content":`
	case convo.TypeText:
		e.cand(k).runes += utf8.RuneCountInString(s)
	default:
		return
	}
	e.open(k)
	e.buf = append(e.buf, key...)
	e.buf = jsonx.AppendString(e.buf, s)
	e.buf = append(e.buf, '}')
	e.close("")
}

func (e *chatEncoder) args(k int, c *chatCall, s string) {
	e.open(k)
	e.buf = append(e.buf, `{"tool_calls":[{"index":`...)
	e.buf = strconv.AppendInt(e.buf, int64(c.index), 10)
	e.buf = append(e.buf, `,"function":{"arguments":`...)
	e.buf = jsonx.AppendString(e.buf, s)
	e.buf = append(e.buf, "}}]}"...)
	e.close("")
}

// chunk appends one chunk whose only choice, the one with index k, has
// delta and finish reason.
func (e *chatEncoder) chunk(k int, delta, finish string) {
	e.open(k)
	e.buf = append(e.buf, delta...)
	e.close(finish)
}

// open appends the start of an SSE event with a chunk whose only choice,
// the one with index k, has the delta the caller appends next and close
// ends. Chunks are written straight into the buffer the encoder keeps
// from event to event: their JSON has no line break (strings are
// escaped), so it is one data line as it stands.
func (e *chatEncoder) open(k int) {
	e.buf = append(append(e.buf, "data: "...), e.head...)
	e.buf = append(e.buf, `"choices":[{"index":`...)
	e.buf = strconv.AppendInt(e.buf, int64(k), 10)
	e.buf = append(e.buf, `,"delta":`...)
}

// close ends the chunk open began, with finish as its finish reason.
func (e *chatEncoder) close(finish string) {
	e.buf = append(e.buf, `,"finish_reason":`...)
	if finish == "" {
		e.buf = append(e.buf, "null"...)
	} else {
		e.buf = jsonx.AppendString(e.buf, finish)
	}
	e.buf = append(e.buf, "}]}\n\n"...)
}

// chatFinishReason is the Chat finish_reason for a finish reason.
func chatFinishReason(f convo.Finish) string {
	switch f {
	case convo.FinishLength:
		return "length"
	case convo.FinishToolUse:
		return "tool_calls"
	case convo.FinishContentFilter, convo.FinishRefusal:
		return "content_filter"
	}
	return "stop"
}

func errText(err error) string {
	if err == nil {
		return "the upstream stream failed"
	}
	return err.Error()
}
