package codectest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// LongTextStream is the gateway bench's long stream as Anthropic sends it
// (bench/gateway textStreams): the 300 text deltas of the recorded OpenAI
// Chat stream vercel-openai-text.chunks.txt as content_block_delta events,
// each written as the recorded claude-haiku-4-5 stream
// llm-anthropic-prefill-stop-sequence.sse writes its deltas (members in
// the wire's order, the padding before the last brace of its deltas in
// turn), between that recording's own events (message_start, a text block
// with a ping after its start, message_delta with the usage, message_stop).
// providers is the path of the provider directory.
func LongTextStream(tb testing.TB, providers string) []byte {
	tb.Helper()
	chunks, err := os.ReadFile(filepath.Join(providers, "openai", "testdata", "recorded", "chat", "vercel-openai-text.chunks.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	frame, err := os.ReadFile(filepath.Join(providers, "anthropic", "testdata", "recorded", "llm-anthropic-prefill-stop-sequence.sse"))
	if err != nil {
		tb.Fatal(err)
	}
	var texts []string
	out := 0
	for _, line := range bytes.Split(bytes.TrimSpace(chunks), []byte("\n")) {
		var c struct {
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *struct {
				Completion int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			tb.Fatal(err)
		}
		if c.Usage != nil {
			out = c.Usage.Completion
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				texts = append(texts, ch.Delta.Content)
			}
		}
	}
	events, err := AnthropicTextStream(frame, texts, out)
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Join(events, nil)
}

// AnthropicTextStream writes a streamed Anthropic reply of one text block
// holding texts, one content_block_delta each, and outputTokens in its
// usage, framed as recording (a recorded stream of one text block): its
// own events around the deltas, each delta written as the recording's
// deltas are, with their padding in turn, and its message_delta ending the
// turn (end_turn) with outputTokens. It returns the events, each with the
// blank line that ends it.
func AnthropicTextStream(recording []byte, texts []string, outputTokens int) ([][]byte, error) {
	var head, tail [][]byte
	var pads [][]byte
	for _, ev := range bytes.SplitAfter(bytes.TrimSpace(recording), []byte("\n\n")) {
		ev = append(bytes.TrimSpace(ev), "\n\n"...)
		switch name, _, _ := bytes.Cut(bytes.TrimPrefix(ev, []byte("event: ")), []byte("\n")); string(name) {
		case "content_block_delta":
			data := bytes.TrimRight(ev, "\n")
			pads = append(pads, data[len(bytes.TrimRight(data[:len(data)-1], " ")):len(data)-1])
		case "message_delta":
			var err error
			if ev, err = endTurn(ev, outputTokens); err != nil {
				return nil, err
			}
			tail = append(tail, ev)
		case "content_block_stop", "message_stop":
			tail = append(tail, ev)
		default:
			if len(pads) > 0 {
				return nil, fmt.Errorf("event %q after the deltas", name)
			}
			head = append(head, ev)
		}
	}
	if len(pads) == 0 {
		return nil, fmt.Errorf("the recording has no content_block_delta")
	}
	events := head
	for i, t := range texts {
		var q bytes.Buffer
		enc := json.NewEncoder(&q)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(t); err != nil {
			return nil, err
		}
		ev := fmt.Appendf(nil, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}%s}\n\n",
			bytes.TrimSpace(q.Bytes()), pads[i%len(pads)])
		events = append(events, ev)
	}
	return append(events, tail...), nil
}

// endTurn makes the recording's message_delta ev end the turn (end_turn,
// no stop sequence) with outputTokens.
func endTurn(ev []byte, outputTokens int) ([]byte, error) {
	stop := regexp.MustCompile(`"stop_reason":"[a-z_]+","stop_sequence":("(\\.|[^"\\])*"|null)`)
	tokens := regexp.MustCompile(`"output_tokens":[0-9]+`)
	if !stop.Match(ev) || !tokens.Match(ev) {
		return nil, fmt.Errorf("message_delta without a stop reason or output tokens: %s", ev)
	}
	ev = stop.ReplaceAllLiteral(ev, []byte(`"stop_reason":"end_turn","stop_sequence":null`))
	return tokens.ReplaceAllLiteral(ev, fmt.Appendf(nil, `"output_tokens":%d`, outputTokens)), nil
}
