// Package tokencount compares convo's token counter with the tokenizer
// library it is built on, github.com/tiktoken-go/tokenizer, called directly
// the way OpenAI's cookbook counts a chat request: 3 tokens per message,
// the role's tokens, the content's tokens, 3 to prime the reply, and a tool
// call's name and arguments plus 3 (the framing docs/tokens.md documents).
package tokencount

import (
	"bytes"
	"encoding/json"

	"github.com/tiktoken-go/tokenizer"

	"github.com/convo-go/convo"
)

// Direct counts h for an OpenAI Chat request with enc alone. Reasoning is
// not sent in Chat Completions, so it counts nothing; each tool result is a
// tool message of its own; JSON is counted compacted, as it is sent.
func Direct(enc tokenizer.Codec, h convo.History) (int, error) {
	count := func(s string) (int, error) {
		if s == "" {
			return 0, nil
		}
		return enc.Count(s)
	}
	total := 3 // every reply is primed with <|start|>assistant<|message|>
	add := func(s string) error {
		n, err := count(s)
		total += n
		return err
	}
	content := func(p convo.Part) error {
		switch p.Type {
		case convo.TypeText:
			return add(p.Text)
		case convo.TypeJSON:
			var b bytes.Buffer
			if err := json.Compact(&b, p.Value); err != nil {
				return err
			}
			return add(b.String())
		}
		return nil
	}
	for _, m := range h {
		role := string(m.Role)
		if m.Role == convo.RoleTool {
			for _, r := range m.Parts {
				total += 3
				if err := add("tool"); err != nil {
					return 0, err
				}
				for _, p := range r.Parts {
					if err := content(p); err != nil {
						return 0, err
					}
				}
			}
			continue
		}
		total += 3
		if err := add(role); err != nil {
			return 0, err
		}
		for _, p := range m.Parts {
			if p.Type == convo.TypeToolCall {
				total += 3
				var b bytes.Buffer
				if err := json.Compact(&b, p.Args); err != nil {
					return 0, err
				}
				if err := add(p.Name); err != nil {
					return 0, err
				}
				if err := add(b.String()); err != nil {
					return 0, err
				}
				continue
			}
			if err := content(p); err != nil {
				return 0, err
			}
		}
	}
	return total, nil
}
