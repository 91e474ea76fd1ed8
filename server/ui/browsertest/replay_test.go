package browsertest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// anthropicReply is what the fake Anthropic upstream answers: another
// wording, and the same tool called with one argument more.
const anthropicReply = `{"id":"msg_replay","type":"message","role":"assistant","model":"claude-haiku-4-5",
"content":[{"type":"text","text":"I'll check the current weather in Paris for you."},
{"type":"tool_use","id":"toolu_9","name":"get_weather","input":{"city":"Paris","units":"celsius"}}],
"stop_reason":"tool_use","usage":{"input_tokens":412,"output_tokens":61}}`

// replaySite is a viewer with upstreams: a fake Anthropic API that
// records what it was sent.
func replaySite(t *testing.T) (*site, *atomic.Value) {
	var sent atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		sent.Store(string(b))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, anthropicReply)
	}))
	t.Cleanup(up.Close)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ui.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	answer := convo.Assistant("I'll look up the weather in Paris.", convo.ToolCall("call_1", "get_weather", json.RawMessage(`{"city":"Paris"}`)))
	answer.Origin, answer.Usage, answer.Finish = &convo.Origin{Provider: "openai", Model: "gpt-4o"}, &convo.Usage{Input: 380, Output: 24}, convo.FinishToolUse
	h := convo.History{convo.System("You are a weather assistant. Be brief."), convo.User("What's the weather in Paris today?"), answer,
		convo.ToolResults(convo.ToolResult("call_1", "get_weather", `{"temp_c":18,"sky":"sunny"}`)), convo.Assistant("18 °C and sunny in Paris.")}
	for i := range h {
		h[i].ID = "m" + string(rune('0'+i))
	}
	if _, err := st.Create(context.Background(), store.Conversation{Tenant: "demo", ID: "weather", Title: "Weather in Paris"}, h...); err != nil {
		t.Fatal(err)
	}
	r, err := replay.New(replay.Options{Store: st, Config: gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "claude", Protocol: "anthropic", URL: up.URL}},
		Routes:    []gateway.Route{{Model: "claude-haiku-4-5", Upstream: "claude"}, {Model: "claude-*", Upstream: "claude"}},
	}, Price: func(_, model string, u convo.Usage) (convo.Money, bool) {
		// USD 1 per million input tokens, 5 per million output.
		return convo.Money(u.Input)*1000 + convo.Money(u.Output)*5000, strings.HasPrefix(model, "claude")
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs, err := server.New(st, server.Options{Tokens: map[string]string{token: "demo"}, UI: true, Formats: all.Formats(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Replay: r})
	if err != nil {
		t.Fatal(err)
	}
	s := &site{Server: httptest.NewServer(hs), st: st}
	t.Cleanup(s.Close)
	return s, &sent
}

// TestReplay: "Replay from here" on an answer, a model picked, the
// comparison beside the original; under the viewer's CSP, nothing
// reported.
func TestReplay(t *testing.T) {
	s, sent := replaySite(t)
	ctx, cons := browse(t)
	err := chromedp.Run(ctx,
		chromedp.Navigate(s.URL+"/ui/"),
		chromedp.WaitVisible(`#token`, chromedp.ByQuery),
		chromedp.SendKeys(`#token`, token, chromedp.ByQuery),
		chromedp.Submit(`form.signin`, chromedp.ByQuery),
		chromedp.WaitVisible(`ol.convs`, chromedp.ByQuery),
		chromedp.Navigate(s.URL+"/ui/c/weather"),
		chromedp.WaitVisible(`#m-2 a.replay-from`, chromedp.ByQuery),
		chromedp.Click(`#m-2 a.replay-from`, chromedp.ByQuery),
		chromedp.WaitVisible(`form.replay-form`, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("the form: %v", err)
	}
	look(t, ctx, "viewer-replay-form.png", 1000)
	var loc, model, finish, latency, cost string
	var dels, inses, calls, rows int
	err = chromedp.Run(ctx,
		chromedp.SendKeys(`#model`, "claude-haiku-4-5", chromedp.ByQuery),
		chromedp.SendKeys(`#temperature`, "0.2", chromedp.ByQuery),
		chromedp.Submit(`form.replay-form`, chromedp.ByQuery),
		chromedp.WaitVisible(`table.cmp`, chromedp.ByQuery),
		chromedp.Location(&loc),
		chromedp.Text(`table.cmp tbody tr:nth-child(1) td:nth-child(3)`, &model, chromedp.ByQuery),
		chromedp.Text(`table.cmp tbody tr:nth-child(2) td:nth-child(3)`, &finish, chromedp.ByQuery),
		chromedp.Text(`table.cmp tbody tr:nth-child(4) td:nth-child(3)`, &latency, chromedp.ByQuery),
		chromedp.Text(`table.cmp tbody tr:nth-child(5) td:nth-child(3)`, &cost, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll(".difftext del").length`, &dels),
		chromedp.Evaluate(`document.querySelectorAll(".difftext ins").length`, &inses),
		chromedp.Evaluate(`document.querySelectorAll("tr.callrow").length`, &calls),
		chromedp.Evaluate(`document.querySelectorAll(".pair .msg").length`, &rows),
	)
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if !strings.HasSuffix(latency, " ms") || latency == " ms" || cost != "$0.000717" {
		t.Errorf("latency %q cost %q", latency, cost)
	}
	if !strings.HasSuffix(loc, "/compare") || model != "claude-haiku-4-5" || finish != "tool_use" || dels == 0 || inses == 0 || calls != 1 || rows != 2 {
		t.Fatalf("comparison at %s: model %q finish %q, %d deletions %d insertions %d call rows %d messages", loc, model, finish, dels, inses, calls, rows)
	}
	// What the upstream was sent: the history before the answer, the
	// temperature, the tool the conversation calls.
	body, _ := sent.Load().(string)
	if !strings.Contains(body, `"temperature":0.2`) || !strings.Contains(body, `"name":"get_weather"`) || strings.Contains(body, "sunny") {
		t.Errorf("sent %s", body)
	}
	safe(t, ctx, "comparison")
	cons.check(t, "replay")
	if *updateScreenshots {
		screenshot(t, ctx, "viewer-replay.png", 1300)
	}
	look(t, ctx, "viewer-replay.png", 1300)
}

// look saves a screenshot into $CONVO_SCREENSHOTS, when set: a look at a
// page without touching docs/.
func look(t *testing.T, ctx context.Context, name string, height int64) {
	dir := os.Getenv("CONVO_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, height), chromedp.Sleep(200*time.Millisecond),
		chromedp.CaptureScreenshot(&png), chromedp.EmulateViewport(1280, 1000)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
