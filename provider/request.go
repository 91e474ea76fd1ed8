package provider

import (
	"encoding/json"
	"slices"

	"github.com/convo-go/convo"
)

// Request is a whole model request in no provider's terms: the model, the
// conversation, the tools, and the settings around them. A RequestCodec
// turns it into one provider's request body and back.
//
// The zero value of a field means "not set": the member is left out and the
// provider's default applies. Fields that are pointers are those where the
// zero value is itself a setting (a temperature of 0, parallel tool calls
// off).
//
// What one provider has and the others do not (service tiers, safety
// settings, server tools, …) is kept in Native by provider id, as the
// members of one JSON object in that provider's wire names, and sent back
// byte for byte to the same provider; every other provider drops it with a
// warning (CodeNativeDropped). Decoding a request body and encoding it again
// with the same codec gives the same JSON, up to whitespace and key order.
type Request struct {
	// Model is the model id, e.g. "claude-sonnet-4-5". Gemini and Bedrock
	// take the model in the URL, not the body: their codecs leave it out and
	// the sender (package provider/send) puts it in the URL.
	Model string `json:"model,omitempty"`
	// Target describes the model the request is encoded for: how it
	// thinks, its maximum output, what it refuses and supports. The caller
	// fills it (from a model catalogue) before EncodeRequest; decoding
	// leaves it zero, which means unknown, and encoders then follow only
	// what the request itself says. It is not part of the request body.
	Target Model `json:"-"`
	// History is the conversation: system prompt, turns, tool calls and
	// results.
	History convo.History `json:"messages,omitempty"`
	// Tools are the tools the model may call, in order.
	Tools []Tool `json:"tools,omitempty"`
	// ToolChoice says whether and which tools the model must call.
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
	// ParallelToolCalls, when set, allows or forbids several tool calls in
	// one turn (OpenAI parallel_tool_calls, Anthropic's
	// disable_parallel_tool_use inverted).
	ParallelToolCalls *bool `json:"parallel_tool_calls,omitempty"`
	// Output is the form of the reply: text, any JSON, or JSON matching a
	// schema.
	Output Output `json:"output,omitzero"`
	// MaxTokens bounds the reply's length in tokens (max_tokens,
	// max_completion_tokens, max_output_tokens, maxOutputTokens,
	// num_predict); 0 means not set.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// Sampling settings; nil means not set.
	Temperature      *float64 `json:"temperature,omitempty"`
	TopP             *float64 `json:"top_p,omitempty"`
	TopK             *int64   `json:"top_k,omitempty"`
	PresencePenalty  *float64 `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float64 `json:"frequency_penalty,omitempty"`
	Seed             *int64   `json:"seed,omitempty"`
	// Stop sequences: generation stops before any of them.
	Stop []string `json:"stop,omitempty"`
	// Candidates asks for that many alternative replies to the one request
	// (OpenAI Chat n, Gemini generationConfig.candidateCount); 0 means not
	// set, one reply. A format that returns one reply drops a count above
	// 1 with a warning (CodeCandidatesDropped). The replies are read with
	// DecodeReplies and AccumulatedReplies.
	Candidates int64 `json:"candidates,omitempty"`
	// Reasoning configures the model's thinking; nil means not set.
	Reasoning *Reasoning `json:"reasoning,omitempty"`
	// CacheKey is OpenAI's prompt_cache_key, which routes requests that
	// share a prefix to the same cache. Cache breakpoints themselves are
	// on parts (convo.Part.Cache) and on tools (Tool.Cache).
	CacheKey string `json:"cache_key,omitempty"`
	// Stream asks for a streamed reply. For Gemini and Bedrock streaming is
	// chosen by the URL (streamGenerateContent, ConverseStream), not the
	// body: the sender reads this field.
	Stream bool `json:"stream,omitempty"`
	// StreamUsage asks for token usage at the end of a stream where that is
	// optional (OpenAI Chat stream_options.include_usage).
	StreamUsage bool `json:"stream_usage,omitempty"`
	// User identifies the end user to the provider (OpenAI user /
	// safety_identifier, Anthropic metadata.user_id).
	User string `json:"user,omitempty"`
	// Metadata is free-form string metadata the provider stores with the
	// request (OpenAI metadata).
	Metadata map[string]string `json:"metadata,omitempty"`
	// Native holds request members by provider id that no field above
	// carries, as one JSON object each in that provider's wire names.
	Native convo.Native `json:"native,omitempty"`
}

// Tool is a function the model may call, or, when Type is set, one of a
// provider's own tools (web search, code execution) kept whole.
type Tool struct {
	// Type is "" for a function tool. A provider's own tool has type
	// "<provider>:<wire type>" (e.g. "anthropic:web_search_20250305") and
	// its whole wire definition in Native[<provider>]; it is sent only to
	// that provider and dropped with a warning (CodeToolDropped) elsewhere.
	Type string `json:"type,omitempty"`
	// Name is the function's name, what tool calls name.
	Name string `json:"name,omitempty"`
	// Description tells the model what the tool does and when to call it.
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments object. Nil means a
	// tool without parameters. Each codec translates it to its provider's
	// dialect (see TranslateSchema).
	Parameters json.RawMessage `json:"parameters,omitempty"`
	// Strict asks the provider to guarantee arguments that validate against
	// Parameters (OpenAI and Anthropic strict), which also makes the
	// schema subject to the provider's strict-mode rules.
	Strict bool `json:"strict,omitempty"`
	// Cache, when set, puts a prompt-cache breakpoint after this tool's
	// definition (Anthropic cache_control, Bedrock cachePoint).
	Cache *convo.Cache `json:"cache,omitempty"`
	// Native holds members of the definition no field above carries, by
	// provider id; for a provider's own tool, its whole definition.
	Native convo.Native `json:"native,omitempty"`
}

// ToolChoiceMode says how the model is to use tools.
type ToolChoiceMode string

// The tool choice modes.
const (
	ToolChoiceAuto     ToolChoiceMode = "auto"     // the model decides
	ToolChoiceNone     ToolChoiceMode = "none"     // no tool calls
	ToolChoiceRequired ToolChoiceMode = "required" // at least one call (Anthropic "any", Gemini "ANY")
	ToolChoiceTool     ToolChoiceMode = "tool"     // a call of the tool named in ToolChoice.Name
)

// ToolChoice says whether and which tools the model must call. The zero
// value leaves the choice to the provider's default.
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode,omitempty"`
	Name string         `json:"name,omitempty"` // the tool, for ToolChoiceTool
	// Allowed, for ToolChoiceAuto and ToolChoiceRequired, narrows the
	// tools the model may call to these, by name, while every tool stays
	// in the request (and in the prompt cache): OpenAI's allowed_tools,
	// Gemini's allowedFunctionNames. Empty means every tool. A format
	// without it sends every tool with a warning (CodeSettingDropped).
	Allowed []string `json:"allowed,omitempty"`
}

// OutputType is the form of a reply.
type OutputType string

// The output types.
const (
	OutputText       OutputType = "text"        // plain text, said explicitly
	OutputJSON       OutputType = "json"        // any JSON object ("JSON mode")
	OutputJSONSchema OutputType = "json_schema" // JSON matching Output.Schema
)

// Output is the form of the reply. The zero value leaves it to the provider
// (text).
type Output struct {
	Type OutputType `json:"type,omitempty"`
	// For OutputJSONSchema: the schema, its name and description (OpenAI
	// asks for a name), and whether the provider must keep to it exactly.
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

// Effort is a reasoning effort level.
type Effort string

// The effort levels. EffortNone turns reasoning off where a model can.
const (
	EffortNone    Effort = "none"
	EffortMinimal Effort = "minimal"
	EffortLow     Effort = "low"
	EffortMedium  Effort = "medium"
	EffortHigh    Effort = "high"
)

// Reasoning configures a model's thinking. Providers take it as an effort
// level (OpenAI, Gemini 3's thinkingLevel, Ollama's think) or a token budget
// (Anthropic budget_tokens, Gemini 2.5's thinkingBudget); a codec given the
// other one maps it by the table in docs/providers.md, with a warning
// (CodeSettingMapped).
type Reasoning struct {
	// Effort is the level; "" means not set.
	Effort Effort `json:"effort,omitempty"`
	// Budget is the thinking budget in tokens; 0 means not set and -1 asks
	// the model to decide (Gemini's dynamic thinking).
	Budget int64 `json:"budget,omitempty"`
	// Summary asks for summaries of the reasoning: "auto", "concise",
	// "detailed" (OpenAI Responses reasoning.summary), or "none"; Gemini's
	// includeThoughts is "auto" when true and "none" when false.
	Summary string `json:"summary,omitempty"`
	// Encrypted asks for the reasoning back in encrypted form so that a
	// stateless next turn can send it again (OpenAI Responses include
	// "reasoning.encrypted_content").
	Encrypted bool `json:"encrypted,omitempty"`
}

// RequestCodec encodes and decodes whole request bodies of one wire format.
// Every codec convo ships implements it.
type RequestCodec interface {
	Codec
	// EncodeRequest returns the whole request body for r. Everything the
	// format cannot carry is a warning whose path names the place in r
	// (tools[2].parameters.properties.when.format, temperature,
	// native.gemini.safetySettings).
	EncodeRequest(r *Request, opts Options) ([]byte, []Warning, error)
	// DecodeRequest reads a whole request body. Members with no Request
	// field are kept in Native under the codec's provider id.
	DecodeRequest(body []byte, opts Options) (*Request, []Warning, error)
}

// RequestAppender is a RequestCodec that also writes a whole request body
// into a buffer the caller hands back. Every codec convo ships implements
// it.
type RequestAppender interface {
	RequestCodec
	// AppendRequest appends the body EncodeRequest returns for r to dst and
	// returns the extended buffer; on an error it returns dst as it was.
	// A program that sends a long conversation again and again can hand
	// the same buffer back (buf[:0]) once the request it was sent with is
	// done: the body is then written into memory already in use rather
	// than a new buffer its size, which the runtime must clear first.
	AppendRequest(dst []byte, r *Request, opts Options) ([]byte, []Warning, error)
}

// Float returns a pointer to f, for Request's optional settings.
func Float(f float64) *float64 { return &f }

// Int returns a pointer to n, for Request's optional settings.
func Int(n int64) *int64 { return &n }

// Bool returns a pointer to b, for Request's optional settings.
func Bool(b bool) *bool { return &b }

// Settings returns the names of the fields of r set besides History, as
// warnings name them ("model", "tools", "temperature", "native.openai").
func (r *Request) Settings() []string {
	var out []string
	add := func(set bool, name string) {
		if set {
			out = append(out, name)
		}
	}
	add(r.Model != "", "model")
	add(len(r.Tools) > 0, "tools")
	add(r.ToolChoice.Mode != "", "tool_choice")
	add(r.ParallelToolCalls != nil, "parallel_tool_calls")
	add(r.Output.Type != "", "output")
	add(r.MaxTokens != 0, "max_tokens")
	add(r.Temperature != nil, "temperature")
	add(r.TopP != nil, "top_p")
	add(r.TopK != nil, "top_k")
	add(r.PresencePenalty != nil, "presence_penalty")
	add(r.FrequencyPenalty != nil, "frequency_penalty")
	add(r.Seed != nil, "seed")
	add(len(r.Stop) > 0, "stop")
	add(r.Candidates != 0, "candidates")
	add(r.Reasoning != nil, "reasoning")
	add(r.CacheKey != "", "cache_key")
	add(r.Stream, "stream")
	add(r.StreamUsage, "stream_usage")
	add(r.User != "", "user")
	add(len(r.Metadata) > 0, "metadata")
	ids := make([]string, 0, len(r.Native))
	for id := range r.Native {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		out = append(out, "native."+id)
	}
	return out
}
