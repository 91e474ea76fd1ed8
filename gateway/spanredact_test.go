package gateway_test

import (
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/telemetry"
)

// TestSpanRedacted: with redaction configured and content capture on, the
// span's input and output messages are redacted as the store's are, in
// full and in metadata mode.
func TestSpanRedacted(t *testing.T) {
	for _, mode := range []string{"full", "metadata"} {
		t.Run(mode, func(t *testing.T) { spanRedacted(t, mode) })
	}
}

func spanRedacted(t *testing.T, mode string) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	rg := newRig(t, "openai-chat", func(o *gateway.Options) {
		o.Config.Record = gateway.RecordConfig{Redact: gateway.RedactConfig{Builtin: true}}
		o.Telemetry = telemetry.New(tp, telemetry.Options{CaptureContent: true})
	})
	rg.up.stream = []byte(secretReply)
	rg.secretExchange(t, map[string]string{"Convo-Record": mode})
	rg.drain(t)
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	for _, kv := range spans[0].Attributes() {
		v := kv.Value.String()
		for _, secret := range []string{"alice@example.org", "4111 1111 1111 1111", "bob@example.com", "sk-ant-api03"} {
			if strings.Contains(v, secret) {
				t.Errorf("span attribute %s holds %q: %s", kv.Key, secret, v)
			}
		}
	}
}
