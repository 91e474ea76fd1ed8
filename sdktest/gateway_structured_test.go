package sdktest

import (
	"bytes"
	"context"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/convo-go/convo/provider"
)

// outputRig is a gateway to an Anthropic upstream whose recorded reply (a
// line of text, then a tool call) answers with a call of the output tool,
// convo_output: what a model without structured output answers a request
// for it with.
func outputRig(t *testing.T) *gwRig {
	return newEditedRig(t, "anthropic", nil, func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte(`"get_weather"`), []byte(`"`+provider.OutputTool+`"`))
	})
}

// weather is the schema the structured requests below ask for.
var weather = map[string]any{
	"type":       "object",
	"properties": map[string]any{"city": map[string]any{"type": "string"}, "units": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
	"required":   []string{"city", "units"},
}

// TestGatewayStructuredChatSDK: openai-go streams a chat completion with a
// JSON schema response format, translated to a model without structured
// output (claude-3-5-haiku): its ChatCompletionAccumulator gets the answer
// as content, with finish_reason stop and no tool call.
func TestGatewayStructuredChatSDK(t *testing.T) {
	rg := outputRig(t)
	client := openai.NewClient(option.WithBaseURL(rg.url+"/v1/"), option.WithAPIKey(gwToken), option.WithMaxRetries(0))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "claude-3-5-haiku",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "weather", Schema: weather},
		}},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatal("the SDK accumulator refused a chunk")
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	c := acc.Choices[0]
	if c.Message.Content != textOf(rg.want) || len(c.Message.ToolCalls) != 0 || c.FinishReason != "stop" {
		t.Fatalf("SDK got %q, %d tool calls, finish %q; want %q", c.Message.Content, len(c.Message.ToolCalls), c.FinishReason, textOf(rg.want))
	}
	rg.checkStored(t, "Weather in Paris?")
}

// TestGatewayStructuredResponsesSDK: the same through openai-go's
// Responses, streamed: the answer comes as response.output_text.delta
// events, the completed response holds it as output_text, and no
// function_call item.
func TestGatewayStructuredResponsesSDK(t *testing.T) {
	rg := outputRig(t)
	client := openai.NewClient(option.WithBaseURL(rg.url+"/v1/"), option.WithAPIKey(gwToken), option.WithMaxRetries(0))
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "claude-3-5-haiku",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
		Text:  responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigParamOfJSONSchema("weather", weather)},
	})
	var text string
	var done *responses.Response
	for stream.Next() {
		switch ev := stream.Current(); ev.Type {
		case "response.output_text.delta":
			text += ev.Delta
		case "response.function_call_arguments.delta":
			t.Fatalf("a function call: %s", ev.RawJSON())
		case "response.completed":
			r := ev.Response
			done = &r
		}
	}
	if err := stream.Err(); err != nil || done == nil {
		t.Fatalf("%v, completed: %v", err, done != nil)
	}
	for _, it := range done.Output {
		if it.Type == "function_call" {
			t.Fatalf("a function_call item: %s", it.RawJSON())
		}
	}
	if want := textOf(rg.want); text != want || done.OutputText() != want || done.Status != "completed" {
		t.Fatalf("SDK got %q (completed: %q, %s); want %q", text, done.OutputText(), done.Status, want)
	}
	rg.checkStored(t, "Weather in Paris?")
}
