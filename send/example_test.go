package send_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/send"
)

func getWeather(args json.RawMessage) string { return `{"temp_c":18}` }

// fakeAnthropic stands in for api.anthropic.com: it streams a tool call,
// then, once the request carries the tool's result, the answer.
func fakeAnthropic() *httptest.Server {
	enc, err := provider.EncoderOf(anthropic.Messages())
	if err != nil {
		log.Fatal(err)
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		reply := convo.Assistant("", convo.ToolCall("toolu_1", "get_weather", json.RawMessage(`{"city":"Paris"}`)))
		reply.Finish = convo.FinishToolUse
		if bytes.Contains(body, []byte(`"tool_result"`)) {
			reply = convo.Assistant("It is 18 °C in Paris.")
			reply.Finish = convo.FinishStop
		}
		reply.Usage = &convo.Usage{Input: 20, Output: 10}
		w.Header().Set("Content-Type", "text/event-stream")
		se := enc.NewStreamEncoder(w, provider.StreamOptions{Model: "claude-sonnet-4-5"})
		for _, d := range provider.MessageDeltas(reply) {
			_ = se.Write(d)
		}
	}))
}

// An agent turn: send the history with a tool, run the tools the model
// calls, send again until it answers. The API here is a local fake; with
// the real one, leave BaseURL as New sets it and give the key
// (os.Getenv("ANTHROPIC_API_KEY")).
func Example() {
	api := fakeAnthropic()
	defer api.Close()
	ctx := context.Background()
	h := convo.History{convo.User("Weather in Paris?")}
	c, err := send.New("anthropic", "test-key")
	if err != nil {
		log.Fatal(err)
	}
	c.BaseURL = api.URL
	req := &provider.Request{
		Model: "claude-sonnet-4-5", MaxTokens: 1024, Stream: true,
		Tools: []provider.Tool{{Name: "get_weather", Description: "Current weather",
			Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
	}
	c.Options.OnWarning = func(w provider.Warning) { log.Print(w) }
	for {
		reply, _, err := c.Send(ctx, h, req)
		if err != nil {
			log.Fatal(err)
		}
		h = append(h, reply)
		calls := reply.ToolCalls()
		if len(calls) == 0 {
			break
		}
		for _, call := range calls {
			fmt.Printf("calling %s(%s)\n", call.Name, call.Args)
			h = append(h, convo.ToolResults(convo.ToolResult(call.ID, call.Name, getWeather(call.Args))))
		}
	}
	fmt.Println(len(h), "messages:", h[len(h)-1].Text())
	// Output:
	// calling get_weather({"city":"Paris"})
	// 4 messages: It is 18 °C in Paris.
}
