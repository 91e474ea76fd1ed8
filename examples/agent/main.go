// Command agent is a complete tool-using agent loop built on convo: a user
// turn, a streamed reply that calls a tool, the tool's result, the final
// answer, the history saved and reloaded, and the next turn sent to a
// different provider — with reasoning signatures, tool-call ids and warnings
// handled by the library.
//
// By default it talks to a local server that replays recorded provider
// streams (see replay.go), so it runs anywhere, offline:
//
//	go run ./examples/agent
//
// Point --anthropic and --openai at real endpoints (with API keys in
// ANTHROPIC_API_KEY and OPENAI_API_KEY) to run it for real.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/openai"
)

// Model is one provider endpoint and the format it speaks.
type Model struct {
	Name    string // the model, as the provider names it
	URL     string // the endpoint a request is POSTed to
	Format  provider.Format
	Request func(conv json.RawMessage, model string) ([]byte, error) // the whole request body around the conversation fields
	Header  http.Header
	Client  *http.Client
}

// Send sends h and returns the streamed reply folded into one message, with
// the warnings of the conversion (what the target could not take).
func (m Model) Send(ctx context.Context, h convo.History) (convo.Message, []provider.Warning, error) {
	conv, warns, err := m.Format.Encode(h, provider.Options{})
	if err != nil {
		return convo.Message{}, warns, fmt.Errorf("encoding for %s: %w", m.Format.Name(), err)
	}
	body, err := m.Request(conv, m.Name)
	if err != nil {
		return convo.Message{}, warns, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.URL, bytes.NewReader(body))
	if err != nil {
		return convo.Message{}, warns, err
	}
	req.Header = m.Header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.Client.Do(req)
	if err != nil {
		return convo.Message{}, warns, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return convo.Message{}, warns, fmt.Errorf("%s: %s: %s", m.URL, resp.Status, bytes.TrimSpace(msg))
	}
	reply, more, err := m.Format.ReadStream(resp.Body, provider.Options{})
	return reply, append(warns, more...), err
}

// withFields merges extra members into the conversation fields' object.
func withFields(conv json.RawMessage, extra map[string]any) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(conv, &fields); err != nil {
		return nil, err
	}
	for k, v := range extra {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		fields[k] = b
	}
	return json.Marshal(fields)
}

var weatherSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"city": map[string]any{"type": "string"}},
	"required":   []string{"city"},
}

// Claude returns a Model for Anthropic's Messages API at url.
func Claude(url, model string, client *http.Client) Model {
	h := http.Header{"Anthropic-Version": {"2023-06-01"}}
	if k := os.Getenv("ANTHROPIC_API_KEY"); k != "" {
		h.Set("X-Api-Key", k)
	}
	return Model{Name: model, URL: url, Format: anthropic.Messages(), Header: h, Client: client,
		Request: func(conv json.RawMessage, model string) ([]byte, error) {
			return withFields(conv, map[string]any{"model": model, "max_tokens": 2048, "stream": true,
				"thinking": map[string]any{"type": "enabled", "budget_tokens": 1024},
				"tools":    []any{map[string]any{"name": "get_weather", "description": "Current weather for a city", "input_schema": weatherSchema}}})
		}}
}

// GPT returns a Model for OpenAI's Chat Completions API at url.
func GPT(url, model string, client *http.Client) Model {
	h := http.Header{}
	if k := os.Getenv("OPENAI_API_KEY"); k != "" {
		h.Set("Authorization", "Bearer "+k)
	}
	return Model{Name: model, URL: url, Format: openai.Chat(), Header: h, Client: client,
		Request: func(conv json.RawMessage, model string) ([]byte, error) {
			return withFields(conv, map[string]any{"model": model, "stream": true, "stream_options": map[string]any{"include_usage": true},
				"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "description": "Current weather for a city", "parameters": weatherSchema}}}})
		}}
}

// getWeather is the agent's one tool.
func getWeather(args json.RawMessage) (string, error) {
	var in struct {
		City string `json:"city"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.City == "" {
		return "", errors.New(`want {"city": "…"}`)
	}
	forecasts := map[string]string{
		"Paris":  `{"city":"Paris","temp_c":14,"rain_chance":0.8,"sky":"light rain"}`,
		"London": `{"city":"London","temp_c":11,"rain_chance":0.1,"sky":"dry"}`,
	}
	f, ok := forecasts[in.City]
	if !ok {
		return "", fmt.Errorf("no forecast for %q", in.City)
	}
	return f, nil
}

// runTools answers every tool call of m; a failing tool becomes an error
// result the model can read, never a crash.
func runTools(m convo.Message) convo.Message {
	var results []convo.Part
	for _, c := range m.ToolCalls() {
		out, err := getWeather(c.Args)
		if c.Name != "get_weather" {
			err = fmt.Errorf("unknown tool %q", c.Name)
		}
		if err != nil {
			results = append(results, convo.ToolError(c.ID, c.Name, err.Error()))
			continue
		}
		results = append(results, convo.ToolResultParts(c.ID, c.Name, convo.JSON(json.RawMessage(out))))
	}
	return convo.ToolResults(results...)
}

// Turn sends h to m until the model stops calling tools, and returns the
// history with every reply and tool result appended.
func Turn(ctx context.Context, m Model, h convo.History, log io.Writer) (convo.History, error) {
	for step := 0; step < 8; step++ {
		reply, warns, err := m.Send(ctx, h)
		for _, w := range warns {
			fmt.Fprintf(log, "  warning (%s): %s\n", m.Format.Name(), w)
		}
		if err != nil {
			return h, err
		}
		h = append(h, reply)
		fmt.Fprintf(log, "%s: %s\n", m.Format.Name(), describe(reply))
		if !reply.HasToolCalls() {
			return h, nil
		}
		results := runTools(reply)
		h = append(h, results)
		fmt.Fprintf(log, "tools: %s\n", describe(results))
	}
	return h, errors.New("the model kept calling tools: stopped after 8 steps")
}

func describe(m convo.Message) string {
	var s []string
	for _, p := range m.Parts {
		switch p.Type {
		case convo.TypeText:
			s = append(s, fmt.Sprintf("%q", p.Text))
		case convo.TypeReasoning:
			s = append(s, fmt.Sprintf("(reasoning, %d-byte signature)", len(p.Signature)))
		case convo.TypeToolCall:
			s = append(s, fmt.Sprintf("call %s %s(%s)", p.ID, p.Name, p.Args))
		case convo.TypeToolResult:
			s = append(s, fmt.Sprintf("result %s", p.ID))
		}
	}
	return strings.Join(s, ", ")
}

// Run is the whole session: two turns, two providers, one saved history.
func Run(ctx context.Context, claude, gpt Model, historyFile string, log io.Writer) (convo.History, error) {
	h := convo.History{
		convo.System("You are a concise weather assistant. Use get_weather for forecasts."),
		convo.User("What's the weather in Paris? Should I take an umbrella?"),
	}
	h, err := Turn(ctx, claude, h, log)
	if err != nil {
		return h, fmt.Errorf("turn 1: %w", err)
	}

	// Save and reload: what the next request needs (the thinking signature,
	// the tool-call ids) must survive the file.
	doc, err := convo.Marshal(h)
	if err != nil {
		return h, err
	}
	if err := os.WriteFile(historyFile, doc, 0o644); err != nil {
		return h, err
	}
	doc, err = os.ReadFile(historyFile)
	if err != nil {
		return h, err
	}
	if h, err = convo.Unmarshal(doc); err != nil {
		return h, fmt.Errorf("reloading %s: %w", historyFile, err)
	}
	fmt.Fprintf(log, "saved and reloaded %d messages from %s\n", len(h), filepath.Base(historyFile))

	// The next turn goes to another provider. Claude's signed thinking
	// cannot be read there: the codec drops it with a warning.
	h = append(h, convo.User("And in London?"))
	h, err = Turn(ctx, gpt, h, log)
	if err != nil {
		return h, fmt.Errorf("turn 2: %w", err)
	}
	if err := h.Validate(); err != nil {
		return h, err
	}
	return h, nil
}

func main() {
	anthropicURL := flag.String("anthropic", "", "Anthropic Messages endpoint (default: the built-in replay server)")
	openaiURL := flag.String("openai", "", "OpenAI Chat Completions endpoint (default: the built-in replay server)")
	out := flag.String("history", filepath.Join(os.TempDir(), "convo-agent.json"), "where to save the history")
	flag.Parse()

	if *anthropicURL == "" || *openaiURL == "" {
		replay, err := NewReplay(os.DirFS("examples/agent/testdata"))
		if err != nil {
			replay, err = NewReplay(os.DirFS("testdata"))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "agent: the replay recordings are missing: run from the repository root")
			os.Exit(1)
		}
		srv := httptest.NewServer(replay)
		defer srv.Close()
		*anthropicURL, *openaiURL = srv.URL+"/v1/messages", srv.URL+"/v1/chat/completions"
	}
	claude := Claude(*anthropicURL, "claude-sonnet-4-5", http.DefaultClient)
	gpt := GPT(*openaiURL, "gpt-4.1", http.DefaultClient)
	if _, err := Run(context.Background(), claude, gpt, *out, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	fmt.Println("history:", *out)
}
