package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/convo-go/convo/internal/jsonx"
)

// Detection is what Detect found out about a document.
type Detection struct {
	// Format is the format name ("anthropic", "openai-chat", …, or
	// "convo" for the canonical format); "" when nothing points at one.
	Format string
	// Reason is the evidence, for a person: `top-level "contents"`.
	Reason string
	// Sure is false when Format is only the likeliest reading of a
	// document without any member or shape that belongs to one format
	// (messages of plain role/content strings read as openai-chat).
	Sure bool
}

// Detect recognises the wire format of a request body (or a canonical
// document) by these rules, the first that applies:
//
//  1. an object with "format":"convo/v1", or an array of messages whose
//     parts have a "type": convo;
//  2. a top-level "contents" or "systemInstruction": gemini;
//  3. a top-level "input" or "instructions" without "messages":
//     openai-responses;
//  4. a top-level array of role/content messages: litert (the only format
//     whose request is a bare array);
//  5. an object with "messages": each member and message shape that only one
//     format has counts for it — bedrock: "inferenceConfig", "toolConfig",
//     content blocks keyed by kind without a "type" (text, toolUse,
//     toolResult, image, document, reasoningContent, cachePoint), a
//     system array of such blocks; anthropic: a top-level "system",
//     "anthropic_version", "stop_sequences", "top_k", "thinking", blocks
//     of type tool_use, tool_result, thinking, redacted_thinking, document,
//     server_tool_use or with a "source"; ollama: "options", "keep_alive",
//     "think", messages with "images", "thinking" or "tool_name", tool
//     call arguments that are an object; openai-chat: "response_format",
//     "max_completion_tokens", "reasoning_effort", "stream_options",
//     "tool_call_id", arguments that are a string, parts of type
//     image_url, input_audio or refusal. The format with the most evidence
//     wins (a top-level member counts twice); a tie is an error. It is Sure
//     only with a top-level member of its own. Without any evidence it is
//     openai-chat, not Sure.
//
// Only the first messages (up to 32) are looked at. An error means the
// body is not JSON of any of these shapes, or is ambiguous.
func Detect(body []byte) (Detection, error) {
	d, top, msgs, err := detectTopLevel(body)
	if top == nil {
		return d, err
	}
	return weigh(top, msgs)
}

// weigh decides between the formats by the evidence of the top-level
// members and of the messages.
func weigh(top map[string]json.RawMessage, msgs []json.RawMessage) (Detection, error) {
	ev := &evidence{}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		ev.topMember(k, top[k])
	}
	for _, m := range msgs {
		ev.message(m)
	}
	return ev.decide()
}

// detectTopLevel is Detect up to the evidence: it returns the detection
// when the body's shape or top-level members decide it (top is nil then),
// else the top-level members and the messages to weigh.
func detectTopLevel(body []byte) (d Detection, top map[string]json.RawMessage, msgs []json.RawMessage, err error) {
	r := jsonx.NewReader(body, 64)
	switch r.Peek() {
	case jsonx.Array:
		d, err = detectArray(body)
		return d, nil, nil, err
	case jsonx.Object:
	default:
		return Detection{}, nil, nil, fmt.Errorf("not a JSON object or array")
	}
	top, msgs, err = readTop(r, body)
	if err != nil {
		return Detection{}, nil, nil, fmt.Errorf("not JSON: %w", err)
	}
	if d, ok, err := detectTop(top); ok || err != nil {
		return d, nil, nil, err
	}
	return Detection{}, top, msgs, nil
}

// detectArray tells the format of a body that is a JSON array.
func detectArray(body []byte) (Detection, error) {
	msgs := firstElements(body, 32)
	for _, m := range msgs {
		if parts, ok := m["parts"]; ok && typedArray(parts) {
			return Detection{"convo", `an array of messages with typed "parts"`, true}, nil
		}
	}
	if len(msgs) > 0 && msgs[0]["role"] != nil {
		return Detection{"litert", "a bare array of role/content messages (the only format whose request is an array)", false}, nil
	}
	return Detection{}, fmt.Errorf("an array that is not of messages")
}

// readTop reads the members of the body's object that detection looks at
// (topKeys; the others are skipped). The members alias body; of
// "messages" only the first 32 are kept, in msgs: a big body costs one
// scan, no copy.
func readTop(r *jsonx.Reader, body []byte) (top map[string]json.RawMessage, msgs []json.RawMessage, err error) {
	top = map[string]json.RawMessage{}
	err = r.ReadObject(func(key []byte) error {
		k, ok := topKeys[string(key)]
		if !ok {
			return r.Skip()
		}
		if k == "messages" && r.Peek() == jsonx.Array {
			top[k] = json.RawMessage("[]")
			return r.ReadArray(func(i int) error {
				v, err := span(r, body)
				if i < 32 {
					msgs = append(msgs, v)
				}
				return err
			})
		}
		v, err := span(r, body)
		top[k] = v
		return err
	})
	return top, msgs, err
}

// topKeys are the top-level members detection looks at (detectTop's and
// topFormat's), each mapped to itself: readTop keeps those alone, and
// makes no string of a key.
var topKeys = func() map[string]string {
	m := map[string]string{"system": "system"}
	for _, k := range []string{"format", "contents", "systemInstruction", "system_instruction", "messages", "input", "instructions", "role", "parts"} {
		m[k] = k // detectTop's
	}
	for k := range topFormats {
		m[k] = k
	}
	return m
}()

// detectTop tells the formats a top-level member identifies on its own;
// ok is false when the messages must be looked at.
func detectTop(top map[string]json.RawMessage) (d Detection, ok bool, err error) {
	switch {
	case string(top["format"]) == `"convo/v1"`:
		return Detection{"convo", `"format":"convo/v1"`, true}, true, nil
	case top["contents"] != nil:
		return Detection{"gemini", `top-level "contents"`, true}, true, nil
	case top["systemInstruction"] != nil || top["system_instruction"] != nil:
		return Detection{"gemini", `top-level "systemInstruction"`, true}, true, nil
	case top["messages"] == nil && (top["input"] != nil || top["instructions"] != nil):
		return Detection{"openai-responses", `top-level "input" or "instructions" without "messages"`, true}, true, nil
	case top["messages"] == nil:
		if top["role"] != nil || top["parts"] != nil {
			return Detection{"convo", "one message object (JSON Lines)", false}, true, nil
		}
		return Detection{}, false, fmt.Errorf(`no "messages", "contents" or "input" member`)
	}
	return Detection{}, false, nil
}

// topMember adds the evidence top-level member k (its value v) gives.
func (e *evidence) topMember(k string, v json.RawMessage) {
	format, why := topFormat(k, v)
	if format == "" {
		return
	}
	if why == "" {
		why = `top-level "` + k + `"`
	}
	e.addTop(format, why)
}

// topFormat returns the format that top-level member k (its value v)
// belongs to, "" for none, and why when it is more than the member's name
// (why is "" then).
func topFormat(k string, v json.RawMessage) (format, why string) {
	if k == "system" {
		switch s := strings.TrimSpace(string(v)); {
		case blocksKeyedByKind(v):
			return "bedrock", `a "system" array of blocks without "type"`
		case strings.HasPrefix(s, `"`) || typedArray(v):
			return "anthropic", ""
		}
		return "", ""
	}
	return topFormats[k], ""
}

// topFormats are the top-level members only one format has ("system",
// which two formats have in different shapes, is topFormat's).
var topFormats = map[string]string{
	"inferenceConfig": "bedrock", "toolConfig": "bedrock", "additionalModelRequestFields": "bedrock", "guardrailConfig": "bedrock", "promptVariables": "bedrock",
	"anthropic_version": "anthropic", "stop_sequences": "anthropic", "top_k": "anthropic", "thinking": "anthropic",
	"options": "ollama", "keep_alive": "ollama", "think": "ollama",
	"response_format": "openai-chat", "max_completion_tokens": "openai-chat", "reasoning_effort": "openai-chat", "stream_options": "openai-chat",
}

// span returns the value at r as it lies in body.
func span(r *jsonx.Reader, body []byte) (json.RawMessage, error) {
	r.Peek()
	start := r.Offset()
	err := r.Skip()
	return body[start:r.Offset()], err
}

// evidence counts, per format, the marks only that format has; top
// counts the marks that are top-level members.
type evidence struct {
	marks map[string][]string
	top   map[string]int
}

func (e *evidence) add(format, why string) {
	if e.marks == nil {
		e.marks, e.top = map[string][]string{}, map[string]int{}
	}
	if !slices.Contains(e.marks[format], why) {
		e.marks[format] = append(e.marks[format], why)
	}
}

// addTop adds a mark that is a top-level member.
func (e *evidence) addTop(format, why string) {
	e.add(format, why)
	e.top[format]++
}

// message looks at one element of "messages".
func (e *evidence) message(raw json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	for _, k := range []string{"images", "thinking", "tool_name"} {
		if m[k] != nil {
			e.add("ollama", `messages with "`+k+`"`)
		}
	}
	if m["tool_call_id"] != nil {
		e.add("openai-chat", `messages with "tool_call_id"`)
	}
	var calls []struct {
		Function struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if json.Unmarshal(m["tool_calls"], &calls) == nil {
		for _, c := range calls {
			switch a := strings.TrimSpace(string(c.Function.Arguments)); {
			case strings.HasPrefix(a, `"`):
				e.add("openai-chat", "tool call arguments that are a string")
			case strings.HasPrefix(a, `{`):
				e.add("ollama", "tool call arguments that are an object")
			}
		}
	}
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(m["content"], &blocks) != nil {
		return
	}
	for _, b := range blocks {
		var typ string
		_ = json.Unmarshal(b["type"], &typ)
		switch typ {
		case "":
			for _, k := range []string{"text", "toolUse", "toolResult", "image", "document", "reasoningContent", "cachePoint", "video", "guardContent"} {
				if b[k] != nil {
					e.add("bedrock", `content blocks without "type" (`+k+`)`)
					break
				}
			}
		case "tool_use", "tool_result", "thinking", "redacted_thinking", "document", "server_tool_use", "web_search_tool_result":
			e.add("anthropic", `content blocks of type "`+typ+`"`)
		case "image_url", "input_audio", "refusal":
			e.add("openai-chat", `content parts of type "`+typ+`"`)
		case "input_text", "output_text", "input_image", "input_file":
			e.add("openai-responses", `content parts of type "`+typ+`"`)
		}
		if typ != "" && b["source"] != nil {
			e.add("anthropic", `content blocks with a "source"`)
		}
	}
}

// topOtherThan reports whether a top-level member belongs to a format
// other than name.
func topOtherThan(top map[string]json.RawMessage, name string) bool {
	for k, v := range top {
		if f, _ := topFormat(k, v); f != "" && f != name {
			return true
		}
	}
	return false
}

func (e *evidence) decide() (Detection, error) {
	if len(e.marks) == 0 {
		return Detection{"openai-chat", "messages of plain role/content (the most common shape; nothing belongs to one format only)", false}, nil
	}
	names := slices.Collect(maps.Keys(e.marks))
	score := func(f string) int { return 2*e.top[f] + len(e.marks[f]) } // a top-level member counts more
	sort.Slice(names, func(i, j int) bool {
		if score(names[i]) != score(names[j]) {
			return score(names[i]) > score(names[j])
		}
		return names[i] < names[j]
	})
	best := names[0]
	if len(names) > 1 && score(names[1]) == score(best) {
		return Detection{}, fmt.Errorf("the body looks like %s (%s) as much as %s (%s)",
			best, strings.Join(e.marks[best], ", "), names[1], strings.Join(e.marks[names[1]], ", "))
	}
	// Only a top-level member that one format alone has makes it sure:
	// the shapes of blocks and calls are evidence, not proof.
	return Detection{best, strings.Join(e.marks[best], ", "), e.top[best] > 0}, nil
}

// CheckFormat returns an error when body is surely in another format than
// the one called name, naming the format it looks like; codecs' Decode
// calls it first, so that a request read with the wrong decoder fails
// instead of losing what that decoder does not look at.
func CheckFormat(body []byte, name string) error {
	d, top, msgs, err := detectTopLevel(body)
	if top != nil {
		if !topOtherThan(top, name) {
			// Only a top-level member of its own makes another format
			// Sure: the messages cannot, so they need not be weighed
			// (most requests, decoded by the right decoder, end here).
			return nil
		}
		d, err = weigh(top, msgs)
	}
	if err != nil || !d.Sure || d.Format == name || d.Format == "convo" {
		return nil // the decoder's own errors say what is wrong
	}
	return fmt.Errorf("this looks like %s request, not %s (%s): decode it as %s", article(d.Format), name, d.Reason, d.Format)
}

// firstElements decodes up to n elements of a JSON array of objects.
func firstElements(body []byte, n int) []map[string]json.RawMessage {
	var all []json.RawMessage
	if json.Unmarshal(body, &all) != nil {
		return nil
	}
	var out []map[string]json.RawMessage
	for _, e := range all[:min(n, len(all))] {
		var m map[string]json.RawMessage
		if json.Unmarshal(e, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// typedArray reports whether raw is an array whose first object has a
// "type".
func typedArray(raw json.RawMessage) bool {
	var parts []map[string]json.RawMessage
	return json.Unmarshal(raw, &parts) == nil && len(parts) > 0 && parts[0]["type"] != nil
}

// blocksKeyedByKind reports whether raw is an array of objects none of
// which has a "type" (Bedrock's system and content blocks).
func blocksKeyedByKind(raw json.RawMessage) bool {
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil || len(blocks) == 0 {
		return false
	}
	for _, b := range blocks {
		if b["type"] != nil {
			return false
		}
	}
	return true
}

// article puts "a" or "an" before a format name.
func article(name string) string {
	if strings.ContainsRune("aeio", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}
