package replay_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/store/sqlite"
)

// TestReplayGatewayRecording: a conversation the gateway recorded is
// replayed with the tools and settings of its request, as recorded.
func TestReplayGatewayRecording(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	up := &fake{answer: defaultAnswer}
	srv := httptest.NewServer(up)
	defer srv.Close()
	cfg := gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "oa", Protocol: "openai-chat", URL: srv.URL + "/v1"}},
		Routes:    []gateway.Route{{Model: "*", Upstream: "oa"}},
	}
	gw, err := gateway.New(gateway.Options{Config: cfg, Store: st, Anonymous: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	gsrv := httptest.NewServer(gw)
	defer gsrv.Close()
	body := `{"model":"gpt-tools","temperature":0.7,"tools":[{"type":"function","function":{"name":"get_capital","description":"The capital of a country",
		"parameters":{"type":"object","properties":{"country":{"type":"string"}}}}}],"messages":[{"role":"user","content":"Capital of England?"}]}`
	req, _ := http.NewRequest("POST", gsrv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Convo-Conversation", "recorded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := gw.Close(ctx); err != nil {
		t.Fatal(err)
	}

	r, err := replay.New(replay.Options{Store: st, Config: cfg, Models: testModels(t)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Replay(context.Background(), replay.Request{Conversation: "recorded", Model: "gpt-text", Set: []replay.Setting{{Name: "temperature", Value: []byte("0")}}})
	if err != nil {
		t.Fatal(err)
	}
	sent := up.bodies[len(up.bodies)-1]
	tools, _ := sent["tools"].([]any)
	if len(res.Warnings) != 0 || len(tools) != 1 || !strings.Contains(toJSON(tools), "The capital of a country") || sent["temperature"] != 0.0 {
		t.Errorf("sent %v, warnings %q", sent, res.Warnings)
	}
	if res.Original.Model != "gpt-4o-mini-2024-07-18" || len(res.Original.ToolCalls) != 1 || res.Compare.SameToolCalls {
		t.Errorf("original %+v compare %+v", res.Original, res.Compare)
	}
}
