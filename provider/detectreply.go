package provider

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/convo-go/convo/internal/jsonx"
)

// DetectReply recognises the format of a provider's reply from its first
// bytes (8 KiB): a response body, or the beginning of a captured stream
// (Server-Sent Events, JSON lines, the JSON array Gemini streams without
// alt=sse, the AWS event-stream framing). It looks at the first value only
// (the first event's data in a stream), at the members only one format's
// replies have:
//
//   - convo: "format":"convo/v1", or a message with "role" and typed
//     "parts" (a canonical document, not a reply);
//   - openai-chat: "choices", "object":"chat.completion" or
//     "chat.completion.chunk", a first event of data [DONE];
//   - openai-responses: "object":"response", "output" that is an array,
//     "type" beginning "response.";
//   - anthropic: "type":"message" or an event type of the Messages stream
//     (message_start, content_block_delta, …);
//   - gemini: "candidates", "promptFeedback", "usageMetadata";
//   - ollama: "done", "done_reason", "eval_count", or a "message" object
//     beside "created_at";
//   - bedrock: "output" that is an object, "stopReason", "metrics", a line
//     whose one member names a ConverseStream event, the AWS event-stream
//     framing;
//   - litert: a bare message object ("role" without "type" or "parts"),
//     which is what LiteRT-LM answers.
//
// An error body ({"error": …}), which several formats share, names none.
// Format is "" when nothing tells; Sure is set whenever Format is.
func DetectReply(b []byte) Detection {
	d, _ := detectReply(b[:min(len(b), streamPeek)])
	return d
}

// input is what the first bytes of a reply are, as framing.
type input int

const (
	inputEmpty       input = iota
	inputJSON              // a JSON value, or JSON lines
	inputSSE               // Server-Sent Events
	inputEventStream       // AWS event-stream
	inputBinary            // bytes that are not text
	inputText              // text that is neither
)

// detectReply is DetectReply, also telling the framing of the input.
func detectReply(b []byte) (Detection, input) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	t := bytes.TrimLeft(b, " \t\r\n")
	switch {
	case len(t) == 0:
		return Detection{}, inputEmpty
	case t[0] == '{' || t[0] == '[':
		return detectValue(t), inputJSON
	case isEventStream(b):
		return Detection{"bedrock", "the AWS event-stream framing", true}, inputEventStream
	case isBinary(b):
		return Detection{}, inputBinary
	}
	if d, ok := detectSSE(t); ok {
		return d, inputSSE
	}
	return Detection{}, inputText
}

// isEventStream reports whether b begins with an AWS event-stream message:
// a length under 16 MiB (first byte 0) and the headers every
// ConverseStream message has.
func isEventStream(b []byte) bool {
	if len(b) < 16 || b[0] != 0 {
		return false
	}
	head := b[:min(len(b), 512)]
	return bytes.Contains(head, []byte(":message-type")) || bytes.Contains(head, []byte(":event-type"))
}

// isBinary reports whether b holds bytes that no text format has: a NUL
// or bytes that are not UTF-8 (a rune cut by the end of b is forgiven).
func isBinary(b []byte) bool {
	if bytes.IndexByte(b, 0) >= 0 {
		return true
	}
	for cut := 0; cut < 4 && cut <= len(b); cut++ {
		if utf8.Valid(b[:len(b)-cut]) {
			return false
		}
	}
	return true
}

// sseFields are the field names an event stream's lines begin with.
var sseFields = []string{"data:", "event:", "id:", "retry:", ":", "data", "event"}

// detectSSE reads Server-Sent Events up to the first data line and
// detects the format from the event name and the data; ok is false when
// the text does not begin like an event stream.
func detectSSE(t []byte) (d Detection, ok bool) {
	event := ""
	for len(t) > 0 {
		line, rest, _ := bytes.Cut(t, []byte("\n"))
		t = rest
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			event = ""
			continue
		}
		if !hasSSEField(line) {
			return Detection{}, false
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			event = string(value)
		case "data":
			return detectEvent(event, value), true
		}
	}
	return Detection{}, true
}

func hasSSEField(line []byte) bool {
	for _, f := range sseFields {
		if bytes.HasPrefix(line, []byte(f)) && (strings.HasSuffix(f, ":") || len(line) == len(f)) {
			return true
		}
	}
	return false
}

// detectEvent detects the format of an event named event with data.
func detectEvent(event string, data []byte) Detection {
	if d := eventType(event); d.Format != "" {
		d.Reason = "events named " + d.Reason
		return d
	}
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		return Detection{"openai-chat", "a [DONE] event", true}
	}
	return detectValue(bytes.TrimSpace(data))
}

// anthropicEvents are the event types of the Messages stream.
var anthropicEvents = map[string]bool{
	"message_start": true, "message_delta": true, "message_stop": true, "ping": true,
	"content_block_start": true, "content_block_delta": true, "content_block_stop": true,
}

// eventType detects the format by an event's type (its SSE name or its
// "type" member); Reason is the quoted type.
func eventType(typ string) Detection {
	switch {
	case anthropicEvents[typ] || typ == "message":
		return Detection{"anthropic", fmt.Sprintf("%q", typ), true}
	case strings.HasPrefix(typ, "response."):
		return Detection{"openai-responses", fmt.Sprintf("%q", typ), true}
	}
	return Detection{}
}

// bedrockEvents are the members that name a ConverseStream event in the
// JSON-lines form of a stream.
var bedrockEvents = map[string]bool{
	"messageStart": true, "contentBlockStart": true, "contentBlockDelta": true, "contentBlockStop": true,
	"messageStop": true, "metadata": true, "internalServerException": true, "modelStreamErrorException": true,
	"validationException": true, "throttlingException": true, "serviceUnavailableException": true,
}

// replyMember is one top-level member of a reply as detection sees it: its
// kind, and its value when that is a short string.
type replyMember struct {
	kind jsonx.Kind
	str  string
}

// topMembers reads the members of the object b begins with; a value cut off
// by the end of b (the first bytes of a long reply) ends the reading, and
// what was read is kept.
func topMembers(b []byte) (top map[string]replyMember, whole bool) {
	r := jsonx.NewReader(b, 64)
	top = map[string]replyMember{}
	err := r.ReadObject(func(key []byte) error {
		k := r.Peek()
		m := replyMember{kind: k}
		top[string(key)] = m
		if k == jsonx.String {
			s, err := r.ReadString()
			if len(s) <= 64 {
				m.str = s
			}
			top[string(key)] = m
			return err
		}
		return r.Skip()
	})
	return top, err == nil
}

// detectValue detects the format of the JSON value t begins with.
func detectValue(t []byte) Detection {
	if len(t) == 0 {
		return Detection{}
	}
	if t[0] == '[' {
		// Gemini's stream without alt=sse, or canonical messages.
		r := jsonx.NewReader(t, 64)
		var first []byte
		_ = r.ReadArray(func(i int) error {
			if i == 0 {
				r.Peek()
				first = t[r.Offset():]
			}
			return io.EOF // only the first element
		})
		if len(first) == 0 || first[0] != '{' {
			return Detection{}
		}
		d := detectValue(first)
		if d.Format == "gemini" {
			d.Reason = "a JSON array of responses with " + d.Reason
		}
		return d
	}
	return detectMembers(topMembers(t))
}

// detectMembers applies DetectReply's rules to the top-level members of
// a reply, an event's data or a stream's line.
// Whole is false when the object was cut off: a member that is absent may
// come later, so no rule rests on an absence then.
func detectMembers(top map[string]replyMember, whole bool) Detection {
	has := func(k string, kind jsonx.Kind) bool { m, ok := top[k]; return ok && (kind == 0 || m.kind == kind) }
	sure := func(format, reason string) Detection { return Detection{format, reason, true} }
	switch {
	case top["format"].str == "convo/v1":
		return sure("convo", `"format":"convo/v1"`)
	case has("role", jsonx.String) && has("parts", jsonx.Array):
		return convoOrGemini(top)
	}
	if d := eventType(top["type"].str); d.Format != "" {
		d.Reason = `"type":` + d.Reason
		return d
	}
	switch o := top["object"].str; o {
	case "chat.completion", "chat.completion.chunk":
		return sure("openai-chat", `"object":"`+o+`"`)
	case "response":
		return sure("openai-responses", `"object":"response"`)
	}
	for _, k := range []string{"choices", "candidates", "promptFeedback", "usageMetadata", "stopReason", "metrics", "done", "done_reason", "eval_count"} {
		if has(k, 0) {
			return sure(replyMembers[k], `top-level "`+k+`"`)
		}
	}
	if len(top) == 1 {
		for k := range top {
			if bedrockEvents[k] {
				return sure("bedrock", `an event line {"`+k+`":…}`)
			}
		}
	}
	switch {
	case has("output", jsonx.Array):
		return sure("openai-responses", `an "output" array`)
	case has("output", jsonx.Object) && !has("id", 0): // a Responses body has an id
		return sure("bedrock", `an "output" object`)
	case has("message", jsonx.Object) && has("created_at", jsonx.String):
		return sure("ollama", `a "message" object beside "created_at"`)
	case whole && has("role", jsonx.String) && !has("type", 0) && !has("parts", 0) && !has("error", 0):
		return sure("litert", `a bare message object with "role"`)
	}
	return Detection{}
}

// replyMembers are the top-level members only one format's replies have.
var replyMembers = map[string]string{
	"choices": "openai-chat", "candidates": "gemini", "promptFeedback": "gemini", "usageMetadata": "gemini",
	"stopReason": "bedrock", "metrics": "bedrock", "done": "ollama", "done_reason": "ollama", "eval_count": "ollama",
}

// convoOrGemini tells a canonical message (typed parts) from a Gemini
// content (parts without "type"), both {"role", "parts"}.
func convoOrGemini(top map[string]replyMember) Detection {
	if top["role"].str == "model" {
		return Detection{"gemini", `a content of role "model"`, true}
	}
	return Detection{"convo", `a message with "role" and "parts"`, true}
}

// ErrOtherFormat is matched (errors.Is) by the error of a reply reader given
// a reply or a stream of another format than its own: a *FormatError.
var ErrOtherFormat = errors.New("input of another format")

// FormatError is the error of a reply reader given a reply or a stream
// that is surely of another format (CheckReply, CheckStream): the reader
// would have made an empty or wrong message of it.
type FormatError struct {
	Want   string    // the format of the reader
	Got    Detection // what the input looks like
	Stream bool      // the input was read as a stream
}

func (e *FormatError) Error() string {
	what := "reply"
	if e.Stream {
		what = "stream"
	}
	if e.Got.Format == "convo" {
		return fmt.Sprintf("this is a convo document (%s), not %s %s: convert it, do not read it as a reply", e.Got.Reason, article(e.Want), what)
	}
	return fmt.Sprintf("this looks like %s %s, not %s (%s): read it as %s", article(e.Got.Format), what, e.Want, e.Got.Reason, e.Got.Format)
}

// Is reports whether target is ErrOtherFormat.
func (e *FormatError) Is(target error) bool { return target == ErrOtherFormat }

// CheckReply returns a *FormatError when body is surely the reply of
// another format than the one called name (DetectReply), or a convo
// document; reply codecs' DecodeReply calls it first, so that a body read
// with the wrong reader fails instead of giving an empty message.
func CheckReply(body []byte, name string) error {
	d, _ := detectReply(body[:min(len(body), streamPeek)])
	if d.Sure && d.Format != name {
		return &FormatError{Want: name, Got: d}
	}
	return nil
}

// streamPeek is how much of a stream CheckStream looks at: the first event
// of every format fits, or its members that tell the format come first.
const streamPeek = 8 << 10

// CheckStream reads the first bytes of the stream r and returns a reader
// of the whole stream, or an error: a *FormatError when the stream is
// surely of another format than the one called name, or an error saying
// the input is binary when name's framing is text. Reply codecs'
// ReadStream calls it first.
func CheckStream(r io.Reader, name string) (io.Reader, error) {
	if h, ok := r.(interface{ Head(n int) []byte }); ok {
		// A stream in memory that shows its first bytes without a read
		// (stream.Chunks: the gateway's recording of a reply) is checked
		// on them where they lie, and read on from its start as it is.
		if err := checkStream(h.Head(streamPeek), name); err != nil {
			return nil, err
		}
		return r, nil
	}
	peek := streamPeek
	if br, ok := r.(*bytes.Reader); ok && br.Len() < peek {
		// A stream held in memory (the gateway's recording of a reply)
		// is often shorter than the peek: a buffer of its length, not
		// 8 KiB allocated and cleared for each one.
		peek = br.Len()
	}
	buf := make([]byte, peek)
	n, err := io.ReadFull(r, buf)
	buf = buf[:n]
	var rest io.Reader
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		rest = bytes.NewReader(buf)
	case err != nil:
		rest = io.MultiReader(bytes.NewReader(buf), errReader{err})
	default:
		rest = io.MultiReader(bytes.NewReader(buf), r)
	}
	if err := checkStream(buf, name); err != nil {
		return nil, err
	}
	return rest, nil
}

// checkStream is CheckStream's verdict on the stream's first bytes.
func checkStream(head []byte, name string) error {
	d, in := detectReply(head)
	if d.Sure && d.Format != name {
		return &FormatError{Want: name, Got: d, Stream: true}
	}
	if in == inputBinary && name != "bedrock" {
		return errors.New("the input is binary, not JSON or Server-Sent Events")
	}
	return nil
}

// errReader returns err from every Read.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
