package longstream

import (
	"bytes"
	"testing"
)

// TestLoad: the Chat stream is the recording's 303 chunks and [DONE]; the
// Anthropic stream starts with its frame's own first event, carries the
// same text in 300 deltas and ends the turn with the recording's 300
// output tokens.
func TestLoad(t *testing.T) {
	chat, anth, err := Load("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(chat) != 304 || string(chat[303]) != "data: [DONE]\n\n" {
		t.Fatalf("chat: %d events, want 303 chunks and [DONE]", len(chat))
	}
	joined := bytes.Join(anth, nil)
	if n := bytes.Count(joined, []byte("event: content_block_delta\n")); n != 300 {
		t.Errorf("anthropic: %d deltas, want 300", n)
	}
	if !bytes.HasPrefix(anth[0], []byte("event: message_start\n")) || !bytes.Contains(joined, []byte(`"stop_reason":"end_turn","stop_sequence":null`)) || !bytes.Contains(joined, []byte(`"output_tokens":300`)) {
		t.Errorf("anthropic stream not framed as its recording, or not ending the turn with 300 tokens:\n%s…%s", anth[0], anth[len(anth)-2])
	}
}

// TestAnthropicRefuses: a recording that cannot frame the stream is an
// error, not a stream without deltas or usage.
func TestAnthropicRefuses(t *testing.T) {
	for name, rec := range map[string]string{
		"no delta":       "event: message_start\ndata: {}\n\nevent: message_stop\ndata: {}\n\n",
		"no stop reason": "event: content_block_delta\ndata: {\"x\":1 }\n\nevent: message_delta\ndata: {\"usage\":{\"output_tokens\":1}}\n\n",
		"event after":    "event: content_block_delta\ndata: {\"x\":1 }\n\nevent: ping\ndata: {}\n\n",
	} {
		if _, err := Anthropic([]byte(rec), []string{"hi"}, 1); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
