package telemetry_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/telemetry"
)

// A span per model call: start it with what is sent, end it with the
// reply. A real program passes its SDK TracerProvider with an OTLP
// exporter; a recorder stands in for it here.
func Example() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := telemetry.New(tp, telemetry.Options{CaptureContent: true})

	h := convo.History{convo.System("Be brief."), convo.User("Weather in Paris?")}
	ctx, span := tr.Start(context.Background(), telemetry.Request{Provider: "anthropic", Model: "claude-x", ConversationID: "conv_1", History: h})
	_ = ctx // send the request with ctx, read the reply
	reply := convo.Message{Role: convo.RoleAssistant, Finish: convo.FinishStop, Parts: []convo.Part{convo.Text("18 °C.")},
		Usage: &convo.Usage{Input: 12, Output: 4}}
	span.End(reply, nil)

	s := rec.Ended()[0]
	fmt.Println(s.Name())
	for _, kv := range s.Attributes() {
		fmt.Printf("%s=%s\n", kv.Key, kv.Value.String())
	}
	// Output:
	// chat claude-x
	// gen_ai.operation.name=chat
	// gen_ai.provider.name=anthropic
	// gen_ai.request.model=claude-x
	// gen_ai.conversation.id=conv_1
	// gen_ai.system_instructions=[{"type":"text","content":"Be brief."}]
	// gen_ai.input.messages=[{"role":"user","parts":[{"type":"text","content":"Weather in Paris?"}]}]
	// gen_ai.response.finish_reasons=["stop"]
	// gen_ai.usage.input_tokens=12
	// gen_ai.usage.output_tokens=4
	// gen_ai.output.messages=[{"role":"assistant","parts":[{"type":"text","content":"18 °C."}],"finish_reason":"stop"}]
}
