// Package ollama converts between convo histories and the Ollama /api/chat
// format: Chat returns one value that encodes and decodes the request's
// "messages" and decodes the reply, whole or streamed as NDJSON.
//
// The mapping, both ways:
//
//   - roles system, user, assistant and tool map one to one; a convo tool
//     message with several results becomes one Ollama tool message per
//     result, with tool_name and tool_call_id;
//   - "content" is a string: text parts are joined with newlines; images go
//     to "images" (bare base64, no media type on the wire: decoding sniffs
//     PNG, JPEG, GIF and WebP and says application/octet-stream otherwise);
//   - "thinking" is a plain reasoning part; the text of reasoning from other
//     providers is sent too, without its signature (a warning says so when
//     there was one); encrypted reasoning without text is dropped;
//   - tool calls carry arguments as a JSON object; ids are optional on the
//     wire, so decoding synthesises them (provider.SynthID) and records that
//     in Native so encoding sends none back;
//   - Ollama has no tool error flag: a failed result is sent as content
//     starting with "Error: ", and content starting so decodes as a failed
//     result without the prefix;
//   - URLs, file ids, audio, video and documents cannot be sent: they go to
//     Options.Resolve, then become an error or a text placeholder.
//
// Members convo has no field for are kept in Native under "ollama" in their
// wire names and sent back in place. docs/providers.md has the full
// table.
package ollama

import (
	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// ProviderID is the provider id Ollama messages carry in Origin, reasoning
// parts and Native.
const ProviderID = "ollama"

// Name is the format's name on the command line.
const Name = "ollama"

// errorPrefix starts the content of a failed tool result: Ollama has no
// error flag, and a model reads this convention without being told.
const errorPrefix = "Error: "

// Chat returns the Ollama /api/chat format: the request codec (the
// "messages" array) and the reply codec (a whole response body, or the
// NDJSON lines of a streamed one) in one value.
func Chat() provider.Format { return chat{} }

// chat is the /api/chat format; its zero value is ready to use.
type chat struct{}

// Name returns "ollama".
func (chat) Name() string { return Name }

// Provider returns "ollama".
func (chat) Provider() string { return ProviderID }

// target is what the Ollama wire can carry, for provider.Prepare.
var target = provider.Target{
	Provider:       ProviderID,
	PlainReasoning: true,
	// Ollama renders system messages wherever its chat templates meet them.
	MidSystem: true,
	Media:     acceptsMedia,
}

// acceptsMedia reports whether Ollama takes p: images as inline bytes, in
// any message, tool results included.
func acceptsMedia(p convo.Part, _ bool) bool {
	return p.Type == convo.TypeImage && p.Data != ""
}
