package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/convo-go/convo"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// everything is a history with every kind of part the conventions map.
func everything() convo.History {
	return convo.History{
		convo.System("You are a weather assistant."),
		convo.System("Answer in Celsius."),
		{Role: convo.RoleUser, Name: "alice", Parts: []convo.Part{
			convo.Text("Weather in Paris? Here is a photo and the forecast."),
			convo.Image("image/png", []byte{0x89, 'P', 'N', 'G'}),
			convo.ImageURL("image/jpeg", "https://example.com/paris.jpg"),
			{Type: convo.TypeFile, MediaType: "application/pdf", FileID: "file-123"},
			{Type: convo.TypeFile, MediaType: "text/plain", Name: "notes.txt", Text: "bring an umbrella"},
			convo.Audio("audio/wav", []byte("RIFF")),
		}},
		{Role: convo.RoleAssistant, Origin: &convo.Origin{Provider: "anthropic", Model: "claude-x"}, Finish: convo.FinishToolUse, Parts: []convo.Part{
			{Type: convo.TypeReasoning, Text: "Use the tool.", Signature: "EqQB", Provider: "anthropic"},
			{Type: convo.TypeReasoning, Encrypted: "opaque", Provider: "anthropic"},
			convo.ToolCall("toolu_1", "get_weather", json.RawMessage(`{"city":"Paris"}`)),
			{Type: convo.TypeToolCall, ID: "toolu_2", Name: "run", ArgsRaw: "print(1"},
		}},
		convo.ToolResults(
			convo.ToolResultParts("toolu_1", "get_weather", convo.JSON(json.RawMessage(`{"temp_c":18}`))),
			convo.ToolError("toolu_2", "run", "SyntaxError"),
		),
		convo.Summary("Earlier: the user asked about London.", 4),
		convo.ErrorMessage("upstream timeout"),
		{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Refusal("I cannot share that.")}},
	}
}

func reply() convo.Message {
	return convo.Message{Role: convo.RoleAssistant, Finish: convo.FinishStop,
		Origin: &convo.Origin{Provider: "anthropic", Model: "claude-x-20260101", ResponseID: "msg_01"},
		Usage:  &convo.Usage{Input: 1200, Output: 80, CacheRead: 1000, CacheWrite: 100, Reasoning: 30, Total: 1280},
		Cost:   &convo.Cost{USD: 12_300_000},
		Parts: []convo.Part{
			{Type: convo.TypeReasoning, Summary: []string{"Reading the tool result."}},
			convo.Text("18 °C and sunny."),
		}}
}

// TestMessagesSchema: the system instructions, input and output messages
// made from a history with every kind of part validate against the
// conventions' published JSON schemas, and stay as the golden file has them.
func TestMessagesSchema(t *testing.T) {
	doc, err := os.ReadFile("../examples/weather.json")
	if err != nil {
		t.Fatal(err)
	}
	weather, err := convo.Unmarshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]convo.History{"everything": everything(), "weather": weather} {
		t.Run(name, func(t *testing.T) {
			system, input := Messages(h)
			sys, in := mustJSON(system), mustJSON(input)
			out := mustJSON([]OutputMessage{outputMessage(reply())})
			for _, c := range []struct {
				file string
				doc  []byte
			}{
				{"gen-ai-system-instructions.json", sys}, {"gen-ai-input-messages.json", in}, {"gen-ai-output-messages.json", out},
			} {
				if err := checkSchema(c.file, c.doc); err != nil {
					t.Errorf("%s: %v\n%s", c.file, err, c.doc)
				}
			}
			var all bytes.Buffer
			for _, b := range [][]byte{sys, in, out} {
				json.Indent(&all, b, "", "  ")
				all.WriteByte('\n')
			}
			golden(t, name+".json", all.Bytes())
		})
	}
}

// TestSchemaCheckFails: the schema check rejects what the conventions
// reject, so a passing check means something.
func TestSchemaCheckFails(t *testing.T) {
	for _, bad := range []string{
		`[{"role":"user","parts":[{"type":"text"}]}]`,                        // text without content
		`[{"role":"user","parts":[{"type":"tool_call","id":"c"}]}]`,          // call without name
		`[{"role":"user","parts":[{"type":"tool_call_response","id":"c"}]}]`, // response without response
		`[{"role":"user","parts":[{"type":"blob","content":"AA=="}]}]`,       // blob without modality
		`[{"role":"user"}]`,                                            // no parts
		`[{"role":"user","parts":[{"content":"x"}]}]`,                  // part without type
		`[{"role":"user","parts":[{"type":"reasoning","content":3}]}]`, // content not a string
		`{"role":"user","parts":[]}`,                                   // not an array
	} {
		if err := checkSchema("gen-ai-input-messages.json", []byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if err := checkSchema("gen-ai-output-messages.json", []byte(`[{"role":"assistant","parts":[]}]`)); err == nil {
		t.Error("accepted an output message without finish_reason")
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

func attrs(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := map[string]attribute.Value{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

func TestSpan(t *testing.T) {
	for _, capture := range []bool{false, true} {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		tr := New(tp, Options{CaptureContent: capture})
		ctx, span := tr.Start(context.Background(), Request{Provider: "anthropic", Model: "claude-x", ConversationID: "conv_1", History: everything(), Stream: true, ServerAddress: "api.anthropic.com", ServerPort: 443})
		if !trace.SpanFromContext(ctx).SpanContext().Equal(span.SpanContext()) {
			t.Error("the context does not carry the span")
		}
		span.End(reply(), nil)
		spans := rec.Ended()
		if len(spans) != 1 {
			t.Fatalf("%d spans", len(spans))
		}
		s := spans[0]
		if s.Name() != "chat claude-x" || s.SpanKind() != trace.SpanKindClient || s.InstrumentationScope().Name != ScopeName {
			t.Errorf("span %q kind %v scope %q", s.Name(), s.SpanKind(), s.InstrumentationScope().Name)
		}
		a := attrs(s.Attributes())
		for k, want := range map[string]any{
			AttrOperation: "chat", AttrProvider: "anthropic", AttrRequestModel: "claude-x", AttrResponseModel: "claude-x-20260101",
			AttrResponseID: "msg_01", AttrConversationID: "conv_1", AttrInputTokens: int64(1200), AttrOutputTokens: int64(80),
			AttrCacheReadTokens: int64(1000), AttrCacheWriteTokens: int64(100), AttrReasoningTokens: int64(30),
			AttrRequestStream: true, AttrServerAddress: "api.anthropic.com", AttrServerPort: int64(443),
			AttrCost: 0.0123,
		} {
			if got := a[k].AsInterface(); got != want {
				t.Errorf("capture %v: %s = %v, want %v", capture, k, got, want)
			}
		}
		if got := a[AttrFinishReasons].AsStringSlice(); !slices.Equal(got, []string{"stop"}) {
			t.Errorf("finish reasons %v", got)
		}
		for _, k := range []string{AttrSystemInstructions, AttrInputMessages, AttrOutputMessages} {
			_, has := a[k]
			if has != capture {
				t.Errorf("capture %v: %s present %v", capture, k, has)
			}
		}
		if capture {
			if !strings.Contains(a[AttrOutputMessages].AsString(), `{"type":"reasoning","content":"Reading the tool result."}`) {
				t.Errorf("output messages lack the reasoning: %s", a[AttrOutputMessages].AsString())
			}
			if !strings.Contains(a[AttrSystemInstructions].AsString(), "Answer in Celsius.") {
				t.Errorf("system instructions: %s", a[AttrSystemInstructions].AsString())
			}
		}
	}
}

func TestSpanError(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tr := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), Options{})
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	tr.Record(context.Background(), Request{Provider: "gemini", Model: "gemini-3-pro"}, convo.Message{}, context.DeadlineExceeded, start, start.Add(2*time.Second))
	s := rec.Ended()[0]
	a := attrs(s.Attributes())
	if s.Status().Code != codes.Error || a[AttrErrorType].AsString() != "timeout" || a[AttrProvider].AsString() != "gcp.gemini" {
		t.Errorf("status %v, attributes %v", s.Status(), a)
	}
	if !s.StartTime().Equal(start) || s.EndTime().Sub(s.StartTime()) != 2*time.Second {
		t.Errorf("recorded from %v to %v", s.StartTime(), s.EndTime())
	}
	if _, ok := a[AttrOutputMessages]; ok {
		t.Error("content captured by default")
	}
}

// TestRecordDropped: the span of an exchange whose recording was dropped
// has the request, the error, the drop attribute and the drop event with
// its reason and time.
func TestRecordDropped(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tr := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), Options{})
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	tr.RecordDropped(context.Background(), Request{Provider: "anthropic", Model: "claude-x", ConversationID: "conv_1"},
		errors.New("upstream a failed mid-stream"), "queue full", start, start.Add(time.Second), start.Add(time.Second+time.Millisecond))
	s := rec.Ended()[0]
	a := attrs(s.Attributes())
	if !a[AttrRecordingDropped].AsBool() || a[AttrConversationID].AsString() != "conv_1" || s.Status().Code != codes.Error {
		t.Errorf("status %v, attributes %v", s.Status(), a)
	}
	ev := s.Events()
	if len(ev) != 1 || ev[0].Name != EventRecordingDropped || !ev[0].Time.Equal(start.Add(time.Second+time.Millisecond)) ||
		attrs(ev[0].Attributes)[AttrDropReason].AsString() != "queue full" {
		t.Errorf("events %+v", ev)
	}
	if !s.EndTime().Equal(start.Add(time.Second)) {
		t.Errorf("ended at %v", s.EndTime())
	}
}

// otlpReceiver is an in-process OTLP/HTTP trace receiver: it decodes the
// protobuf export requests the SDK's exporter sends.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	scope []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces, application/x-protobuf", http.StatusBadRequest)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				o.spans = append(o.spans, sp)
				o.scope = append(o.scope, ss.Scope.GetName())
			}
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func otlpAttrs(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestOTLP exports spans over OTLP/HTTP with the OpenTelemetry SDK to an
// in-process receiver and checks what arrives, messages against the
// conventions' schemas.
func TestOTLP(t *testing.T) {
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(srv.URL+"/v1/traces"), otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	tr := New(tp, Options{CaptureContent: true})
	_, span := tr.Start(ctx, Request{Provider: "openai", Model: "gpt-5", ConversationID: "conv_9", History: everything()})
	span.End(reply(), nil)
	tr.Record(ctx, Request{Provider: "bedrock", Model: "m"}, convo.Message{}, errors.New("boom"), time.Now().Add(-time.Second), time.Now())
	if err := tp.Shutdown(ctx); err != nil { // flushes the batch
		t.Fatal(err)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	if len(recv.spans) != 2 {
		t.Fatalf("received %d spans, want 2", len(recv.spans))
	}
	sp := recv.spans[0]
	if sp.Name != "chat gpt-5" || sp.Kind != tracepb.Span_SPAN_KIND_CLIENT || recv.scope[0] != ScopeName {
		t.Errorf("span %q kind %v scope %q", sp.Name, sp.Kind, recv.scope[0])
	}
	a := otlpAttrs(sp.Attributes)
	if a[AttrProvider].GetStringValue() != "openai" || a[AttrConversationID].GetStringValue() != "conv_9" ||
		a[AttrCacheReadTokens].GetIntValue() != 1000 || a[AttrFinishReasons].GetArrayValue().GetValues()[0].GetStringValue() != "stop" {
		t.Errorf("attributes %v", a)
	}
	for key, file := range map[string]string{
		AttrSystemInstructions: "gen-ai-system-instructions.json",
		AttrInputMessages:      "gen-ai-input-messages.json",
		AttrOutputMessages:     "gen-ai-output-messages.json",
	} {
		v := a[key].GetStringValue()
		if v == "" {
			t.Errorf("%s missing", key)
			continue
		}
		if err := checkSchema(file, []byte(v)); err != nil {
			t.Errorf("%s: %v", key, err)
		}
	}
	if !strings.Contains(a[AttrInputMessages].GetStringValue(), `"type":"tool_call","id":"toolu_1","name":"get_weather","arguments":{"city":"Paris"}`) {
		t.Errorf("input messages lack the tool call: %s", a[AttrInputMessages].GetStringValue())
	}
	failed := recv.spans[1]
	if failed.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || otlpAttrs(failed.Attributes)[AttrProvider].GetStringValue() != "aws.bedrock" {
		t.Errorf("failed span %v", failed)
	}
}

// TestRecordHistory: a recorded conversation becomes a span per exchange,
// each with the messages before its reply as input.
func TestRecordHistory(t *testing.T) {
	doc, err := os.ReadFile("../examples/weather.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := convo.Unmarshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tr := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), Options{CaptureContent: true})
	n := tr.RecordHistory(context.Background(), Request{ConversationID: "weather"}, h)
	var replies int
	for _, m := range h {
		if m.IsAssistant() {
			replies++
		}
	}
	spans := rec.Ended()
	if n != replies || len(spans) != replies || replies < 2 {
		t.Fatalf("%d spans reported, %d ended, for %d replies", n, len(spans), replies)
	}
	last := attrs(spans[len(spans)-1].Attributes())
	in := last[AttrInputMessages].AsString()
	if !strings.Contains(in, `"type":"tool_call_response"`) || last[AttrConversationID].AsString() != "weather" {
		t.Errorf("the last exchange's input lacks the tool result: %s", in)
	}
	if err := checkSchema("gen-ai-input-messages.json", []byte(in)); err != nil {
		t.Error(err)
	}
	first := attrs(spans[0].Attributes())
	if strings.Contains(first[AttrInputMessages].AsString(), "tool_call_response") {
		t.Errorf("the first exchange sees what came after it: %s", first[AttrInputMessages].AsString())
	}
}
