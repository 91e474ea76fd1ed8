package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// Obj writes a JSON object member by member and remembers the keys it
// wrote, so that native members never repeat one.
type Obj struct {
	Buf  []byte
	keys []string
	n    int
	// handled are keys whose native members were dealt with already
	// (settings that replay their own spelling): Native skips them.
	handled []string
}

// NewObj starts an object in buf (which may be nil).
func NewObj(buf []byte) *Obj { return &Obj{Buf: append(buf, '{')} }

// Key writes the key of the next member.
func (o *Obj) Key(k string) {
	if o.n > 0 {
		o.Buf = append(o.Buf, ',')
	}
	o.n++
	o.keys = append(o.keys, k)
	o.Buf = jsonx.AppendString(o.Buf, k)
	o.Buf = append(o.Buf, ':')
}

// Has reports whether key was written.
func (o *Obj) Has(k string) bool { return slices.Contains(o.keys, k) }

// Raw writes a member whose value is JSON already.
func (o *Obj) Raw(k string, v []byte) {
	o.Key(k)
	o.Buf = append(o.Buf, v...)
}

// Str writes a string member.
func (o *Obj) Str(k, v string) {
	o.Key(k)
	o.Buf = jsonx.AppendString(o.Buf, v)
}

// Int writes an integer member.
func (o *Obj) Int(k string, v int64) {
	o.Key(k)
	o.Buf = strconv.AppendInt(o.Buf, v, 10)
}

// Float writes a number member.
func (o *Obj) Float(k string, v float64) {
	o.Key(k)
	o.Buf = AppendFloat(o.Buf, v)
}

// Bool writes a boolean member.
func (o *Obj) Bool(k string, v bool) {
	o.Key(k)
	o.Buf = strconv.AppendBool(o.Buf, v)
}

// Strings writes an array of strings.
func (o *Obj) Strings(k string, v []string) {
	o.Key(k)
	o.Buf = AppendStrings(o.Buf, v)
}

// StrMap writes an object of strings, keys sorted.
func (o *Obj) StrMap(k string, m map[string]string) {
	o.Key(k)
	o.Buf = AppendStrMap(o.Buf, m)
}

// Continue takes o's buffer back after a history codec appended its
// members to it and closed the object (Format.Append), so that more members
// follow; keys are the codec's members.
func (o *Obj) Continue(body []byte, keys ...string) {
	before := len(o.Buf)
	o.Buf = body[:len(body)-1]
	if len(o.Buf) > before {
		o.n++
		o.keys = append(o.keys, keys...)
	}
}

// settingsSize is about the room a request's settings take: the room
// EncodeRequest makes for them before the history, whose codec keeps it
// spare (see Begin), so the body is never copied to grow.
func settingsSize(r *provider.Request, providerID string) int {
	n := 256 + len(r.Native[providerID])
	for i := range r.Tools {
		t := &r.Tools[i]
		n += 64 + len(t.Name) + len(t.Description) + len(t.Parameters) + len(t.Native[providerID])
	}
	for _, s := range r.Stop {
		n += len(s) + 3
	}
	return n
}

// Close ends the object and returns its bytes.
func (o *Obj) Close() []byte { return append(o.Buf, '}') }

// AppendFloat appends f as a JSON number.
func AppendFloat(b []byte, f float64) []byte { return strconv.AppendFloat(b, f, 'g', -1, 64) }

// AppendStrings appends a JSON array of strings.
func AppendStrings(b []byte, v []string) []byte {
	b = append(b, '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendString(b, s)
	}
	return append(b, ']')
}

// AppendStrMap appends a JSON object of strings with sorted keys.
func AppendStrMap(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendString(b, k)
		b = append(b, ':')
		b = jsonx.AppendString(b, m[k])
	}
	return append(b, '}')
}

// Native writes the members of n[providerID] the object has no key for
// yet, and warns about every member of another provider's object, which the
// target cannot take. path names n's place ("native", "tools[3].native").
func (o *Obj) Native(n convo.Native, providerID, path string, warns *[]provider.Warning) error {
	if len(n) == 0 {
		return nil
	}
	var r jsonx.Reader
	ids := make([]string, 0, len(n))
	for id := range n {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		ms, err := ReadMembers(n[id], id, &r)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, m := range ms {
			switch {
			case m.Key == AsRead, m.Key == APIKey, id == providerID && slices.Contains(o.handled, m.Key):
			case id != providerID:
				*warns = append(*warns, provider.WarnCode(provider.CodeNativeDropped,
					path+"."+id+"."+m.Key, "%s's own setting is not sent to %s", id, providerID))
			case o.Has(m.Key):
				*warns = append(*warns, provider.WarnCode(provider.CodeNativeDropped,
					path+"."+id+"."+m.Key, "not sent: the request already has %q", m.Key))
			default:
				o.Raw(m.Key, m.Val)
			}
		}
	}
	return nil
}

// Top reads the members of a request body. keep is called with each
// member's key and compact value, and returns whether the request codec
// took it; members it did not take are returned, in order, for the
// request's Native object.
func Top(body []byte, l convo.Limits, keep func(key string, val []byte) (bool, error)) (Members, error) {
	return TopExcept(body, l, nil, keep)
}

// TopExcept is Top, but the members named in skip are only read past (and
// checked), not copied nor given to keep: a request's messages, which
// the history's decoder has read already, are most of its bytes.
func TopExcept(body []byte, l convo.Limits, skip []string, keep func(key string, val []byte) (bool, error)) (Members, error) {
	r := jsonx.NewReader(body, l.MaxDepth)
	var rest Members
	err := r.ReadObject(func(key []byte) error {
		for _, s := range skip {
			if string(key) == s {
				return At(s, r.Skip())
			}
		}
		k := string(key)
		v, err := r.ReadRaw()
		if err != nil {
			return At(k, err)
		}
		took, err := keep(k, v)
		if err != nil {
			return At(k, err)
		}
		if !took {
			rest = append(rest, Member{Key: k, Val: v})
		}
		return nil
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	return rest, err
}

// Fields reads the members of the object val like Top, one level down.
func Fields(val []byte, keep func(key string, val []byte) (bool, error)) (Members, error) {
	return Top(val, convo.DefaultLimits, keep)
}

// Float reads a JSON number.
func Float(val []byte) (*float64, error) {
	f, err := strconv.ParseFloat(string(val), 64)
	if err != nil || len(val) == 0 || val[0] == '"' {
		return nil, fmt.Errorf("want a number, have %s", clip(val))
	}
	return &f, nil
}

// Int reads a JSON integer.
func Int(val []byte) (*int64, error) {
	n, err := strconv.ParseInt(string(val), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("want an integer, have %s", clip(val))
	}
	return &n, nil
}

// Bool reads a JSON boolean.
func Bool(val []byte) (bool, error) {
	switch string(val) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("want true or false, have %s", clip(val))
}

// Str reads a JSON string.
func Str(val []byte) (string, error) {
	r := jsonx.NewReader(val, 1)
	if r.Peek() != jsonx.String {
		return "", fmt.Errorf("want a string, have %s", clip(val))
	}
	return r.ReadString()
}

// Strings reads an array of strings.
func Strings(val []byte) ([]string, error) {
	r := jsonx.NewReader(val, 2)
	if r.Peek() != jsonx.Array {
		return nil, fmt.Errorf("want an array of strings, have %s", clip(val))
	}
	var out []string
	err := r.ReadArray(func(i int) error {
		if r.Peek() != jsonx.String {
			return At("["+strconv.Itoa(i)+"]", errors.New("want a string"))
		}
		s, err := r.ReadString()
		out = append(out, s)
		return err
	})
	return out, err
}

// StrMap reads an object of strings.
func StrMap(val []byte) (map[string]string, error) {
	m := map[string]string{}
	_, err := Fields(val, func(k string, v []byte) (bool, error) {
		s, err := Str(v)
		m[k] = s
		return true, err
	})
	return m, err
}

// IsObject reports whether val is a JSON object.
func IsObject(val []byte) bool { return len(val) > 0 && val[0] == '{' }

func clip(v []byte) string {
	if len(v) > 40 {
		return string(v[:40]) + "…"
	}
	return string(v)
}

// Dropped returns the warning for a request setting the target has no
// member for.
func Dropped(path, target string) provider.Warning {
	return provider.WarnCode(provider.CodeSettingDropped, path, "%s has no such setting: left out", target)
}

// ForeignTool returns the warning for another provider's own tool.
func ForeignTool(i int, t *provider.Tool, target string) provider.Warning {
	return provider.WarnCode(provider.CodeToolDropped, "tools["+strconv.Itoa(i)+"]",
		"%s's tool %q is not sent to %s", strings.SplitN(t.Type, ":", 2)[0], t.Type, target)
}

// OwnTool returns the wire definition of a provider's own tool kept by
// NativeTool, if t is one of providerID's.
func OwnTool(t *provider.Tool, providerID string) ([]byte, bool) {
	if t.Type == "" || !strings.HasPrefix(t.Type, providerID+":") {
		return nil, false
	}
	v := t.Native[providerID]
	return v, v != nil
}

// NativeTool returns a Tool keeping def, one of providerID's own tool
// definitions of wire type typ, whole.
func NativeTool(providerID, typ string, def []byte) provider.Tool {
	return provider.Tool{Type: providerID + ":" + typ, Native: convo.Native{providerID: def}}
}

// Field names one field of provider.Request, for the check that every field
// set is carried by some member of the target's request.
type Field uint32

// The fields of provider.Request a Setting may carry.
const (
	FModel Field = 1 << iota
	FTools
	FToolChoice
	FParallel
	FOutput
	FMaxTokens
	FTemperature
	FTopP
	FTopK
	FPresence
	FFrequency
	FSeed
	FStop
	FReasoning
	FCacheKey
	FStream
	FStreamUsage
	FUser
	FMetadata
	FCandidates
	fieldEnd
)

// fieldPaths name the fields in warnings.
var fieldPaths = [...]string{"model", "tools", "tool_choice", "parallel_tool_calls", "output",
	"max_tokens", "temperature", "top_p", "top_k", "presence_penalty", "frequency_penalty",
	"seed", "stop", "reasoning", "cache_key", "stream", "stream_usage", "user", "metadata", "candidates"}

func isSet(r *provider.Request, f Field) bool {
	switch f {
	case FModel:
		return r.Model != ""
	case FTools:
		return len(r.Tools) > 0
	case FToolChoice:
		return r.ToolChoice.Mode != ""
	case FParallel:
		return r.ParallelToolCalls != nil
	case FOutput:
		return r.Output.Type != ""
	case FMaxTokens:
		return r.MaxTokens != 0
	case FTemperature:
		return r.Temperature != nil
	case FTopP:
		return r.TopP != nil
	case FTopK:
		return r.TopK != nil
	case FPresence:
		return r.PresencePenalty != nil
	case FFrequency:
		return r.FrequencyPenalty != nil
	case FSeed:
		return r.Seed != nil
	case FStop:
		return len(r.Stop) > 0
	case FReasoning:
		return r.Reasoning != nil
	case FCacheKey:
		return r.CacheKey != ""
	case FStream:
		return r.Stream
	case FStreamUsage:
		return r.StreamUsage
	case FUser:
		return r.User != ""
	case FMetadata:
		return len(r.Metadata) > 0
	case FCandidates:
		// One candidate is every format's only reply: nothing is lost
		// where it cannot be asked for.
		return r.Candidates > 1
	}
	return false
}

// ReqEnc is the state of one request encoding a Setting writes to.
type ReqEnc struct {
	R        *provider.Request
	Own      Members // the request's Native members for the target's provider
	O        *Obj
	Warns    []provider.Warning
	Target   string // the target's format name, for warnings
	Provider string // the target's provider id
}

// asRead returns the value of key as the request was read, if it was kept
// under AsRead.
func (e *ReqEnc) asRead(key string) ([]byte, bool) {
	obj, ok := e.Own.Get(AsRead)
	if !ok {
		return nil, false
	}
	var r jsonx.Reader
	ms, err := ReadMembers(obj, e.Provider, &r)
	if err != nil {
		return nil, false
	}
	return ms.Get(key)
}

// Spelled reports whether the request was read with key, as it was
// written or kept under AsRead.
func (e *ReqEnc) Spelled(key string) bool {
	if _, ok := e.Own.Get(key); ok {
		return true
	}
	_, ok := e.asRead(key)
	return ok
}

// Warn adds a warning.
func (e *ReqEnc) Warn(code provider.Code, path, format string, args ...any) {
	e.Warns = append(e.Warns, provider.WarnCode(code, path, format, args...))
}

// WarnMsg is Warn with the message made: for a warning every request of
// a kind has, without fmt's work and its arguments' boxing.
func (e *ReqEnc) WarnMsg(code provider.Code, path, msg string) {
	e.Warns = append(e.Warns, provider.Warning{Path: path, Msg: msg, Code: code})
}

// Setting is one top-level member of a provider's request body and the
// Request fields it carries.
type Setting struct {
	Key    string
	Fields Field // what it carries, for the check that nothing set is lost
	// Enc writes the member when the request has it set. It may write
	// nothing, and may look at e.Own for how the request spelled it.
	Enc func(e *ReqEnc) error
	// Dec reads the member's value into d.R, and says when the value held
	// more than the fields can (d.Fields does for sub-members it leaves).
	Dec func(d *ReqDec, val []byte) error
}

// ReqDec is the state of one request decoding a Setting reads into.
type ReqDec struct {
	R *provider.Request
	// Lost is set when a member held something no field carries: the
	// member is then kept in Native as it was read.
	Lost bool
}

// Fields reads the members of the object v like the package's Fields,
// marking d Lost when keep leaves any.
func (d *ReqDec) Fields(v []byte, keep func(key string, val []byte) (bool, error)) error {
	rest, err := Fields(v, keep)
	if len(rest) > 0 {
		d.Lost = true
	}
	return err
}

// AsRead is the key, in a request's Native object for a provider, of the
// members kept as they were read because the encoder would spell them
// differently (a number as 1.0, a single stop sequence as a string, the
// legacy max_tokens). Their content is all in Request's fields: other
// providers ignore them without a warning.
const AsRead = "convo:as_read"

// APIKey is the key, in a request's Native object for a provider, of the
// API the request was read from when the provider has several (Format.API).
const APIKey = "convo:api"

// Format is what a codec tells EncodeRequest and DecodeRequest about its
// request body.
type Format struct {
	Provider string   // provider id, the Native key
	Name     string   // format name
	Conv     []string // the members the history codec writes and reads
	// Append is the history codec's Encode appending to dst (see Begin);
	// Decode is its Decode.
	Append   func(dst []byte, h convo.History, opts provider.Options) ([]byte, []provider.Warning, error)
	Decode   func(body []byte, opts provider.Options) (convo.History, []provider.Warning, error)
	Settings []Setting
	// Carried are fields the format carries outside the body (the model
	// and streaming in Gemini's and Bedrock's URL).
	Carried Field
	// API tells apart the request formats of one provider (OpenAI's
	// "chat" and "responses"): the native members of a request read in one
	// are sent in the other only when listed in Shared.
	API    string
	Shared []string
	// Prefix, when set, is written before the history's members (the
	// model, by convention first).
	Prefix []string
	// AllowedTools means the format's tool choice carries
	// ToolChoice.Allowed; without it a request's allowed tools are left
	// out with a warning, every tool offered.
	AllowedTools bool
}

func (f *Format) setting(key string) *Setting {
	for i := range f.Settings {
		if f.Settings[i].Key == key {
			return &f.Settings[i]
		}
	}
	return nil
}

// EncodeRequest writes the whole request body for r: the settings named in
// f.Prefix, the history's members, the other settings, then r's Native
// members for the provider. A setting that was decoded with a spelling the
// encoder would not write again (a stop string rather than a list, extra
// sub-members) is written as it was read while the fields it carries are
// unchanged.
func (f *Format) EncodeRequest(r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return f.AppendRequest(nil, r, opts)
}

// AppendRequest is EncodeRequest appending the body to dst (see
// provider.RequestAppender); on an error it returns dst as it was.
func (f *Format) AppendRequest(dst []byte, r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	body, warns, err := f.appendRequest(dst, r, opts)
	if err != nil {
		return dst, warns, err
	}
	return body, warns, nil
}

func (f *Format) appendRequest(dst []byte, r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	var rd jsonx.Reader
	own, err := ReadNative(r.Native, f.Provider, &rd)
	if err != nil {
		return nil, nil, err
	}
	r, warns := f.settle(r)
	e := &ReqEnc{R: r, Own: own, Target: f.Name, Provider: f.Provider}
	e.O = NewObj(slices.Grow(dst, settingsSize(r, f.Provider)))
	// Room for the keys of a request's members at once (a dozen or so),
	// rather than grown one by one.
	e.O.keys = make([]string, 0, 16)
	var carried Field
	write := func(s *Setting) error {
		carried |= s.Fields
		return f.writeSetting(e, s)
	}
	for _, k := range f.Prefix {
		if err := write(f.setting(k)); err != nil {
			return nil, e.Warns, err
		}
	}
	inner := opts
	inner.Strict, inner.OnWarning, inner.Accept = false, nil, nil
	body, conv, err := f.Append(e.O.Buf, r.History, inner)
	if err != nil {
		return nil, conv, err
	}
	// Warnings about the history come before those about the settings.
	e.Warns = append(append(conv, warns...), e.Warns...)
	e.O.Continue(body, f.Conv...)
	for i := range f.Settings {
		s := &f.Settings[i]
		if slices.Contains(f.Prefix, s.Key) {
			continue
		}
		if err := write(s); err != nil {
			return nil, e.Warns, err
		}
	}
	f.warnDropped(e, carried|f.Carried)
	// Without native members (most requests translated from another
	// format) nothing is left to write or warn about.
	if len(r.Native) > 0 {
		if err := f.appendNative(e, own); err != nil {
			return nil, e.Warns, err
		}
	}
	warns, err = opts.Finish(e.Warns)
	if err != nil {
		return nil, warns, err
	}
	return e.O.Close(), warns, nil
}

// appendNative writes the request's native members that no setting
// handled, and warns about those it cannot send.
func (f *Format) appendNative(e *ReqEnc, own Members) error {
	// Native members named like a setting were handled with it (room for
	// them, and the API key's, at once: the settings are a few dozen).
	e.O.handled = slices.Grow(e.O.handled, len(f.Settings)+1)
	for _, s := range f.Settings {
		e.O.handled = append(e.O.handled, s.Key)
	}
	if api := string(own.Value(APIKey)); f.API != "" && api != "" && api != `"`+f.API+`"` {
		// Another API of the same provider (OpenAI Chat and Responses):
		// only the members both take are sent.
		for _, m := range own {
			if m.Key != APIKey && m.Key != AsRead && !slices.Contains(f.Shared, m.Key) && !e.O.Has(m.Key) && !slices.Contains(e.O.handled, m.Key) {
				e.O.handled = append(e.O.handled, m.Key)
				e.Warn(provider.CodeNativeDropped, "native."+f.Provider+"."+m.Key,
					"a setting of another %s API is not sent to %s", f.Provider, f.Name)
			}
		}
	}
	e.O.handled = append(e.O.handled, APIKey)
	return e.O.Native(e.R.Native, f.Provider, "native", &e.Warns)
}

// settle applies the rules every format shares before its settings are
// written: no tool choice without tools, allowed tools only where the
// format has them, and the target model's (forTarget). r is copied, never
// changed, when a rule applies.
func (f *Format) settle(r *provider.Request) (*provider.Request, []provider.Warning) {
	var warns []provider.Warning
	if len(r.Tools) == 0 && (r.ToolChoice.Mode != "" || r.ParallelToolCalls != nil) {
		// The APIs refuse a tool choice without tools; without tools there
		// is nothing to choose.
		c := *r
		if c.ToolChoice.Mode != "" {
			warns = append(warns, provider.WarnCode(provider.CodeSettingDropped, "tool_choice", "no tools to choose from: left out"))
		}
		if c.ParallelToolCalls != nil {
			warns = append(warns, provider.WarnCode(provider.CodeSettingDropped, "parallel_tool_calls", "no tools: left out"))
		}
		c.ToolChoice, c.ParallelToolCalls = provider.ToolChoice{}, nil
		r = &c
	}
	if len(r.ToolChoice.Allowed) > 0 && !f.AllowedTools {
		c := *r
		c.ToolChoice.Allowed = nil
		warns = append(warns, provider.WarnCode(provider.CodeSettingDropped, "tool_choice.allowed",
			"%s cannot narrow the tools the model may call: every tool offered", f.Name))
		r = &c
	}
	r, warns = forTarget(r, warns)
	return r, warns
}

// warnDropped warns about every field set in e.R that no member of the
// format carries.
func (f *Format) warnDropped(e *ReqEnc, carried Field) {
	for b := Field(1); b < fieldEnd; b <<= 1 {
		switch {
		case carried&b != 0 || !isSet(e.R, b):
		case b == FCandidates:
			e.Warn(provider.CodeCandidatesDropped, "candidates", "%s returns one reply per request: left out (one reply, not %d)", f.Name, e.R.Candidates)
		default:
			e.Warns = append(e.Warns, Dropped(fieldPaths[bitIndex(b)], f.Name))
		}
	}
}

func bitIndex(b Field) int {
	i := 0
	for b > 1 {
		b >>= 1
		i++
	}
	return i
}

// writeSetting writes s, as spelled in the request's native members when
// they still say what the fields say.
func (f *Format) writeSetting(e *ReqEnc, s *Setting) error {
	start, n, nk := len(e.O.Buf), e.O.n, len(e.O.keys)
	nw := len(e.Warns)
	if err := s.Enc(e); err != nil {
		return fmt.Errorf("%s: %w", s.Key, err)
	}
	raw, ok := e.Own.Get(s.Key)
	if !ok {
		raw, ok = e.asRead(s.Key)
		if !ok {
			return nil
		}
	}
	// The request as read is compared with the request as it is, both
	// written for the same target with the same other settings (a
	// thinking budget depends on max_tokens): only the fields this member
	// and the members sharing them carry come from what was read.
	z := *e.R
	clearFields(&z, f.siblings(e, s, nil))
	if err := s.Dec(&ReqDec{R: &z}, raw); err != nil {
		return fmt.Errorf("native.%s.%s: %w", f.Provider, s.Key, err)
	}
	f.siblings(e, s, &z)
	mine := slices.Clone(e.O.Buf[start:])
	ze := &ReqEnc{R: &z, Own: e.Own, O: &Obj{}, Target: f.Name, Provider: f.Provider}
	if err := s.Enc(ze); err != nil {
		return nil // the native spelling no longer fits: the fields win
	}
	if !SameJSON(stripComma(mine), stripComma(ze.O.Buf)) {
		return nil
	}
	// The fields still say what the request said: write it as it was.
	e.O.Buf, e.O.n, e.O.keys, e.Warns = e.O.Buf[:start], n, e.O.keys[:nk], e.Warns[:nw]
	e.O.Raw(s.Key, raw)
	return nil
}

// siblings decodes into z the members, kept as they were read, of the
// other settings that carry a field s carries (Anthropic's thinking and
// output_config both say how the model thinks), so that s is compared
// with what the request said as a whole. It returns the fields s and
// those members carry; with z nil it only returns them.
func (f *Format) siblings(e *ReqEnc, s *Setting, z *provider.Request) Field {
	fields := s.Fields
	for i := range f.Settings {
		o := &f.Settings[i]
		if o.Key == s.Key || o.Fields&s.Fields == 0 {
			continue
		}
		raw, ok := e.Own.Get(o.Key)
		if !ok {
			if raw, ok = e.asRead(o.Key); !ok {
				continue
			}
		}
		fields |= o.Fields
		if z != nil {
			_ = o.Dec(&ReqDec{R: z}, raw) // an error shows as a difference
		}
	}
	return fields
}

// clearers unset each field of a Request, in Field order.
var clearers = [...]func(r *provider.Request){
	func(r *provider.Request) { r.Model = "" }, func(r *provider.Request) { r.Tools = nil },
	func(r *provider.Request) { r.ToolChoice = provider.ToolChoice{} }, func(r *provider.Request) { r.ParallelToolCalls = nil },
	func(r *provider.Request) { r.Output = provider.Output{} }, func(r *provider.Request) { r.MaxTokens = 0 },
	func(r *provider.Request) { r.Temperature = nil }, func(r *provider.Request) { r.TopP = nil },
	func(r *provider.Request) { r.TopK = nil }, func(r *provider.Request) { r.PresencePenalty = nil },
	func(r *provider.Request) { r.FrequencyPenalty = nil }, func(r *provider.Request) { r.Seed = nil },
	func(r *provider.Request) { r.Stop = nil }, func(r *provider.Request) { r.Reasoning = nil },
	func(r *provider.Request) { r.CacheKey = "" }, func(r *provider.Request) { r.Stream = false },
	func(r *provider.Request) { r.StreamUsage = false }, func(r *provider.Request) { r.User = "" },
	func(r *provider.Request) { r.Metadata = nil }, func(r *provider.Request) { r.Candidates = 0 },
}

// clearFields unsets the fields of r in mask, for a Setting's Dec to set
// them anew.
func clearFields(r *provider.Request, mask Field) {
	for i, clear := range clearers {
		if mask&(1<<i) != 0 {
			clear(r)
		}
	}
}

func stripComma(b []byte) []byte {
	if len(b) > 0 && b[0] == ',' {
		return b[1:]
	}
	return b
}

// DecodeRequest reads a whole request body: the history with f.Decode, the
// settings with their Dec, and everything else into Native. A setting whose
// value the encoder would not write back the same is also kept in Native as
// it was read, so that encoding the request again gives the same JSON; a
// setting that is null is absent, and not written back.
func (f *Format) DecodeRequest(body []byte, opts provider.Options) (*provider.Request, []provider.Warning, error) {
	l, err := opts.CheckSize(body, f.Name+" request")
	if err != nil {
		return nil, nil, err
	}
	inner := opts
	inner.Strict, inner.OnWarning, inner.Accept = false, nil, nil
	h, warns, err := f.Decode(body, inner)
	if err != nil {
		return nil, warns, err
	}
	r := &provider.Request{History: h}
	var spelled Members
	// One decoder, encoder and member buffer for every setting, each
	// setting's as new.
	d, e, kv := &ReqDec{R: r}, &ReqEnc{R: r, O: &Obj{}, Target: f.Name, Provider: f.Provider}, []byte(nil)
	rest, err := TopExcept(body, l, f.Conv, func(k string, v []byte) (bool, error) {
		s := f.setting(k)
		if s == nil {
			return false, nil
		}
		if string(bytes.TrimSpace(v)) == "null" {
			// Absent, as JSON APIs read it: SDKs write a member they
			// have no value for as null (Ollama's options).
			return true, nil
		}
		d.Lost = false
		if err := s.Dec(d, v); err != nil {
			return true, err
		}
		if d.Lost {
			return false, nil // in Native, and other providers warn about it
		}
		*e.O = Obj{Buf: e.O.Buf[:0], keys: e.O.keys[:0], handled: e.O.handled[:0]}
		e.Warns = e.Warns[:0]
		kv = append(append(jsonx.AppendString(kv[:0], k), ':'), v...)
		if err := s.Enc(e); err != nil || !SameJSON(stripComma(e.O.Buf), kv) {
			spelled = append(spelled, Member{Key: k, Val: v})
		}
		return true, nil
	})
	if err != nil {
		return nil, warns, fmt.Errorf("%s request: %w", f.Name, err)
	}
	if len(spelled) > 0 {
		rest = append(rest, Member{Key: AsRead, Val: spelled.Object()})
	}
	if f.API != "" && len(rest) > 0 {
		rest = append(rest, Member{Key: APIKey, Val: jsonx.AppendString(nil, f.API)})
	}
	r.Native = rest.Native(f.Provider)
	warns, err = opts.Finish(warns)
	if err != nil {
		return nil, warns, err
	}
	return r, warns, nil
}

// SameJSON reports whether a and b are the same JSON up to white space, key
// order and number spelling. a and b may be single object members
// ("key":value), compared as objects.
func SameJSON(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	va, oka := anyJSON(a)
	vb, okb := anyJSON(b)
	return oka && okb && reflect.DeepEqual(va, vb)
}

func anyJSON(b []byte) (any, bool) {
	if len(b) > 0 && b[0] == '"' {
		b = append(append([]byte{'{'}, b...), '}')
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // 1.0 and 1 are spelled differently: keep the spelling
	var v any
	err := d.Decode(&v)
	return v, err == nil && !d.More()
}

// StringSetting is a string member carried by one string field.
func StringSetting(key string, f Field, field func(*provider.Request) *string) Setting {
	return Setting{Key: key, Fields: f,
		Enc: func(e *ReqEnc) error {
			if s := *field(e.R); s != "" {
				e.O.Str(key, s)
			}
			return nil
		},
		Dec: func(d *ReqDec, v []byte) error {
			r := d.R
			s, err := Str(v)
			*field(r) = s
			return err
		}}
}

// BoolSetting is a boolean member carried by one bool field; false is not
// written.
func BoolSetting(key string, f Field, field func(*provider.Request) *bool) Setting {
	return Setting{Key: key, Fields: f,
		Enc: func(e *ReqEnc) error {
			if *field(e.R) {
				e.O.Bool(key, true)
			}
			return nil
		},
		Dec: func(d *ReqDec, v []byte) error {
			r := d.R
			b, err := Bool(v)
			*field(r) = b
			return err
		}}
}

// FloatSetting is a number member carried by one optional field.
func FloatSetting(key string, f Field, field func(*provider.Request) **float64) Setting {
	return Setting{Key: key, Fields: f,
		Enc: func(e *ReqEnc) error {
			if p := *field(e.R); p != nil {
				e.O.Float(key, *p)
			}
			return nil
		},
		Dec: func(d *ReqDec, v []byte) error {
			r := d.R
			if string(v) == "null" {
				return nil
			}
			p, err := Float(v)
			*field(r) = p
			return err
		}}
}

// IntSetting is an integer member carried by one optional field.
func IntSetting(key string, f Field, field func(*provider.Request) **int64) Setting {
	return Setting{Key: key, Fields: f,
		Enc: func(e *ReqEnc) error {
			if p := *field(e.R); p != nil {
				e.O.Int(key, *p)
			}
			return nil
		},
		Dec: func(d *ReqDec, v []byte) error {
			r := d.R
			if string(v) == "null" {
				return nil
			}
			p, err := Int(v)
			*field(r) = p
			return err
		}}
}

// CountSetting is an integer member carried by one int64 field whose zero
// means not set (Request.Candidates); 0 and null are not written.
func CountSetting(key string, f Field, field func(*provider.Request) *int64) Setting {
	return Setting{Key: key, Fields: f,
		Enc: func(e *ReqEnc) error {
			if n := *field(e.R); n != 0 {
				e.O.Int(key, n)
			}
			return nil
		},
		Dec: func(d *ReqDec, v []byte) error {
			if string(v) == "null" {
				return nil
			}
			n, err := Int(v)
			if err == nil {
				*field(d.R) = *n
			}
			return err
		}}
}

// StopSetting is a member of stop sequences, a list or a single string.
func StopSetting(key string) Setting {
	return Setting{Key: key, Fields: FStop,
		Enc: func(e *ReqEnc) error {
			if len(e.R.Stop) > 0 {
				e.O.Strings(key, e.R.Stop)
			}
			return nil
		},
		Dec: func(d *ReqDec, v []byte) error {
			r := d.R
			if s, err := Str(v); err == nil {
				r.Stop = []string{s}
				return nil
			}
			if string(v) == "null" {
				return nil
			}
			var err error
			r.Stop, err = Strings(v)
			return err
		}}
}

// MetadataSetting is an object of strings carried by Request.Metadata.
func MetadataSetting(key string) Setting {
	return Setting{Key: key, Fields: FMetadata,
		Enc: func(e *ReqEnc) error {
			if len(e.R.Metadata) > 0 {
				e.O.StrMap(key, e.R.Metadata)
			}
			return nil
		},
		Dec: func(d *ReqDec, v []byte) error {
			r := d.R
			if string(v) == "null" {
				return nil
			}
			var err error
			r.Metadata, err = StrMap(v)
			return err
		}}
}

// Array calls fn with each element of the JSON array v, naming its index
// in errors.
func Array(v []byte, fn func(i int, item []byte) error) error {
	r := jsonx.NewReader(v, convo.DefaultLimits.MaxDepth)
	if r.Peek() != jsonx.Array {
		return fmt.Errorf("want an array, have %s", clip(v))
	}
	return r.ReadArray(func(i int) error {
		item, err := r.ReadRaw()
		if err == nil {
			err = fn(i, item)
		}
		if err != nil {
			return At("["+strconv.Itoa(i)+"]", err)
		}
		return nil
	})
}

// PathError is an error inside a request body with its place, such as
// tools[3].function.name.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *PathError) Unwrap() error { return e.Err }

// At places err under the member or index step.
func At(step string, err error) error {
	if err == nil {
		return nil
	}
	var pe *PathError
	if errors.As(err, &pe) && pe == err {
		sep := "."
		if strings.HasPrefix(pe.Path, "[") {
			sep = ""
		}
		return &PathError{Path: step + sep + pe.Path, Err: pe.Err}
	}
	return &PathError{Path: step, Err: err}
}

// ToolNative writes the native members of tool i into its definition o.
func ToolNative(e *ReqEnc, o *Obj, t *provider.Tool, i int) error {
	return o.Native(t.Native, e.Provider, "tools["+strconv.Itoa(i)+"].native", &e.Warns)
}

// AppendTools appends r's tools as a JSON array: a provider's own tools as
// they were kept (when own accepts their type), function tools by fn,
// every other tool left out with a warning.
func (e *ReqEnc) AppendTools(b []byte, own func(typ string) bool, fn func(b []byte, t *provider.Tool, i int) ([]byte, error)) ([]byte, error) {
	b = append(b, '[')
	n := 0
	for i := range e.R.Tools {
		t := &e.R.Tools[i]
		var def []byte
		if t.Type != "" {
			var ok bool
			if def, ok = OwnTool(t, e.Provider); !ok || (own != nil && !own(t.Type)) {
				e.Warns = append(e.Warns, ForeignTool(i, t, e.Target))
				continue
			}
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		if def != nil {
			b = append(b, def...)
			continue
		}
		var err error
		if b, err = fn(b, t, i); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// refusable are the settings Model.RefusesWhileThinking may name, and how
// to clear each in a copy of the request.
var refusable = [...]struct {
	name  string
	set   func(r *provider.Request) bool
	clear func(r *provider.Request)
}{
	{"temperature", func(r *provider.Request) bool { return r.Temperature != nil }, func(r *provider.Request) { r.Temperature = nil }},
	{"top_p", func(r *provider.Request) bool { return r.TopP != nil }, func(r *provider.Request) { r.TopP = nil }},
	{"top_k", func(r *provider.Request) bool { return r.TopK != nil }, func(r *provider.Request) { r.TopK = nil }},
	{"presence_penalty", func(r *provider.Request) bool { return r.PresencePenalty != nil }, func(r *provider.Request) { r.PresencePenalty = nil }},
	{"frequency_penalty", func(r *provider.Request) bool { return r.FrequencyPenalty != nil }, func(r *provider.Request) { r.FrequencyPenalty = nil }},
}

// forTarget applies the rules every format shares that depend on the
// target model (r.Target): reasoning settings for a model that does not
// think are left out, and so are the sampling settings a model refuses
// while it thinks. r is copied, never changed, when a rule applies.
func forTarget(r *provider.Request, warns []provider.Warning) (*provider.Request, []provider.Warning) {
	t := &r.Target
	if !t.Known() {
		return r, warns
	}
	var c *provider.Request
	edit := func() *provider.Request {
		if c == nil {
			cp := *r
			c = &cp
		}
		return c
	}
	if t.Thinking == provider.ThinkingNone && r.Reasoning != nil {
		if r.Thinks() {
			warns = append(warns, provider.WarnCode(provider.CodeSettingRefused, "reasoning",
				"model %s does not think: reasoning settings left out", t.Name))
		}
		edit().Reasoning = nil
	}
	if r.Thinks() && len(t.RefusesWhileThinking) > 0 {
		for _, s := range refusable {
			if s.set(r) && t.Refuses(s.name) {
				warns = append(warns, provider.WarnCode(provider.CodeSettingRefused, s.name,
					"model %s refuses %s while it thinks: left out", t.Name, s.name))
				s.clear(edit())
			}
		}
	}
	if c != nil {
		return c, warns
	}
	return r, warns
}
