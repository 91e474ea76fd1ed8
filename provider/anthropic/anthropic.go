// Package anthropic converts convo histories to and from the Anthropic
// Messages API: the request's conversation fields (top-level "system" and
// "messages"), non-streamed responses, and streamed responses (SSE).
//
// # Requests
//
// Encode maps a history to {"system":…,"messages":[…]}: leading system
// messages become the top-level system blocks; tool messages become
// tool_result blocks at the start of the next user turn; consecutive turns of
// the same role are merged, as the API itself would merge them. Anthropic's
// own reasoning (thinking with its signature, redacted_thinking) goes back
// byte for byte in its original place; other providers' reasoning is dropped
// with a warning (see provider.Prepare). Audio and video are not accepted.
//
// Decode reads a request body back into a history, keeping what convo has no
// field for in the Native "anthropic" object of the message or part, in
// Anthropic's wire names, so that decoding a request and encoding it again
// gives the same JSON. Server tool blocks (server_tool_use, mcp_tool_use and
// their results) become tool_call and tool_result parts marked Server and
// go back to Anthropic as they came; blocks convo has no part type for
// (search results, …) are kept whole as opaque parts.
//
// # Replies
//
// DecodeReply reads a Message response; NewAccumulator folds the events of a
// streamed response into the same message; ReadStream does both from an SSE
// body.
package anthropic

import (
	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// Name is the format's name on the command line.
const Name = "anthropic"

// ProviderID is the provider id used in Native, Origin and reasoning parts.
const ProviderID = "anthropic"

// Messages returns the Anthropic Messages API format: the request codec
// (top-level "system" and "messages") and the reply codec (Message
// responses and their SSE streams) in one value.
func Messages() provider.Format { return messages{} }

// messages is the Messages API format; its zero value is ready to use.
type messages struct{}

// Name returns "anthropic".
func (messages) Name() string { return Name }

// Provider returns "anthropic".
func (messages) Provider() string { return ProviderID }

// Markers are members of a native "anthropic" object that record how a
// request was written where convo's own fields cannot say it. They are
// convo's notes and are never sent.
const (
	// markString on a message (or tool_result part) records that its
	// content was a plain string rather than an array of blocks; on a
	// system message, that the top-level system was a string.
	markString = "string_content"
	// markSeparate on a message records that it began a new wire message
	// although the one before had the same role (the API merges such
	// turns, so the encoder merges them unless told otherwise).
	markSeparate = "separate_turn"
)

func isMarker(key string) bool { return key == markString || key == markSeparate }

// target describes what the Messages API takes, for provider.Prepare.
var target = provider.Target{
	Provider: ProviderID,
	// Thinking blocks must carry a signature: unsigned reasoning text from
	// elsewhere cannot be sent as reasoning.
	PlainReasoning: false,
	// A system message later in the conversation is handled by the encoder:
	// one decoded from a "system" role message goes back as one, any other
	// becomes user text with a warning.
	MidSystem: true,
	// Server tool blocks (server_tool_use, web_search_tool_result, …)
	// go back to Anthropic as they came.
	ServerTools: true,
	Media:       acceptMedia,
	ID:          sanitizeID,
	Prefill:     "Anthropic refuses a final assistant message that ends in white space",
	Pending:     "Anthropic refuses (every tool_use block must have a tool_result block in the next message)",
}

// sanitizeID maps a tool-use id onto [A-Za-z0-9_-], the characters the API
// accepts. An empty id is left empty: the encoder synthesises one where the
// call and its results can still be matched by name and order.
func sanitizeID(id string) string {
	if id == "" {
		return ""
	}
	return provider.SanitizeID(id, 0)
}

// imageTypes are the media types an inline image may have.
func imageType(mt string) bool {
	switch mt {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return true
	}
	return false
}

// acceptMedia reports whether the API takes p as it is. Images: inline
// JPEG, PNG, GIF or WebP, a URL or a file id. Files become document blocks:
// inline PDF or plain text, inline text, a PDF URL, or a file id. No audio,
// no video, in messages or in tool results alike.
func acceptMedia(p convo.Part, _ bool) bool {
	switch p.Type {
	case convo.TypeImage:
		switch {
		case p.Data != "":
			return imageType(p.MediaType)
		case p.URL != "", p.FileID != "":
			return true
		}
	case convo.TypeFile:
		switch {
		case p.Data != "":
			return p.MediaType == "application/pdf" || (p.MediaType == "text/plain" && textData(p.Data))
		case p.Text != "", p.FileID != "":
			return true
		case p.URL != "":
			return p.MediaType == "" || p.MediaType == "application/pdf"
		}
	case convo.TypeAudio, convo.TypeVideo:
	default:
		return true // not media: what a resolver may turn media into
	}
	return false
}
