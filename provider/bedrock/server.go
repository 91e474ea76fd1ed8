package bedrock

import (
	"slices"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Tools Bedrock runs itself (the system tools of toolConfig, such as Amazon
// Nova's nova_grounding and nova_code_interpreter) come back in the
// assistant message as a toolUse block with "type":"server_tool_use" and a
// toolResult block (its "type" the tool's name and "_result") answering
// it. They are read as tool_call and tool_result parts with Server and
// Provider "bedrock":
//
//   - a call maps toolUseId, name and input to ID, Name and Args;
//   - a result maps toolUseId to ID, its content blocks to Parts as a tool
//     result's are mapped (text, json, media; searchResult and unknown
//     blocks kept whole), "status":"error" to Error.
//
// Its type, an explicit "status":"success" and every other member stay in
// Native "bedrock". Written back, a block has its members in the order
// Bedrock's responses give them (by name: input, name, toolUseId, type;
// content, status, toolUseId, type), so a reply's block goes back byte for
// byte. A result is mapped only when a server call of its id comes before
// it in its message, and a server call only in an assistant message;
// elsewhere the block stays an opaque part, as before.

// serverKind returns the kind of a tool Bedrock ran, by its name: Nova's
// grounding is a web search, its code interpreter a code execution; any
// other tool is its own kind.
func serverKind(name string) string {
	switch name {
	case "nova_grounding":
		return convo.ServerWebSearch
	case "nova_code_interpreter":
		return convo.ServerCodeExecution
	}
	return name
}

// serverResult marks p, a toolResult block read in an assistant message,
// as the result of the server call of its id among before, and reports
// whether there is one. Its kind comes from its type ("<tool>_result"), or
// else from the call.
func serverResult(p *convo.Part, before []convo.Part) bool {
	i := slices.IndexFunc(before, func(q convo.Part) bool {
		return q.Type == convo.TypeToolCall && q.Server != "" && q.ID == p.ID
	})
	if i < 0 {
		return false
	}
	p.Server = before[i].Server
	if t, ok := strings.CutSuffix(nativeString(p.Native, "type"), "_result"); ok && t != "" {
		p.Server = serverKind(t)
	}
	p.Provider = ProviderID
	return true
}

// serverUse writes the toolUse block of a call Bedrock ran itself.
func (e *encoder) serverUse(p *convo.Part) error {
	args := p.Args
	if args == nil {
		args = []byte("{}")
	}
	in, err := wire.AppendValue(&e.raw, nil, args)
	if err != nil {
		return err
	}
	name, ok := jsonx.AppendStringChecked(nil, p.Name)
	id, ok2 := jsonx.AppendStringChecked(nil, p.ID)
	if !ok || !ok2 {
		return errUTF8
	}
	ms := wire.Members{{Key: "input", Val: in}, {Key: "name", Val: name}, {Key: "toolUseId", Val: id}}
	return e.sortedBlock("toolUse", ms, p.Native)
}

// serverResult writes the toolResult block of a result of a tool Bedrock
// ran itself.
func (e *encoder) serverResult(p *convo.Part) error {
	start := len(e.buf)
	if err := e.resultContent(p); err != nil {
		return err
	}
	content := slices.Clone(e.buf[start:])
	e.buf = e.buf[:start]
	id, ok := jsonx.AppendStringChecked(nil, p.ID)
	if !ok {
		return errUTF8
	}
	ms := wire.Members{{Key: "content", Val: content}, {Key: "toolUseId", Val: id}}
	if s := resultStatus(p); s != "" {
		ms = append(ms, wire.Member{Key: "status", Val: jsonx.AppendString(nil, s)})
	}
	return e.sortedBlock("toolResult", ms, p.Native)
}

// resultStatus is the status a tool result is sent with: "error" for an
// error, else the one it was read with, if any.
func resultStatus(p *convo.Part) string {
	if p.Error {
		return "error"
	}
	if s := nativeString(p.Native, "status"); s != "error" {
		return s
	}
	return ""
}

// sortedBlock writes {"<key>":{…}} with the members ms and those of the
// Bedrock native object n that ms does not have, ordered by name.
func (e *encoder) sortedBlock(key string, ms wire.Members, n convo.Native) error {
	kept, err := wire.ReadNative(n, ProviderID, &e.raw)
	if err != nil {
		kept = nil // a damaged native object is left out, as appendNative does
	}
	for _, m := range kept {
		if _, dup := ms.Get(m.Key); !dup {
			ms = append(ms, m)
		}
	}
	slices.SortStableFunc(ms, func(a, b wire.Member) int { return strings.Compare(a.Key, b.Key) })
	e.buf = append(jsonx.AppendString(append(e.buf, '{'), key), ':')
	e.buf = append(append(e.buf, ms.Object()...), '}')
	return nil
}
