package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/convo-go/convo/provider"
)

// sniffMarks are byte strings only one provider's replies carry, in the
// order they are tried: the more specific first.
var sniffMarks = []struct {
	format string
	marks  []string
}{
	{"bedrock", []string{":event-type", `"contentBlockDelta"`, `"messageStart"`, `"messageStop"`, `"stopReason"`}},
	{"openai-responses", []string{`"response.created"`, `"response.output_text.delta"`, `"object":"response"`, `"type":"response.`}},
	{"anthropic", []string{`"message_start"`, `"content_block_delta"`, `"stop_reason"`}},
	{"openai-chat", []string{`"chat.completion.chunk"`, `"chat.completion"`, `"choices"`}},
	{"gemini", []string{`"candidates"`, `"usageMetadata"`}},
	{"ollama", []string{`"done_reason"`, `"done":`, `"eval_count"`}},
}

// sniff names the provider format the first bytes of a reply look like,
// or "" when nothing tells.
func sniff(b []byte) string {
	if json.Valid(b) { // a body, perhaps indented: marks are written compact
		var c bytes.Buffer
		if json.Compact(&c, b) == nil {
			b = c.Bytes()
		}
	}
	b = b[:min(len(b), 64<<10)]
	for _, s := range sniffMarks {
		for _, m := range s.marks {
			if bytes.Contains(b, []byte(m)) {
				return s.format
			}
		}
	}
	return ""
}

// wrongFormat wraps the error of reading body as format from with what the
// body looks like, when that is another format. A reader that refused the
// body as another format's (a *provider.FormatError) named it already: its
// hint is put as the flag to give.
func wrongFormat(err error, body []byte, from string) error {
	var fe *provider.FormatError
	if errors.As(err, &fe) {
		if fe.Got.Format == "convo" {
			return err
		}
		return fmt.Errorf("%s: try --from %s", strings.TrimSuffix(fe.Error(), ": read it as "+fe.Got.Format), fe.Got.Format)
	}
	if f := sniff(body); f != "" && f != from {
		return fmt.Errorf("%w (the input looks like %s: try --from %s)", err, f, f)
	}
	return err
}
