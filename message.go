package convo

import (
	"encoding/json"
	"strings"
	"time"
)

// Role says who a message is from.
type Role string

// The roles of format v1.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"    // tool results
	RoleSummary   Role = "summary" // a summary of compacted history
	RoleError     Role = "error"   // a failed turn, kept for the record, never sent
)

// Known reports whether r is one of the roles of format v1.
func (r Role) Known() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool, RoleSummary, RoleError:
		return true
	}
	return false
}

// Phase distinguishes an assistant's working commentary from its completed
// answer. Providers that use it (OpenAI Responses) need it sent back.
type Phase string

// The phases.
const (
	PhaseCommentary Phase = "commentary"
	PhaseFinal      Phase = "final"
)

// Scope limits how long a system message applies.
type Scope string

// ScopeTurn marks a system message that applies to the current model turn
// only: it expires at the assistant's final answer of that turn.
const ScopeTurn Scope = "turn"

// Finish says why an assistant message ended.
type Finish string

// The normalised finish reasons. The provider's own reason is kept in the
// message's Native fields.
const (
	FinishStop          Finish = "stop"
	FinishLength        Finish = "length"
	FinishToolUse       Finish = "tool_use"
	FinishContentFilter Finish = "content_filter"
	FinishRefusal       Finish = "refusal"
	FinishPause         Finish = "pause"
	FinishError         Finish = "error"
	FinishOther         Finish = "other"
)

// Known reports whether f is a finish reason of format v1.
func (f Finish) Known() bool {
	switch f {
	case FinishStop, FinishLength, FinishToolUse, FinishContentFilter,
		FinishRefusal, FinishPause, FinishError, FinishOther:
		return true
	}
	return false
}

// Origin says which provider and model produced an assistant message.
type Origin struct {
	Provider   string
	Model      string
	ResponseID string
}

// Usage is the token usage a provider reported for an assistant message.
// Zero means not reported.
type Usage struct {
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
	Reasoning  int64
	Total      int64
}

// Message is one entry of a conversation.
//
// Messages are values. No method of this package modifies a Message or
// anything it refers to: transformations such as WithoutReasoning return a new
// Message that may share unchanged parts with the original. A Message that is
// no longer modified may therefore be shared freely between goroutines. Code
// that wants to edit a message it did not build should edit a Clone.
type Message struct {
	// As in Part, the fields are in the order the canonical format writes
	// them.

	Role Role
	ID   string
	Name string    // participant or actor name
	Time time.Time // when the message was recorded; zero if unknown

	Phase     Phase  // assistant only
	Effort    string // a reasoning-effort change taking effect here
	Scope     Scope  // system only
	Compacted int    // summary only: how many messages it replaces

	Origin *Origin // assistant
	Usage  *Usage  // assistant
	Cost   *Cost   // assistant: priced when recorded; nil when unknown
	Finish Finish  // assistant

	Parts []Part

	// Meta is application metadata: a JSON object kept as read.
	Meta json.RawMessage
	// Native holds provider-native message fields by provider id, such as
	// {"openai":{"role":"developer"}} for a developer message.
	Native Native
	// Extra holds message members format v1 does not define, kept verbatim.
	Extra Fields
}

// System returns a system message.
func System(text string) Message {
	return Message{Role: RoleSystem, Parts: []Part{Text(text)}}
}

// TurnSystem returns a system message that applies to the current turn
// only. It is dropped from the Curated view once the assistant has given its
// final answer for the turn.
func TurnSystem(text string) Message {
	return Message{Role: RoleSystem, Scope: ScopeTurn, Parts: []Part{Text(text)}}
}

// User returns a user message with text and optional attachments (image,
// audio, video, file parts). An empty text adds no text part.
func User(text string, attachments ...Part) Message {
	parts := make([]Part, 0, 1+len(attachments))
	if text != "" {
		parts = append(parts, Text(text))
	}
	return Message{Role: RoleUser, Parts: append(parts, attachments...)}
}

// Assistant returns an assistant message with text and optional tool calls
// (made with ToolCall). An empty text adds no text part.
func Assistant(text string, calls ...Part) Message {
	parts := make([]Part, 0, 1+len(calls))
	if text != "" {
		parts = append(parts, Text(text))
	}
	return Message{Role: RoleAssistant, Parts: append(parts, calls...)}
}

// ToolResults returns a tool message carrying one or more results (made with
// ToolResult, ToolResultParts or ToolError).
func ToolResults(results ...Part) Message {
	return Message{Role: RoleTool, Parts: results}
}

// Summary returns a summary message that stands for the compacted messages
// before it.
func Summary(text string, compacted int) Message {
	return Message{Role: RoleSummary, Compacted: compacted, Parts: []Part{Text(text)}}
}

// ErrorMessage returns an error message: a record of a failed turn that is
// kept in the full history but never sent to a model.
func ErrorMessage(text string) Message {
	return Message{Role: RoleError, Parts: []Part{Text(text)}}
}

// IsSystem reports whether m is a system message.
func (m Message) IsSystem() bool { return m.Role == RoleSystem }

// IsUser reports whether m is a user message.
func (m Message) IsUser() bool { return m.Role == RoleUser }

// IsAssistant reports whether m is an assistant message.
func (m Message) IsAssistant() bool { return m.Role == RoleAssistant }

// IsToolResult reports whether m is a tool message (it carries tool results).
func (m Message) IsToolResult() bool { return m.Role == RoleTool }

// IsSummary reports whether m is a summary of compacted history.
func (m Message) IsSummary() bool { return m.Role == RoleSummary }

// IsError reports whether m records a failed turn.
func (m Message) IsError() bool { return m.Role == RoleError }

// IsTurnScoped reports whether m is a system message for the current turn only.
func (m Message) IsTurnScoped() bool { return m.Role == RoleSystem && m.Scope == ScopeTurn }

// HasToolCalls reports whether m has at least one tool_call part for the
// caller to run: calls the provider ran itself (Part.Server) do not count.
func (m Message) HasToolCalls() bool {
	for i := range m.Parts {
		if m.Parts[i].Type == TypeToolCall && m.Parts[i].Server == "" {
			return true
		}
	}
	return false
}

// HasReasoning reports whether m has at least one reasoning part.
func (m Message) HasReasoning() bool { return m.has(TypeReasoning) }

func (m Message) has(t PartType) bool {
	for i := range m.Parts {
		if m.Parts[i].Type == t {
			return true
		}
	}
	return false
}

// IsFinalAnswer reports whether m is an assistant message that ends its turn:
// phase final, or no phase and no tool calls.
func (m Message) IsFinalAnswer() bool {
	if m.Role != RoleAssistant {
		return false
	}
	if m.Phase != "" {
		return m.Phase == PhaseFinal
	}
	return !m.HasToolCalls()
}

// ToolCalls returns the tool_call parts of m for the caller to run, not
// those the provider ran itself (see ServerTools).
func (m Message) ToolCalls() []Part { return m.partsOf(TypeToolCall, false) }

// ToolResults returns the tool_result parts of m the caller's tools gave,
// not those of provider-run tools (see ServerTools).
func (m Message) ToolResults() []Part { return m.partsOf(TypeToolResult, false) }

// Attachments returns the media parts of m (image, audio, video and file),
// in order.
func (m Message) Attachments() []Part {
	var out []Part
	for _, p := range m.Parts {
		if p.Type.IsMedia() {
			out = append(out, p)
		}
	}
	return out
}

// ServerTools returns the tool_call and tool_result parts of m of tools the
// provider ran itself (web search, code execution, …), in order.
func (m Message) ServerTools() []Part {
	var out []Part
	for _, p := range m.Parts {
		if p.IsServerTool() {
			out = append(out, p)
		}
	}
	return out
}

func (m Message) partsOf(t PartType, server bool) []Part {
	var out []Part
	for _, p := range m.Parts {
		if p.Type == t && (p.Server != "") == server {
			out = append(out, p)
		}
	}
	return out
}

// Text returns the visible text of m: its text parts joined with nothing
// between them, as a reply streamed in pieces reads ("Hello, " and "world"
// give "Hello, world"). Reasoning, refusals, tool calls and tool results are
// not included. A renderer that wants the parts on lines of their own joins
// them itself.
func (m Message) Text() string {
	n, count := 0, 0
	for i := range m.Parts {
		if m.Parts[i].Type == TypeText {
			n += len(m.Parts[i].Text)
			count++
		}
	}
	if count == 1 {
		for i := range m.Parts {
			if m.Parts[i].Type == TypeText {
				return m.Parts[i].Text
			}
		}
	}
	var b strings.Builder
	b.Grow(n)
	for i := range m.Parts {
		if m.Parts[i].Type == TypeText {
			b.WriteString(m.Parts[i].Text)
		}
	}
	return b.String()
}

// WithoutReasoning returns m without its reasoning parts. When m has none it
// returns m itself, sharing its parts, so the common case costs nothing.
func (m Message) WithoutReasoning() Message {
	if !m.HasReasoning() {
		return m
	}
	parts := make([]Part, 0, len(m.Parts)-1)
	for _, p := range m.Parts {
		if p.Type != TypeReasoning {
			parts = append(parts, p)
		}
	}
	m.Parts = parts
	return m
}

// WithTextPrefix returns m with prefix put in front of its first text part,
// or a new leading text part when m has none. A first text part that already
// starts with prefix is left alone, so applying it twice is harmless. This
// is how a multi-party conversation tells the model who speaks ("[Alice] ").
func (m Message) WithTextPrefix(prefix string) Message {
	if prefix == "" {
		return m
	}
	for i := range m.Parts {
		if m.Parts[i].Type != TypeText {
			continue
		}
		if strings.HasPrefix(m.Parts[i].Text, prefix) {
			return m
		}
		parts := append([]Part(nil), m.Parts...)
		parts[i].Text = prefix + parts[i].Text
		m.Parts = parts
		return m
	}
	m.Parts = append([]Part{Text(prefix)}, m.Parts...)
	return m
}

// WithActorPrefix returns m with "[Name] " in front of its text, when m has a
// Name; otherwise m unchanged.
func (m Message) WithActorPrefix() Message {
	if m.Name == "" {
		return m
	}
	return m.WithTextPrefix("[" + m.Name + "] ")
}

// Clone returns a deep copy of m that shares nothing with it.
func (m Message) Clone() Message {
	m.Parts = cloneParts(m.Parts)
	if m.Origin != nil {
		o := *m.Origin
		m.Origin = &o
	}
	if m.Usage != nil {
		u := *m.Usage
		m.Usage = &u
	}
	if m.Cost != nil {
		c := *m.Cost
		m.Cost = &c
	}
	m.Meta = cloneRaw(m.Meta)
	m.Native = m.Native.clone()
	m.Extra = m.Extra.clone()
	return m
}

func cloneParts(ps []Part) []Part {
	if ps == nil {
		return nil
	}
	out := make([]Part, len(ps))
	for i, p := range ps {
		if p.Cache != nil {
			c := *p.Cache
			p.Cache = &c
		}
		p.Value = cloneRaw(p.Value)
		p.Args = cloneRaw(p.Args)
		p.Citations = cloneCitations(p.Citations)
		p.Parts = cloneParts(p.Parts)
		if p.Summary != nil {
			p.Summary = append([]string(nil), p.Summary...)
		}
		p.Native = p.Native.clone()
		p.Extra = p.Extra.clone()
		p.Raw = cloneRaw(p.Raw)
		out[i] = p
	}
	return out
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

func (n Native) clone() Native {
	if n == nil {
		return nil
	}
	out := make(Native, len(n))
	for k, v := range n {
		out[k] = cloneRaw(v)
	}
	return out
}

func (f Fields) clone() Fields {
	if f == nil {
		return nil
	}
	out := make(Fields, len(f))
	for i, x := range f {
		out[i] = Field{Key: x.Key, Value: cloneRaw(x.Value)}
	}
	return out
}

// EstimatedBytes estimates the size of m in canonical JSON without encoding
// it: every string and JSON value plus the member names around them, with
// escaping ignored. It is close (within a few percent for typical messages)
// and cheap enough for a pre-flight overflow check.
func (m Message) EstimatedBytes() int {
	n := 12 + len(m.Role) + str("id", m.ID) + str("name", m.Name) + str("phase", string(m.Phase)) +
		str("effort", m.Effort) + str("scope", string(m.Scope)) + str("finish", string(m.Finish)) +
		raw("meta", m.Meta) + num("compacted", int64(m.Compacted))
	if !m.Time.IsZero() {
		n += 40
	}
	if o := m.Origin; o != nil {
		n += 11 + str("provider", o.Provider) + str("model", o.Model) + str("response_id", o.ResponseID)
	}
	if u := m.Usage; u != nil {
		n += 10 + num("input", u.Input) + num("output", u.Output) + num("cache_read", u.CacheRead) +
			num("cache_write", u.CacheWrite) + num("reasoning", u.Reasoning) + num("total", u.Total)
	}
	if m.Cost != nil {
		n += 40
	}
	return n + m.Native.size() + m.Extra.size() + partsSize(m.Parts)
}

// str, raw and num estimate one member: ,"key":value.
func str(key, s string) int {
	if s == "" {
		return 0
	}
	return len(key) + len(s) + 6
}

func raw(key string, v []byte) int {
	if v == nil {
		return 0
	}
	return len(key) + len(v) + 4
}

func num(key string, v int64) int {
	if v == 0 {
		return 0
	}
	d := 1
	for ; v >= 10; v /= 10 {
		d++
	}
	return len(key) + d + 4
}

func partsSize(ps []Part) int {
	if len(ps) == 0 {
		return 0
	}
	n := 10
	for i := range ps {
		p := &ps[i]
		if p.Raw != nil {
			n += len(p.Raw) + 1
			continue
		}
		// In the order of Part's fields, as the encoder reads them.
		n += 11 + len(p.Type) + str("server", p.Server) + str("id", p.ID) + str("call_id", p.CallID) +
			str("name", p.Name) + str("text", p.Text) + str("media_type", p.MediaType) +
			str("data", p.Data) + str("url", p.URL) + str("file_id", p.FileID) +
			str("detail", p.Detail) + citationsSize(p.Citations) + raw("value", p.Value) +
			raw("args", p.Args) + str("args_raw", p.ArgsRaw) + partsSize(p.Parts)
		if p.Error {
			n += 13
		}
		if p.Type == TypeApproval {
			n += 16
		}
		n += str("reason", p.Reason)
		if len(p.Summary) > 0 {
			n += 12
			for _, s := range p.Summary {
				n += len(s) + 3
			}
		}
		n += str("signature", p.Signature) + str("encrypted", p.Encrypted) +
			str("provider", p.Provider) + str("model", p.Model)
		if p.Cache != nil {
			n += 10 + str("ttl", p.Cache.TTL)
		}
		n += p.Native.size() + p.Extra.size()
	}
	return n
}

func (n Native) size() int {
	if len(n) == 0 {
		return 0
	}
	s := 11
	for k, v := range n {
		s += len(k) + len(v) + 4
	}
	return s
}

func (f Fields) size() int {
	s := 0
	for _, x := range f {
		s += len(x.Key) + len(x.Value) + 4
	}
	return s
}

func cloneCitations(cs []Citation) []Citation {
	if cs == nil {
		return nil
	}
	out := make([]Citation, len(cs))
	for i, c := range cs {
		if c.Span != nil {
			s := *c.Span
			c.Span = &s
		}
		c.Native = c.Native.clone()
		c.Extra = c.Extra.clone()
		out[i] = c
	}
	return out
}
