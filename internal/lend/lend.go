// Package lend gives the store a decoder of package convo's that lends a
// message's long strings from the JSON it decodes instead of copying them.
//
// The store encodes each message it writes and decodes the result back, to
// write nothing it could not read back and to check the conversation it
// makes. For a long reply that read-back was one more whole copy of the
// text, live beside the message and its JSON while SQLite copied the JSON
// twice more (the peak of a gateway recording a 40 MiB reply). Decoded with
// UnmarshalMessage, the long strings alias the JSON, which the store holds
// until the write is done anyway.
//
// The hook lives here rather than as an exported function of package convo:
// a message that aliases a buffer its caller may change is not something
// the library's users should be handed. Package convo sets it when it is
// initialised; this package imports nothing of convo's, so convo can.
package lend

// UnmarshalMessage decodes one canonical message object from data into
// into, a *convo.Message, as convo.UnmarshalMessage does, except that
// strings and raw JSON values of 4 KiB or more alias data (as it is, or, for
// a string with escapes, a buffer of their own) rather than being copied.
// data must not change while the message is in use.
var UnmarshalMessage func(data []byte, into any) error
