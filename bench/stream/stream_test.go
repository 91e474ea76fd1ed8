package stream

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"

	"github.com/convo-go/convo"
)

// The long replies: about 1,200 tokens of thinking and 2,400 of text.
const (
	thinkWords = 900
	textWords  = 1800
)

type streamCase struct {
	api, name string
	data      []byte
}

func streams(tb testing.TB) []streamCase {
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	return []streamCase{
		{"anthropic", "captured-tool_use", read("../../provider/anthropic/testdata/reply/tool_use.sse")},
		{"anthropic", "long", AnthropicLong(thinkWords, textWords)},
		{"openai-chat", "captured-tools", read("../../provider/openai/testdata/replies/chat/tools.sse")},
		{"openai-chat", "long", OpenAIChatLong(textWords)},
	}
}

// summary is what both sides must agree on: the visible text, reasoning
// and its signature, tool calls, and token usage.
type summary struct {
	Text, Thinking, Signature string
	Calls                     []call
	Input, Output             int64
}

type call struct {
	ID, Name string
	Args     any
}

func args(s string) any {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return "malformed: " + s
	}
	return v
}

func fromConvo(m convo.Message) summary {
	s := summary{Text: m.Text()}
	for _, p := range m.Parts {
		switch p.Type {
		case convo.TypeReasoning:
			s.Thinking += p.Text
			s.Signature += p.Signature
		case convo.TypeToolCall:
			s.Calls = append(s.Calls, call{p.ID, p.Name, args(string(p.Args))})
		}
	}
	if m.Usage != nil {
		s.Input, s.Output = m.Usage.Input, m.Usage.Output
	}
	return s
}

func fromAnthropic(m anthropic.Message) summary {
	var s summary
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			if s.Text != "" {
				s.Text += "\n"
			}
			s.Text += b.Text
		case "thinking":
			s.Thinking += b.Thinking
			s.Signature += b.Signature
		case "tool_use":
			s.Calls = append(s.Calls, call{b.ID, b.Name, args(string(b.Input))})
		}
	}
	// convo's input counts every prompt token; the API's input_tokens
	// leaves out the cached ones.
	s.Input = m.Usage.InputTokens + m.Usage.CacheReadInputTokens + m.Usage.CacheCreationInputTokens
	s.Output = m.Usage.OutputTokens
	return s
}

func fromOpenAI(c openai.ChatCompletion) summary {
	var s summary
	if len(c.Choices) > 0 {
		msg := c.Choices[0].Message
		s.Text = msg.Content
		for _, tc := range msg.ToolCalls {
			s.Calls = append(s.Calls, call{tc.ID, tc.Function.Name, args(tc.Function.Arguments)})
		}
	}
	s.Input, s.Output = c.Usage.PromptTokens, c.Usage.CompletionTokens
	return s
}

// TestSameMessage checks that convo and the SDK fold every stream into the
// same message, so the benchmark compares equal work.
func TestSameMessage(t *testing.T) {
	for _, sc := range streams(t) {
		t.Run(sc.api+"/"+sc.name, func(t *testing.T) {
			var got, want summary
			switch sc.api {
			case "anthropic":
				m, err := AnthropicConvo(sc.data)
				if err != nil {
					t.Fatal(err)
				}
				s, err := AnthropicSDK(sc.data)
				if err != nil {
					t.Fatal(err)
				}
				got, want = fromConvo(m), fromAnthropic(s)
			case "openai-chat":
				m, err := OpenAIChatConvo(sc.data)
				if err != nil {
					t.Fatal(err)
				}
				c, err := OpenAIChatSDK(sc.data)
				if err != nil {
					t.Fatal(err)
				}
				got, want = fromConvo(m), fromOpenAI(c)
			}
			if got.Text == "" && len(got.Calls) == 0 {
				t.Fatalf("stream folded into nothing: %+v", got)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("convo and SDK differ:\nconvo %+v\nsdk   %+v", got, want)
			}
		})
	}
}

// BenchmarkStream reads and accumulates each stream, SSE parsing included,
// with convo and with the SDK.
func BenchmarkStream(b *testing.B) {
	for _, sc := range streams(b) {
		libs := map[string]func([]byte) error{}
		switch sc.api {
		case "anthropic":
			libs["convo"] = func(d []byte) error { _, err := AnthropicConvo(d); return err }
			libs["sdk"] = func(d []byte) error { _, err := AnthropicSDK(d); return err }
		case "openai-chat":
			libs["convo"] = func(d []byte) error { _, err := OpenAIChatConvo(d); return err }
			libs["sdk"] = func(d []byte) error { _, err := OpenAIChatSDK(d); return err }
		}
		for _, lib := range []string{"convo", "sdk"} {
			f := libs[lib]
			b.Run(sc.api+"/"+sc.name+"/"+lib, func(b *testing.B) {
				b.SetBytes(int64(len(sc.data)))
				b.ReportAllocs()
				for b.Loop() {
					if err := f(sc.data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
