package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/telemetry"
)

// TestTelemetry: with Options.Telemetry, every recorded exchange is a span
// after the GenAI conventions, a child of the client's trace when its
// request carries a traceparent; content only when capture is on.
func TestTelemetry(t *testing.T) {
	for _, capture := range []bool{false, true} {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		rg := newRig(t, "anthropic", func(o *gateway.Options) {
			o.Telemetry = telemetry.New(tp, telemetry.Options{CaptureContent: capture})
		})
		h := convo.History{convo.System("Be brief."), convo.User("Weather in Paris?")}
		parent := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		resp := rg.post(t, "anthropic", "claude-x", requestBody(t, "anthropic", "claude-x", h, true), true, map[string]string{"Traceparent": parent})
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		conv := resp.Header.Get("Convo-Conversation")
		// A failed exchange is a span with an error status.
		rg.up.status = 500
		resp = rg.post(t, "anthropic", "claude-x", requestBody(t, "anthropic", "claude-x", convo.History{convo.User("again")}, false), false, nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		rg.drain(t)

		spans := rec.Ended()
		if len(spans) != 2 {
			t.Fatalf("%d spans, want 2", len(spans))
		}
		s := spans[0]
		a := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			a[kv.Key] = kv.Value
		}
		want, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
		if err != nil || len(want) == 0 {
			t.Fatalf("recorded %v, %v", want, err)
		}
		reply := want[len(want)-1]
		if s.Name() != "chat claude-x" || s.SpanKind() != trace.SpanKindClient ||
			a[telemetry.AttrProvider].AsString() != "anthropic" || a[telemetry.AttrConversationID].AsString() != conv ||
			a[telemetry.AttrResponseID].AsString() != reply.Origin.ResponseID || a[telemetry.AttrInputTokens].AsInt64() != reply.Usage.Input ||
			a[telemetry.AttrServerAddress].AsString() != "127.0.0.1" || !a[telemetry.AttrRequestStream].AsBool() {
			t.Errorf("span %q %v: %v\nreply %+v", s.Name(), s.SpanKind(), a, reply)
		}
		if got := s.Parent().TraceID().String(); got != "0af7651916cd43dd8448eb211c80319c" || !s.Parent().IsRemote() {
			t.Errorf("parent %v, want the client's traceparent", s.Parent())
		}
		if !s.EndTime().After(s.StartTime()) {
			t.Errorf("span from %v to %v", s.StartTime(), s.EndTime())
		}
		out, has := a[telemetry.AttrOutputMessages]
		if has != capture {
			t.Errorf("capture %v: output messages present %v", capture, has)
		}
		if capture {
			var msgs []telemetry.OutputMessage
			if err := json.Unmarshal([]byte(out.AsString()), &msgs); err != nil || len(msgs) != 1 || msgs[0].FinishReason == "" {
				t.Errorf("output messages %s: %v", out.AsString(), err)
			}
			if !strings.Contains(a[telemetry.AttrSystemInstructions].AsString(), "Be brief.") {
				t.Errorf("system instructions %v", a[telemetry.AttrSystemInstructions])
			}
		}
		if failed := spans[1]; failed.Status().Code.String() != "Error" {
			t.Errorf("failed exchange: status %v", failed.Status())
		}
	}
}

// TestTelemetryDropped: an exchange whose recording is dropped (the queue
// is full) still has its span, marked with the drop: an attribute and an
// event saying why.
func TestTelemetryDropped(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	release, entered := make(chan struct{}), make(chan struct{}, 10)
	rg := newRig(t, "anthropic", func(o *gateway.Options) {
		o.Telemetry = telemetry.New(tp, telemetry.Options{CaptureContent: true})
		o.QueueSize = 1
		o.Store = &blockingStore{Store: o.Store, release: release, entered: entered}
	})
	for i, q := range []string{"one", "two", "three"} {
		if i == 1 {
			<-entered // the writer holds the first record, the queue takes the second
		}
		resp := rg.post(t, "anthropic", "claude-x", requestBody(t, "anthropic", "claude-x", convo.History{convo.User(q)}, true), true, nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	close(release)
	rg.drain(t)
	if st := rg.gw.Stats(); st.Recorded != 2 || st.Dropped != 1 {
		t.Fatalf("stats %+v, want 2 recorded, 1 dropped", st)
	}
	var dropped []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == telemetry.AttrRecordingDropped && kv.Value.AsBool() {
				dropped = append(dropped, s)
			}
		}
	}
	if len(rec.Ended()) != 3 || len(dropped) != 1 {
		t.Fatalf("%d spans, %d marked dropped; want 3 and 1", len(rec.Ended()), len(dropped))
	}
	s := dropped[0]
	ev := s.Events()
	if len(ev) != 1 || ev[0].Name != telemetry.EventRecordingDropped || len(ev[0].Attributes) != 1 ||
		ev[0].Attributes[0].Key != telemetry.AttrDropReason || ev[0].Attributes[0].Value.AsString() != "queue full" {
		t.Fatalf("events %+v", ev)
	}
	if s.Name() != "chat claude-x" || s.Status().Code.String() == "Error" || s.EndTime().Before(s.StartTime()) {
		t.Errorf("span %q, status %v, %v to %v", s.Name(), s.Status(), s.StartTime(), s.EndTime())
	}
	for _, kv := range s.Attributes() {
		if strings.Contains(kv.Value.String(), "three") {
			t.Errorf("the dropped exchange's span carries its content: %s=%s", kv.Key, kv.Value.String())
		}
	}
}
