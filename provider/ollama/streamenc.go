package ollama

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// NewStreamEncoder returns an encoder that writes an /api/chat NDJSON
// stream to w from the deltas of one reply: a line per content or thinking
// piece, tool calls whole once their arguments are complete, and a last
// line with done, done_reason and the token counts. Parts Ollama has no
// field for in a reply are left out.
//
// Calls and results of tools a provider ran itself (Part.IsServerTool)
// are left out: Ollama has no form for them, and written as function calls
// a client would run them.
func NewStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	return &streamEncoder{w: w, opts: opts, parts: map[int]*encPart{}}
}

type streamEncoder struct {
	w       io.Writer
	opts    provider.StreamOptions
	buf     []byte
	head    []byte // {"model":…,"created_at":…,
	parts   map[int]*encPart
	calls   int
	usage   *convo.Usage
	done    bool
	started bool
}

type encPart struct {
	typ  convo.PartType
	text bool
}

// line appends one line whose message has the given members (content,
// then the others).
func (e *streamEncoder) line(message string, tail string) {
	b := append(append([]byte(nil), e.head...), `"message":{"role":"assistant",`...)
	b = append(b, message...)
	b = append(b, '}')
	if tail == "" {
		b = append(b, `,"done":false`...)
	} else {
		b = append(b, tail...)
	}
	e.buf = append(append(e.buf, b...), "}\n"...)
}

func (e *streamEncoder) Write(d provider.Delta) error {
	if e.done || d.Candidate != 0 {
		return nil // one reply per response: candidates after the first are left out
	}
	e.buf = e.buf[:0]
	if !e.started {
		e.started = true
		model := e.opts.Model
		if model == "" && d.Origin != nil {
			model = d.Origin.Model
		}
		e.head = append(e.head, `{"model":`...)
		e.head = jsonx.AppendString(e.head, model)
		e.head = append(e.head, `,"created_at":`...)
		e.head = jsonx.AppendString(e.head, time.Now().UTC().Format(time.RFC3339Nano))
		e.head = append(e.head, ',')
	}
	switch d.Kind {
	case provider.DeltaPartStart:
		if d.Part.IsServerTool() {
			break // written as a function call, a client would run it
		}
		switch d.Part.Type {
		case convo.TypeText, convo.TypeRefusal, convo.TypeReasoning, convo.TypeToolCall:
			e.parts[d.Index] = &encPart{typ: d.Part.Type}
		}
	case provider.DeltaText:
		if p := e.parts[d.Index]; p != nil && d.Text != "" {
			p.text = true
			e.text(p.typ, d.Text)
		}
	case provider.DeltaPartEnd:
		p := e.parts[d.Index]
		if p == nil {
			break
		}
		delete(e.parts, d.Index)
		switch part := d.Part; {
		case part.Type == convo.TypeToolCall:
			e.line(string(e.appendCalls(append([]byte(nil), `"content":"","tool_calls":`...), []convo.Part{*part})), "")
		case !p.text && part.Type == convo.TypeReasoning && part.Text == "" && len(part.Summary) > 0:
			e.text(part.Type, strings.Join(part.Summary, "\n\n"))
		case !p.text && part.Text != "":
			e.text(part.Type, part.Text)
		}
	case provider.DeltaUsage:
		e.usage = d.Usage
	case provider.DeltaFinish:
		e.finishLine(`"content":""`, d.Finish)
	case provider.DeltaError:
		e.done = true
		msg := "the upstream stream failed"
		if d.Err != nil {
			msg = d.Err.Error()
		}
		e.buf = append(jsonx.AppendString(append(e.buf, `{"error":`...), msg), "}\n"...)
	}
	if len(e.buf) == 0 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	return err
}

func (e *streamEncoder) text(t convo.PartType, s string) {
	key := `"content":`
	if t == convo.TypeReasoning {
		key = `"content":"","thinking":`
	}
	e.line(string(jsonx.AppendString([]byte(key), s)), "")
}

// finishLine appends the last line: message members, done, done_reason and
// the token counts.
func (e *streamEncoder) finishLine(message string, f convo.Finish) {
	e.done = true
	reason := "stop"
	if f == convo.FinishLength {
		reason = "length"
	}
	tail := append([]byte(nil), `,"done":true,"done_reason":`...)
	tail = jsonx.AppendString(tail, reason)
	if u := e.usage; u != nil {
		tail = append(tail, `,"prompt_eval_count":`...)
		tail = strconv.AppendInt(tail, u.Input, 10)
		tail = append(tail, `,"eval_count":`...)
		tail = strconv.AppendInt(tail, u.Output, 10)
	}
	e.line(message, string(tail))
}

// appendCalls appends a tool_calls array; function indexes count on from
// the calls already sent.
func (e *streamEncoder) appendCalls(b []byte, calls []convo.Part) []byte {
	b = append(b, '[')
	for i := range calls {
		p := &calls[i]
		if i > 0 {
			b = append(b, ',')
		}
		args := p.Args
		if args == nil {
			args = []byte("{}")
		}
		b = append(b, '{')
		if p.ID != "" {
			b = jsonx.AppendString(append(b, `"id":`...), p.ID)
			b = append(b, ',')
		}
		b = append(b, `"function":{"index":`...)
		b = strconv.AppendInt(b, int64(e.calls), 10)
		e.calls++
		b = jsonx.AppendString(append(b, `,"name":`...), p.Name)
		b = append(append(b, `,"arguments":`...), args...)
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

// appendMessage appends the members of a whole reply's message.
func (e *streamEncoder) appendMessage(b []byte, content, thinking string, calls []convo.Part) []byte {
	b = jsonx.AppendString(append(b, `"content":`...), content)
	if thinking != "" {
		b = jsonx.AppendString(append(b, `,"thinking":`...), thinking)
	}
	if len(calls) > 0 {
		b = e.appendCalls(append(b, `,"tool_calls":`...), calls)
	}
	return b
}
