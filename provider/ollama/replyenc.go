package ollama

import (
	"bytes"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// EncodeReply returns an /api/chat response body ("stream": false) for an
// assistant message: the last line of NewStreamEncoder's stream with the
// whole content, thinking and tool calls.
//
// Calls and results of tools a provider ran itself (Part.IsServerTool)
// are left out: Ollama has no form for them, and written as function calls
// a client would run them.
func EncodeReply(m convo.Message, opts provider.StreamOptions) []byte {
	var text, thinking strings.Builder
	var calls []convo.Part
	for _, p := range m.Parts {
		switch p.Type {
		case convo.TypeText, convo.TypeRefusal:
			text.WriteString(p.Text)
		case convo.TypeReasoning:
			if p.Text != "" {
				thinking.WriteString(p.Text)
			} else {
				thinking.WriteString(strings.Join(p.Summary, "\n\n"))
			}
		case convo.TypeToolCall:
			if !p.IsServerTool() { // written as a function call, a client would run it
				calls = append(calls, p)
			}
		}
	}
	var buf bytes.Buffer
	e := NewStreamEncoder(&buf, opts).(*streamEncoder)
	_ = e.Write(provider.Delta{Kind: provider.DeltaStart, Origin: m.Origin})
	e.buf = e.buf[:0]
	msg := string(e.appendMessage(nil, text.String(), thinking.String(), calls))
	e.usage = m.Usage
	e.finishLine(msg, m.Finish)
	return bytes.TrimSuffix(e.buf, []byte("\n"))
}
