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
// are left out. The deltas of several candidates (Delta.Candidate) go to
// the candidate with that index, each ending with a chunk of its own
// finishReason; the usage comes with the first one's, last.
//
// Gemini's own code execution parts are written as they came; calls and
// results of tools another provider ran (Part.IsServerTool) are left out:
// written as function calls, a client would run them.
func NewStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	return &streamEncoder{w: w, opts: opts, parts: map[partKey]*encPart{}}
}

type streamEncoder struct {
	w       io.Writer
	opts    provider.StreamOptions
	buf     []byte
	model   string
	id      string
	parts   map[partKey]*encPart
	cands   map[int]*candEnc
	usage   *convo.Usage
	done    bool
	started bool
}

// partKey names a part being streamed: its candidate and index.
type partKey struct{ cand, index int }

type encPart struct {
	typ  convo.PartType
	text bool
	// Where the part's text lands in the reply a client accumulates (set
	// by its first chunk): its text part, bytes of it before this part's,
	// bytes of every text part before it.
	index, offset, textAt int
}

// candEnc is what a candidate's stream wrote so far, as a client
// accumulating it (joining plain text chunks into the text part before)
// sees it: where a citation's segment points.
type candEnc struct {
	run      byte // the kind of the open run of plain chunks: 't' text, 'r' thought, 0 none
	texts    int  // text parts so far
	runBytes int  // bytes of the open run
	textAt   int  // bytes of all text so far
	cited    []citedPart
}

func (e *streamEncoder) cand(k int) *candEnc {
	if e.cands == nil {
		e.cands = map[int]*candEnc{}
	}
	c := e.cands[k]
	if c == nil {
		c = &candEnc{}
		e.cands[k] = c
	}
	return c
}

// chunk appends one chunk of candidate cand with the given parts (a JSON
// array's members) and finish reason; last adds the usage.
func (e *streamEncoder) chunk(cand int, parts []byte, finish string, last bool) {
	b := append([]byte(nil), `{"candidates":[`...)
	var meta []byte
	if c := e.cands[cand]; finish != "" && c != nil {
		meta = appendCiteMeta(nil, nil, c.cited)
	}
	b = appendCandidate(b, cand, parts, finish, meta)
	e.buf = wire.AppendSSE(e.buf, "", e.tail(b, last))
}

// appendCandidate appends a Candidate object with the given parts and
// members meta (each with its comma).
func appendCandidate(b []byte, cand int, parts []byte, finish string, meta []byte) []byte {
	b = append(b, `{"content":{"role":"model","parts":[`...)
	b = append(b, parts...)
	b = append(b, `]}`...)
	if finish != "" {
		b = append(b, `,"finishReason":`...)
		b = jsonx.AppendString(b, finish)
	}
	b = append(b, meta...)
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(cand), 10)
	return append(b, '}')
}

// tail closes the candidates array and the response: the usage when last,
// the model and the response id.
func (e *streamEncoder) tail(b []byte, last bool) []byte {
	b = append(b, ']')
	if last && e.usage != nil {
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
	return append(b, '}')
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
	key := partKey{d.Candidate, d.Index}
	switch d.Kind {
	case provider.DeltaPartStart:
		if d.Part.IsServerTool() && serverKind(d.Part) == "" {
			break // another provider's tool run: a client would run it
		}
		switch d.Part.Type {
		case convo.TypeText, convo.TypeRefusal, convo.TypeReasoning, convo.TypeToolCall:
			e.parts[key] = &encPart{typ: d.Part.Type}
		case convo.TypeToolResult:
			if serverKind(d.Part) != "" {
				e.parts[key] = &encPart{typ: d.Part.Type}
			}
		}
	case provider.DeltaText:
		if p := e.parts[key]; p != nil && d.Text != "" {
			e.text(d.Candidate, p, d.Text, "")
		}
	case provider.DeltaPartEnd:
		if p := e.parts[key]; p != nil {
			delete(e.parts, key)
			e.partEnd(d.Candidate, p, d.Part)
		}
	case provider.DeltaUsage:
		e.usage = d.Usage
	case provider.DeltaFinish:
		e.done = d.Candidate == 0
		e.chunk(d.Candidate, nil, finishReason(d.Finish), e.done)
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

// partEnd writes what is left of a part at its end: a function call
// whole, a thought's signature, text that came in no piece.
func (e *streamEncoder) partEnd(cand int, p *encPart, part *convo.Part) {
	switch part.Type {
	case convo.TypeToolCall, convo.TypeToolResult:
		e.cand(cand).run = 0
		if kind := serverKind(part); kind != "" {
			var r jsonx.Reader
			if b, err := appendServerPart(nil, part, kind, &r); err == nil {
				e.chunk(cand, b, "", false)
			}
		} else if part.Type == convo.TypeToolCall {
			e.chunk(cand, functionCall(part), "", false)
		}
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
			e.text(cand, p, text, sig)
		}
	default:
		if !p.text && part.Text != "" {
			e.text(cand, p, part.Text, "")
		}
		if p.text && part.Type == convo.TypeText && len(part.Citations) > 0 {
			c := e.cand(cand)
			c.cited = append(c.cited, citedPart{index: p.index, offset: p.offset, textAt: p.textAt, text: part.Text, cites: part.Citations})
		}
	}
}

// text appends a chunk with one text or thought part of p.
func (e *streamEncoder) text(cand int, p *encPart, s, sig string) {
	e.place(e.cand(cand), p, s, sig == "")
	t := p.typ
	b := append([]byte(nil), `{"text":`...)
	b = jsonx.AppendString(b, s)
	if t == convo.TypeReasoning {
		b = append(b, `,"thought":true`...)
	}
	if sig != "" {
		b = append(b, `,"thoughtSignature":`...)
		b = jsonx.AppendString(b, sig)
	}
	e.chunk(cand, append(b, '}'), "", false)
}

// place notes where a chunk of p's text s lands in the reply a client
// accumulates: a plain chunk joins the open run of its kind, anything else
// (a signed thought) is a part of its own.
func (e *streamEncoder) place(c *candEnc, p *encPart, s string, plain bool) {
	kind := byte('t')
	if p.typ == convo.TypeReasoning {
		kind = 'r'
	}
	first := !p.text
	p.text = true
	if !plain || c.run != kind {
		if kind == 't' {
			c.texts++
		}
		c.run, c.runBytes = 0, 0
		if plain {
			c.run = kind
		}
	}
	if first && kind == 't' {
		p.index, p.offset, p.textAt = c.texts-1, c.runBytes, c.textAt
	}
	if plain {
		c.runBytes += len(s)
	}
	if kind == 't' {
		c.textAt += len(s)
	}
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
