package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// weatherSchema is the structured output the clients below ask for.
const weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"units":{"type":"array","items":{"type":"string"}}},"required":["city","units"]}`

// structuredBody is a request of a client of proto for a reply in
// weatherSchema, in the protocol's own way of asking for one.
func structuredBody(proto, model string, stream bool) []byte {
	s := `false`
	if stream {
		s = `true`
	}
	switch proto {
	case "openai-chat":
		return []byte(`{"model":"` + model + `","stream":` + s + `,"messages":[{"role":"user","content":"Weather in Paris?"}],` +
			`"response_format":{"type":"json_schema","json_schema":{"name":"weather","schema":` + weatherSchema + `}}}`)
	case "openai-responses":
		return []byte(`{"model":"` + model + `","stream":` + s + `,"input":"Weather in Paris?",` +
			`"text":{"format":{"type":"json_schema","name":"weather","schema":` + weatherSchema + `}}}`)
	case "gemini":
		return []byte(`{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],` +
			`"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":` + weatherSchema + `}}`)
	}
	return []byte(`{"model":"` + model + `","stream":` + s + `,"messages":[{"role":"user","content":"Weather in Paris?"}],"format":` + weatherSchema + `}`)
}

// TestTranslateStructuredOutput: a client asks for structured output from
// a model without it (claude-3-5-haiku), which gets the schema as the
// forced tool convo_output. The upstream's answer, a call of that tool
// (the recorded tool_use reply with its tool renamed, after thinking and
// a line of text), reaches every client as what it asked for: text, the
// answer's JSON, with a normal stop and no tool call, plain and streamed
// alike (a streamed one in text deltas: delta.content,
// response.output_text.delta, text parts). The recording of a streamed
// exchange is the one of the same reply not streamed.
func TestTranslateStructuredOutput(t *testing.T) {
	const model = "claude-3-5-haiku"
	rename := func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte(`"get_weather"`), []byte(`"`+provider.OutputTool+`"`))
	}
	for _, client := range []string{"openai-chat", "openai-responses", "gemini", "ollama"} {
		t.Run(client, func(t *testing.T) {
			var stored [2]convo.Message
			for i, stream := range []bool{false, true} {
				rg := newRig(t, "anthropic", nil)
				rg.up.plain, rg.up.stream = rename(rg.up.plain), rename(rg.up.stream)
				resp := rg.post(t, client, model, structuredBody(client, model, stream), stream, nil)
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("stream %v: status %d: %s", stream, resp.StatusCode, got)
				}
				if sent := *rg.up.lastBody.Load(); !bytes.Contains(sent, []byte(`"tool_choice":{"type":"tool","name":"convo_output"}`)) {
					t.Fatalf("the upstream was not made to call the output tool:\n%s", sent)
				}
				if bytes.Contains(got, []byte(provider.OutputTool)) || bytes.Contains(got, []byte("tool_call")) || bytes.Contains(got, []byte("function")) {
					t.Errorf("stream %v: the client was shown a tool call:\n%s", stream, got)
				}
				seen := wantReply(t, client, got, stream)
				if !strings.HasSuffix(seen.Text(), `{"city":"Paris","units":["c"]}`) || seen.HasToolCalls() || seen.Finish != convo.FinishStop {
					t.Errorf("stream %v: the client got %q, calls %v, finish %q\n%s", stream, seen.Text(), seen.ToolCalls(), seen.Finish, got)
				}
				conv := resp.Header.Get("Convo-Conversation")
				rg.drain(t)
				h, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
				if err != nil || len(h) != 2 {
					t.Fatalf("stored %v, %v", roles(h), err)
				}
				stored[i] = h[1]
			}
			// The same reply, plain and streamed: recorded alike but for
			// what only a stream has (its usage counts at message_start).
			plain, streamed := stored[0], stored[1]
			if !reflect.DeepEqual(plain.Parts, streamed.Parts) || plain.Finish != streamed.Finish || plain.Finish != convo.FinishStop {
				t.Errorf("recorded\n plain    %+v %q\n streamed %+v %q", plain.Parts, plain.Finish, streamed.Parts, streamed.Finish)
			}
			last := streamed.Parts[len(streamed.Parts)-1]
			if last.Type != convo.TypeText || last.Text != `{"city":"Paris","units":["c"]}` {
				t.Errorf("recorded answer %+v", last)
			}
		})
	}
}

// TestTranslateStructuredOutputRecorded drives a real recorded Anthropic
// stream through the gateway to an OpenAI Chat client: a tool search, its
// result, and a client tool call with white space in its arguments' pieces
// ({"location": "San Francisco, CA"}), its tool renamed convo_output. The
// client gets the answer as delta.content, compact, as the non-streamed
// reading of the same reply gives it, and a stop.
func TestTranslateStructuredOutputRecorded(t *testing.T) {
	chunks, err := os.ReadFile("../provider/anthropic/testdata/recorded/vercel-anthropic-tool-search-regex.1.stream1.chunks.txt")
	if err != nil {
		t.Fatal(err)
	}
	// The chunks are the data of each event, one a line: framed as the
	// server-sent events they came in.
	var sse bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(chunks), []byte("\n")) {
		var ev struct{ Type string }
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatal(err)
		}
		sse.WriteString("event: " + ev.Type + "\ndata: ")
		sse.Write(bytes.ReplaceAll(line, []byte(`"name":"get_temp_data"`), []byte(`"name":"convo_output"`)))
		sse.WriteString("\n\n")
	}
	rg := newRig(t, "anthropic", nil)
	rg.up.stream = sse.Bytes()
	const model = "claude-3-5-haiku"
	resp := rg.post(t, "openai-chat", model, structuredBody("openai-chat", model, true), true, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, got)
	}
	var content strings.Builder
	finish := ""
	for _, line := range strings.Split(string(got), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string
					ToolCalls []json.RawMessage `json:"tool_calls"`
				}
				FinishReason *string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		for _, c := range chunk.Choices {
			if len(c.Delta.ToolCalls) > 0 {
				t.Fatalf("a tool call delta: %s", data)
			}
			content.WriteString(c.Delta.Content)
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if !strings.HasSuffix(content.String(), `{"location":"San Francisco, CA"}`) || finish != "stop" {
		t.Errorf("content %q, finish %q\n%s", content.String(), finish, got)
	}
	conv := resp.Header.Get("Convo-Conversation")
	rg.drain(t)
	h, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
	if err != nil || len(h) != 2 {
		t.Fatalf("stored %v, %v", roles(h), err)
	}
	if m := h[1]; m.HasToolCalls() || m.Finish != convo.FinishStop || !strings.HasSuffix(m.Text(), `{"location":"San Francisco, CA"}`) {
		t.Errorf("recorded %+v", m)
	}
}
