package convo

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// PartType discriminates the kinds of Part. A Part whose type convo does not
// know keeps its whole JSON object in Part.Raw.
type PartType string

// The part types of canonical format v1.
const (
	TypeText       PartType = "text"
	TypeImage      PartType = "image"
	TypeAudio      PartType = "audio"
	TypeVideo      PartType = "video"
	TypeFile       PartType = "file"
	TypeJSON       PartType = "json"
	TypeToolCall   PartType = "tool_call"
	TypeToolResult PartType = "tool_result"
	TypeReasoning  PartType = "reasoning"
	TypeRefusal    PartType = "refusal"

	// TypeApprovalRequest is an assistant's request for a person to
	// approve a tool run before it happens (human in the loop).
	TypeApprovalRequest PartType = "approval_request"
	// TypeApproval is the answer to an approval request, in a user message.
	TypeApproval PartType = "approval"
)

// The kinds of provider-run (server) tools, for Part.Server. A kind convo
// does not list is the provider's own name for the tool.
const (
	ServerWebSearch       = "web_search"
	ServerWebFetch        = "web_fetch"
	ServerCodeExecution   = "code_execution"
	ServerMCP             = "mcp"
	ServerFileSearch      = "file_search"
	ServerImageGeneration = "image_generation"
	ServerToolSearch      = "tool_search"
)

// Known reports whether t is a part type of format v1.
func (t PartType) Known() bool {
	switch t {
	case TypeText, TypeImage, TypeAudio, TypeVideo, TypeFile, TypeJSON,
		TypeToolCall, TypeToolResult, TypeReasoning, TypeRefusal,
		TypeApprovalRequest, TypeApproval:
		return true
	}
	return false
}

// IsMedia reports whether t is image, audio, video or file.
func (t PartType) IsMedia() bool {
	return t == TypeImage || t == TypeAudio || t == TypeVideo || t == TypeFile
}

// Cache marks a prompt-cache breakpoint after a part. TTL is "" (the
// provider's default), "5m" or "1h".
type Cache struct {
	TTL string
}

// Part is one content block of a message. It is a flat value: which fields
// are meaningful depends on Type, as in the canonical format:
//
//   - text: Text, Citations, Cache
//   - image, audio, video, file: MediaType and exactly one source — Data
//     (standard base64), URL, FileID, or Text (file only: an inline text
//     document); Name, Detail (image), Cache
//   - json: Value
//   - tool_call: ID, Name, Args (or ArgsRaw when the model produced malformed
//     arguments); Server and Provider when the provider ran the tool itself
//   - tool_result: ID (the call's), Name, Parts, Error; Server and Provider
//     when it is the result of a provider-run call
//   - reasoning: Text, Summary, Signature, Encrypted, ID, Provider, Model
//   - refusal: Text
//   - approval_request: ID (the request's), CallID (the tool_call it gates,
//     if the model made one), Name (the tool), Args (or ArgsRaw)
//   - approval: ID (of the request it answers), Approved, Reason
//
// Any part may carry Native fields. A part of unknown Type keeps its whole
// object in Raw and is written back verbatim.
type Part struct {
	// The fields are declared in the order the canonical format writes
	// them, which is the order the encoder reads them: a long history is
	// read from memory rather than the caches, and reads that only move
	// forward let the processor fetch the next lines before they are needed.

	Type PartType
	// Raw is the whole object of a part whose Type is not known.
	Raw json.RawMessage

	// Server, on a tool_call or tool_result, marks a tool the provider
	// ran itself (web search, code execution, …) and names its kind: one
	// of the Server* constants, or the provider's own name for a kind
	// convo does not list. Such a call is answered inside the same
	// assistant message, or not at all: it is never pending.
	Server string
	ID     string
	CallID string // approval_request: the tool_call it gates
	Name   string

	Text      string
	MediaType string
	Data      string // standard base64, kept as read: never decoded to store it
	URL       string
	FileID    string
	Detail    string

	Citations []Citation // text: the sources the text draws on

	Value json.RawMessage // json parts

	Args    json.RawMessage
	ArgsRaw string

	Parts    []Part // tool_result content
	Error    bool   // tool_result: the tool failed
	Approved bool   // approval: true approves the request, false denies it
	Reason   string // approval: why, as the person gave it

	Summary   []string
	Signature string
	Encrypted string
	Provider  string
	Model     string

	Cache *Cache

	// Native holds provider-only fields by provider id ("gemini",
	// "openai", …), each a JSON object in the provider's own wire names.
	Native Native
	// Extra holds members of a known part type that format v1 does not
	// define, kept so a newer writer's fields survive a round trip.
	Extra Fields
}

// Text returns a text part.
func Text(s string) Part { return Part{Type: TypeText, Text: s} }

// Refusal returns a refusal part: the model declined to answer.
func Refusal(s string) Part { return Part{Type: TypeRefusal, Text: s} }

// Reasoning returns a plain reasoning part with visible text and no
// signature. Reasoning read from a provider carries more fields; build those
// with a Part literal.
func Reasoning(text string) Part { return Part{Type: TypeReasoning, Text: text} }

// JSON returns a json part holding v, which must be valid JSON.
func JSON(v json.RawMessage) Part { return Part{Type: TypeJSON, Value: v} }

func media(t PartType, mediaType string, data []byte) Part {
	return Part{Type: t, MediaType: mediaType, Data: base64.StdEncoding.EncodeToString(data)}
}

// Image returns an image part holding data inline (it is base64-encoded once).
func Image(mediaType string, data []byte) Part { return media(TypeImage, mediaType, data) }

// ImageURL returns an image part that refers to url. convo never fetches it.
func ImageURL(mediaType, url string) Part {
	return Part{Type: TypeImage, MediaType: mediaType, URL: url}
}

// Audio returns an audio part holding data inline.
func Audio(mediaType string, data []byte) Part { return media(TypeAudio, mediaType, data) }

// Video returns a video part holding data inline.
func Video(mediaType string, data []byte) Part { return media(TypeVideo, mediaType, data) }

// File returns a file part holding a document inline, with its file name.
func File(mediaType, name string, data []byte) Part {
	p := media(TypeFile, mediaType, data)
	p.Name = name
	return p
}

// ToolCall returns a tool_call part. args is the arguments object as JSON.
func ToolCall(id, name string, args json.RawMessage) Part {
	return Part{Type: TypeToolCall, ID: id, Name: name, Args: args}
}

// ToolResult returns a successful tool_result part answering call id with a
// text output.
func ToolResult(id, name, output string) Part {
	return Part{Type: TypeToolResult, ID: id, Name: name, Parts: []Part{Text(output)}}
}

// ToolResultParts returns a successful tool_result part whose content is
// parts (text, json, image, audio, video or file).
func ToolResultParts(id, name string, parts ...Part) Part {
	return Part{Type: TypeToolResult, ID: id, Name: name, Parts: parts}
}

// ToolError returns a tool_result part that reports the tool failed, with a
// message for the model.
func ToolError(id, name, message string) Part {
	return Part{Type: TypeToolResult, ID: id, Name: name, Parts: []Part{Text(message)}, Error: true}
}

// ServerToolCall returns a tool_call part the provider ran itself: kind is
// a Server* constant (or the provider's own name), provider the id of the
// provider that ran it.
func ServerToolCall(kind, provider, id, name string, args json.RawMessage) Part {
	return Part{Type: TypeToolCall, Server: kind, Provider: provider, ID: id, Name: name, Args: args}
}

// ServerToolResult returns the result of a provider-run call: what came
// back, as parts (text, json or media).
func ServerToolResult(kind, provider, id, name string, parts ...Part) Part {
	return Part{Type: TypeToolResult, Server: kind, Provider: provider, ID: id, Name: name, Parts: parts}
}

// IsServerTool reports whether p is a tool_call or tool_result of a tool
// the provider ran itself.
func (p Part) IsServerTool() bool {
	return p.Server != "" && (p.Type == TypeToolCall || p.Type == TypeToolResult)
}

// ApprovalRequest returns an approval_request part: the model wants to run
// tool name with args and asks a person first. callID names the tool_call
// it gates ("" when the request stands for the call, as OpenAI's MCP
// approvals do).
func ApprovalRequest(id, callID, name string, args json.RawMessage) Part {
	return Part{Type: TypeApprovalRequest, ID: id, CallID: callID, Name: name, Args: args}
}

// Approve returns an approval part approving request id.
func Approve(id string) Part { return Part{Type: TypeApproval, ID: id, Approved: true} }

// Deny returns an approval part denying request id, with an optional reason.
func Deny(id, reason string) Part { return Part{Type: TypeApproval, ID: id, Reason: reason} }

// Bytes decodes the part's inline base64 Data.
func (p Part) Bytes() ([]byte, error) {
	return base64.StdEncoding.DecodeString(p.Data)
}

// DataSize is the number of bytes the part's inline base64 Data decodes
// to, counted without decoding it (padding excluded): the size to show a
// reader, the same everywhere convo shows one.
func (p Part) DataSize() int {
	n := len(p.Data) / 4 * 3
	if rest := len(p.Data) % 4; rest > 1 { // unpadded base64: a short last group
		n += rest - 1
	}
	return n - strings.Count(p.Data[max(0, len(p.Data)-2):], "=")
}

// WithCache returns a copy of p with a cache breakpoint of the given TTL
// ("" for the provider's default).
func (p Part) WithCache(ttl string) Part {
	p.Cache = &Cache{TTL: ttl}
	return p
}

// Native maps a provider id to a JSON object of that provider's own fields.
type Native map[string]json.RawMessage

// Field is one JSON object member kept verbatim.
type Field struct {
	Key   string
	Value json.RawMessage
}

// Fields are object members kept in the order they were read.
type Fields []Field

// Get returns the value of key, or nil.
func (f Fields) Get(key string) json.RawMessage {
	for _, x := range f {
		if x.Key == key {
			return x.Value
		}
	}
	return nil
}
