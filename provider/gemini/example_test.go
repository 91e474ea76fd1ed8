package gemini_test

import (
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/gemini"
)

// A streamed Gemini reply becomes one assistant message; appended to the
// history and encoded again, its signature goes back on the same part and
// the call goes without the id convo had to make up for it.
func Example() {
	stream := `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Need the weather.","thought":true}]}}],"responseId":"r1"}

data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"CpQBsig="}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":20,"candidatesTokenCount":8,"thoughtsTokenCount":30,"totalTokenCount":58},"responseId":"r1"}

`
	reply, _, err := gemini.GenerateContent().ReadStream(strings.NewReader(stream), provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reply.Finish, reply.Usage.Output, len(reply.Parts))

	call := reply.ToolCalls()[0]
	h := convo.History{
		convo.User("Weather in Paris?"),
		reply,
		convo.ToolResults(convo.ToolResult(call.ID, call.Name, "18 °C")),
	}
	body, _, err := gemini.GenerateContent().Encode(h, provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(body))
	// Output:
	// tool_use 38 2
	// {"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]},{"role":"model","parts":[{"text":"Need the weather.","thought":true},{"functionCall":{"name":"get_weather","args":{"city":"Paris"}},"thoughtSignature":"CpQBsig="}]},{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"output":"18 °C"}}}]}]}
}
