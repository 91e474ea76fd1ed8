// Package gemini converts between convo histories and the Gemini
// generateContent API: the conversation fields of a request (a top-level
// "systemInstruction" Content and the "contents" array), generateContent
// response bodies, and streamGenerateContent replies (?alt=sse).
//
// Gemini differs from the other formats in ways that matter for a lossless
// round trip:
//
//   - the assistant role is "model", and tool results are functionResponse
//     parts of a "user" content (all responses of one step in one content);
//   - a thoughtSignature may sit on any part — a text part, a functionCall,
//     a thought, or an empty text part that carries nothing else — and must
//     come back on exactly that part. Decode keeps it in the part's
//     Native["gemini"] ({"thoughtSignature":"…"}), or for a thought part in
//     the reasoning part's Signature; Encode puts it back there and never
//     moves or merges it;
//   - functionCall ids are optional: Decode synthesises deterministic ids
//     where they are missing (and matches responses to calls by name and
//     order), and records that it did, so Encode sends no id it invented;
//   - a tool error is a convention, not a flag: {"response":{"error":…}}.
//
// executableCode and codeExecutionResult parts (the code execution tool)
// are provider-run tool_call and tool_result parts (codeexec.go); a
// candidate's groundingMetadata and citationMetadata become citations on
// its text parts (grounding.go). Parts Gemini has and convo has no type
// for (server-side toolCall/toolResponse, …) are kept as opaque parts and
// sent back verbatim to Gemini. docs/providers.md holds the full mapping
// table.
package gemini

import (
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// Name is the format's name on the command line.
const Name = "gemini"

// ProviderID is the provider id Gemini reasoning, Native fields and Origin
// carry.
const ProviderID = "gemini"

// BypassSignature is the thoughtSignature value the Gemini API documents
// for function calls it did not produce (history from another provider or
// built by hand): Gemini 3 models reject a current-turn functionCall without
// a signature. Encode puts it on the first functionCall of each step that
// has no signature of its own when Options.Model names a Gemini 3 model
// (see Gemini3) or Options.GeminiBypass is set, with one warning per
// request.
const BypassSignature = "context_engineering_is_the_way_to_go"

// Gemini3 reports whether model names a Gemini 3 model, as a request's
// model or a Vertex AI resource names it: "gemini-3-pro-preview",
// "models/gemini-3-flash", "gemini-3.1-pro",
// "projects/p/locations/l/publishers/google/models/gemini-3-pro".
// Encode puts BypassSignature on foreign function calls for these models;
// Options.GeminiBypass does it for a model this does not recognise.
func Gemini3(model string) bool {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	rest, ok := strings.CutPrefix(strings.ToLower(model), "gemini-3")
	return ok && (rest == "" || rest[0] == '-' || rest[0] == '.')
}

// VertexBypassSignature is the same bypass value as documented for Vertex
// AI. Encode does not use it; it is here for callers who post-process a
// request for Vertex.
const VertexBypassSignature = "skip_thought_signature_validator"

// FilesPrefix starts the URIs of the Gemini Files API. A fileData URI with
// this prefix is a file id (convo.Part.FileID); any other URI is a URL.
const FilesPrefix = "https://generativelanguage.googleapis.com/"

// Members of Native["gemini"] that are convo's own notes rather than Gemini
// wire fields. Encode reads them and never sends them.
const (
	// SyntheticID (true) on a tool_call or tool_result: the wire part had
	// no id; the part's ID was synthesised or copied from its call, and
	// Encode sends no id for it.
	SyntheticID = "syntheticId"
	// NewContent (true) on a part: a new Gemini Content starts at this
	// part where Encode would otherwise continue the previous one.
	NewContent = "newContent"
	// ResponseWrap on a tool_result whose content is one JSON object:
	// "output" sends it as {"output":{…}}, "none" sends the object itself
	// as the response, overriding the default (see docs).
	ResponseWrap = "responseWrap"
)

// GenerateContent returns the Gemini generateContent API format: the
// request codec ("systemInstruction" and "contents") and the reply codec
// (generateContent response bodies and streamGenerateContent streams, SSE
// with ?alt=sse or the JSON array the endpoint sends without it) in one
// value.
func GenerateContent() provider.Format { return generateContent{} }

// generateContent is the generateContent format; its zero value is ready to
// use.
type generateContent struct{}

// Name returns "gemini".
func (generateContent) Name() string { return Name }

// Provider returns "gemini".
func (generateContent) Provider() string { return ProviderID }

// target is what Prepare needs to know about Gemini: system messages only
// at the start (systemInstruction), reasoning only its own (thought parts
// of other providers cannot be signed for Gemini), media by bytes, by URI
// or by Files API id — but not another provider's file id.
var target = provider.Target{
	Provider:    ProviderID,
	Media:       acceptMedia,
	ServerTools: true, // its own code execution parts (codeexec.go)
}

// acceptMedia reports whether Gemini takes p as it is. Inline bytes need a
// MIME type (inlineData.mimeType is required); a URL goes as fileData; a
// file id only when it is a Gemini Files API URI; an inline text document
// is sent as text/plain bytes.
func acceptMedia(p convo.Part, _ bool) bool {
	switch {
	case p.Data != "":
		return p.MediaType != ""
	case p.URL != "":
		return true
	case p.FileID != "":
		return strings.HasPrefix(p.FileID, FilesPrefix)
	case p.Text != "":
		return p.Type == convo.TypeFile
	}
	return false
}

// mediaType picks the convo part type for a MIME type.
func mediaType(mime string) convo.PartType {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return convo.TypeImage
	case strings.HasPrefix(mime, "audio/"):
		return convo.TypeAudio
	case strings.HasPrefix(mime, "video/"):
		return convo.TypeVideo
	}
	return convo.TypeFile
}
