package archive

import (
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
)

// TestAnthropicFinish keeps Claude Code's stop reasons read as the
// Anthropic codec reads a reply's.
func TestAnthropicFinish(t *testing.T) {
	for _, r := range []string{"end_turn", "stop_sequence", "tool_use", "max_tokens",
		"model_context_window_exceeded", "pause_turn", "refusal", "something_new"} {
		body := `{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"x"}],"stop_reason":"` + r + `","usage":{"input_tokens":1,"output_tokens":1}}`
		m, _, err := anthropic.Messages().DecodeReply([]byte(body), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := anthropicFinish(r); got != m.Finish {
			t.Errorf("%s: %q, the Anthropic codec reads %q", r, got, m.Finish)
		}
	}
}
