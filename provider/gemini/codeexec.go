package gemini

import (
	"errors"
	"slices"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Gemini's code execution tool runs code at the provider, inside one
// reply: the model's executableCode part and the codeExecutionResult part
// that follows it are a provider-run call and its result (Part.Server
// "code_execution", Provider "gemini"):
//
//   - executableCode {language, code, id?} is a tool_call named
//     "code_execution" whose Args are the object without its id (so
//     {"language":"PYTHON","code":"…"}), and id its ID;
//   - codeExecutionResult {outcome, output, id?} is a tool_result whose
//     text part is the output, Error set when outcome is not OUTCOME_OK;
//     the outcome itself stays in Native["gemini"].outcome, and any other
//     member of the object in Native["gemini"].codeExecutionResult.
//
// Written back, the object is those members and then the id: the same
// JSON, which the API reads alike. Part members beside the data (a
// thoughtSignature) stay in the part's Native["gemini"], as on any part.

// CodeExecutionName is the Name of a code execution call read from
// Gemini, which names none.
const CodeExecutionName = "code_execution"

// Outcomes of a codeExecutionResult.
const (
	outcomeOK     = "OUTCOME_OK"
	outcomeFailed = "OUTCOME_FAILED"
)

// serverPart reads the executableCode or codeExecutionResult object raw
// (compact) into wp; ok is false when raw is not what the API writes (not
// an object, an id or outcome that is not a string), and the part is kept
// opaque instead.
func serverPart(r *jsonx.Reader, kind string, raw []byte, wp *wirePart) bool {
	if !wire.IsObject(raw) {
		return false
	}
	ms, err := wire.ReadMembers(raw, ProviderID, r)
	if err != nil {
		return false
	}
	var id, outcome string
	var rest, extra wire.Members
	var output []convo.Part
	for _, m := range ms {
		s, err := wire.Str(m.Val)
		switch {
		case m.Key == "id":
			if err != nil || s == "" || id != "" {
				return false
			}
			id = s
		case kind == "executableCode":
			rest = append(rest, m)
		case m.Key == "outcome":
			if err != nil || outcome != "" {
				return false
			}
			outcome = s
		case m.Key == "output" && err == nil && output == nil:
			output = []convo.Part{convo.Text(s)}
		default:
			extra = append(extra, m)
		}
	}
	if kind == "executableCode" {
		args := []byte(rest.Object())
		if args == nil {
			args = []byte("{}")
		}
		wp.part = convo.ServerToolCall(convo.ServerCodeExecution, ProviderID, id, CodeExecutionName, args)
		return true
	}
	wp.part = convo.ServerToolResult(convo.ServerCodeExecution, ProviderID, id, "", output...)
	wp.part.Error = outcome != "" && outcome != outcomeOK
	if outcome != "" {
		wp.extra = wp.extra.add("outcome", jsonx.AppendString(nil, outcome))
	}
	var nested members
	for _, m := range extra {
		nested = nested.add(m.Key, m.Val)
	}
	wp.nested(kind, nested)
	return true
}

// serverKind is the wire name of the data member of a provider-run part
// Gemini takes back: executableCode, codeExecutionResult, or "" for
// another provider's part or another kind of tool.
func serverKind(p *convo.Part) string {
	if p.Provider != ProviderID || p.Server != convo.ServerCodeExecution {
		return ""
	}
	if p.Type == convo.TypeToolCall {
		return "executableCode"
	}
	return "codeExecutionResult"
}

// appendServerData appends the data member of the provider-run part p,
// "executableCode":{…} or "codeExecutionResult":{…}; kind is serverKind(p).
func appendServerData(dst []byte, p *convo.Part, kind string, r *jsonx.Reader) ([]byte, error) {
	obj, err := serverObject(p, kind, r)
	if err != nil {
		return dst, err
	}
	dst = jsonx.AppendKey(dst, kind)
	o := wire.Obj{Buf: append(dst, '{')}
	for _, m := range obj {
		o.Raw(m.Key, m.Val)
	}
	if p.ID != "" {
		o.Str("id", p.ID)
	}
	return o.Close(), nil
}

// serverObject returns the members of the wire object for p without its
// id: a call's Args; a result's outcome (its native one, unless its Error
// says otherwise) and output (its text), then the members its native
// keeps — or, for a result holding one JSON object, that object's.
func serverObject(p *convo.Part, kind string, r *jsonx.Reader) (wire.Members, error) {
	if kind == "executableCode" {
		if !wire.IsObject(p.Args) {
			return nil, errors.New("code execution call: args must be a JSON object ({\"language\",\"code\"})")
		}
		ms, err := wire.ReadMembers(p.Args, ProviderID, r)
		return withoutID(ms), err
	}
	if len(p.Parts) == 1 && p.Parts[0].Type == convo.TypeJSON && wire.IsObject(p.Parts[0].Value) {
		ms, err := wire.ReadMembers(p.Parts[0].Value, ProviderID, r)
		return withoutID(ms), err
	}
	outcome := nativeMember(p.Native, "outcome")
	if s, err := wire.Str(outcome); err != nil || (s == outcomeOK) == p.Error {
		outcome = []byte(`"` + outcomeOK + `"`)
		if p.Error {
			outcome = []byte(`"` + outcomeFailed + `"`)
		}
	}
	ms := wire.Members{{Key: "outcome", Val: outcome}}
	if slices.ContainsFunc(p.Parts, func(q convo.Part) bool { return q.Type == convo.TypeText }) {
		ms = append(ms, wire.Member{Key: "output", Val: jsonx.AppendString(nil, joinTexts(p.Parts))})
	}
	if x := nativeMember(p.Native, kind); x != nil {
		xs, err := wire.ReadMembers(x, ProviderID, r)
		if err != nil {
			return nil, err
		}
		for _, m := range xs {
			ms = ms.Set(m.Key, m.Val)
		}
	}
	return ms, nil
}

func withoutID(ms wire.Members) wire.Members {
	out := ms[:0]
	for _, m := range ms {
		if m.Key != "id" {
			out = append(out, m)
		}
	}
	return out
}

// appendPartMembers appends the part-level members of a part's
// Native["gemini"] (a thoughtSignature, …) after its data member, leaving
// out convo's notes and data members.
func appendPartMembers(dst []byte, n convo.Native, r *jsonx.Reader) []byte {
	if n[ProviderID] == nil {
		return dst
	}
	ms, err := wire.ReadNative(n, ProviderID, r)
	if err != nil {
		return dst
	}
	for _, m := range ms {
		if isNote([]byte(m.Key)) || dataKind(m.Key) != "" || m.Key == "outcome" {
			continue
		}
		dst = append(jsonx.AppendString(append(dst, ','), m.Key), ':')
		dst = append(dst, m.Val...)
	}
	return dst
}

// appendServerPart appends the whole wire part of the provider-run part p
// for a reply: its data member and its part-level native members.
func appendServerPart(dst []byte, p *convo.Part, kind string, r *jsonx.Reader) ([]byte, error) {
	out, err := appendServerData(append(dst, '{'), p, kind, r)
	if err != nil {
		return dst, err
	}
	return append(appendPartMembers(out, p.Native, r), '}'), nil
}
