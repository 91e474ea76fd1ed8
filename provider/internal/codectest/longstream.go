package codectest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// LongTextStream is the gateway bench's long stream as Anthropic sends it
// (bench/gateway textStreams): the 300 text deltas of the recorded OpenAI
// Chat stream vercel-openai-text.chunks.txt as content_block_delta events,
// framed as a recorded Anthropic stream (message_start, a text block with
// a ping after its start, message_delta with the usage, message_stop),
// written as encoding/json writes maps: each object's members sorted.
// chunksPath is that file's path.
func LongTextStream(tb testing.TB, chunksPath string) []byte {
	tb.Helper()
	chunks, err := os.ReadFile(chunksPath)
	if err != nil {
		tb.Fatal(err)
	}
	var sse []byte
	ev := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		sse = fmt.Appendf(sse, "event: %s\ndata: %s\n\n", name, b)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"model": "claude-haiku-4-5-20251001", "id": "msg_01KozUDYHvRtgs3NLgG7jzN9", "type": "message", "role": "assistant",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 16, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 3, "service_tier": "standard"}}})
	ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	ev("ping", map[string]any{"type": "ping"})
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
				ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": ch.Delta.Content}})
			}
		}
	}
	ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": out}})
	ev("message_stop", map[string]any{"type": "message_stop"})
	return sse
}
