package sdktest

import (
	"bytes"
	"context"
	"errors"
	"strings"
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

// TestGatewayResponseResourcesSDK: openai-go's calls on a stored response
// through the gateway. Translated (an Anthropic upstream), the response is
// the gateway's: Responses.GetStreaming streams it again, InputItems.List
// pages through the conversation before it (ListAutoPaging following
// after cursors), and Responses.Delete is refused with a 400 saying why.
// Passed through (a Responses upstream), Get and Delete reach OpenAI's
// fake, whose answer comes back.
func TestGatewayResponseResourcesSDK(t *testing.T) {
	ctx := context.Background()
	t.Run("translated", func(t *testing.T) {
		rg := newGatewayRig(t, "anthropic")
		client := openai.NewClient(option.WithBaseURL(rg.url+"/v1/"), option.WithAPIKey(gwToken), option.WithMaxRetries(0))
		first, err := client.Responses.New(ctx, responses.ResponseNewParams{
			Model: "claude-test",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
		})
		if err != nil {
			t.Fatal(err)
		}
		stream := client.Responses.GetStreaming(ctx, first.ID, responses.ResponseGetParams{})
		var done *responses.Response
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "response.completed" {
				r := ev.Response
				done = &r
			}
		}
		if err := stream.Err(); err != nil || done == nil || done.ID != first.ID || len(done.Output) != len(first.Output) {
			t.Fatalf("GetStreaming: %v, %+v", err, done)
		}
		var kinds []string
		iter := client.Responses.InputItems.ListAutoPaging(ctx, first.ID, responses.InputItemListParams{Limit: openai.Int(1), Order: responses.InputItemListParamsOrderAsc})
		for iter.Next() {
			it := iter.Current()
			kinds = append(kinds, it.Type+" "+it.Role)
		}
		if err := iter.Err(); err != nil || len(kinds) != 1 || kinds[0] != "message user" {
			t.Fatalf("input items %v, %v", kinds, err)
		}
		var apiErr *openai.Error
		if err := client.Responses.Delete(ctx, first.ID); !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "convo store rm") {
			t.Fatalf("Delete: %v", err)
		}
	})
	t.Run("passed through", func(t *testing.T) {
		rg := newGatewayRig(t, "openai-responses")
		client := openai.NewClient(option.WithBaseURL(rg.url+"/v1/"), option.WithAPIKey(gwToken), option.WithMaxRetries(0))
		got, err := client.Responses.Get(ctx, rg.want.Origin.ResponseID, responses.ResponseGetParams{})
		if err != nil || got.ID != rg.want.Origin.ResponseID {
			t.Fatalf("Get: %v, %+v", err, got)
		}
		if err := client.Responses.Delete(ctx, rg.want.Origin.ResponseID); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	})
}
