package sdktest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/ollama/ollama/api"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// gwRecorded are the recorded replies each fake upstream replays: tool
// calls, reasoning with signatures or encrypted content, usage.
var gwRecorded = map[string][2]string{
	"openai-chat":      {"openai/testdata/replies/chat/tools.json", "openai/testdata/replies/chat/tools.sse"},
	"openai-responses": {"openai/testdata/replies/responses/tools.json", "openai/testdata/replies/responses/tools.sse"},
	"anthropic":        {"anthropic/testdata/reply/tool_use.json", "anthropic/testdata/reply/tool_use.sse"},
	"gemini":           {"gemini/testdata/replies/tools.json", "gemini/testdata/replies/tools.sse"},
}

const gwToken, gwTenant = "tok-sdk", "sdk"

type gwRig struct {
	url  string
	gw   *gateway.Gateway
	st   store.Store
	want convo.Message // the upstream's streamed reply as convo reads it
}

// newGatewayRig starts a fake upstream of protocol up replaying its
// recorded stream, and a gateway routing every model to it.
func newGatewayRig(t *testing.T, up string) *gwRig { return newCheckedRig(t, up, nil) }

// newCheckedRig is newGatewayRig with an upstream that refuses, as a 400
// in Anthropic's error shape, a request check finds fault with.
func newCheckedRig(t *testing.T, up string, check func(body []byte) error) *gwRig {
	return newEditedRig(t, up, check, nil)
}

// newEditedRig is newCheckedRig with the recorded replies changed by edit
// (when not nil) before the upstream replays them.
func newEditedRig(t *testing.T, up string, check func(body []byte) error, edit func([]byte) []byte) *gwRig {
	t.Helper()
	files := gwRecorded[up]
	plain, err := os.ReadFile(filepath.Join("..", "provider", files[0]))
	if err != nil {
		t.Fatal(err)
	}
	sse, err := os.ReadFile(filepath.Join("..", "provider", files[1]))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		plain, sse = edit(plain), edit(sse)
	}
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if check != nil {
			if err := check(body); err != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				msg, _ := json.Marshal(err.Error())
				w.Write([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":` + string(msg) + `}}`))
				return
			}
		}
		if !strings.Contains(r.URL.Path, "stream") && !bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(plain)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for data := sse; len(data) > 0; {
			n := min(len(data), 113)
			w.Write(data[:n])
			w.(http.Flusher).Flush()
			data = data[n:]
		}
	}))
	t.Cleanup(fake.Close)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "gw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	base := fake.URL
	if strings.HasPrefix(up, "openai") {
		base += "/v1"
	}
	gw, err := gateway.New(gateway.Options{
		Config: gateway.Config{
			Upstreams: []gateway.Upstream{{Name: "up", Protocol: up, URL: base}},
			Routes:    []gateway.Route{{Model: "*", Upstream: "up"}},
		},
		Store:  st,
		Tokens: map[string]string{gwToken: gwTenant},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	rc, _ := all.Lookup(up)
	want, _, err := rc.ReadStream(bytes.NewReader(sse), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &gwRig{url: srv.URL, gw: gw, st: st, want: want}
}

// stored drains the gateway's recordings and returns the one conversation
// recorded.
func (rg *gwRig) stored(t *testing.T) convo.History {
	t.Helper()
	// The handler hands the exchange over once the client has the reply,
	// which on a loaded machine can be a while after the SDK returns.
	settled := func(s gateway.Stats) bool { return s.Recorded+s.Dropped+s.Failed > 0 }
	for i := 0; !settled(rg.gw.Stats()) && i < 1000; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rg.gw.Close(ctx); err != nil {
		t.Fatal(err)
	}
	cs, _, err := rg.st.List(ctx, gwTenant, store.ListOptions{})
	if err != nil || len(cs) != 1 {
		t.Fatalf("%d conversations, %v (gateway stats %+v)", len(cs), err, rg.gw.Stats())
	}
	h, _, err := rg.st.Load(ctx, gwTenant, cs[0].ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// checkStored: the store holds the question and the upstream's reply as
// convo reads it, whatever the client's protocol.
func (rg *gwRig) checkStored(t *testing.T, question string) {
	t.Helper()
	h := rg.stored(t)
	if len(h) != 2 || h[0].Text() != question {
		t.Fatalf("stored %d messages, first %q", len(h), h[0].Text())
	}
	got := h[1]
	got.ID, got.Time = rg.want.ID, rg.want.Time
	if !reflect.DeepEqual(got, rg.want) {
		t.Fatalf("stored reply differs from the upstream's:\n got %+v\nwant %+v", got, rg.want)
	}
}

// calls returns "id name args" of the reply's tool calls, arguments
// canonical.
func gwCalls(m convo.Message) []string {
	var out []string
	for _, c := range m.ToolCalls() {
		out = append(out, c.ID+" "+c.Name+" "+canon(string(c.Args)))
	}
	return out
}

func canon(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestGatewayOpenAIChatSDK: openai-go streams a chat completion through the
// gateway from an OpenAI Chat upstream (pass-through) and from an Anthropic
// one (translated); its ChatCompletionAccumulator gets the upstream's text,
// tool calls and usage, and the store the upstream's reply.
func TestGatewayOpenAIChatSDK(t *testing.T) {
	for _, up := range []string{"openai-chat", "anthropic"} {
		t.Run(up, func(t *testing.T) {
			rg := newGatewayRig(t, up)
			client := openai.NewClient(option.WithBaseURL(rg.url+"/v1/"), option.WithAPIKey(gwToken), option.WithMaxRetries(0))
			stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
				Model:         "gpt-test",
				Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
				StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
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
			msg := acc.Choices[0].Message
			var calls []string
			for _, c := range msg.ToolCalls {
				calls = append(calls, c.ID+" "+c.Function.Name+" "+canon(c.Function.Arguments))
			}
			if !reflect.DeepEqual(calls, gwCalls(rg.want)) || msg.Content != textOf(rg.want) {
				t.Fatalf("SDK got %q %v, upstream sent %q %v", msg.Content, calls, textOf(rg.want), gwCalls(rg.want))
			}
			if acc.Usage.PromptTokens != rg.want.Usage.Input || acc.Usage.CompletionTokens != rg.want.Usage.Output {
				t.Fatalf("usage %+v, want %+v", acc.Usage, rg.want.Usage)
			}
			rg.checkStored(t, "Weather in Paris?")
		})
	}
}

func textOf(m convo.Message) string {
	var s string
	for _, p := range m.Parts {
		if p.Type == convo.TypeText {
			s += p.Text
		}
	}
	return s
}

// TestGatewayResponsesSDK: openai-go streams a Responses reply through the
// gateway from a Responses upstream (pass-through) and an Anthropic one
// (translated); the response.completed event holds the upstream's reasoning
// text and function calls, as its events carry them.
func TestGatewayResponsesSDK(t *testing.T) {
	for _, up := range []string{"openai-responses", "anthropic"} {
		t.Run(up, func(t *testing.T) { testResponsesSDK(t, up) })
	}
}

func testResponsesSDK(t *testing.T, up string) {
	rg := newGatewayRig(t, up)
	client := openai.NewClient(option.WithBaseURL(rg.url+"/v1/"), option.WithAPIKey(gwToken), option.WithMaxRetries(0))
	stream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: "gpt-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
	})
	var completed bool
	var calls []string
	var text string
	for stream.Next() {
		switch ev := stream.Current(); ev.Type {
		case "response.completed":
			completed = true
		case "response.output_text.delta":
			text += ev.Delta
		case "response.output_item.done":
			if it := ev.Item; it.Type == "function_call" {
				calls = append(calls, it.CallID+" "+it.Name+" "+canon(it.Arguments.OfString))
			}
		}
	}
	if err := stream.Err(); err != nil || !completed {
		t.Fatalf("%v, completed: %v", err, completed)
	}
	if text != textOf(rg.want) || !reflect.DeepEqual(calls, gwCalls(rg.want)) {
		t.Fatalf("SDK got %q %v, upstream sent %q %v", text, calls, textOf(rg.want), gwCalls(rg.want))
	}
	rg.checkStored(t, "Weather in Paris?")
}

// TestGatewayAnthropicSDK: anthropic-sdk-go streams a message with tools and
// thinking through the gateway from an Anthropic upstream (pass-through:
// thinking and its signature intact) and from an OpenAI Chat one
// (translated); Message.Accumulate gets the upstream's blocks.
func TestGatewayAnthropicSDK(t *testing.T) {
	for _, up := range []string{"anthropic", "openai-chat"} {
		t.Run(up, func(t *testing.T) {
			rg := newGatewayRig(t, up)
			client := anthropic.NewClient(aoption.WithBaseURL(rg.url), aoption.WithAPIKey(gwToken), aoption.WithMaxRetries(0))
			stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
				Model:     "claude-test",
				MaxTokens: 2048,
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))},
				Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather",
					InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}},
				Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
			})
			var msg anthropic.Message
			for stream.Next() {
				if err := msg.Accumulate(stream.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			var text, thinking, sig string
			var calls []string
			for _, b := range msg.Content {
				switch b.Type {
				case "text":
					text += b.Text
				case "thinking":
					thinking, sig = thinking+b.Thinking, sig+b.Signature
				case "tool_use":
					calls = append(calls, b.ID+" "+b.Name+" "+canon(string(b.Input)))
				}
			}
			var wantThinking, wantSig string
			for _, p := range rg.want.Parts {
				if p.Type == convo.TypeReasoning {
					wantThinking += p.Text
					if p.Provider == "anthropic" {
						wantSig += p.Signature
					}
				}
			}
			if text != textOf(rg.want) || !reflect.DeepEqual(calls, gwCalls(rg.want)) || thinking != wantThinking || sig != wantSig {
				t.Fatalf("SDK got %q %v thinking %q sig %q\nupstream sent %q %v thinking %q sig %q", text, calls, thinking, sig, textOf(rg.want), gwCalls(rg.want), wantThinking, wantSig)
			}
			if msg.Usage.OutputTokens != rg.want.Usage.Output {
				t.Fatalf("usage %+v, want %+v", msg.Usage, rg.want.Usage)
			}
			rg.checkStored(t, "Weather in Paris?")
		})
	}
}

// TestGatewayGenaiSDK: genai streams generateContent through the gateway
// from a Gemini upstream (pass-through) and an Anthropic one (translated):
// text and function calls.
func TestGatewayGenaiSDK(t *testing.T) {
	for _, up := range []string{"gemini", "anthropic"} {
		t.Run(up, func(t *testing.T) { testGenaiSDK(t, up) })
	}
}

func testGenaiSDK(t *testing.T, up string) {
	rg := newGatewayRig(t, up)
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: gwToken, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: rg.url},
	})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	var calls []string
	for resp, err := range c.Models.GenerateContentStream(context.Background(), "gemini-test", genai.Text("Weather in Paris?"), nil) {
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range resp.Candidates[0].Content.Parts {
			if p.FunctionCall != nil {
				b, _ := json.Marshal(p.FunctionCall.Args)
				calls = append(calls, p.FunctionCall.Name+" "+string(b))
			} else if !p.Thought {
				text += p.Text
			}
		}
	}
	var want []string
	for _, c := range rg.want.ToolCalls() {
		want = append(want, c.Name+" "+canon(string(c.Args)))
	}
	if text != textOf(rg.want) || !reflect.DeepEqual(calls, want) {
		t.Fatalf("SDK got %q %v, upstream sent %q %v", text, calls, textOf(rg.want), want)
	}
	rg.checkStored(t, "Weather in Paris?")
}

// thinkingRig is a gateway in front of an Anthropic upstream thinking with
// tools, whose fake refuses, as the API does, a request whose assistant
// tool_use turn does not start with the signed thinking block it came with.
func thinkingRig(t *testing.T) *gwRig {
	var want string // the recorded reply's signature
	rg := newCheckedRig(t, "anthropic", func(body []byte) error {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content []struct {
					Type      string `json:"type"`
					Signature string `json:"signature"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			return err
		}
		for i, m := range req.Messages {
			for _, b := range m.Content {
				if m.Role == "assistant" && b.Type == "tool_use" && (m.Content[0].Type != "thinking" || m.Content[0].Signature != want) {
					return fmt.Errorf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`", i, m.Content[0].Type)
				}
			}
		}
		return nil
	})
	for _, p := range rg.want.Parts {
		want += p.Signature
	}
	return rg
}

// checkLoop checks that the rig's store holds a tool loop of steps
// replies as one conversation: the question, then each reply, the ones
// before the last followed by their tools' results.
func (rg *gwRig) checkLoop(t *testing.T, steps int) {
	t.Helper()
	var roles []convo.Role
	for _, m := range rg.stored(t) {
		roles = append(roles, m.Role)
	}
	want := []convo.Role{convo.RoleUser}
	for i := range steps {
		if want = append(want, convo.RoleAssistant); i < steps-1 {
			want = append(want, convo.RoleTool)
		}
	}
	if !reflect.DeepEqual(roles, want) {
		t.Fatalf("stored %v, want the loop as one conversation: %v", roles, want)
	}
}

// TestGatewayToolLoopSDK: openai-go runs a tool loop through the gateway
// against an Anthropic upstream thinking with tools, whose fake refuses, as
// the API does, a request whose assistant tool_use turn does not start with
// its signed thinking block. Chat Completions has no place for that block,
// so the client's second request cannot carry it: the gateway puts back
// the reply it recorded, and the loop goes on.
func TestGatewayToolLoopSDK(t *testing.T) {
	rg := thinkingRig(t)
	client := openai.NewClient(option.WithBaseURL(rg.url+"/v1/"), option.WithAPIKey(gwToken), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model:    "claude-test",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
	}
	first, err := client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	reply := first.Choices[0].Message
	if len(reply.ToolCalls) == 0 {
		t.Fatalf("no tool call in %+v", reply)
	}
	params.Messages = append(params.Messages, reply.ToParam())
	for _, c := range reply.ToolCalls {
		params.Messages = append(params.Messages, openai.ToolMessage(`{"temp_c":18}`, c.ID))
	}
	// Two more steps: each request carries every step of the loop so far,
	// and each step's tool_use turn goes to the upstream with its thinking.
	for step := 2; step <= 3; step++ {
		next, err := client.Chat.Completions.New(context.Background(), params)
		if err != nil {
			t.Fatalf("the tool loop's request %d: %v", step, err)
		}
		if step == 3 {
			break
		}
		params.Messages = append(params.Messages, next.Choices[0].Message.ToParam())
		for _, c := range next.Choices[0].Message.ToolCalls {
			params.Messages = append(params.Messages, openai.ToolMessage(`{"temp_c":19}`, c.ID))
		}
	}
	rg.checkLoop(t, 3)
}

// TestGatewayPreviousResponseSDK: openai-go gets a response back by its id
// and goes on from it with PreviousResponseID, as it would with OpenAI,
// through a gateway that translates to an Anthropic upstream: the gateway
// puts the recorded conversation in front of the function call's output,
// the thinking with its signature included, and the loop is recorded as
// one conversation.
func TestGatewayPreviousResponseSDK(t *testing.T) {
	rg := thinkingRig(t)
	client := openai.NewClient(option.WithBaseURL(rg.url+"/v1/"), option.WithAPIKey(gwToken), option.WithMaxRetries(0))
	first, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "claude-test",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var outputs responses.ResponseInputParam
	for _, it := range first.Output {
		if it.Type == "function_call" {
			out := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp_c":18}`)
			out.OfFunctionCallOutput.CallID = openai.String(it.CallID)
			outputs = append(outputs, out)
		}
	}
	if len(outputs) == 0 {
		t.Fatalf("no function call in %+v", first.Output)
	}
	// The response is the gateway's to give back, as OpenAI would.
	if again, err := client.Responses.Get(context.Background(), first.ID, responses.ResponseGetParams{}); err != nil || again.ID != first.ID || len(again.Output) != len(first.Output) {
		t.Fatalf("Get(%s): %v, %+v", first.ID, err, again)
	}
	if _, err := client.Responses.New(context.Background(), responses.ResponseNewParams{
		Model:              "claude-test",
		PreviousResponseID: openai.String(first.ID),
		Input:              responses.ResponseNewParamsInputUnion{OfInputItemList: outputs},
	}); err != nil {
		t.Fatalf("going on from %s: %v", first.ID, err)
	}
	rg.checkLoop(t, 2)
}

// bearer adds the gateway token to every request of a client that has no
// option for one (the Ollama SDK).
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestGatewayOllamaSDK: the Ollama SDK streams a tool loop through the
// gateway to an Anthropic upstream thinking with tools, whose fake refuses
// a tool_use turn without its signed thinking. Ollama's messages carry the
// thinking's text but not its signature: the gateway puts back the reply it
// recorded at each step, and the loop is recorded as one conversation.
func TestGatewayOllamaSDK(t *testing.T) {
	rg := thinkingRig(t)
	base, err := url.Parse(rg.url)
	if err != nil {
		t.Fatal(err)
	}
	client := api.NewClient(base, &http.Client{Transport: bearer{gwToken}})
	msgs := []api.Message{{Role: "user", Content: "Weather in Paris?"}}
	for step := 1; step <= 3; step++ {
		var reply api.Message
		err := client.Chat(context.Background(), &api.ChatRequest{Model: "claude-test", Messages: msgs}, func(r api.ChatResponse) error {
			reply.Role = r.Message.Role
			reply.Content += r.Message.Content
			reply.Thinking += r.Message.Thinking
			reply.ToolCalls = append(reply.ToolCalls, r.Message.ToolCalls...)
			return nil
		})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if len(reply.ToolCalls) == 0 {
			t.Fatalf("step %d: no tool call in %+v", step, reply)
		}
		msgs = append(msgs, reply)
		for _, c := range reply.ToolCalls {
			msgs = append(msgs, api.Message{Role: "tool", ToolName: c.Function.Name, ToolCallID: c.ID, Content: `{"temp_c":18}`})
		}
	}
	rg.checkLoop(t, 3)
}

// TestGatewayGenaiToolLoopSDK: genai runs a three-step function-calling
// loop through the gateway, non-streamed, to an Anthropic upstream thinking
// with tools, whose fake refuses a tool_use turn without its signed
// thinking: genai sends back the model's content as it got it (no
// signature of Anthropic's), and the gateway restores every step.
func TestGatewayGenaiToolLoopSDK(t *testing.T) {
	rg := thinkingRig(t)
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: gwToken, Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: rg.url},
	})
	if err != nil {
		t.Fatal(err)
	}
	contents := genai.Text("Weather in Paris?")
	for step := 1; step <= 3; step++ {
		resp, err := c.Models.GenerateContent(context.Background(), "gemini-test", contents, nil)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		model := resp.Candidates[0].Content
		calls := resp.FunctionCalls()
		if len(calls) == 0 {
			t.Fatalf("step %d: no function call in %+v", step, model)
		}
		results := &genai.Content{Role: "user"}
		for _, fc := range calls {
			results.Parts = append(results.Parts, genai.NewPartFromFunctionResponse(fc.Name, map[string]any{"temp_c": 18}))
			results.Parts[len(results.Parts)-1].FunctionResponse.ID = fc.ID
		}
		contents = append(contents, model, results)
	}
	rg.checkLoop(t, 3)
}
