// Package bedrock converts between convo histories and the Amazon Bedrock
// Converse API: the conversation fields of a Converse or ConverseStream
// request (a top-level "system" array of blocks and the "messages" array),
// Converse responses, and ConverseStream replies in the AWS event-stream
// binary framing or as JSON event lines.
//
// Bedrock needs what other formats do not: messages strictly alternate
// between user and assistant and start with a user message, so consecutive
// messages of one side are merged (all tool results of an assistant turn go
// in one user message); media go as bytes or S3 locations with short format
// names (png, pdf, mp4) instead of MIME types; tool-use ids are limited to
// [A-Za-z0-9_-] and 64 characters; prompt-cache breakpoints are cachePoint
// blocks of their own after the block they close.
//
// docs/providers.md holds the full mapping table.
package bedrock

import (
	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// Name is the format's name on the command line.
const Name = "bedrock"

// ProviderID is the provider id Bedrock reasoning, Native fields and Origin
// carry.
const ProviderID = "bedrock"

// MaxIDLen bounds the tool-use ids Encode sends: Bedrock accepts 1 to 64
// characters of [A-Za-z0-9_-].
const MaxIDLen = 64

// StartText is the text of the user message Encode puts in front of a
// conversation that would otherwise start with an assistant message, which
// Bedrock refuses.
const StartText = "(conversation continues)"

// Converse returns the Bedrock Converse API format: the request codec
// (top-level "system" and "messages") and the reply codec (Converse
// response bodies and ConverseStream streams, in the AWS event-stream
// binary framing or as JSON event lines) in one value.
func Converse() provider.Format { return converse{} }

// converse is the Converse API format; its zero value is ready to use.
type converse struct{}

// Name returns "bedrock".
func (converse) Name() string { return Name }

// Provider returns "bedrock".
func (converse) Provider() string { return ProviderID }

// target is what Prepare needs to know about Bedrock.
var target = provider.Target{
	Provider: ProviderID,
	// The calls and results of tools Bedrock ran itself (toolUse of type
	// server_tool_use, toolResult in the assistant message) go back to it.
	ServerTools: true,
	Media:       acceptMedia,
	ID:          sanitizeID,
	Prefill:     "Bedrock refuses a final assistant message that ends in white space",
	Blank:       "Bedrock refuses a text block of white space only",
	Pending:     "Bedrock refuses (it expects toolResult blocks in the next message for every toolUse id)",
}

func sanitizeID(id string) string { return provider.SanitizeID(id, MaxIDLen) }

// acceptMedia reports whether Bedrock takes p as it is: inline bytes or an
// S3 location in a format Bedrock names (or whose format is unknown, which
// Bedrock then judges), inline text for documents; never an http(s) URL or
// a provider file id. Audio is not accepted inside tool results.
func acceptMedia(p convo.Part, inResult bool) bool {
	if p.Type == convo.TypeAudio && inResult {
		return false
	}
	switch {
	case p.FileID != "":
		return false
	case p.URL != "":
		if !isS3(p.URL) {
			return false
		}
	case p.Text != "":
		if p.Type != convo.TypeFile {
			return false
		}
	}
	_, ok := mediaFormat(p)
	return ok
}
