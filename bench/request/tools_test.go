package request

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	anth "github.com/convo-go/convo/provider/anthropic"
	oai "github.com/convo-go/convo/provider/openai"
)

// toolRequest is a short conversation with n tools, each with a small
// schema, and the settings an agent sets.
func toolRequest(n int) *provider.Request {
	r := &provider.Request{
		Model:       "m",
		MaxTokens:   1024,
		History:     convo.History{convo.System("You are an agent."), convo.User("Do the thing.")},
		ToolChoice:  provider.ToolChoice{Mode: provider.ToolChoiceAuto},
		Temperature: provider.Float(0.2),
	}
	for i := range n {
		r.Tools = append(r.Tools, provider.Tool{
			Name:        "tool_" + strconv.Itoa(i),
			Description: "Does thing number " + strconv.Itoa(i) + " to the named target, returning its new state.",
			Parameters:  json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"target":{"type":"string","description":"what to act on"},"count":{"type":"integer","minimum":%d},"force":{"type":"boolean"}},"required":["target"]}`, i)),
		})
	}
	return r
}

// BenchmarkTools encodes and decodes a whole request with 32, 128 and 512
// tools, beside the official SDKs marshalling and unmarshalling their
// params type for the same body: cost per tool should be flat.
func BenchmarkTools(b *testing.B) {
	for _, c := range []struct {
		name   string
		codec  provider.RequestCodec
		params func() any
	}{
		{"openai-chat", oai.Chat(), func() any { return new(openai.ChatCompletionNewParams) }},
		{"anthropic", anth.Messages(), func() any { return new(anthropic.MessageNewParams) }},
	} {
		for _, n := range []int{32, 128, 512} {
			r := toolRequest(n)
			body, _, err := c.codec.EncodeRequest(r, provider.Options{})
			if err != nil {
				b.Fatal(err)
			}
			p := c.params()
			if err := json.Unmarshal(body, p); err != nil {
				b.Fatal(err)
			}
			run := func(op string, f func() error) {
				b.Run(c.name+"/"+op+"/tools="+strconv.Itoa(n), func(b *testing.B) {
					b.SetBytes(int64(len(body)))
					b.ReportAllocs()
					for b.Loop() {
						if err := f(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			run("convo-encode", func() error { _, _, err := c.codec.EncodeRequest(r, provider.Options{}); return err })
			run("convo-decode", func() error { _, _, err := c.codec.DecodeRequest(body, provider.Options{}); return err })
			run("sdk-marshal", func() error { _, err := json.Marshal(p); return err })
			run("sdk-unmarshal", func() error { return json.Unmarshal(body, c.params()) })
		}
	}
}
