package anthropic

import (
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// EncodeReply returns a Messages response body for an assistant message:
// the non-streamed counterpart of NewStreamEncoder, with the same blocks.
// A text's web citations from another provider are written without the
// encrypted index only Anthropic's own carry: a reply needs none.
func EncodeReply(m convo.Message, opts provider.StreamOptions) []byte {
	id, model := wire.NewID("msg_"), opts.Model
	if m.Origin != nil {
		if m.Origin.Provider == ProviderID && m.Origin.ResponseID != "" {
			id = m.Origin.ResponseID
		}
		if model == "" {
			model = m.Origin.Model
		}
	}
	b := append([]byte(nil), `{"id":`...)
	b = jsonx.AppendString(b, id)
	b = append(b, `,"type":"message","role":"assistant","model":`...)
	b = jsonx.AppendString(b, model)
	b = append(b, `,"content":[`...)
	n := 0
	var r jsonx.Reader
	for i := range m.Parts {
		p := &m.Parts[i]
		start := len(b)
		if n > 0 {
			b = append(b, ',')
		}
		typ := p.Type
		if p.IsServerTool() {
			typ = "" // Anthropic's own goes back whole, another provider's not at all
		}
		switch typ {
		case convo.TypeText, convo.TypeRefusal:
			b = jsonx.AppendString(append(b, `{"type":"text","text":`...), p.Text)
			b = appendCites(b, &replyCites, p.Citations, &r, func(int, *convo.Citation) {})
		case convo.TypeReasoning:
			if p.Provider == ProviderID && p.Encrypted != "" && p.Text == "" {
				b = jsonx.AppendString(append(b, `{"type":"redacted_thinking","data":`...), p.Encrypted)
				break
			}
			text := p.Text
			if text == "" {
				text = strings.Join(p.Summary, "\n\n")
			}
			sig := ""
			if p.Provider == ProviderID {
				sig = p.Signature
			}
			b = jsonx.AppendString(append(b, `{"type":"thinking","thinking":`...), text)
			b = jsonx.AppendString(append(b, `,"signature":`...), sig)
		case convo.TypeToolCall:
			b = jsonx.AppendString(append(b, `{"type":"tool_use","id":`...), p.ID)
			b = jsonx.AppendString(append(b, `,"name":`...), p.Name)
			b = append(append(b, `,"input":`...), argsOf(p)...)
		default:
			raw, ok := blockOf(p) // a block Anthropic gave: server tool blocks go back as they came
			if !ok {
				b = b[:start]
				continue
			}
			b = append(b, raw[:len(raw)-1]...)
		}
		b = append(b, '}')
		n++
	}
	b = append(b, `],"stop_reason":`...)
	b = jsonx.AppendString(b, stopReason(m.Finish))
	b = append(b, `,"stop_sequence":null,"usage":`...)
	u := m.Usage
	if u == nil {
		u = &convo.Usage{}
	}
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, max(u.Input-u.CacheRead-u.CacheWrite, 0), 10)
	b = append(b, `,"cache_creation_input_tokens":`...)
	b = strconv.AppendInt(b, u.CacheWrite, 10)
	b = append(b, `,"cache_read_input_tokens":`...)
	b = strconv.AppendInt(b, u.CacheRead, 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, u.Output, 10)
	return append(b, "}}"...)
}
