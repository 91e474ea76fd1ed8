package replay_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// fake is an upstream speaking OpenAI Chat and Anthropic, answering with
// recorded replies; it keeps the bodies it was sent.
type fake struct {
	mu     sync.Mutex
	bodies []map[string]any
	paths  []string
	keys   []string
	// answer picks the reply by the request's model.
	answer func(model string) (status int, contentType, file string)
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(b, &body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.paths = append(f.paths, r.URL.Path)
	f.keys = append(f.keys, r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"))
	f.mu.Unlock()
	model, _ := body["model"].(string)
	status, ct, file := f.answer(model)
	if status == 0 {
		<-r.Context().Done() // never answers: the replay times out
		return
	}
	data := []byte(file)
	if !strings.HasPrefix(file, "{") {
		var err error
		if data, err = os.ReadFile(filepath.Join("..", file)); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

func (f *fake) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

const (
	toolCallsJSON = "provider/openai/testdata/recorded/chat/pydantic-tool-calls.json"
	textJSON      = "provider/openai/testdata/recorded/chat/vercel-openai-text.json"
	refusalJSON   = "provider/anthropic/testdata/reply/refusal.json"
	anthropicSSE  = "provider/anthropic/testdata/recorded/llm-anthropic-tool-calls.sse"
)

func defaultAnswer(model string) (int, string, string) {
	switch model {
	case "gpt-tools":
		return 200, "application/json", toolCallsJSON
	case "gpt-text":
		return 200, "application/json", textJSON
	case "gpt-down":
		return 503, "application/json", `{"error":{"type":"overloaded","message":"the model is overloaded"}}`
	case "gpt-slow":
		return 0, "", ""
	case "claude-refuses":
		return 200, "application/json", refusalJSON
	case "claude-stream":
		return 200, "text/event-stream", anthropicSSE
	}
	return 404, "application/json", `{"error":{"message":"no such model"}}`
}

type env struct {
	st   store.Store
	up   *fake
	r    *replay.Replayer
	conv string
	ids  []string
}

// setup stores a conversation: system, user, assistant calling
// get_capital, its result, the final answer.
func setup(t *testing.T, meta json.RawMessage) *env {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	up := &fake{answer: defaultAnswer}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	cfg := gateway.Config{
		Upstreams: []gateway.Upstream{
			{Name: "oa", Protocol: "openai-chat", URL: srv.URL + "/v1", KeyEnv: "OA_KEY"},
			{Name: "an", Protocol: "anthropic", URL: srv.URL, KeyEnv: "AN_KEY"},
		},
		Routes: []gateway.Route{{Model: "gpt-*", Upstream: "oa"}, {Model: "claude-*", Upstream: "an"}},
	}
	keys := map[string]string{"OA_KEY": "sk-oa", "AN_KEY": "sk-an"}
	r, err := replay.New(replay.Options{Store: st, Config: cfg, Models: testModels(t), Getenv: func(k string) string { return keys[k] },
		Timeout: 300 * time.Millisecond, Price: func(_, model string, u convo.Usage) (convo.Money, bool) {
			return convo.Money(u.Input+u.Output) * convo.Dollar / 1e6, model != ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	call := convo.ToolCall("call_1", "get_capital", json.RawMessage(`{"country": "England"}`))
	reply := convo.Assistant("", call)
	reply.Origin, reply.Usage, reply.Finish = &convo.Origin{Provider: "openai", Model: "gpt-4o"}, &convo.Usage{Input: 100, Output: 10}, convo.FinishToolUse
	final := convo.Assistant("The capital of England is London.")
	final.Origin, final.Finish = &convo.Origin{Provider: "openai", Model: "gpt-4o"}, convo.FinishStop
	h := convo.History{convo.System("Be brief."), convo.User("Capital of England?"), reply,
		convo.ToolResults(convo.ToolResult("call_1", "get_capital", "London")), final}
	e := &env{st: st, up: up, r: r}
	for i := range h {
		h[i].ID = store.NewID("msg")
		e.ids = append(e.ids, h[i].ID)
	}
	c, err := st.Create(context.Background(), store.Conversation{Title: "capitals", Meta: meta}, h...)
	if err != nil {
		t.Fatal(err)
	}
	e.conv = c.ID
	return e
}

func TestReplayToolCall(t *testing.T) {
	e := setup(t, nil)
	ctx := context.Background()
	res, err := e.r.Replay(ctx, replay.Request{Conversation: e.conv, At: e.ids[2], Model: "gpt-tools",
		Set: []replay.Setting{{Name: "temperature", Value: json.RawMessage("0.2")}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.At != 2 || res.AtMessage != e.ids[2] || res.Skipped {
		t.Errorf("at %d %q skipped %v", res.At, res.AtMessage, res.Skipped)
	}
	if !res.Compare.SameToolCalls || !res.Compare.SameFinish || len(res.Compare.ToolCalls) != 1 {
		t.Errorf("compare = %+v", res.Compare)
	}
	if res.Replay.Usage == nil || res.Replay.Usage.Input != 104 || res.Replay.CostUSD == nil || *res.Replay.CostUSD != 120*convo.Dollar/1e6 {
		t.Errorf("replay usage %+v cost %v", res.Replay.Usage, res.Replay.CostUSD)
	}
	if res.Original.Model != "gpt-4o" || res.Replay.Model != "gpt-tools" || res.Replay.LatencyMS == nil {
		t.Errorf("models %q %q latency %v", res.Original.Model, res.Replay.Model, res.Replay.LatencyMS)
	}
	// The request: the history before the answer, the temperature, the
	// tool the history calls declared, the key of the upstream.
	body := e.up.bodies[0]
	if body["temperature"] != 0.2 || len(body["messages"].([]any)) != 2 || e.up.keys[0] != "Bearer sk-oa" || e.up.paths[0] != "/v1/chat/completions" {
		t.Errorf("sent %v to %s with %q", body, e.up.paths[0], e.up.keys[0])
	}
	if tools, _ := body["tools"].([]any); len(tools) != 1 || !strings.Contains(strings.Join(res.Warnings, "\n"), "tool declarations") {
		t.Errorf("tools %v warnings %q", body["tools"], res.Warnings)
	}
	// The fork: the origin's first two messages and the reply, linked.
	h, c, err := e.st.Load(ctx, "", res.Fork, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.ForkedFrom != e.conv || c.ForkedAt != 2 || len(h) != 3 || h[2].Origin == nil || h[2].Origin.Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("fork %+v %d messages", c, len(h))
	}
	// Again: the same replay is not made twice.
	again, err := e.r.Replay(ctx, replay.Request{Conversation: e.conv, At: e.ids[2], Model: "gpt-tools",
		Set: []replay.Setting{{Name: "temperature", Value: json.RawMessage("0.20")}}})
	if err != nil {
		t.Fatal(err)
	}
	if !again.Skipped || again.Fork != res.Fork || e.up.calls() != 1 {
		t.Errorf("second replay: skipped %v fork %q, %d upstream calls", again.Skipped, again.Fork, e.up.calls())
	}
}

func TestReplayLastTurn(t *testing.T) {
	e := setup(t, nil)
	res, err := e.r.Replay(context.Background(), replay.Request{Conversation: e.conv, Model: "gpt-text"})
	if err != nil {
		t.Fatal(err)
	}
	if res.At != 4 || res.Original.Text != "The capital of England is London." || res.Compare.SameToolCalls != true {
		t.Errorf("at %d original %q", res.At, res.Original.Text)
	}
	if !strings.HasPrefix(res.Replay.Text, "**Holiday Name:**") || res.Compare.TextSimilarity >= 0.1 {
		t.Errorf("replay %q similarity %v", res.Replay.Text[:20], res.Compare.TextSimilarity)
	}
	// A replay from the user message is the same place, other settings:
	// another fork.
	res2, err := e.r.Replay(context.Background(), replay.Request{Conversation: e.conv, At: e.ids[3], Model: "gpt-text",
		Set: []replay.Setting{{Name: "max_tokens", Value: json.RawMessage("50")}}})
	if err != nil {
		t.Fatal(err)
	}
	if res2.At != 4 || res2.Fork == res.Fork || e.up.bodies[1]["max_completion_tokens"] != 50.0 {
		t.Errorf("second: at %d fork %q body %v", res2.At, res2.Fork, e.up.bodies[1])
	}
}

func TestReplayAnthropicRecordedSettings(t *testing.T) {
	meta := json.RawMessage(`{"convo_request":{"tools":[{"name":"get_capital","description":"The capital","parameters":{"type":"object","properties":{"country":{"type":"string"}}}}],"tool_choice":{"mode":"required"},"max_tokens":300}}`)
	e := setup(t, meta)
	res, err := e.r.Replay(context.Background(), replay.Request{Conversation: e.conv, At: e.ids[2], Model: "claude-stream"})
	if err != nil {
		t.Fatal(err)
	}
	body := e.up.bodies[0]
	tools, _ := body["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["description"] != "The capital" || body["max_tokens"] != 300.0 || e.up.paths[0] != "/v1/messages" || e.up.keys[0] != "sk-an" {
		t.Errorf("sent %v to %s", body, e.up.paths[0])
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q", res.Warnings)
	}
	// The recorded reply calls another tool, with other arguments.
	if res.Compare.SameToolCalls || len(res.Compare.ToolCalls) != 2 || res.Replay.ToolCalls[0].Name != "pelican_name_generator" {
		t.Errorf("compare %+v replay %+v", res.Compare, res.Replay.ToolCalls)
	}
}

func TestReplayFaults(t *testing.T) {
	for _, tc := range []struct {
		model, want, finish string
	}{
		{"gpt-down", "the model is overloaded", ""},
		{"gpt-slow", "timed out", ""},
		{"gpt-missing", "no such model", ""},
		{"claude-refuses", "", "refusal"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			e := setup(t, nil)
			res, err := e.r.Replay(context.Background(), replay.Request{Conversation: e.conv, Model: tc.model})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Replay.Error, tc.want) || (tc.want == "") != (res.Replay.Error == "") || res.Replay.Finish != tc.finish {
				t.Errorf("error %q finish %q, want %q %q", res.Replay.Error, res.Replay.Finish, tc.want, tc.finish)
			}
			h, _, err := e.st.Load(context.Background(), "", res.Fork, 0)
			if err != nil {
				t.Fatal(err)
			}
			last := h[len(h)-1]
			if tc.want != "" && (last.Role != convo.RoleError || len(h) != 5) {
				t.Errorf("fork ends with %s (%d messages)", last.Role, len(h))
			}
			if tc.want == "" && last.Role != convo.RoleAssistant {
				t.Errorf("fork ends with %s", last.Role)
			}
			if tc.want == "" {
				return
			}
			// A failed replay is made again, and the failed fork removed.
			again, err := e.r.Replay(context.Background(), replay.Request{Conversation: e.conv, Model: tc.model})
			if err != nil {
				t.Fatal(err)
			}
			if again.Skipped || again.Fork == res.Fork {
				t.Errorf("failed replay skipped")
			}
			if _, err := e.st.Get(context.Background(), "", res.Fork); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("failed fork kept: %v", err)
			}
		})
	}
}

func TestReplayRefused(t *testing.T) {
	e := setup(t, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		q    replay.Request
		want string
	}{
		{"no route", replay.Request{Conversation: e.conv, Model: "llama"}, `no route for model "llama"`},
		{"no model", replay.Request{Conversation: e.conv}, "no model"},
		{"no conversation", replay.Request{Conversation: "nope", Model: "gpt-text"}, "not found"},
		{"other tenant", replay.Request{Tenant: "acme", Conversation: e.conv, Model: "gpt-text"}, "not found"},
		{"no message", replay.Request{Conversation: e.conv, At: "msg_x", Model: "gpt-text"}, `no message "msg_x"`},
		{"first message", replay.Request{Conversation: e.conv, At: e.ids[0], Model: "gpt-text"}, ""},
		{"bad setting", replay.Request{Conversation: e.conv, Model: "gpt-text", Set: []replay.Setting{{Name: "temprature", Value: json.RawMessage("1")}}}, `unknown field "temprature"`},
		{"bad value", replay.Request{Conversation: e.conv, Model: "gpt-text", Set: []replay.Setting{{Name: "temperature", Value: json.RawMessage(`"hot"`)}}}, "temperature"},
		{"model setting", replay.Request{Conversation: e.conv, Model: "gpt-text", Set: []replay.Setting{{Name: "model", Value: json.RawMessage(`"x"`)}}}, `"model" cannot be set`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.r.Replay(ctx, tc.q)
			if tc.want == "" {
				if err != nil {
					t.Errorf("err %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
	if e.up.calls() != 1 {
		t.Errorf("%d upstream calls, want the one of the first message's replay", e.up.calls())
	}
}

func TestReplayNotReplayable(t *testing.T) {
	e := setup(t, nil)
	ctx := context.Background()
	h, _, _ := e.st.Load(ctx, "", e.conv, 0)
	// Recorded in metadata mode: the replies alone, without content.
	c, err := e.st.Create(ctx, store.Conversation{}, store.WithoutContent(h[2], "not recorded"), store.WithoutContent(h[4], "not recorded"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.r.Replay(ctx, replay.Request{Conversation: c.ID, Model: "gpt-text"})
	if !errors.Is(err, replay.ErrNotReplayable) || !strings.Contains(err.Error(), "messages[0] holds no content (not recorded)") {
		t.Errorf("err %v", err)
	}
	if ex, ok := e.st.(store.ContentExpirer); ok {
		if _, err := ex.ExpireContent(ctx, "", e.conv, time.Now()); err != nil {
			t.Fatal(err)
		}
		_, err = e.r.Replay(ctx, replay.Request{Conversation: e.conv, Model: "gpt-text"})
		if !errors.Is(err, replay.ErrNotReplayable) || !strings.Contains(err.Error(), "expired") {
			t.Errorf("expired: err %v", err)
		}
	}
	if e.up.calls() != 0 {
		t.Errorf("%d upstream calls", e.up.calls())
	}
}

func TestNewRefuses(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, tc := range []struct {
		cfg  gateway.Config
		want string
	}{
		{gateway.Config{}, "no upstreams"},
		{gateway.Config{Upstreams: []gateway.Upstream{{Name: "a", Protocol: "bedrock", URL: "http://x"}},
			Routes: []gateway.Route{{Model: "*", Upstream: "a"}}}, "signed"},
	} {
		_, err := replay.New(replay.Options{Store: st, Config: tc.cfg, Getenv: func(string) string { return "" }})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
}

// testModels is the catalogue with the fake upstream's models, so that
// replays to them are to known models (no model-unknown warning).
func testModels(t *testing.T) *catalog.Catalog {
	t.Helper()
	doc, err := catalog.Parse(strings.NewReader(`{"format":"convo-catalog/v1","models":[
		{"name":"gpt-text","provider":"openai","family":"openai","context":128000,"max_output":16384,"thinking":{"mode":"none"},"source":["https://example.com/gpt-text"],"as_of":"2026-12-05"},
		{"name":"claude-stream","provider":"anthropic","family":"anthropic","context":200000,"max_output":8192,"thinking":{"mode":"none"},"source":["https://example.com/claude-stream"],"as_of":"2026-12-05"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return catalog.Default().Merge(doc)
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
