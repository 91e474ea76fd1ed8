package openai

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Responses items of the tools OpenAI runs itself (web_search_call,
// file_search_call, code_interpreter_call, mcp_call,
// image_generation_call) are read as a tool_call part with Server set,
// followed by its tool_result part when the item reports one, and written
// back as the same bytes:
//
//   - the call's ID is the item's id, Name the tool's (mcp_call: the MCP
//     tool's name), Args what the model asked for: web_search_call's
//     action, mcp_call's arguments (a JSON text, as a function call's),
//     the code of code_interpreter_call, the queries of file_search_call,
//     the revised_prompt of image_generation_call (an object of those
//     members);
//   - the result holds what came back: file_search_call's results as one
//     json part, code_interpreter_call's outputs as text (logs) and image
//     (url) parts, mcp_call's output as text (its error as text with
//     Error set), image_generation_call's result as an image part.
//
// Every other member (status, container_id, server_label, the image's
// size and format, a null output) stays in the call's Native "openai", in
// order; the item's type is the call's kind. A member kept in Native whose
// mapped value would be written otherwise (a string escaped differently)
// keeps its original spelling there. The members are written back in the
// order the API writes them. An item that does not map (still in
// progress, a member of an unexpected kind, an order the API does not
// use) stays an opaque part, replayed as it came.

// respServer says how the item of one provider-run tool maps.
type respServer struct {
	item  string   // the item's type
	kind  string   // Part.Server
	name  string   // the call's name; "" when the item's "name" gives it
	order []string // the item's members as the API writes them
	// whole names the one member Args stands for ("action", or "arguments"
	// as a JSON text); without it Args is an object of the members argKeys.
	whole   string
	argKeys []string
	result  []string // the members holding the result: the output, then the error
}

var respServers = [...]respServer{
	{item: "web_search_call", kind: convo.ServerWebSearch, name: "web_search",
		order: []string{"id", "type", "status", "action"}, whole: "action"},
	{item: "file_search_call", kind: convo.ServerFileSearch, name: "file_search",
		order: []string{"id", "type", "status", "queries", "results"}, argKeys: []string{"queries"}, result: []string{"results"}},
	{item: "code_interpreter_call", kind: convo.ServerCodeExecution, name: "code_interpreter",
		order: []string{"id", "type", "status", "code", "container_id", "outputs"}, argKeys: []string{"code"}, result: []string{"outputs"}},
	{item: "mcp_call", kind: convo.ServerMCP,
		order: []string{"id", "type", "status", "approval_request_id", "arguments", "error", "name", "output", "server_label"},
		whole: "arguments", result: []string{"output", "error"}},
	{item: "image_generation_call", kind: convo.ServerImageGeneration, name: "image_generation",
		order:   []string{"id", "type", "status", "action", "background", "error", "output_format", "quality", "result", "revised_prompt", "size"},
		argKeys: []string{"revised_prompt"}, result: []string{"result"}},
}

// serverOfItem returns how items of type typ map, or nil.
func serverOfItem(typ string) *respServer {
	for i := range respServers {
		if respServers[i].item == typ {
			return &respServers[i]
		}
	}
	return nil
}

// serverOfKind returns how calls of kind map to items, or nil.
func serverOfKind(kind string) *respServer {
	for i := range respServers {
		if respServers[i].kind == kind {
			return &respServers[i]
		}
	}
	return nil
}

// errNoMap says an item's members are not what the mapping expects.
var errNoMap = errors.New("does not map")

// serverParts maps the compact item raw of a provider-run tool to its call
// and, when the item reports one, its result. ok is false when the item
// stays opaque: it does not map, or would not be written back as raw.
func serverParts(s *respServer, raw []byte, ap *argsParser, maxDepth int) (parts []convo.Part, ok bool) {
	var r jsonx.Reader
	ms, err := wire.ReadMembers(raw, ProviderID, &r)
	if err != nil {
		return nil, false
	}
	call := convo.Part{Type: convo.TypeToolCall, Server: s.kind, Provider: ProviderID, Name: s.name}
	res := convo.Part{Type: convo.TypeToolResult, Server: s.kind, Provider: ProviderID}
	var rest wire.Members
	var args wire.Members
	hasResult, hasID := false, false
	for _, m := range ms {
		var err error
		switch {
		case m.Key == "type":
		case m.Key == "id":
			hasID = true
			err = readStr(&r, m.Val, &call.ID)
		case m.Key == "status":
			var st string
			if err = readStr(&r, m.Val, &st); err == nil && !finalStatus(st) {
				err = errNoMap // in progress: not yet a call convo can show
			}
			rest = append(rest, m)
		case m.Key == "name" && s.name == "":
			err = readStr(&r, m.Val, &call.Name)
		case m.Key == s.whole && s.whole == "arguments":
			if m.Val[0] != '"' {
				return nil, false
			}
			if ap.parse(&call, m.Val, maxDepth) {
				rest = append(rest, m)
			}
		case m.Key == s.whole:
			if m.Val[0] != '{' {
				return nil, false
			}
			call.Args = m.Val
		case slices.Contains(s.argKeys, m.Key):
			args = append(args, m)
		case slices.Contains(s.result, m.Key) && string(m.Val) != "null":
			if hasResult {
				return nil, false // an output and an error: which is which would be lost
			}
			hasResult = true
			res.Error = m.Key == "error"
			var kept []byte
			res.Parts, kept, err = resultParts(s, m.Val, raw, &r)
			if kept != nil {
				rest = append(rest, wire.Member{Key: m.Key, Val: kept})
			}
		default:
			rest = append(rest, m)
		}
		if err != nil {
			return nil, false
		}
	}
	if !hasID || call.Name == "" || (s.whole != "" && call.Args == nil && call.ArgsRaw == "" && rest.Value(s.whole) == nil) {
		return nil, false
	}
	if s.whole == "" {
		call.Args = args.Object()
		if call.Args == nil {
			call.Args = []byte("{}")
		}
	}
	res.ID = call.ID
	call.Native = rest.Native(ProviderID)
	parts = []convo.Part{call}
	if hasResult {
		parts = append(parts, res)
	}
	back, err := appendServerItem(make([]byte, 0, len(raw)), &parts[0], resultOf(parts))
	if err != nil || string(back) != string(raw) {
		return nil, false
	}
	return parts, true
}

// resultOf returns the result of parts as serverParts made them, or nil.
func resultOf(parts []convo.Part) *convo.Part {
	if len(parts) > 1 {
		return &parts[1]
	}
	return nil
}

// finalStatus reports whether an item's status says the tool has ended.
func finalStatus(s string) bool {
	return s == "completed" || s == "failed" || s == "incomplete"
}

func readStr(r *jsonx.Reader, v []byte, dst *string) error {
	r.Reset(v, 1)
	s, err := r.ReadString()
	*dst = s
	return err
}

// resultParts maps the value v of a result member. kept is the value to
// keep in Native when a string would be written back spelt otherwise.
func resultParts(s *respServer, v, item []byte, r *jsonx.Reader) (parts []convo.Part, kept []byte, err error) {
	switch {
	case s.item == "code_interpreter_call":
		if ps, ok := codeOutputs(v, r); ok {
			return ps, nil, nil
		}
	case v[0] == '"':
		var str string
		if err := readStr(r, v, &str); err != nil {
			return nil, nil, err
		}
		if string(jsonx.AppendString(make([]byte, 0, len(v)), str)) != string(v) {
			kept = v
		}
		if s.item != "image_generation_call" {
			return []convo.Part{convo.Text(str)}, kept, nil
		}
		if kept != nil || convo.CheckBase64(str) != nil {
			return nil, nil, errNoMap
		}
		return []convo.Part{{Type: convo.TypeImage, MediaType: imageFormat(item, r), Data: str}}, nil, nil
	}
	return []convo.Part{convo.JSON(v)}, nil, nil
}

// imageFormat returns the media type of an image_generation_call's
// result: its output_format, png when it names none.
func imageFormat(item []byte, r *jsonx.Reader) string {
	format := "png"
	r.Reset(item, 2)
	_ = r.ReadObject(func(k []byte) error {
		if string(k) == "output_format" && r.Peek() == jsonx.String {
			f, err := r.ReadString()
			if err == nil && f != "" {
				format = f
			}
			return err
		}
		return r.Skip()
	})
	return "image/" + format
}

// codeOutputs maps code_interpreter_call outputs made only of
// {"type":"logs","logs":…} and {"type":"image","url":…} objects, each
// exactly so, to text and image parts.
func codeOutputs(v []byte, r *jsonx.Reader) ([]convo.Part, bool) {
	r.Reset(v, 3)
	if r.Peek() != jsonx.Array {
		return nil, false
	}
	parts := []convo.Part{}
	err := r.ReadArray(func(int) error {
		var typ, val string
		n := 0
		err := r.ReadObject(func(k []byte) error {
			n++
			if r.Peek() != jsonx.String {
				return errNoMap
			}
			s, err := r.ReadString()
			switch {
			case n == 1 && string(k) == "type":
				typ = s
			case n == 2 && (typ == "logs" && string(k) == "logs" || typ == "image" && string(k) == "url"):
				val = s
			default:
				return errNoMap
			}
			return err
		})
		if err == nil && n != 2 {
			err = errNoMap
		}
		if typ == "logs" {
			parts = append(parts, convo.Text(val))
		} else {
			parts = append(parts, convo.Part{Type: convo.TypeImage, URL: val})
		}
		return err
	})
	if err != nil {
		return nil, false
	}
	if string(appendCodeOutputs(nil, parts)) != string(v) {
		return nil, false
	}
	return parts, true
}

// appendCodeOutputs writes text and image parts as code_interpreter_call
// outputs; ok is false for any other part.
func appendCodeOutputs(b []byte, ps []convo.Part) []byte {
	b = append(b, '[')
	for i, q := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		if q.Type == convo.TypeText {
			b = jsonx.AppendString(append(b, `{"type":"logs","logs":`...), q.Text)
		} else {
			b = jsonx.AppendString(append(b, `{"type":"image","url":`...), q.URL)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// serverItem reports whether p is the call or result of a tool OpenAI ran
// whose item convo writes.
func serverItem(p *convo.Part) bool {
	return p.IsServerTool() && p.Provider == ProviderID && serverOfKind(p.Server) != nil
}

// answers reports whether res is the result of the provider-run call.
func answers(call, res *convo.Part) bool {
	return res.Type == convo.TypeToolResult && res.Server == call.Server && res.Provider == call.Provider && res.ID == call.ID
}

// appendServerItem writes the item of a provider-run tool from its call
// and its result (either may be nil, not both): the members in the order
// the API writes them, then any others, Args' before Native's.
func appendServerItem(dst []byte, call, res *convo.Part) ([]byte, error) {
	p := call
	if p == nil {
		p = res
	}
	s := serverOfKind(p.Server)
	if s == nil {
		return dst, fmt.Errorf("no Responses item for a %s tool", p.Server)
	}
	var r jsonx.Reader
	rest, err := wire.ReadNative(p.Native, ProviderID, &r)
	if err != nil {
		return dst, err
	}
	var args wire.Members
	if call != nil && s.whole == "" && call.Args != nil {
		if args, err = wire.ReadMembers(call.Args, ProviderID, &r); err != nil {
			return dst, fmt.Errorf("args: %w", err)
		}
	}
	w := itemWriter{b: append(dst, '{')}
	for _, k := range s.order {
		v, err := serverMember(s, k, call, res, args, rest)
		if err != nil {
			return dst, err
		}
		w.member(k, v)
	}
	for _, m := range args {
		w.member(m.Key, m.Val)
	}
	for _, m := range rest {
		w.member(m.Key, m.Val)
	}
	return append(w.b, '}'), nil
}

// itemWriter writes the members of an item, each key once.
type itemWriter struct {
	b    []byte
	done []string
}

func (w *itemWriter) member(k string, v []byte) {
	if v == nil || slices.Contains(w.done, k) {
		return
	}
	if len(w.done) > 0 {
		w.b = append(w.b, ',')
	}
	w.done = append(w.done, k)
	w.b = append(jsonx.AppendString(w.b, k), ':')
	w.b = append(w.b, v...)
}

// serverMember returns the value of the item member k, or nil when the
// item has none.
func serverMember(s *respServer, k string, call, res *convo.Part, args, rest wire.Members) ([]byte, error) {
	p := call
	if p == nil {
		p = res
	}
	switch {
	case k == "id":
		return jsonx.AppendString(nil, p.ID), nil
	case k == "type":
		return jsonx.AppendString(nil, s.item), nil
	case k == "name" && s.name == "" && call != nil:
		return jsonx.AppendString(nil, call.Name), nil
	case k == s.whole && k == "arguments" && call != nil:
		return mcpArguments(call, rest.Value("arguments"))
	case k == s.whole && call != nil && call.Args != nil:
		return call.Args, nil
	case slices.Contains(s.argKeys, k):
		return args.Value(k), nil
	}
	if i := slices.Index(s.result, k); i >= 0 && res != nil && (i == 1) == res.Error {
		return resultValue(s, res, rest.Value(k))
	}
	return rest.Value(k), nil
}

// mcpArguments writes an mcp_call's arguments: the string as it came
// when it still says what Args says, else Args as JSON text, else the
// malformed text.
func mcpArguments(call *convo.Part, orig []byte) ([]byte, error) {
	if call.Args == nil {
		if call.ArgsRaw == "" && orig != nil {
			return orig, nil
		}
		return jsonx.AppendString(nil, call.ArgsRaw), nil
	}
	c, err := jsonx.Compact(call.Args, 0)
	if err != nil {
		return nil, fmt.Errorf("args: invalid JSON: %w", err)
	}
	if orig != nil {
		if s, err := jsonx.NewReader(orig, 0).ReadString(); err == nil {
			if oc, err := jsonx.Compact([]byte(s), 0); err == nil && string(oc) == string(c) {
				return orig, nil
			}
		}
	}
	return appendJSONText(nil, c), nil
}

// resultValue writes the value of the member holding a result: a json
// part's value, code outputs, or a string (text, an image's data), spelt
// as kept in Native when that still says the same.
func resultValue(s *respServer, res *convo.Part, kept []byte) ([]byte, error) {
	ps := res.Parts
	if len(ps) == 1 && ps[0].Type == convo.TypeJSON {
		return ps[0].Value, nil
	}
	if s.item == "code_interpreter_call" {
		for _, q := range ps {
			if q.Type != convo.TypeText && (q.Type != convo.TypeImage || q.URL == "") {
				return nil, fmt.Errorf("code_interpreter_call outputs hold logs and image URLs, not %s", mediaOrType(q))
			}
		}
		return appendCodeOutputs(nil, ps), nil
	}
	var str string
	switch {
	case len(ps) == 1 && (ps[0].Type == convo.TypeText || ps[0].Type == convo.TypeImage && ps[0].Data != ""):
		str = ps[0].Text + ps[0].Data
	case len(ps) == 0:
	default:
		return nil, fmt.Errorf("%s result: want one text, json or inline image part, got %d parts", s.item, len(ps))
	}
	if kept != nil {
		if k, err := jsonx.NewReader(kept, 0).ReadString(); err == nil && k == str {
			return kept, nil
		}
	}
	return jsonx.AppendString(make([]byte, 0, len(str)+2), str), nil
}

func mediaOrType(q convo.Part) string {
	if q.Type.IsMedia() {
		return mediaDesc(q)
	}
	return string(q.Type) + " parts"
}

// serverTool writes part j of the assistant message being written, the
// call or result of a tool OpenAI ran, as its item: a call with the
// result that follows it, a result whose call came right before it is
// written already.
func (e *respEnc) serverTool(p *convo.Part, j int) error {
	parts := e.runMsg.Parts
	var call, res *convo.Part
	if p.Type == convo.TypeToolCall {
		call = p
		if j+1 < len(parts) && answers(p, &parts[j+1]) {
			res = &parts[j+1]
		}
	} else {
		if j > 0 && parts[j-1].Type == convo.TypeToolCall && answers(&parts[j-1], p) {
			return nil
		}
		res = p
	}
	e.begin()
	// The item is written whole, over the brace begin opened it with.
	b, err := appendServerItem(e.buf[:len(e.buf)-1], call, res)
	if err != nil {
		return encErr(e.at(j), "%v", err)
	}
	e.buf = b
	e.n++
	return nil
}

// startServer begins the item of a provider-run tool's call, or links its
// result to the item its call began. Another provider's parts, and kinds
// Responses has no item for, are left out.
func (e *respEncoder) startServer(i int, p *convo.Part) {
	if !serverItem(p) {
		return
	}
	if p.Type == convo.TypeToolResult {
		for k := len(e.order) - 1; k >= 0; k-- {
			it := e.order[k]
			if it.srv != nil && it.id == p.ID && it.srv.kind == p.Server && it.res == nil && !it.resOpen && it.final == nil {
				it.resOpen = true
				e.items[i] = it
				return
			}
		}
	}
	s := serverOfKind(p.Server)
	it := &respItem{out: len(e.order), id: p.ID, typ: p.Type, srv: s}
	e.items[i] = it
	e.order = append(e.order, it)
	b := strconv.AppendInt(append([]byte(nil), `"output_index":`...), int64(it.out), 10)
	b = jsonx.AppendString(append(b, `,"item":{"id":`...), it.id)
	b = jsonx.AppendString(append(b, `,"type":`...), s.item)
	e.event("response.output_item.added", append(b, `,"status":"in_progress"}`...))
}

// endServer records the end of a provider-run tool's call or result, and
// sends the whole item once nothing of it is still open.
func (e *respEncoder) endServer(it *respItem, p *convo.Part) {
	c := *p
	if p.Type == convo.TypeToolCall {
		it.call = &c
	} else {
		it.res, it.resOpen = &c, false
	}
	if it.resOpen {
		return
	}
	item, err := appendServerItem(nil, it.call, it.res)
	if err != nil {
		// Native that does not read (Validate catches it before): the
		// item as far as convo knows it.
		item = jsonx.AppendString(append([]byte(nil), `{"id":`...), it.id)
		item = jsonx.AppendString(append(item, `,"type":`...), it.srv.item)
		item = append(item, `,"status":"completed"}`...)
	}
	it.final = item
	b := strconv.AppendInt(append([]byte(nil), `"output_index":`...), int64(it.out), 10)
	e.event("response.output_item.done", append(append(b, `,"item":`...), item...))
}
