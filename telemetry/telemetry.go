// Package telemetry records model calls as OpenTelemetry spans that follow
// the GenAI semantic conventions: one span per exchange (a request to a
// model and its reply), named "chat MODEL", of kind client, with the
// gen_ai.* attributes — provider, models, response id, finish reasons,
// conversation id, token usage with cache and reasoning tokens — and, when
// content capture is on, the system instructions and the input and output
// messages in the conventions' parts shape, reasoning and tool calls
// included.
//
// Content capture is off by default: messages may hold what users would not
// want in a tracing backend. The package uses only the OpenTelemetry API;
// the program chooses the SDK and exporter (OTLP, say) and passes a
// trace.TracerProvider.
package telemetry

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/convo-go/convo"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/convo-go/convo/telemetry"

// The attribute keys of the GenAI semantic conventions this package sets.
const (
	AttrOperation          = "gen_ai.operation.name"
	AttrProvider           = "gen_ai.provider.name"
	AttrRequestModel       = "gen_ai.request.model"
	AttrResponseModel      = "gen_ai.response.model"
	AttrResponseID         = "gen_ai.response.id"
	AttrFinishReasons      = "gen_ai.response.finish_reasons"
	AttrConversationID     = "gen_ai.conversation.id"
	AttrInputTokens        = "gen_ai.usage.input_tokens"
	AttrOutputTokens       = "gen_ai.usage.output_tokens"
	AttrCacheReadTokens    = "gen_ai.usage.cache_read.input_tokens"
	AttrCacheWriteTokens   = "gen_ai.usage.cache_creation.input_tokens"
	AttrReasoningTokens    = "gen_ai.usage.reasoning.output_tokens"
	AttrSystemInstructions = "gen_ai.system_instructions"
	AttrInputMessages      = "gen_ai.input.messages"
	AttrOutputMessages     = "gen_ai.output.messages"
	AttrRequestStream      = "gen_ai.request.stream"
	AttrErrorType          = "error.type"
	AttrServerAddress      = "server.address"
	AttrServerPort         = "server.port"
)

// What convo adds to the conventions: the span of an exchange that was
// answered but not recorded (convo gateway's recording queue was full, or
// it was shutting down) has AttrRecordingDropped set to true and an event
// EventRecordingDropped, at the moment it was dropped, whose
// AttrDropReason says why.
const (
	AttrRecordingDropped  = "convo.recording.dropped"
	EventRecordingDropped = "convo.recording.dropped"
	AttrDropReason        = "convo.recording.drop_reason"
	// AttrCost is what the reply cost in US dollars (its convo.Cost), a
	// double for tracing backends to add up; the exact amount is the
	// one the store keeps. Absent when the reply was not priced.
	AttrCost = "convo.cost.usd"
)

// Options control what the spans carry.
type Options struct {
	// CaptureContent records the system instructions and the input and
	// output messages (the opt-in attributes gen_ai.system_instructions,
	// gen_ai.input.messages, gen_ai.output.messages). Off by default.
	CaptureContent bool
}

// Request describes a model call as it starts.
type Request struct {
	// Provider is convo's provider id ("openai", "anthropic", "gemini",
	// "bedrock", "ollama", "litert"); it is reported under the
	// conventions' name for it (gcp.gemini, aws.bedrock, …).
	Provider string
	// Operation is the conventions' operation name; "" means "chat".
	Operation string
	// Model is the model requested.
	Model string
	// ConversationID names the conversation the exchange belongs to.
	ConversationID string
	// History is what is sent: the system instructions and the messages.
	History convo.History
	// Stream says the reply is streamed.
	Stream bool
	// ServerAddress and ServerPort name the endpoint called, when known.
	ServerAddress string
	ServerPort    int
}

// Tracer makes exchange spans.
type Tracer struct {
	tracer trace.Tracer
	opts   Options
}

// New returns a Tracer that makes its spans with tp.
func New(tp trace.TracerProvider, opts Options) *Tracer {
	return &Tracer{tracer: tp.Tracer(ScopeName), opts: opts}
}

// Span is an exchange in flight.
type Span struct {
	span trace.Span
	opts Options
}

// Start starts the span of an exchange. The returned context carries it, so
// spans of the HTTP call beneath become its children.
func (t *Tracer) Start(ctx context.Context, req Request) (context.Context, *Span) {
	return t.start(ctx, req, time.Time{})
}

func (t *Tracer) start(ctx context.Context, req Request, at time.Time) (context.Context, *Span) {
	op := req.Operation
	if op == "" {
		op = "chat"
	}
	name := op
	if req.Model != "" {
		name += " " + req.Model
	}
	attrs := []attribute.KeyValue{
		attribute.String(AttrOperation, op),
		attribute.String(AttrProvider, ProviderName(req.Provider)),
	}
	if req.Model != "" {
		attrs = append(attrs, attribute.String(AttrRequestModel, req.Model))
	}
	if req.ConversationID != "" {
		attrs = append(attrs, attribute.String(AttrConversationID, req.ConversationID))
	}
	if req.Stream {
		attrs = append(attrs, attribute.Bool(AttrRequestStream, true))
	}
	if req.ServerAddress != "" {
		attrs = append(attrs, attribute.String(AttrServerAddress, req.ServerAddress))
		if req.ServerPort > 0 {
			attrs = append(attrs, attribute.Int(AttrServerPort, req.ServerPort))
		}
	}
	if t.opts.CaptureContent {
		system, input := Messages(req.History)
		if len(system) > 0 {
			attrs = append(attrs, attribute.String(AttrSystemInstructions, string(mustJSON(system))))
		}
		attrs = append(attrs, attribute.String(AttrInputMessages, string(mustJSON(input))))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)}
	if !at.IsZero() {
		opts = append(opts, trace.WithTimestamp(at))
	}
	ctx, span := t.tracer.Start(ctx, name, opts...)
	return ctx, &Span{span: span, opts: t.opts}
}

// End ends the span with the reply (an assistant message) or the error
// that ended the exchange.
func (s *Span) End(reply convo.Message, err error) { s.end(reply, err, time.Time{}) }

func (s *Span) end(reply convo.Message, err error, at time.Time) {
	sp := s.span
	if o := reply.Origin; o != nil {
		if o.Model != "" {
			sp.SetAttributes(attribute.String(AttrResponseModel, o.Model))
		}
		if o.ResponseID != "" {
			sp.SetAttributes(attribute.String(AttrResponseID, o.ResponseID))
		}
	}
	if reply.Finish != "" {
		sp.SetAttributes(attribute.StringSlice(AttrFinishReasons, []string{FinishReason(reply.Finish)}))
	}
	if u := reply.Usage; u != nil {
		// convo's input counts every input token, cached or not, as the
		// conventions want gen_ai.usage.input_tokens to.
		for _, a := range []struct {
			key string
			n   int64
		}{
			{AttrInputTokens, u.Input}, {AttrOutputTokens, u.Output}, {AttrCacheReadTokens, u.CacheRead},
			{AttrCacheWriteTokens, u.CacheWrite}, {AttrReasoningTokens, u.Reasoning},
		} {
			if a.n > 0 {
				sp.SetAttributes(attribute.Int64(a.key, a.n))
			}
		}
	}
	if c := reply.Cost; c != nil {
		// A nano-dollar amount is exact in a double up to some 9 million
		// dollars; past that it is as near as a double gets.
		sp.SetAttributes(attribute.Float64(AttrCost, float64(c.USD)/float64(convo.Dollar)))
	}
	if s.opts.CaptureContent && reply.Role == convo.RoleAssistant {
		sp.SetAttributes(attribute.String(AttrOutputMessages, string(mustJSON([]OutputMessage{outputMessage(reply)}))))
	}
	if err != nil {
		sp.SetAttributes(attribute.String(AttrErrorType, errorType(err)))
		sp.SetStatus(codes.Error, err.Error())
	}
	var opts []trace.SpanEndOption
	if !at.IsZero() {
		opts = append(opts, trace.WithTimestamp(at))
	}
	sp.End(opts...)
}

// SpanContext returns the span's context (its trace and span ids).
func (s *Span) SpanContext() trace.SpanContext { return s.span.SpanContext() }

// Record makes the span of an exchange that has already happened, from
// start to end: for a program that learns of exchanges after the fact (a
// recorded log, a gateway's store).
func (t *Tracer) Record(ctx context.Context, req Request, reply convo.Message, err error, start, end time.Time) trace.SpanContext {
	_, s := t.start(ctx, req, start)
	s.end(reply, err, end)
	return s.SpanContext()
}

// RecordDropped makes the span of an exchange that has already happened and
// whose recording was dropped, at the moment dropped, for reason ("queue
// full"): the request's attributes, err (nil for an exchange that
// succeeded) as for Record, and the drop (AttrRecordingDropped,
// EventRecordingDropped). The reply is not known: a program drops a
// recording to avoid the cost of reading it.
func (t *Tracer) RecordDropped(ctx context.Context, req Request, err error, reason string, start, end, dropped time.Time) trace.SpanContext {
	_, s := t.start(ctx, req, start)
	s.span.SetAttributes(attribute.Bool(AttrRecordingDropped, true))
	s.span.AddEvent(EventRecordingDropped, trace.WithTimestamp(dropped), trace.WithAttributes(attribute.String(AttrDropReason, reason)))
	s.end(convo.Message{}, err, end)
	return s.SpanContext()
}

// ProviderName maps convo's provider id to the value of
// gen_ai.provider.name the conventions define for it; an id they do not
// name is reported as it is.
func ProviderName(id string) string {
	switch id {
	case "gemini":
		return "gcp.gemini"
	case "bedrock":
		return "aws.bedrock"
	case "":
		return "unknown"
	}
	return id // openai, anthropic, and names the conventions do not list
}

// FinishReason maps convo's finish reason to the conventions'.
func FinishReason(f convo.Finish) string {
	switch f {
	case convo.FinishToolUse:
		return "tool_call"
	case convo.FinishStop, convo.FinishLength, convo.FinishContentFilter, convo.FinishError:
		return string(f)
	}
	return string(f) // refusal, pause, other: kept as convo names them
}

// errorType is the conventions' error.type: a short class of the error.
func errorType(err error) string {
	type typed interface{ ErrorType() string }
	if t, ok := err.(typed); ok {
		return t.ErrorType()
	}
	if err == context.DeadlineExceeded {
		return "timeout"
	}
	if err == context.Canceled {
		return "canceled"
	}
	return "_OTHER"
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Every value here is built from checked JSON and strings.
		return []byte("[]")
	}
	return b
}

// ChatMessage is a message in the conventions' shape.
type ChatMessage struct {
	Role  string `json:"role"`
	Name  string `json:"name,omitempty"`
	Parts []Part `json:"parts"`
}

// OutputMessage is a reply in the conventions' shape.
type OutputMessage struct {
	Role         string `json:"role"`
	Name         string `json:"name,omitempty"`
	Parts        []Part `json:"parts"`
	FinishReason string `json:"finish_reason"`
}

// Part is a message part in the conventions' shape: text, reasoning,
// tool_call, tool_call_response, blob, uri, file, or a generic part of
// another type (refusal, json). Which fields matter depends on Type.
type Part struct {
	Type      string
	Content   any // text, reasoning, refusal: the text; json: the value; blob: base64
	ID        string
	Name      string
	Arguments json.RawMessage
	Response  any
	MimeType  string
	Modality  string
	URI       string
	FileID    string
}

// Messages converts a history to the conventions' shapes: the leading
// system messages as system instructions (a list of parts), the rest as
// input messages. Error messages, which are never sent, are left out;
// summaries are sent as user text, so they appear as user messages.
func Messages(h convo.History) (system []Part, input []ChatMessage) {
	i := 0
	for ; i < len(h) && h[i].Role == convo.RoleSystem; i++ {
		system = append(system, parts(h[i].Parts)...)
	}
	input = []ChatMessage{}
	for _, m := range h[i:] {
		role := string(m.Role)
		switch m.Role {
		case convo.RoleError:
			continue
		case convo.RoleSummary:
			role = "user"
		}
		input = append(input, ChatMessage{Role: role, Name: m.Name, Parts: parts(m.Parts)})
	}
	return system, input
}

func outputMessage(m convo.Message) OutputMessage {
	finish := FinishReason(m.Finish)
	if finish == "" {
		finish = "stop"
		if m.HasToolCalls() {
			finish = "tool_call"
		}
	}
	return OutputMessage{Role: "assistant", Name: m.Name, Parts: parts(m.Parts), FinishReason: finish}
}

func parts(ps []convo.Part) []Part {
	out := make([]Part, 0, len(ps))
	for _, p := range ps {
		if q, ok := part(p); ok {
			out = append(out, q)
		}
	}
	return out
}

// part maps one part. Reasoning that holds no readable text (only a
// signature or an encrypted payload) is left out: the conventions record
// what the model thought, not opaque tokens.
func part(p convo.Part) (Part, bool) {
	switch p.Type {
	case convo.TypeText:
		return Part{Type: "text", Content: p.Text}, true
	case convo.TypeRefusal:
		return Part{Type: "refusal", Content: p.Text}, true
	case convo.TypeReasoning:
		text := p.Text
		if text == "" {
			text = strings.Join(p.Summary, "\n\n")
		}
		if text == "" {
			return Part{}, false
		}
		return Part{Type: "reasoning", Content: text}, true
	case convo.TypeToolCall:
		args := p.Args
		if args == nil {
			args = mustJSON(p.ArgsRaw)
		}
		return Part{Type: "tool_call", ID: p.ID, Name: p.Name, Arguments: args}, true
	case convo.TypeToolResult:
		return Part{Type: "tool_call_response", ID: p.ID, Response: resultValue(p)}, true
	case convo.TypeJSON:
		return Part{Type: "json", Content: json.RawMessage(p.Value)}, true
	case convo.TypeImage, convo.TypeAudio, convo.TypeVideo, convo.TypeFile:
		q := Part{MimeType: p.MediaType, Modality: modality(p.Type)}
		switch {
		case p.Data != "":
			q.Type, q.Content = "blob", p.Data
		case p.URL != "":
			q.Type, q.URI = "uri", p.URL
		case p.FileID != "":
			q.Type, q.FileID = "file", p.FileID
		case p.Text != "":
			return Part{Type: "text", Content: p.Text}, true // an inline text document
		default:
			return Part{}, false
		}
		return q, true
	}
	return Part{Type: string(p.Type)}, p.Type != ""
}

func modality(t convo.PartType) string {
	switch t {
	case convo.TypeImage:
		return "image"
	case convo.TypeAudio:
		return "audio"
	case convo.TypeVideo:
		return "video"
	}
	return "document"
}

// resultValue is a tool result's content: its text when it is only text,
// its JSON value when it is one, else its parts; an error result says so.
func resultValue(p convo.Part) any {
	var v any
	switch {
	case len(p.Parts) == 1 && p.Parts[0].Type == convo.TypeText:
		v = p.Parts[0].Text
	case len(p.Parts) == 1 && p.Parts[0].Type == convo.TypeJSON:
		v = json.RawMessage(p.Parts[0].Value)
	case len(p.Parts) == 0:
		v = ""
	default:
		v = parts(p.Parts)
	}
	if p.Error {
		return map[string]any{"error": v}
	}
	return v
}

// MarshalJSON writes the members of the part's type, required ones always
// (a text part's content even when empty).
func (p Part) MarshalJSON() ([]byte, error) {
	type kv struct {
		k string
		v any
	}
	fields := []kv{{"type", p.Type}}
	media := func(extra kv) {
		if p.MimeType != "" {
			fields = append(fields, kv{"mime_type", p.MimeType})
		}
		fields = append(fields, kv{"modality", p.Modality}, extra)
	}
	switch p.Type {
	case "text", "reasoning", "refusal", "json":
		fields = append(fields, kv{"content", p.Content})
	case "tool_call":
		args := p.Arguments
		if args == nil {
			args = json.RawMessage("null")
		}
		fields = append(fields, kv{"id", p.ID}, kv{"name", p.Name}, kv{"arguments", args})
	case "tool_call_response":
		fields = append(fields, kv{"id", p.ID}, kv{"response", p.Response})
	case "blob":
		media(kv{"content", p.Content})
	case "uri":
		media(kv{"uri", p.URI})
	case "file":
		media(kv{"file_id", p.FileID})
	}
	var b []byte
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(f.k)
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// RecordHistory makes the spans of a recorded conversation, one per
// exchange: every assistant message is the reply to the messages before
// it. An exchange starts at the time of the message before its reply and
// ends at the reply's (now, when the history has no times). The request's
// model and provider, when empty, are the reply's origin. It returns how
// many spans it made.
func (t *Tracer) RecordHistory(ctx context.Context, req Request, h convo.History) int {
	n := 0
	for i, m := range h {
		if m.Role != convo.RoleAssistant {
			continue
		}
		r := req
		r.History = h[:i]
		if o := m.Origin; o != nil {
			if r.Model == "" {
				r.Model = o.Model
			}
			if r.Provider == "" {
				r.Provider = o.Provider
			}
		}
		end := m.Time
		if end.IsZero() {
			end = time.Now()
		}
		start := end
		if i > 0 && !h[i-1].Time.IsZero() && h[i-1].Time.Before(end) {
			start = h[i-1].Time
		}
		t.Record(ctx, r, m, nil, start, end)
		n++
	}
	return n
}
