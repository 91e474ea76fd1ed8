package sdktest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	oai "github.com/convo-go/convo/provider/openai"
)

// oaiMembers returns the members of a request body a codec reads and
// writes, as generic JSON values.
func oaiMembers(t *testing.T, body []byte, keys ...string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

func oaiSame(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		gl, wl := strings.Split(string(g), "\n"), strings.Split(string(w), "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		from := max(0, i-4)
		t.Errorf("%s differs at line %d\n got: %s\nwant: %s", what, i,
			strings.Join(gl[from:min(len(gl), i+6)], "\n"), strings.Join(wl[from:min(len(wl), i+6)], "\n"))
	}
}

// oaiChatRequests are Chat Completions requests built with the SDK's own
// param types, covering every message and part type convo maps.
func oaiChatRequests() map[string]openai.ChatCompletionNewParams {
	return map[string]openai.ChatCompletionNewParams{
		"tool loop with media": {
			Model: openai.ChatModelGPT4_1,
			Messages: []openai.ChatCompletionMessageParamUnion{
				openai.DeveloperMessage("Be brief."),
				openai.SystemMessage([]openai.ChatCompletionContentPartTextParam{{
					Text:                  "Cached rules.",
					PromptCacheBreakpoint: openai.ChatCompletionContentPartTextPromptCacheBreakpointParam{Ttl: "30m"},
				}}),
				{OfUser: &openai.ChatCompletionUserMessageParam{
					Name: param.NewOpt("alice"),
					Content: openai.ChatCompletionUserMessageParamContentUnion{OfArrayOfContentParts: []openai.ChatCompletionContentPartUnionParam{
						openai.TextContentPart("What is in these?"),
						openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,iVBORw0KGgo=", Detail: "high"}),
						openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "https://example.com/a.jpg"}),
						openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: "UklGRiQAAABXQVZF", Format: "wav"}),
						openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{Data: "SUQzBAAAAAAAI1RT", Format: "mp3"}),
						openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{FileID: param.NewOpt("file-abc"), Filename: param.NewOpt("q3.pdf")}),
						openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{FileData: param.NewOpt("data:application/pdf;base64,JVBERi0xLjQK"), Filename: param.NewOpt("b.pdf")}),
					}},
				}},
				{OfAssistant: &openai.ChatCompletionAssistantMessageParam{
					Content: openai.ChatCompletionAssistantMessageParamContentUnion{OfString: param.NewOpt("Checking.")},
					ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{
						{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: "call_1",
							Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city": "Paris"}`}}},
						{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: "call_2",
							Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"city":"Oslo"`}}},
						{OfCustom: &openai.ChatCompletionMessageCustomToolCallParam{ID: "call_3",
							Custom: openai.ChatCompletionMessageCustomToolCallCustomParam{Name: "grep", Input: "TODO.*"}}},
					},
				}},
				openai.ToolMessage(`{"temp_c":18}`, "call_1"),
				openai.ToolMessage([]openai.ChatCompletionContentPartTextParam{{Text: "bad arguments"}}, "call_2"),
				openai.ToolMessage("main.go:3", "call_3"),
				{OfAssistant: &openai.ChatCompletionAssistantMessageParam{
					Name:    param.NewOpt("bot"),
					Refusal: param.NewOpt("No dark jokes."),
					Content: openai.ChatCompletionAssistantMessageParamContentUnion{OfArrayOfContentParts: []openai.ChatCompletionAssistantMessageParamContentArrayOfContentPartUnion{
						{OfText: &openai.ChatCompletionContentPartTextParam{Text: "Paris 18 °C."}},
						{OfRefusal: &openai.ChatCompletionContentPartRefusalParam{Refusal: "Oslo: no."}},
					}},
					Audio: openai.ChatCompletionAssistantMessageParamAudio{ID: "audio_1"},
				}},
				openai.UserMessage("Thanks."),
			},
		},
		"deprecated function calling": {
			Model: openai.ChatModelGPT3_5Turbo,
			Messages: []openai.ChatCompletionMessageParamUnion{
				openai.UserMessage("Order 42?"),
				{OfAssistant: &openai.ChatCompletionAssistantMessageParam{
					FunctionCall: openai.ChatCompletionAssistantMessageParamFunctionCall{Name: "lookup", Arguments: `{"id":42}`},
				}},
				{OfFunction: &openai.ChatCompletionFunctionMessageParam{Name: "lookup", Content: param.NewOpt(`{"status":"shipped"}`)}},
				openai.AssistantMessage("Shipped."),
			},
		},
	}
}

// TestOpenAIChatSDKRequests: requests the SDK builds and marshals decode
// with convo and encode back to the same messages.
func TestOpenAIChatSDKRequests(t *testing.T) {
	for name, params := range oaiChatRequests() {
		t.Run(name, func(t *testing.T) {
			body, err := json.Marshal(params)
			if err != nil {
				t.Fatal(err)
			}
			h, _, err := oai.Chat().Decode(body, provider.Options{})
			if err != nil {
				t.Fatalf("decode: %v\n%s", err, body)
			}
			if err := h.Validate(); err != nil {
				t.Errorf("decoded history: %v", err)
			}
			out, warns, err := oai.Chat().Encode(h, provider.Options{})
			if err != nil || len(warns) > 0 {
				t.Fatalf("encode: %v %v", err, warns)
			}
			oaiSame(t, "messages", oaiMembers(t, out, "messages"), oaiMembers(t, body, "messages"))
		})
	}
}

// oaiResponsesRequests are Responses requests built with the SDK's param
// types.
func oaiResponsesRequests() map[string]responses.ResponseNewParams {
	return map[string]responses.ResponseNewParams{
		"stateless tool loop": {
			Model:        "gpt-5",
			Instructions: param.NewOpt("Be brief."),
			Store:        param.NewOpt(false),
			Include:      []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
					{OfInputText: &responses.ResponseInputTextParam{Text: "Weather in Paris? See the photo and report.",
						PromptCacheBreakpoint: responses.ResponseInputTextPromptCacheBreakpointParam{}}},
					{OfInputImage: &responses.ResponseInputImageParam{ImageURL: param.NewOpt("https://example.com/paris.jpg"), Detail: responses.ResponseInputImageDetailLow}},
					{OfInputImage: &responses.ResponseInputImageParam{FileID: param.NewOpt("file-img"), Detail: responses.ResponseInputImageDetailAuto}},
					{OfInputFile: &responses.ResponseInputFileParam{FileData: param.NewOpt("data:application/pdf;base64,JVBERi0xLjQK"), Filename: param.NewOpt("r.pdf")}},
					{OfInputFile: &responses.ResponseInputFileParam{FileURL: param.NewOpt("https://example.com/r.pdf")}},
				}, responses.EasyInputMessageRoleUser),
				{OfReasoning: &responses.ResponseReasoningItemParam{
					ID:               "rs_1",
					Summary:          []responses.ResponseReasoningItemSummaryParam{{Text: "Call the tool."}},
					EncryptedContent: param.NewOpt("gAAAAB"),
				}},
				{OfOutputMessage: &responses.ResponseOutputMessageParam{
					ID:     "msg_1",
					Status: responses.ResponseOutputMessageStatusCompleted,
					Phase:  responses.ResponseOutputMessagePhaseCommentary,
					Content: []responses.ResponseOutputMessageContentUnionParam{
						{OfOutputText: &responses.ResponseOutputTextParam{Text: "Checking.", Annotations: []responses.ResponseOutputTextAnnotationUnionParam{}}},
					},
				}},
				{OfFunctionCall: &responses.ResponseFunctionToolCallParam{ID: param.NewOpt("fc_1"), CallID: "call_1", Name: "get_weather",
					Arguments: `{"city": "Paris"}`, Status: responses.ResponseFunctionToolCallStatusCompleted}},
				{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{CallID: param.NewOpt("call_1"),
					Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfResponseFunctionCallOutputItemArray: responses.ResponseFunctionCallOutputItemListParam{
						{OfInputText: &responses.ResponseInputTextContentParam{Text: `{"temp_c":18}`}},
						{OfInputImage: &responses.ResponseInputImageContentParam{ImageURL: param.NewOpt("data:image/png;base64,iVBORw0KGgo="), Detail: "high"}},
					}}}},
				{OfReasoning: &responses.ResponseReasoningItemParam{ID: "rs_2", Summary: []responses.ResponseReasoningItemSummaryParam{}, EncryptedContent: param.NewOpt("gAAAAC")}},
				{OfMessage: &responses.EasyInputMessageParam{Role: responses.EasyInputMessageRoleAssistant,
					Phase:   responses.EasyInputMessagePhaseFinalAnswer,
					Content: responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt("18 °C.")}}},
				responses.ResponseInputItemParamOfMessage("And tomorrow?", responses.EasyInputMessageRoleUser),
			}},
		},
		"developer and custom tools": {
			Model: "gpt-5",
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
				responses.ResponseInputItemParamOfMessage("Use grep.", responses.EasyInputMessageRoleDeveloper),
				responses.ResponseInputItemParamOfInputMessage(responses.ResponseInputMessageContentListParam{
					{OfInputText: &responses.ResponseInputTextParam{Text: "Find TODOs."}},
				}, "user"),
				{OfCustomToolCall: &responses.ResponseCustomToolCallParam{CallID: "call_g", Name: "grep", Input: "TODO"}},
				{OfCustomToolCallOutput: &responses.ResponseCustomToolCallOutputParam{CallID: "call_g",
					Output: responses.ResponseCustomToolCallOutputOutputUnionParam{OfString: param.NewOpt("main.go:3")}}},
				{OfWebSearchCall: &responses.ResponseFunctionWebSearchParam{ID: "ws_1", Status: responses.ResponseFunctionWebSearchStatusCompleted,
					Action: responses.ResponseFunctionWebSearchActionUnionParam{OfSearch: &responses.ResponseFunctionWebSearchActionSearchParam{Query: param.NewOpt("convo")}}}},
				{OfItemReference: &responses.ResponseInputItemItemReferenceParam{ID: "msg_old"}},
			}},
		},
		"string input": {
			Model:        "gpt-5",
			Instructions: param.NewOpt("Talk like a pirate."),
			Input:        responses.ResponseNewParamsInputUnion{OfString: param.NewOpt("Hello?")},
		},
	}
}

func TestOpenAIResponsesSDKRequests(t *testing.T) {
	for name, params := range oaiResponsesRequests() {
		t.Run(name, func(t *testing.T) {
			body, err := json.Marshal(params)
			if err != nil {
				t.Fatal(err)
			}
			h, _, err := oai.Responses().Decode(body, provider.Options{})
			if err != nil {
				t.Fatalf("decode: %v\n%s", err, body)
			}
			if err := h.Validate(); err != nil {
				t.Errorf("decoded history: %v", err)
			}
			out, warns, err := oai.Responses().Encode(h, provider.Options{})
			if err != nil || len(warns) > 0 {
				t.Fatalf("encode: %v %v", err, warns)
			}
			oaiSame(t, "conversation", oaiMembers(t, out, "instructions", "input"), oaiMembers(t, body, "instructions", "input"))
		})
	}
}

// oaiEncoded collects what convo's codecs write: every request fixture of
// the OpenAI package decoded and re-encoded, and every canonical fixture of
// the repository encoded for the format.
func oaiEncoded(t *testing.T, codec provider.Codec, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join("..", "provider", "openai", "testdata", dir, "*.json"))
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h, _, err := codec.Decode(body, provider.Options{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		enc, _, err := codec.Encode(h, provider.Options{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = enc
	}
	canon, _ := filepath.Glob(filepath.Join("..", "provider", "openai", "testdata", "cross", "*.convo.json"))
	for _, f := range canon {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := convo.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		enc, _, err := codec.Encode(h, provider.Options{Media: provider.MediaPlaceholder, Reasoning: provider.ReasoningText})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = enc
	}
	return out
}

// Message members the SDK's param types do not declare, which it drops
// when it reads a request: convo keeps them for OpenAI-compatible servers
// and same-provider round trips.
var oaiUndeclared = map[string]bool{
	"reasoning_content": true, // DeepSeek/Kimi-style reasoning text
	"prefix":            true, // DeepSeek prefix completion
	"annotations":       true, // of a Chat response message, replayed as is
}

// TestOpenAIChatSDKAccepts: everything convo writes for Chat unmarshals
// into the SDK's request type and marshals back equal, except members the
// SDK does not declare (listed in oaiUndeclared) and parts of types it does
// not know (kept opaque by convo: video_url, server_tool calls).
func TestOpenAIChatSDKAccepts(t *testing.T) {
	for name, body := range oaiEncoded(t, oai.Chat(), "chat") {
		t.Run(filepath.Base(name), func(t *testing.T) {
			var params openai.ChatCompletionNewParams
			if err := json.Unmarshal(body, &params); err != nil {
				t.Fatalf("SDK refuses: %v\n%s", err, body)
			}
			back, err := json.Marshal(params)
			if err != nil {
				t.Fatal(err)
			}
			want := oaiMembers(t, body, "messages")
			oaiStrip(want)
			oaiSame(t, "messages", oaiMembers(t, back, "messages"), want)
		})
	}
}

// TestOpenAIResponsesSDKAccepts is the same check for Responses requests
// and for EncodeItems' items (each an input item).
func TestOpenAIResponsesSDKAccepts(t *testing.T) {
	for name, body := range oaiEncoded(t, oai.Responses(), "responses") {
		t.Run(filepath.Base(name), func(t *testing.T) {
			typed := oaiTyped(t, body)
			var params responses.ResponseNewParams
			if err := json.Unmarshal(typed, &params); err != nil {
				t.Fatalf("SDK refuses: %v\n%s", err, typed)
			}
			back, err := json.Marshal(params)
			if err != nil {
				t.Fatal(err)
			}
			got, want := oaiMembers(t, back, "instructions", "input"), oaiMembers(t, typed, "instructions", "input")
			oaiVariants(t, got, want)
			oaiSame(t, "conversation", got, want)

			h, _, err := oai.Responses().Decode(body, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			items, _, err := oai.EncodeItems(h, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, item := range items {
				item = oaiTypedItem(t, item)
				var p any = &responses.ResponseInputItemUnionParam{}
				if v := oaiVariant(item); v != nil {
					p = v
				}
				if err := json.Unmarshal(item, p); err != nil {
					t.Fatalf("item %d: SDK refuses: %v\n%s", i, err, item)
				}
				again, err := json.Marshal(p)
				if err != nil {
					t.Fatal(err)
				}
				oaiSame(t, "item", oaiMembers(t, []byte(`{"i":`+string(again)+`}`), "i"), oaiMembers(t, []byte(`{"i":`+string(item)+`}`), "i"))
			}
		})
	}
}

// oaiVariant returns the SDK type of a message item that uses a form other
// than the easy one: the output form (an assistant message with its item
// id) or the input form (a message with a status). It returns nil for
// others.
func oaiVariant(item []byte) any {
	var m struct {
		Type, Role string
		ID, Status *string
	}
	if json.Unmarshal(item, &m) != nil || m.Type != "message" {
		return nil
	}
	switch {
	case m.Role == "assistant" && m.ID != nil:
		return &responses.ResponseOutputMessageParam{}
	case m.Role != "assistant" && m.Status != nil:
		return &responses.ResponseInputItemMessageParam{}
	}
	return nil
}

// oaiVariants checks the output- and input-form messages of a request one
// by one as their own SDK types, then takes them out of both sides: the
// SDK's input-item union reads every "message" item as its first variant
// (the easy form) and so drops a replayed message's id and status, a quirk
// of its unmarshaller.
func oaiVariants(t *testing.T, got, want map[string]any) {
	t.Helper()
	gi, _ := got["input"].([]any)
	wi, _ := want["input"].([]any)
	if len(gi) != len(wi) {
		return // oaiSame reports it
	}
	for i := range wi {
		raw, _ := json.Marshal(wi[i])
		p := oaiVariant(raw)
		if p == nil {
			continue
		}
		if err := json.Unmarshal(raw, p); err != nil {
			t.Fatalf("input[%d]: SDK refuses: %v", i, err)
		}
		back, _ := json.Marshal(p)
		oaiSame(t, "message item", oaiMembers(t, []byte(`{"i":`+string(back)+`}`), "i"), oaiMembers(t, []byte(`{"i":`+string(raw)+`}`), "i"))
		gi[i], wi[i] = nil, nil
	}
}

// oaiTyped adds "type" to the input items that leave it out. The API and
// the SDK's own marshaller leave it out of easy messages and item
// references, but the SDK's union unmarshaller cannot tell the variant
// without it (a quirk of the SDK, not of the format).
func oaiTyped(t *testing.T, body []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(m["input"], &items); err != nil {
		return body // a string input
	}
	for i := range items {
		items[i] = oaiTypedItem(t, items[i])
	}
	m["input"], _ = json.Marshal(items)
	out, _ := json.Marshal(m)
	return out
}

func oaiTypedItem(t *testing.T, item []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(item, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["type"]; ok {
		return item
	}
	if _, ok := m["role"]; ok {
		m["type"] = json.RawMessage(`"message"`)
	} else {
		m["type"] = json.RawMessage(`"item_reference"`)
	}
	out, _ := json.Marshal(m)
	return out
}

// oaiStrip removes, in place, what the SDK's Chat types cannot carry:
// undeclared message members, members set to null other than refusal (the
// SDK reads null as absent), "name" on tool messages and "index" on tool
// calls. (Content parts and tool calls of types it does not know it keeps.)
func oaiStrip(v map[string]any) {
	msgs, _ := v["messages"].([]any)
	for _, m := range msgs {
		msg := m.(map[string]any)
		for k, x := range msg {
			if oaiUndeclared[k] || (x == nil && k != "refusal") || (k == "name" && msg["role"] == "tool") {
				delete(msg, k)
			}
		}
		if c, ok := msg["tool_calls"].([]any); ok {
			for _, call := range c {
				delete(call.(map[string]any), "index")
			}
		}
	}
}
