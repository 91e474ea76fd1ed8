package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

// TestAgentLoop runs the whole example against the replay server and checks
// what crossed the wire.
func TestAgentLoop(t *testing.T) {
	replay, err := NewReplay(os.DirFS("testdata"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(replay)
	defer srv.Close()
	claude := Claude(srv.URL+"/v1/messages", "claude-sonnet-4-5", srv.Client())
	gpt := GPT(srv.URL+"/v1/chat/completions", "gpt-4.1", srv.Client())
	file := filepath.Join(t.TempDir(), "history.json")
	var log bytes.Buffer
	h, err := Run(context.Background(), claude, gpt, file, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	t.Log("\n" + log.String())

	roles := []string{}
	for _, m := range h {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, " "); got != "system user assistant tool assistant user assistant tool assistant" {
		t.Fatalf("roles: %s", got)
	}

	// Turn 1's reply: thinking with its signature, text, the tool call with
	// its arguments assembled from the streamed pieces, usage and finish.
	first := h[2]
	if first.Parts[0].Type != convo.TypeReasoning || first.Parts[0].Signature != "EqQBCkYIBxgCKkDxR2Wm7pQ+hY3v0bX1sT9uKq==" ||
		first.Parts[0].Text != "The user asks about Paris weather and an umbrella. I should call get_weather for Paris." {
		t.Fatalf("thinking block: %+v", first.Parts[0])
	}
	call := first.ToolCalls()[0]
	var args map[string]string
	if err := json.Unmarshal(call.Args, &args); err != nil || args["city"] != "Paris" || call.ID != "toolu_01PaRiS" {
		t.Fatalf("tool call: %+v (%v)", call, err)
	}
	if first.Finish != convo.FinishToolUse || first.Usage == nil || first.Usage.Output != 87 || first.Origin == nil || first.Origin.ResponseID != "msg_01AgentTurn1" {
		t.Fatalf("reply metadata: finish %q usage %+v origin %+v", first.Finish, first.Usage, first.Origin)
	}
	if h[4].Text() != "Paris is 14 °C with light rain (80% chance). Yes, take an umbrella." {
		t.Fatalf("final answer: %q", h[4].Text())
	}

	// The second Anthropic request replays the thinking block, signature
	// and all, before the tool call, and answers the call by its id.
	second := string(replay.Requests["/v1/messages"][1])
	for _, want := range []string{`"signature":"EqQBCkYIBxgCKkDxR2Wm7pQ+hY3v0bX1sT9uKq=="`, `"tool_use_id":"toolu_01PaRiS"`, `"type":"thinking"`} {
		if !strings.Contains(second, want) {
			t.Errorf("second Anthropic request lacks %s:\n%s", want, second)
		}
	}
	if strings.Index(second, `"type":"thinking"`) > strings.Index(second, `"type":"tool_use"`) {
		t.Error("thinking must come before the tool call it led to")
	}

	// The OpenAI request carries the earlier tool call and its result
	// paired by id, and none of Anthropic's signed thinking.
	toOpenAI := string(replay.Requests["/v1/chat/completions"][0])
	for _, want := range []string{`"tool_call_id":"toolu_01PaRiS"`, `"id":"toolu_01PaRiS"`, `"role":"tool"`} {
		if !strings.Contains(toOpenAI, want) {
			t.Errorf("OpenAI request lacks %s:\n%s", want, toOpenAI)
		}
	}
	if strings.Contains(toOpenAI, "EqQBCkYIBxgCKkDx") || strings.Contains(toOpenAI, "I should call get_weather") {
		t.Errorf("Anthropic's signed thinking leaked into the OpenAI request:\n%s", toOpenAI)
	}
	if !strings.Contains(log.String(), "signed or encrypted reasoning from anthropic dropped") {
		t.Errorf("no warning about the dropped thinking:\n%s", log.String())
	}
	if h[8].Text() != "London is 11 °C and dry (10% rain): no umbrella needed." {
		t.Fatalf("final answer: %q", h[8].Text())
	}

	// The saved history is the canonical format and reloads whole.
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	saved, err := convo.Unmarshal(doc)
	if err != nil || !saved.Equal(h[:5]) {
		t.Fatalf("saved history differs from turn 1 (%v)", err)
	}
}

// TestToolFailureIsAResult: a tool error goes back to the model as an error
// result, not a crash.
func TestToolFailureIsAResult(t *testing.T) {
	m := convo.Assistant("", convo.ToolCall("c1", "get_weather", json.RawMessage(`{"city":"Atlantis"}`)), convo.ToolCall("c2", "launch", json.RawMessage(`{}`)))
	res := runTools(m)
	if len(res.Parts) != 2 || !res.Parts[0].Error || !res.Parts[1].Error || !strings.Contains(res.Parts[1].Parts[0].Text, "unknown tool") {
		t.Fatalf("got %+v", res.Parts)
	}
}
