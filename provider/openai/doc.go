// Package openai converts convo histories to and from OpenAI's two request
// formats, and decodes their replies and streams. Chat() and Responses()
// return codecs that are both a provider.Codec and a provider.ReplyCodec:
//
//   - Chat (format "openai-chat"): the Chat Completions "messages" array,
//     which is also what most OpenAI-compatible servers take. It reads and
//     writes DeepSeek/Kimi-style "reasoning_content" on assistant messages.
//   - Responses (format "openai-responses"): the Responses API "input" items,
//     plus "instructions", which becomes a leading system message on decode.
//     EncodeItems and DecodeItems convert single items, the form the
//     Conversations API stores.
//
// Both formats use the provider id "openai" (ProviderID) in Native fields,
// reasoning parts and Origin. Fields convo has no place for are kept in the
// message's or part's Native["openai"] object under their wire names, so a
// request decoded and encoded again by the same codec comes back equal. The
// two APIs share the provider id but not their fields: native members
// written by the Chat decoder are marked "api":"chat", and each encoder only
// replays the members of its own API (a "role":"developer" member is honoured
// by both). A few other members are convo's own markers and never sent:
//
//   - "api":"chat" — the object holds Chat Completions fields;
//   - "from":"instructions" or "from":"input" — a Responses system message
//     that was the request's instructions, or a user message that was the
//     request's input string;
//   - "data_url":false — inline file data that was bare base64, not a data URL;
//   - "response":{…} — fields of a reply that are not request fields (the raw
//     finish_reason or status, annotations of a Chat reply, …);
//   - "message":{…} on a content part — where a later message item of a
//     Responses reply begins, with that item's id, status and phase, so the
//     encoder writes it as its own item again.
//
// A content part marked with its own wire "type" (for example
// {"api":"chat","type":"text"}) was written in array form even though it was
// the only part, so it is written in array form again.
//
// The mapping tables of both APIs are in docs/providers.md.
package openai

// ProviderID is the provider id of both OpenAI formats.
const ProviderID = "openai"
