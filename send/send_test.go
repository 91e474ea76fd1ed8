package send

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// upstream is a fake provider: check inspects each request, and the reply
// is the file at path with the given content type and status.
func upstream(t *testing.T, status int, ctype, path string, check func(r *http.Request, body map[string]json.RawMessage)) *httptest.Server {
	t.Helper()
	reply, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]json.RawMessage
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("request body: %v\n%s", err, b)
		}
		check(r, body)
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		_, _ = w.Write(reply)
	}))
	t.Cleanup(srv.Close)
	return srv
}

var history = convo.History{convo.System("Be brief."), convo.User("Weather in Paris?")}

var tools = []provider.Tool{{Name: "get_weather", Description: "Current weather",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}

func want(t *testing.T, path string) convo.Message {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := convo.Unmarshal(b)
	if err != nil || len(h) != 1 {
		t.Fatalf("%s: %v", path, err)
	}
	return h[0]
}

func TestAnthropicStream(t *testing.T) {
	srv := upstream(t, 200, "text/event-stream", "../provider/anthropic/testdata/reply/interleaved.sse",
		func(r *http.Request, body map[string]json.RawMessage) {
			if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != "k" || r.Header.Get("anthropic-version") != AnthropicVersion {
				t.Errorf("request: %s %v", r.URL, r.Header)
			}
			if string(body["model"]) != `"claude-opus-4-1"` || body["tools"] == nil || string(body["stream"]) != "true" || body["system"] == nil {
				t.Errorf("body: %v", body)
			}
		})
	c, err := New("anthropic", "k")
	if err != nil {
		t.Fatal(err)
	}
	c.BaseURL = srv.URL + "/v1"
	got, warns, err := c.Send(context.Background(), history, &provider.Request{Model: "claude-opus-4-1", MaxTokens: 1024, Tools: tools, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := want(t, "../provider/anthropic/testdata/reply/interleaved.convo.json"); !got.Equal(w) {
		t.Errorf("reply differs:\n got %+v\nwant %+v", got, w)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
}

func TestOpenAIJSONAndOnWarning(t *testing.T) {
	srv := upstream(t, 200, "application/json", "../provider/openai/testdata/replies/chat/reasoning.json",
		func(r *http.Request, body map[string]json.RawMessage) {
			if r.URL.Path != "/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
				t.Errorf("request: %s %v", r.URL, r.Header)
			}
			if body["top_k"] != nil {
				t.Errorf("top_k sent: %v", body)
			}
		})
	c, _ := New("openai-chat", "k")
	c.BaseURL = srv.URL
	var seen []provider.Warning
	c.Options.OnWarning = func(w provider.Warning) { seen = append(seen, w) }
	got, warns, err := c.Send(context.Background(), history, &provider.Request{Model: "gpt-5", TopK: provider.Int(3)})
	if err != nil {
		t.Fatal(err)
	}
	if got.Role != convo.RoleAssistant || len(got.Parts) == 0 {
		t.Errorf("reply: %+v", got)
	}
	if warns != nil || len(seen) != 1 || seen[0].Code != provider.CodeSettingDropped || seen[0].Path != "top_k" {
		t.Errorf("warnings %v, seen %v", warns, seen)
	}
	// Accepting the loss silences it.
	seen = nil
	c.Options.Accept = []provider.Code{provider.CodeSettingDropped}
	if _, _, err := c.Send(context.Background(), history, &provider.Request{Model: "gpt-5", TopK: provider.Int(3)}); err != nil || len(seen) != 0 {
		t.Errorf("accepted: %v %v", err, seen)
	}
}

func TestGeminiURL(t *testing.T) {
	srv := upstream(t, 200, "text/event-stream", "../provider/gemini/testdata/replies/length.sse",
		func(r *http.Request, body map[string]json.RawMessage) {
			if r.URL.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || r.URL.RawQuery != "alt=sse" || r.Header.Get("x-goog-api-key") != "k" {
				t.Errorf("request: %s %v", r.URL, r.Header)
			}
			if body["model"] != nil || body["contents"] == nil {
				t.Errorf("body: %v", body)
			}
		})
	c, _ := New("gemini", "k")
	c.BaseURL = srv.URL + "/v1beta"
	if _, _, err := c.Send(context.Background(), history, &provider.Request{Model: "gemini-2.5-flash", Stream: true}); err != nil {
		t.Fatal(err)
	}
}

func TestBedrockSigned(t *testing.T) {
	srv := upstream(t, 200, "application/json", "../provider/bedrock/testdata/replies/citations.json",
		func(r *http.Request, body map[string]json.RawMessage) {
			if r.URL.EscapedPath() != "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/converse" || r.Header.Get("X-Signed") != "yes" {
				t.Errorf("request: %s %v", r.URL.EscapedPath(), r.Header)
			}
		})
	c, _ := New("bedrock", "")
	c.BaseURL = srv.URL
	signed := 0
	c.Sign = SignerFunc(func(req *http.Request, body []byte) error {
		signed++
		if len(body) == 0 {
			t.Error("signer got no body")
		}
		req.Header.Set("X-Signed", "yes")
		return nil
	})
	if _, _, err := c.Send(context.Background(), history, &provider.Request{Model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0"}); err != nil {
		t.Fatal(err)
	}
	if signed != 1 {
		t.Errorf("signed %d times", signed)
	}
}

func TestProviderErrors(t *testing.T) {
	for _, c := range []struct {
		format, body, typ, msg string
		header                 string
	}{
		{"anthropic", `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "rate_limit_error", "slow down", ""},
		{"openai-chat", `{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key","param":null}}`, "invalid_request_error", "bad key", ""},
		{"gemini", `{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}`, "RESOURCE_EXHAUSTED", "quota", ""},
		{"ollama", `{"error":"model \"x\" not found"}`, "", `model "x" not found`, ""},
		{"bedrock", `{"message":"throttled"}`, "ThrottlingException", "throttled", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if c.header != "" {
				w.Header().Set("x-amzn-ErrorType", c.header)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(429)
			_, _ = io.WriteString(w, c.body)
		}))
		cl, _ := New(c.format, "k")
		cl.BaseURL = srv.URL
		_, _, err := cl.Send(context.Background(), history, &provider.Request{Model: "m", Stream: true})
		srv.Close()
		var pe *provider.APIError
		if !errors.As(err, &pe) || pe.Status != 429 || pe.Type != c.typ || pe.Message != c.msg || pe.Provider == "" {
			t.Errorf("%s: %#v", c.format, err)
		}
	}
}

func TestNewUnknown(t *testing.T) {
	if _, err := New("litert", ""); !errors.Is(err, provider.ErrUnknownFormat) || !strings.Contains(err.Error(), "no HTTP API") {
		t.Errorf("litert: %v", err)
	}
}
