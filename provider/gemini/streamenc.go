package gemini

import (
	"io"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// NewStreamEncoder returns an encoder that writes a streamGenerateContent
// SSE stream (alt=sse) to w from the deltas of one reply. Each chunk is a
// GenerateContentResponse whose candidate holds only the new parts, as
// Gemini streams them: text pieces, thought pieces (thought: true, the
// signature on a last empty thought part), function calls whole once their
// arguments are complete (with their id), and a last chunk with the
// finishReason and usageMetadata. Parts Gemini has no part for in a reply
// are left out.
func NewStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	return &streamEncoder{w: w, opts: opts, parts: map[int]*encPart{}}
}

type streamEncoder struct {
	w       io.Writer
	opts    provider.StreamOptions
	buf     []byte
	model   string
	id      string
	parts   map[int]*encPart
	usage   *convo.Usage
	calls   bool
	done    bool
	started bool
}

type encPart struct {
	typ  convo.PartType
	text bool
}

// chunk appends one chunk with the given parts (a JSON array's members),
// and, when last, the finish reason and usage.
func (e *streamEncoder) chunk(parts []byte, finish string) {
	b := append([]byte(nil), `{"candidates":[{"content":{"role":"model","parts":[`...)
	b = append(b, parts...)
	b = append(b, `]}`...)
	if finish != "" {
		b = append(b, `,"finishReason":`...)
		b = jsonx.AppendString(b, finish)
	}
	b = append(b, `,"index":0}]`...)
	if finish != "" && e.usage != nil {
		u := e.usage
		b = append(b, `,"usageMetadata":{"promptTokenCount":`...)
		b = strconv.AppendInt(b, u.Input, 10)
		if u.CacheRead != 0 {
			b = append(b, `,"cachedContentTokenCount":`...)
			b = strconv.AppendInt(b, u.CacheRead, 10)
		}
		// convo's output counts thoughts; Gemini's candidates do not.
		b = append(b, `,"candidatesTokenCount":`...)
		b = strconv.AppendInt(b, max(u.Output-u.Reasoning, 0), 10)
		if u.Reasoning != 0 {
			b = append(b, `,"thoughtsTokenCount":`...)
			b = strconv.AppendInt(b, u.Reasoning, 10)
		}
		total := u.Total
		if total == 0 {
			total = u.Input + u.Output
		}
		b = append(b, `,"totalTokenCount":`...)
		b = strconv.AppendInt(b, total, 10)
		b = append(b, '}')
	}
	if e.model != "" {
		b = append(b, `,"modelVersion":`...)
		b = jsonx.AppendString(b, e.model)
	}
	b = append(b, `,"responseId":`...)
	b = jsonx.AppendString(b, e.id)
	e.buf = wire.AppendSSE(e.buf, "", append(b, '}'))
}

func (e *streamEncoder) Write(d provider.Delta) error {
	if e.done {
		return nil
	}
	e.buf = e.buf[:0]
	if !e.started {
		e.started = true
		e.model, e.id = e.opts.Model, wire.NewID("")
		if d.Origin != nil {
			if e.model == "" {
				e.model = d.Origin.Model
			}
			if d.Origin.Provider == ProviderID && d.Origin.ResponseID != "" {
				e.id = d.Origin.ResponseID
			}
		}
	}
	switch d.Kind {
	case provider.DeltaPartStart:
		switch d.Part.Type {
		case convo.TypeText, convo.TypeRefusal, convo.TypeReasoning, convo.TypeToolCall:
			e.parts[d.Index] = &encPart{typ: d.Part.Type}
		}
	case provider.DeltaText:
		if p := e.parts[d.Index]; p != nil && d.Text != "" {
			p.text = true
			e.text(p.typ, d.Text, "")
		}
	case provider.DeltaPartEnd:
		p := e.parts[d.Index]
		if p == nil {
			break
		}
		delete(e.parts, d.Index)
		switch part := d.Part; part.Type {
		case convo.TypeToolCall:
			e.calls = true
			args := part.Args
			if args == nil {
				args = []byte("{}")
			}
			b := append([]byte(nil), `{"functionCall":{"id":`...)
			b = jsonx.AppendString(b, part.ID)
			b = append(b, `,"name":`...)
			b = jsonx.AppendString(b, part.Name)
			b = append(b, `,"args":`...)
			b = append(b, args...)
			e.chunk(append(b, "}}"...), "")
		case convo.TypeReasoning:
			text := ""
			if !p.text {
				text = part.Text
				if text == "" {
					text = strings.Join(part.Summary, "\n\n")
				}
			}
			sig := ""
			if part.Provider == ProviderID {
				sig = part.Signature
			}
			if text != "" || sig != "" {
				e.text(p.typ, text, sig)
			}
		default:
			if !p.text && part.Text != "" {
				e.text(p.typ, part.Text, "")
			}
		}
	case provider.DeltaUsage:
		e.usage = d.Usage
	case provider.DeltaFinish:
		e.done = true
		e.chunk(nil, finishReason(d.Finish))
	case provider.DeltaError:
		e.done = true
		b := append([]byte(nil), `{"error":{"code":500,"message":`...)
		b = jsonx.AppendString(b, errorText(d.Err))
		e.buf = wire.AppendSSE(e.buf, "", append(b, `,"status":"INTERNAL"}}`...))
	}
	if len(e.buf) == 0 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	return err
}

// text appends a chunk with one text or thought part.
func (e *streamEncoder) text(t convo.PartType, s, sig string) {
	b := append([]byte(nil), `{"text":`...)
	b = jsonx.AppendString(b, s)
	if t == convo.TypeReasoning {
		b = append(b, `,"thought":true`...)
	}
	if sig != "" {
		b = append(b, `,"thoughtSignature":`...)
		b = jsonx.AppendString(b, sig)
	}
	e.chunk(append(b, '}'), "")
}

// finishReason is Gemini's finishReason for a finish reason. Gemini has no
// tool-use reason: a reply that calls functions ends with STOP.
func finishReason(f convo.Finish) string {
	switch f {
	case convo.FinishLength:
		return "MAX_TOKENS"
	case convo.FinishContentFilter, convo.FinishRefusal:
		return "SAFETY"
	case convo.FinishOther:
		return "OTHER"
	}
	return "STOP"
}

func errorText(err error) string {
	if err == nil {
		return "the upstream stream failed"
	}
	return err.Error()
}
