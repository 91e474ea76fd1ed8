package gemini

import (
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// EncodeReply returns a generateContent response body for an assistant
// message: the non-streamed counterpart of NewStreamEncoder, with the same
// parts in one candidate.
func EncodeReply(m convo.Message, opts provider.StreamOptions) []byte {
	e := &streamEncoder{opts: opts, model: opts.Model, id: wire.NewID(""), usage: m.Usage}
	if m.Origin != nil {
		if e.model == "" {
			e.model = m.Origin.Model
		}
		if m.Origin.Provider == ProviderID && m.Origin.ResponseID != "" {
			e.id = m.Origin.ResponseID
		}
	}
	var parts []byte
	add := func(b []byte) {
		if len(parts) > 0 {
			parts = append(parts, ',')
		}
		parts = append(parts, b...)
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case convo.TypeText, convo.TypeRefusal:
			add(append(jsonx.AppendString([]byte(`{"text":`), p.Text), '}'))
		case convo.TypeReasoning:
			text := p.Text
			if text == "" {
				text = strings.Join(p.Summary, "\n\n")
			}
			b := append(jsonx.AppendString([]byte(`{"text":`), text), `,"thought":true`...)
			if p.Provider == ProviderID && p.Signature != "" {
				b = jsonx.AppendString(append(b, `,"thoughtSignature":`...), p.Signature)
			}
			if text != "" || len(b) > len(`{"text":"","thought":true`) {
				add(append(b, '}'))
			}
		case convo.TypeToolCall:
			add(functionCall(p))
		}
	}
	e.chunk(parts, finishReason(m.Finish))
	// chunk wrote one SSE event: the body is its data.
	out := e.buf[len("data: ") : len(e.buf)-2]
	return out
}

// functionCall is a functionCall part with the call's id.
func functionCall(p *convo.Part) []byte {
	args := p.Args
	if args == nil {
		args = []byte("{}")
	}
	b := append([]byte(nil), `{"functionCall":{"id":`...)
	b = jsonx.AppendString(b, p.ID)
	b = append(b, `,"name":`...)
	b = jsonx.AppendString(b, p.Name)
	b = append(b, `,"args":`...)
	b = append(b, args...)
	return append(b, "}}"...)
}
