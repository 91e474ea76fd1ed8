package provider

import (
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// serverTool applies the rules for the call or result of a tool a
// provider ran itself: kept for the provider that ran it when the target
// carries such parts, else sent as text or dropped (Options.ServerTools).
func (p *preparer) serverTool(path loc, part convo.Part) (convo.Part, bool, error) {
	if p.t.ServerTools && part.Provider != "" && part.Provider == p.t.Provider {
		return part, true, nil
	}
	from := part.Provider
	if from == "" {
		from = "an unnamed provider"
	}
	what := "call"
	if part.Type == convo.TypeToolResult {
		what = "result"
	}
	if p.opts.ServerTools == ServerToolsText {
		p.warnc(CodeServerToolAsText, path, "%s %s run by %s sent as text", part.Server, what, from)
		return convo.Text(ServerToolText(part)), true, nil
	}
	p.warnc(CodeServerToolDropped, path, "%s %s run by %s dropped: only %s can replay it", part.Server, what, from, from)
	return part, false, nil
}

// ServerToolText renders the call or result of a provider-run tool as the
// text Options.ServerTools ServerToolsText sends in its place:
//
//	[web_search call srvtoolu_1: {"query":"Go release notes"}]
//	[web_search result srvtoolu_1:
//	title: Go 1.26 Release Notes
//	url: https://go.dev/doc/go1.26]
//
// A result lists its text parts as they are, the values of its json parts
// one a line as "key: value" (leaving out type and id members, encrypted
// payloads and long opaque strings), and media as a placeholder.
func ServerToolText(p convo.Part) string {
	var b strings.Builder
	b.WriteString("[" + p.Server)
	if p.Type == convo.TypeToolCall {
		b.WriteString(" call")
	} else {
		b.WriteString(" result")
	}
	if p.ID != "" {
		b.WriteString(" " + p.ID)
	}
	if p.Type == convo.TypeToolResult && p.Error {
		b.WriteString(" (error)")
	}
	b.WriteString(":")
	if p.Type == convo.TypeToolCall {
		args := p.ArgsRaw
		if p.Args != nil {
			if c, err := jsonx.Compact(p.Args, 0); err == nil {
				args = string(c)
			}
		}
		b.WriteString(" " + args + "]")
		return b.String()
	}
	for _, q := range p.Parts {
		switch {
		case q.Type == convo.TypeText:
			b.WriteString("\n" + q.Text)
		case q.Type == convo.TypeJSON:
			writeValues(&b, q.Value)
		case q.Type.IsMedia():
			b.WriteString("\n(" + string(q.Type))
			if q.MediaType != "" {
				b.WriteString(" " + q.MediaType)
			}
			b.WriteString(")")
		}
	}
	b.WriteString("]")
	return b.String()
}

// writeValues writes the scalar members of a JSON value, one a line as
// "key: value", depth first.
func writeValues(b *strings.Builder, v []byte) {
	r := jsonx.NewReader(v, convo.DefaultLimits.MaxDepth)
	// A value that does not read is written as far as it reads: it is
	// rendered for a model to read, not replayed.
	_ = walkValue(b, r, "")
}

func walkValue(b *strings.Builder, r *jsonx.Reader, key string) error {
	switch r.Peek() {
	case jsonx.Object:
		return r.ReadObject(func(k []byte) error { return walkValue(b, r, string(k)) })
	case jsonx.Array:
		return r.ReadArray(func(int) error { return walkValue(b, r, key) })
	case jsonx.String:
		s, err := r.ReadString()
		if err != nil || s == "" || skipKey(key) || opaque(s) {
			return err
		}
		writeLine(b, key, s)
		return nil
	}
	raw, err := r.ReadRaw()
	if err != nil || skipKey(key) || string(raw) == "null" {
		return err
	}
	writeLine(b, key, string(raw))
	return nil
}

func writeLine(b *strings.Builder, key, val string) {
	b.WriteString("\n")
	if key != "" {
		b.WriteString(key + ": ")
	}
	b.WriteString(val)
}

// skipKey reports whether a member says nothing to a model reading the
// result: its kind, ids, encrypted payloads.
func skipKey(key string) bool {
	switch key {
	case "type", "id", "tool_use_id", "file_id", "signature":
		return true
	}
	return strings.HasPrefix(key, "encrypted")
}

// opaque reports whether s looks like an opaque payload (base64, a token):
// long and without a space.
func opaque(s string) bool {
	return len(s) > 200 && !strings.ContainsAny(s, " \n")
}

// onlyAside reports whether ps hold only parts that are sent to a few
// targets and left out elsewhere (approvals, provider-run tools): an
// assistant message of them alone (one that only asked for approval, a
// reply paused mid-search) is left out whole for another target, not sent
// empty.
func onlyAside(ps []convo.Part) bool {
	for _, q := range ps {
		if q.Raw != nil || !(q.IsServerTool() || q.Type == convo.TypeApprovalRequest || q.Type == convo.TypeApproval) {
			return false
		}
	}
	return len(ps) > 0
}
