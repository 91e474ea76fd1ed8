package sdktest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// The keys of the applications and of the gateway's upstreams.
const (
	appOpenAIKey    = "sk-proj-app-own-3c9d"
	appAnthropicKey = "sk-ant-app-own-81fa"
	upOpenAIKey     = "sk-proj-gateway-5e21"
	upAnthropicKey  = "sk-ant-gateway-07b4"
)

// keyFake is a provider's API: it answers each endpoint with its recorded
// reply and notes the path and credential of every request.
type keyFake struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "path credential", a request each
}

func newKeyFake(t *testing.T) *keyFake {
	t.Helper()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "provider", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	replies := map[string][2][]byte{}
	for path, proto := range map[string]string{"/v1/chat/completions": "openai-chat", "/v1/responses": "openai-responses", "/v1/messages": "anthropic"} {
		files := gwRecorded[proto]
		replies[path] = [2][]byte{read(files[0]), read(files[1])}
	}
	f := &keyFake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		cred := r.Header.Get("Authorization") + "|" + r.Header.Get("X-Api-Key")
		f.mu.Lock()
		f.seen = append(f.seen, r.URL.Path+" "+cred)
		f.mu.Unlock()
		rep, ok := replies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if !bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(rep[0])
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(rep[1])
	}))
	t.Cleanup(f.Close)
	return f
}

// took returns the requests seen since the last call.
func (f *keyFake) took() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.seen
	f.seen = nil
	return s
}

// keyGateway is a gateway as `convo gateway` without flags runs it on a
// developer's machine — no gateway tokens unless given, OpenAI and Anthropic
// upstreams whose key variables are unset — plus two upstreams with keys
// of their own for translated requests: models via-openai-* go to an
// OpenAI upstream with its key, via-claude-* to an Anthropic one. Each
// upstream is a fake of its own.
type keyGateway struct {
	url                                     string
	srv                                     *httptest.Server
	gw                                      *gateway.Gateway
	st                                      store.Store
	openai, anthropic, openaiOwn, claudeOwn *keyFake
}

func newKeyGateway(t *testing.T, tokens map[string]string) *keyGateway {
	t.Helper()
	kg := &keyGateway{openai: newKeyFake(t), anthropic: newKeyFake(t), openaiOwn: newKeyFake(t), claudeOwn: newKeyFake(t)}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "gw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	env := map[string]string{"OA_OWN": upOpenAIKey, "AN_OWN": upAnthropicKey}
	gw, err := gateway.New(gateway.Options{
		Config: gateway.Config{
			Upstreams: []gateway.Upstream{
				{Name: "openai", Protocol: "openai", URL: kg.openai.URL + "/v1", KeyEnv: "OPENAI_API_KEY"},
				{Name: "anthropic", Protocol: "anthropic", URL: kg.anthropic.URL, KeyEnv: "ANTHROPIC_API_KEY"},
				{Name: "openai-own", Protocol: "openai", URL: kg.openaiOwn.URL + "/v1", KeyEnv: "OA_OWN"},
				{Name: "claude-own", Protocol: "anthropic", URL: kg.claudeOwn.URL, KeyEnv: "AN_OWN"},
			},
			Routes: []gateway.Route{
				{Model: "gpt-*", Upstream: "openai"}, {Model: "claude-*", Upstream: "anthropic"},
				{Model: "via-openai-*", Upstream: "openai-own"}, {Model: "via-claude-*", Upstream: "claude-own"},
			},
		},
		Store:     st,
		Tokens:    tokens,
		Anonymous: len(tokens) == 0,
		Getenv:    func(k string) string { return env[k] },
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	kg.url, kg.srv, kg.gw, kg.st = srv.URL, srv, gw, st
	return kg
}

// expect checks that the fake want, and no other, got one request at path
// with credential cred (Authorization|x-api-key).
func (kg *keyGateway) expect(t *testing.T, want *keyFake, path, cred string) {
	t.Helper()
	for _, f := range []*keyFake{kg.openai, kg.anthropic, kg.openaiOwn, kg.claudeOwn} {
		got := f.took()
		switch {
		case f == want && (len(got) != 1 || got[0] != path+" "+cred):
			t.Errorf("upstream got %q, want %q", got, path+" "+cred)
		case f != want && len(got) != 0:
			t.Errorf("another upstream got %q", got)
		}
	}
}

// TestGatewayKeepOwnKeys: official SDK clients, unchanged but for the
// base URL in the environment variable their SDK reads, keep their own
// keys (option.WithAPIKey). Passed through, each upstream gets the
// client's key in its own header; translated to the other provider, the
// upstream gets its own key, never the client's. openai-go's Chat
// Completions and Responses and anthropic-sdk-go, plain and streamed.
func TestGatewayKeepOwnKeys(t *testing.T) {
	kg := newKeyGateway(t, nil)
	t.Setenv("OPENAI_BASE_URL", kg.url+"/v1")
	t.Setenv("ANTHROPIC_BASE_URL", kg.url)
	oa := openai.NewClient(option.WithAPIKey(appOpenAIKey))
	an := anthropic.NewClient(aoption.WithAPIKey(appAnthropicKey))
	ctx := context.Background()
	bearer := func(k string) string { return "Bearer " + k + "|" }
	xapi := func(k string) string { return "|" + k }
	for _, stream := range []bool{false, true} {
		mode := map[bool]string{false: "plain", true: "stream"}[stream]
		t.Run("chat/pass-through/"+mode, func(t *testing.T) {
			chat(t, ctx, oa, "gpt-4o", stream)
			kg.expect(t, kg.openai, "/v1/chat/completions", bearer(appOpenAIKey))
		})
		t.Run("chat/translated/"+mode, func(t *testing.T) {
			chat(t, ctx, oa, "via-claude-sonnet", stream)
			kg.expect(t, kg.claudeOwn, "/v1/messages", xapi(upAnthropicKey))
		})
		t.Run("responses/pass-through/"+mode, func(t *testing.T) {
			respond(t, ctx, oa, "gpt-5", stream)
			kg.expect(t, kg.openai, "/v1/responses", bearer(appOpenAIKey))
		})
		t.Run("responses/translated/"+mode, func(t *testing.T) {
			respond(t, ctx, oa, "via-claude-sonnet", stream)
			kg.expect(t, kg.claudeOwn, "/v1/messages", xapi(upAnthropicKey))
		})
		t.Run("anthropic/pass-through/"+mode, func(t *testing.T) {
			message(t, ctx, an, "claude-sonnet-4-5", stream)
			kg.expect(t, kg.anthropic, "/v1/messages", xapi(appAnthropicKey))
		})
		t.Run("anthropic/translated/"+mode, func(t *testing.T) {
			message(t, ctx, an, "via-openai-gpt", stream)
			kg.expect(t, kg.openaiOwn, "/v1/chat/completions", bearer(upOpenAIKey))
		})
	}
	// A translated request to an upstream without a key of its own is
	// refused in the client's SDK's own error, naming the variable.
	_, err := oa.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "claude-sonnet-4-5", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var oerr *openai.Error
	if !errors.As(err, &oerr) || oerr.StatusCode != 401 || !strings.Contains(oerr.Message, "$ANTHROPIC_API_KEY") {
		t.Errorf("translated without an upstream key: %v", err)
	}
	_, err = an.Messages.New(ctx, anthropic.MessageNewParams{Model: "gpt-4o", MaxTokens: 10, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	var aerr *anthropic.Error
	if !errors.As(err, &aerr) || aerr.StatusCode != 401 || !strings.Contains(err.Error(), "$OPENAI_API_KEY") {
		t.Errorf("translated without an upstream key: %v", err)
	}
	kg.expect(t, nil, "", "")
}

// chat asks openai-go's Chat Completions for a reply.
func chat(t *testing.T, ctx context.Context, c openai.Client, model string, stream bool) {
	t.Helper()
	p := openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")}}
	if !stream {
		r, err := c.Chat.Completions.New(ctx, p)
		if err != nil || len(r.Choices) == 0 {
			t.Fatalf("%v %v", r, err)
		}
		return
	}
	s := c.Chat.Completions.NewStreaming(ctx, p)
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil || len(acc.Choices) == 0 {
		t.Fatalf("%v %v", acc, err)
	}
}

// respond asks openai-go's Responses for a reply.
func respond(t *testing.T, ctx context.Context, c openai.Client, model string, stream bool) {
	t.Helper()
	p := responses.ResponseNewParams{Model: model, Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")}}
	if !stream {
		r, err := c.Responses.New(ctx, p)
		if err != nil || len(r.Output) == 0 {
			t.Fatalf("%v %v", r, err)
		}
		return
	}
	s := c.Responses.NewStreaming(ctx, p)
	completed := false
	for s.Next() {
		completed = completed || s.Current().Type == "response.completed"
	}
	if err := s.Err(); err != nil || !completed {
		t.Fatalf("completed %v, %v", completed, err)
	}
}

// message asks anthropic-sdk-go for a reply.
func message(t *testing.T, ctx context.Context, c anthropic.Client, model string, stream bool) {
	t.Helper()
	p := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 1024, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather in Paris?"))}}
	if !stream {
		m, err := c.Messages.New(ctx, p)
		if err != nil || len(m.Content) == 0 {
			t.Fatalf("%v %v", m, err)
		}
		return
	}
	s := c.Messages.NewStreaming(ctx, p)
	var m anthropic.Message
	for s.Next() {
		if err := m.Accumulate(s.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Err(); err != nil || len(m.Content) == 0 {
		t.Fatalf("%v %v", m, err)
	}
}

// TestGatewayConvoTokenSDK: with gateway tokens, openai-go and
// anthropic-sdk-go send the token in Convo-Token (option.WithHeader) and
// keep their own keys; the upstreams get the applications' keys, and the
// exchanges are the token's tenant's.
func TestGatewayConvoTokenSDK(t *testing.T) {
	kg := newKeyGateway(t, map[string]string{gwToken: gwTenant})
	oa := openai.NewClient(option.WithBaseURL(kg.url+"/v1"), option.WithAPIKey(appOpenAIKey), option.WithHeader("Convo-Token", gwToken))
	an := anthropic.NewClient(aoption.WithBaseURL(kg.url), aoption.WithAPIKey(appAnthropicKey), aoption.WithHeader("Convo-Token", gwToken))
	ctx := context.Background()
	chat(t, ctx, oa, "gpt-4o", true)
	kg.expect(t, kg.openai, "/v1/chat/completions", "Bearer "+appOpenAIKey+"|")
	message(t, ctx, an, "claude-sonnet-4-5", false)
	kg.expect(t, kg.anthropic, "/v1/messages", "|"+appAnthropicKey)
	// Without the header, the application's key is no gateway token.
	bare := openai.NewClient(option.WithBaseURL(kg.url+"/v1"), option.WithAPIKey(appOpenAIKey), option.WithMaxRetries(0))
	_, err := bare.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var oerr *openai.Error
	if !errors.As(err, &oerr) || oerr.StatusCode != 401 || !strings.Contains(oerr.Message, "Convo-Token") {
		t.Errorf("no Convo-Token: %v", err)
	}
	kg.expect(t, nil, "", "")
	// A handler hands its exchange to the recorder after the client has
	// the reply: the server is closed first, which waits for its
	// handlers, as a gateway's process shuts its server down before the
	// gateway (it failed about one run in eight without).
	kg.srv.Close()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := kg.gw.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if cs, _, err := kg.st.List(ctx, gwTenant, store.ListOptions{}); err != nil || len(cs) != 2 {
		t.Fatalf("tenant %s has %d conversations (%v)", gwTenant, len(cs), err)
	}
}
