// Package litert converts between convo histories and LiteRT-LM's
// conversation messages: the JSON array of messages a LiteRT-LM
// Conversation is restored from, and the replies it streams as message
// chunks; Conversation returns one value for both.
//
// LiteRT-LM runs models on device and renders these messages with the
// model's own Jinja template, so its JSON is loose; this package reads what
// runtime/conversation/io_types.cc reads and writes what it writes:
//
//   - roles system, user, assistant (or model, remembered) and tool;
//   - "content" is a string, an array of parts or a single part object; the
//     form is remembered; encoding a foreign history writes arrays;
//   - parts text, image and audio (inline "blob" base64 or a local "path",
//     which convo keeps as a file: URL); no media type on the wire:
//     decoding sniffs it from the bytes or the file extension;
//   - tool calls {"type":"function","function":{name, arguments},"id"?}
//     with optional ids (synthesised on decode, never sent back);
//   - tool results as Kotlin's {"type":"tool_response","name","response"},
//     the C++ {"type":"function_response", response string}, untyped
//     {"name","response"} parts, or plain parts; a failed result is sent as
//     {"error": …} (a string response starts with "Error: ") since there is
//     no error flag;
//   - "channels": the "thought" channel is a plain reasoning part; other
//     channels are kept in Native.
//
// Members convo has no field for are kept in Native under "litert" and
// written back. docs/providers.md has the full table and the points
// the LiteRT-LM sources leave open.
package litert

import (
	"github.com/convo-go/convo/provider"
)

// ProviderID is the provider id LiteRT-LM messages carry in Origin,
// reasoning parts and Native.
const ProviderID = "litert"

// Name is the format's name on the command line.
const Name = "litert"

// errorPrefix starts a failed tool result's text where the result is a
// string: LiteRT-LM has no error flag.
const errorPrefix = "Error: "

// thought is the name of LiteRT-LM's reasoning channel (channel_util.h).
const thought = "thought"

// Conversation returns the LiteRT-LM Conversation format: the request codec
// (the message array a Conversation is restored from) and the reply codec
// (the message send_message returns, or the chunks its streaming callback
// delivers, one message JSON per line) in one value.
func Conversation() provider.Format { return conversation{} }

// conversation is the Conversation format; its zero value is ready to use.
type conversation struct{}

// Name returns "litert".
func (conversation) Name() string { return Name }

// Provider returns "litert".
func (conversation) Provider() string { return ProviderID }

// target is what LiteRT-LM messages can carry, for provider.Prepare.
var target = provider.Target{
	Provider:       ProviderID,
	PlainReasoning: true,
	// Model templates (Gemma's among them) take a system message only at
	// the start: a later one becomes user text.
	MidSystem: false,
	Media:     acceptsMedia,
}
