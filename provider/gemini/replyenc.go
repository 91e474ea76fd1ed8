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
//
// Gemini's own code execution parts are written as they came; calls and
// results of tools another provider ran (Part.IsServerTool) are left out:
// written as function calls, a client would run them.
func EncodeReply(m convo.Message, opts provider.StreamOptions) []byte {
	return EncodeReplies([]convo.Message{m}, opts)
}

// EncodeReplies returns a generateContent response body with one candidate
// per message, message k as the candidate with index k (the reply to a
// request with candidateCount > 1, as DecodeReplies reads it). The first
// message gives the response's usage, model and id.
func EncodeReplies(ms []convo.Message, opts provider.StreamOptions) []byte {
	e := &streamEncoder{opts: opts, model: opts.Model, id: wire.NewID("")}
	if len(ms) > 0 {
		e.usage = ms[0].Usage
		if o := ms[0].Origin; o != nil {
			if e.model == "" {
				e.model = o.Model
			}
			if o.Provider == ProviderID && o.ResponseID != "" {
				e.id = o.ResponseID
			}
		}
	}
	b := []byte(`{"candidates":[`)
	for k := range ms {
		if k > 0 {
			b = append(b, ',')
		}
		parts, cited := replyParts(&ms[k])
		b = appendCandidate(b, k, parts, finishReason(ms[k].Finish), appendCiteMeta(nil, ms[k].Native, cited))
	}
	return e.tail(b, true)
}

// replyParts returns the parts of a reply's candidate (a JSON array's
// members), and its text parts with citations as its metadata points into
// them. Gemini's own code execution parts are written as they came.
func replyParts(m *convo.Message) ([]byte, []citedPart) {
	var parts []byte
	var cited []citedPart
	var r jsonx.Reader
	n, textAt := 0, 0
	add := func(b []byte) {
		if len(parts) > 0 {
			parts = append(parts, ',')
		}
		parts = append(parts, b...)
		n++
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case convo.TypeText, convo.TypeRefusal:
			if len(p.Citations) > 0 && p.Type == convo.TypeText {
				cited = append(cited, citedPart{index: n, textAt: textAt, text: p.Text, cites: p.Citations})
			}
			if p.Type == convo.TypeText {
				textAt += len(p.Text)
			}
			add(withSignature(jsonx.AppendString([]byte(`{"text":`), p.Text), p))
		case convo.TypeReasoning:
			if b := thoughtPart(p); b != nil {
				add(b)
			}
		case convo.TypeToolCall, convo.TypeToolResult:
			if kind := serverKind(p); kind != "" {
				if b, err := appendServerPart(nil, p, kind, &r); err == nil {
					add(b)
				}
			} else if p.Type == convo.TypeToolCall && !p.IsServerTool() {
				// Another provider's tool run, as a functionCall, a client
				// would run it: it is left out.
				add(functionCall(p))
			}
		}
	}
	return parts, cited
}

// thoughtPart is the wire part of a reasoning part, or nil when it has
// nothing to send.
func thoughtPart(p *convo.Part) []byte {
	text := p.Text
	if text == "" {
		text = strings.Join(p.Summary, "\n\n")
	}
	b := append(jsonx.AppendString([]byte(`{"text":`), text), `,"thought":true`...)
	if p.Provider == ProviderID && p.Signature != "" {
		b = jsonx.AppendString(append(b, `,"thoughtSignature":`...), p.Signature)
	}
	if text != "" || len(b) > len(`{"text":"","thought":true`) {
		return append(b, '}')
	}
	return nil
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
	return withSignature(append(b, '}'), p)
}

// withSignature closes a part object with the thoughtSignature the part
// kept from Gemini (Decode keeps it in Native on any part but a thought),
// so that it goes back on the part it came on: Gemini 3 wants the
// signatures of a turn's function calls returned with them.
func withSignature(b []byte, p *convo.Part) []byte {
	sig := nativeMember(p.Native, "thoughtSignature")
	if sig == nil {
		sig = nativeMember(p.Native, "thought_signature")
	}
	if len(sig) > 1 && sig[0] == '"' {
		b = append(append(b, `,"thoughtSignature":`...), sig...)
	}
	return append(b, '}')
}
