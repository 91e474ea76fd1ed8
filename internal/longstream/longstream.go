// Package longstream derives the long text stream the gateway's
// benchmarks replay (bench/gateway, and the providers' stream benchmarks):
// a real OpenAI Chat stream of 303 chunks, and the same text deltas as an
// Anthropic stream written as a recorded Anthropic stream writes its
// events.
package longstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// The recordings the streams come from, under the repository's root: the
// Vercel AI SDK's Chat fixture (gpt-4.1-nano, one chunk a line), and a
// claude-haiku-4-5 stream of one text block the Anthropic stream is
// written as.
const (
	ChatChunks     = "provider/openai/testdata/recorded/chat/vercel-openai-text.chunks.txt"
	AnthropicFrame = "provider/anthropic/testdata/recorded/llm-anthropic-prefill-stop-sequence.sse"
)

// Load reads the recordings under the repository's root and returns both
// streams, each event with the blank line that ends it.
func Load(root string) (chat, anthropic [][]byte, err error) {
	chunks, err := os.ReadFile(filepath.Join(root, ChatChunks))
	if err != nil {
		return nil, nil, err
	}
	frame, err := os.ReadFile(filepath.Join(root, AnthropicFrame))
	if err != nil {
		return nil, nil, err
	}
	chat, texts, out, err := Chat(chunks)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Base(ChatChunks), err)
	}
	if anthropic, err = Anthropic(frame, texts, out); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Base(AnthropicFrame), err)
	}
	return chat, anthropic, nil
}

// Chat turns recorded Chat chunks (one JSON object a line) into the SSE
// events OpenAI sends (each chunk a data: event, then data: [DONE]), and
// returns their text deltas and the output tokens of their usage.
func Chat(chunks []byte) (events [][]byte, texts []string, outputTokens int, err error) {
	for i, line := range bytes.Split(bytes.TrimSpace(chunks), []byte("\n")) {
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
			return nil, nil, 0, fmt.Errorf("line %d: %w", i+1, err)
		}
		events = append(events, append(append([]byte("data: "), line...), "\n\n"...))
		if c.Usage != nil {
			outputTokens = c.Usage.Completion
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				texts = append(texts, ch.Delta.Content)
			}
		}
	}
	return append(events, []byte("data: [DONE]\n\n")), texts, outputTokens, nil
}

// Anthropic writes a streamed Anthropic reply of one text block holding
// texts, one content_block_delta each, and outputTokens in its usage,
// framed as recording (a recorded stream of one text block): its own
// events around the deltas, each delta with the wire's member order and
// the padding before the last brace of the recording's deltas in turn, and
// its message_delta ending the turn (end_turn) with outputTokens. Written
// as encoding/json writes maps, members sorted, every delta took the
// Anthropic reader's path for members in any order, which no recorded
// stream needs: a fifth more CPU an event.
func Anthropic(recording []byte, texts []string, outputTokens int) ([][]byte, error) {
	var head, tail, pads [][]byte
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
		return nil, errors.New("the recording has no content_block_delta")
	}
	events := head
	for i, t := range texts {
		var q bytes.Buffer
		enc := json.NewEncoder(&q)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(t); err != nil {
			return nil, err
		}
		events = append(events, fmt.Appendf(nil, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%s}%s}\n\n",
			bytes.TrimSpace(q.Bytes()), pads[i%len(pads)]))
	}
	return append(events, tail...), nil
}

// What endTurn rewrites in a recorded message_delta.
var (
	stopRe   = regexp.MustCompile(`"stop_reason":"[a-z_]+","stop_sequence":("(\\.|[^"\\])*"|null)`)
	outputRe = regexp.MustCompile(`"output_tokens":[0-9]+`)
)

// endTurn makes the recording's message_delta ev end the turn (end_turn,
// no stop sequence) with outputTokens.
func endTurn(ev []byte, outputTokens int) ([]byte, error) {
	if !stopRe.Match(ev) || !outputRe.Match(ev) {
		return nil, fmt.Errorf("message_delta without a stop reason or output tokens: %s", ev)
	}
	ev = stopRe.ReplaceAllLiteral(ev, []byte(`"stop_reason":"end_turn","stop_sequence":null`))
	return outputRe.ReplaceAllLiteral(ev, fmt.Appendf(nil, `"output_tokens":%d`, outputTokens)), nil
}
