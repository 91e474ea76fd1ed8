// Package convo is a lossless, provider-neutral record of a conversation
// with a large language model: system prompt, user turns with images, audio
// and files, assistant turns with reasoning and tool calls, tool results,
// summaries of compacted history, and errors.
//
// A [History] is a slice of [Message] values; a message holds ordered
// [Part] values (text, media, JSON, tool calls and results, reasoning with
// its signature or encrypted payload, refusals). Everything a provider needs
// back on the next request — signatures, encrypted reasoning, item ids,
// tool-call ids, phases — is kept, and so is whatever convo does not know
// (unknown part types and members), so that nothing is lost by saving and
// reloading.
//
// # Values that do not change under you
//
// Messages and histories are values. No function or method of this package
// modifies a Message, a History or anything they refer to: transformations
// ([Message.WithoutReasoning], [Message.WithTextPrefix], [History.Compact],
// [History.Curated]) return new values that may share unchanged parts with
// their input, and return the input itself when there is nothing to change.
// A message that is no longer modified may be shared between goroutines
// without locking. To edit a message you did not build, edit a
// [Message.Clone].
//
// # The canonical format
//
// [Marshal], [MarshalLines] and [Unmarshal] read and write canonical format
// v1 (docs/format.md): a {"format":"convo/v1","messages":[…]} envelope, a
// bare array, or JSON Lines. Output is deterministic. Input is checked
// strictly — duplicate keys, invalid UTF-8, malformed base64, wrong types,
// nesting and size beyond [Limits] — and every error names its place, as in
// messages[3].parts[1].data.
//
// # The rest of convo
//
// This package depends on no other part of convo (only on its internal JSON
// reader and writer). Package provider and the
// packages below it convert histories to and from each provider's request
// and reply formats; tokens counts them; fit trims them to a context window;
// store keeps them in SQLite or PostgreSQL; server serves them over HTTP.
package convo
