package anthropic

import (
	"errors"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Blocks of tools Anthropic runs itself (server_tool_use and its
// *_tool_result blocks, mcp_tool_use and mcp_tool_result) are read as
// tool_call and tool_result parts with Server set, and written back as the
// same bytes:
//
//   - a call maps id, name and input to ID, Name and Args;
//   - a result maps tool_use_id to ID and its content to Parts: an array
//     of text blocks (MCP) as text parts, any other content (search
//     results, code output, an error object) as one json part holding it
//     verbatim; is_error or an error object sets Error.
//
// The block's type and every other member stay in Native "anthropic", in
// order. Written back, a call is type, id, name, input, the rest; a result
// is type, tool_use_id, the rest, content: the order the API uses.

// serverKind returns the kind of a server tool by its name (for a call) or
// its result block's type without "_tool_result".
func serverKind(name string) string {
	switch name {
	case "web_search", "web_fetch", "code_execution":
		return name
	case "bash_code_execution", "text_editor_code_execution":
		return convo.ServerCodeExecution
	case "mcp":
		return convo.ServerMCP
	}
	if strings.HasPrefix(name, "tool_search") {
		return convo.ServerToolSearch
	}
	return name
}

// isServerBlock reports whether typ is a block of a server-run tool.
func isServerBlock(typ string) bool {
	return typ == "server_tool_use" || typ == "mcp_tool_use" ||
		(strings.HasSuffix(typ, "_tool_result") && typ != "tool_result")
}

// serverPart maps the compact block raw of type typ, when it is a server
// tool's, to a tool_call or tool_result part; ok is false for any other
// block, or one whose mapped members do not have the expected kinds (it
// stays opaque).
func serverPart(typ string, raw []byte) (p convo.Part, ok bool) {
	if !isServerBlock(typ) {
		return p, false
	}
	var r jsonx.Reader
	ms, err := wire.ReadMembers(raw, ProviderID, &r)
	if err != nil {
		return p, false
	}
	var rest wire.Members
	str := func(v []byte, dst *string) bool {
		r.Reset(v, 1)
		s, err := r.ReadString()
		*dst = s
		return err == nil
	}
	p.Provider = ProviderID
	if strings.HasSuffix(typ, "_tool_use") {
		p.Type = convo.TypeToolCall
	} else {
		p.Type = convo.TypeToolResult
		p.Server = serverKind(strings.TrimSuffix(typ, "_tool_result"))
	}
	for _, m := range ms {
		switch {
		case m.Key == "id" && p.Type == convo.TypeToolCall, m.Key == "tool_use_id" && p.Type == convo.TypeToolResult:
			ok = str(m.Val, &p.ID)
		case m.Key == "name" && p.Type == convo.TypeToolCall:
			ok = str(m.Val, &p.Name)
		case m.Key == "input" && p.Type == convo.TypeToolCall && len(m.Val) > 0 && m.Val[0] == '{':
			p.Args, ok = m.Val, true
		case m.Key == "content" && p.Type == convo.TypeToolResult:
			p.Parts, p.Error, ok = resultContent(m.Val)
		default:
			ok = true
			rest = append(rest, m)
			if m.Key == "is_error" && string(m.Val) == "true" {
				p.Error = true
			}
		}
		if !ok {
			return convo.Part{}, false
		}
	}
	if p.Type == convo.TypeToolCall {
		if p.ID == "" || p.Name == "" || p.Args == nil {
			return convo.Part{}, false
		}
		p.Server = serverKind(p.Name)
		if typ == "mcp_tool_use" {
			p.Server = convo.ServerMCP
		}
	} else if p.ID == "" || p.Parts == nil {
		return convo.Part{}, false
	}
	p.Native = rest.Native(ProviderID)
	return p, true
}

// resultContent maps a server tool result's content: MCP text blocks
// become text parts, anything else one json part.
func resultContent(v []byte) (parts []convo.Part, isErr, ok bool) {
	var r jsonx.Reader
	if texts, ok := textBlocks(v, &r); ok {
		return texts, false, true
	}
	r.Reset(v, 1)
	if r.Peek() == jsonx.Object {
		if ms, err := wire.ReadMembers(v, ProviderID, &r); err == nil {
			var typ string
			if t := ms.Value("type"); t != nil {
				r.Reset(t, 1)
				typ, _ = r.ReadString()
			}
			isErr = strings.HasSuffix(typ, "_error")
		}
	}
	return []convo.Part{convo.JSON(v)}, isErr, true
}

// textBlocks reads a non-empty array of {"type":"text","text":…} blocks,
// each exactly so, as text parts.
func textBlocks(v []byte, r *jsonx.Reader) ([]convo.Part, bool) {
	var out []convo.Part
	r.Reset(v, convo.DefaultLimits.MaxDepth)
	if r.Peek() != jsonx.Array {
		return nil, false
	}
	err := r.ReadArray(func(int) error {
		var text string
		n, isText := 0, false
		err := r.ReadObject(func(k []byte) error {
			n++
			var err error
			switch {
			case n == 1 && string(k) == "type":
				var t string
				t, err = r.ReadString()
				isText = t == "text"
			case n == 2 && string(k) == "text" && isText:
				text, err = r.ReadString()
			default:
				return errNotText
			}
			return err
		})
		if err == nil && n != 2 {
			err = errNotText
		}
		out = append(out, convo.Text(text))
		return err
	})
	if err != nil || len(out) == 0 {
		return nil, false
	}
	// Written back as the same bytes, or not mapped at all.
	if string(appendTextBlocks(nil, out)) != string(v) {
		return nil, false
	}
	return out, true
}

var errNotText = errors.New("not a text block")

func appendTextBlocks(b []byte, ps []convo.Part) []byte {
	b = append(b, '[')
	for i, q := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendString(append(b, `{"type":"text","text":`...), q.Text)
		b = append(b, '}')
	}
	return append(b, ']')
}

// serverBlock returns the block of a server tool part p that Anthropic ran,
// as it was read; ok is false for any other part.
func serverBlock(p *convo.Part) ([]byte, bool) {
	if !p.IsServerTool() || p.Provider != ProviderID {
		return nil, false
	}
	var r jsonx.Reader
	rest, err := wire.ReadNative(p.Native, ProviderID, &r)
	if err != nil {
		return nil, false
	}
	typ := rest.Value("type")
	if typ == nil {
		typ = jsonx.AppendString(nil, defaultBlockType(p))
	}
	b := append([]byte(`{"type":`), typ...)
	if p.Type == convo.TypeToolCall {
		b = jsonx.AppendString(append(b, `,"id":`...), p.ID)
		b = jsonx.AppendString(append(b, `,"name":`...), p.Name)
		args := p.Args
		if args == nil {
			args = []byte("{}")
		}
		b = append(append(b, `,"input":`...), args...)
		return append(appendRest(b, rest), '}'), true
	}
	b = jsonx.AppendString(append(b, `,"tool_use_id":`...), p.ID)
	b = appendRest(b, rest)
	b = append(b, `,"content":`...)
	if len(p.Parts) == 1 && p.Parts[0].Type == convo.TypeJSON {
		b = append(b, p.Parts[0].Value...)
	} else {
		b = appendTextBlocks(b, p.Parts)
	}
	return append(b, '}'), true
}

// defaultBlockType is the block type of a server tool part built without
// one recorded: the call or result block of its kind.
func defaultBlockType(p *convo.Part) string {
	switch {
	case p.Type == convo.TypeToolCall && p.Server == convo.ServerMCP:
		return "mcp_tool_use"
	case p.Type == convo.TypeToolCall:
		return "server_tool_use"
	}
	return p.Server + "_tool_result"
}

func appendRest(b []byte, rest wire.Members) []byte {
	for _, m := range rest {
		if m.Key == "type" {
			continue
		}
		b = append(jsonx.AppendString(append(b, ','), m.Key), ':')
		b = append(b, m.Val...)
	}
	return b
}

// blockOf returns the block of a part Anthropic gave convo to keep (an
// opaque block or a server tool's), written back as it came.
func blockOf(p *convo.Part) ([]byte, bool) {
	if raw, ok := provider.OpaqueBlock(ProviderID, *p); ok {
		return raw, true
	}
	return serverBlock(p)
}
