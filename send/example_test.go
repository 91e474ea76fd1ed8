package send_test

import (
	"context"
	"encoding/json"
	"log"
	"os"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/send"
)

func getWeather(args json.RawMessage) string { return `{"temp_c":18}` }

// An agent turn: send the history with a tool, run the tools the model
// calls, send again until it answers.
func Example() {
	ctx := context.Background()
	h := convo.History{convo.User("Weather in Paris?")}
	c, err := send.New("anthropic", os.Getenv("ANTHROPIC_API_KEY"))
	if err != nil {
		log.Fatal(err)
	}
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
			h = append(h, convo.ToolResults(convo.ToolResult(call.ID, call.Name, getWeather(call.Args))))
		}
	}
}
