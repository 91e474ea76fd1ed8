package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
)

// signature is that of the thinking block in the recorded Anthropic reply
// the fake upstream sends (tool_use.json).
const signature = "EqQBCkYIBxgCKkBq2nEa1vBv7c3mTzLf3Yw9x1bq"

// toolTurn sends a client's first request to the rig's upstream and
// returns the history of its second: the request, the reply as the client
// saw it (after edit, when not nil), and the results of its tool calls;
// and the conversation it was recorded in.
func toolTurn(t *testing.T, rg *rig, client string, edit func(*convo.Message), hdr map[string]string) (convo.History, string) {
	t.Helper()
	h := convo.History{convo.User("Weather in Paris?")}
	resp := rg.post(t, client, "m-1", requestBody(t, client, "m-1", h, false), false, hdr)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first turn: status %d: %s", resp.StatusCode, got)
	}
	seen := wantReply(t, client, got, false)
	if !seen.HasToolCalls() {
		t.Fatalf("no tool call in %s", got)
	}
	if edit != nil {
		edit(&seen)
	}
	return append(h, seen, answers(seen, `{"temp_c":18}`)), resp.Header.Get("Convo-Conversation")
}

// secondBody sends h and returns the body the upstream received.
func secondBody(t *testing.T, rg *rig, h convo.History, hdr map[string]string) []byte {
	t.Helper()
	resp := rg.post(t, "openai-chat", "m-1", requestBody(t, "openai-chat", "m-1", h, false), false, hdr)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("second turn: status %d: %s", resp.StatusCode, got)
	}
	return *rg.up.lastBody.Load()
}

// TestRestoreRedacted: a reply recorded redacted is not what the model
// said, and its signature no longer matches its thinking: the next request
// goes with the client's copy, as if nothing were stored.
func TestRestoreRedacted(t *testing.T) {
	rg := newRig(t, "anthropic", func(o *gateway.Options) {
		o.Config.Record = gateway.RecordConfig{Redact: gateway.RedactConfig{Rules: []gateway.RedactRule{{Name: "tool", Pattern: "get_weather"}}}}
	})
	h, _ := toolTurn(t, rg, "openai-chat", nil, nil)
	body := secondBody(t, rg, h, nil)
	if bytes.Contains(body, []byte(signature)) || bytes.Contains(body, []byte("REDACTED")) {
		t.Errorf("the redacted record reached the upstream:\n%s", body)
	}
	if !bytes.Contains(body, []byte(`"tool_use"`)) || !bytes.Contains(body, []byte(`"tool_result"`)) {
		t.Errorf("the client's tool call and result are not in the upstream's request:\n%s", body)
	}
}

// TestRestoreEdited: a client that changed its copy of the reply, naming
// the conversation itself, sends what it changed, not the record.
func TestRestoreEdited(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	h, conv := toolTurn(t, rg, "openai-chat", func(m *convo.Message) {
		for i := range m.Parts {
			if m.Parts[i].Type == convo.TypeText {
				m.Parts[i].Text = "Checking Paris."
			}
		}
	}, nil)
	body := secondBody(t, rg, h, map[string]string{"Convo-Conversation": conv})
	if bytes.Contains(body, []byte(signature)) || !bytes.Contains(body, []byte("Checking Paris.")) {
		t.Errorf("the upstream did not get the client's edited reply:\n%s", body)
	}
}

// TestRestoreMadeUpIDs: a Gemini reply's function calls have no ids, so
// convo makes some up, and an Ollama client that sends them back without
// ids gets others made up. When the next turn goes to an upstream that
// pairs results with calls by id (the route changed to Anthropic), the
// stored reply restored in place of the client's copy must take the ids
// the client's results name.
func TestRestoreMadeUpIDs(t *testing.T) {
	rg := newRig(t, "gemini", nil)
	var err error
	if rg.up.plain, err = os.ReadFile("../provider/gemini/testdata/replies/tools.json"); err != nil {
		t.Fatal(err)
	}
	claude := newFake(t, "anthropic")
	gw, err := gateway.New(gateway.Options{
		Config: gateway.Config{
			Upstreams: []gateway.Upstream{{Name: "g", Protocol: "gemini", URL: rg.up.URL}, {Name: "a", Protocol: "anthropic", URL: claude.URL}},
			Routes:    []gateway.Route{{Model: "gemini-*", Upstream: "g"}, {Model: "*", Upstream: "a"}},
		},
		Store:  rg.st,
		Tokens: map[string]string{token: tenant},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	rg.gw, rg.srv = gw, srv

	h := convo.History{convo.User("Weather and time in Paris?")}
	resp := rg.post(t, "ollama", "gemini-3-flash", requestBody(t, "ollama", "gemini-3-flash", h, false), false, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	second := `{"model":"claude-sonnet-4-5","stream":false,"messages":[{"role":"user","content":"Weather and time in Paris?"},` +
		`{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}},{"function":{"name":"get_time","arguments":{"zone":"Europe/Paris"}}}]},` +
		`{"role":"tool","content":"{\"temp_c\":18}","tool_name":"get_weather"},{"role":"tool","content":"{\"time\":\"10:00\",\"temp_c\":18}","tool_name":"get_time"}]}`
	resp = rg.post(t, "ollama", "claude-sonnet-4-5", []byte(second), false, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("second turn: status %d: %s", resp.StatusCode, got)
	}
	if c := resp.Header.Get("Convo-Conversation"); c == "" {
		t.Fatal("no conversation")
	}
	checkPaired(t, "anthropic", *claude.lastBody.Load())
}

// TestRestoreOlderTurn: a client that sends an earlier turn again (a retry
// after the conversation went on, or another branch) continues the
// conversation at that turn, and gets no later reply in place of its copy,
// even one that reads the same: the second reply here has the first's text
// and tool call with another signature.
func TestRestoreOlderTurn(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	h, _ := toolTurn(t, rg, "openai-chat", nil, nil)
	const later = "EqQBsecondTurnSignature0000000000000000"
	rg.up.plain = bytes.ReplaceAll(rg.up.plain, []byte(signature), []byte(later))
	secondBody(t, rg, h, nil)
	for i := 0; rg.gw.Stats().Recorded < 2 && i < 500; i++ {
		time.Sleep(10 * time.Millisecond) // the second reply recorded, and kept for a next turn
	}
	if body := secondBody(t, rg, h, nil); bytes.Contains(body, []byte(later)) {
		t.Errorf("the later reply was put in place of the earlier one:\n%s", body)
	}
}

// TestRestoreAfterRestart: a gateway that did not record the reply itself
// (restarted, or another one behind the same load balancer) reads it from
// the store.
func TestRestoreAfterRestart(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	h, _ := toolTurn(t, rg, "openai-chat", nil, nil)
	rg.drain(t)
	rg2 := newRig(t, "anthropic", func(o *gateway.Options) { o.Store = rg.st })
	if body := secondBody(t, rg2, h, nil); !bytes.Contains(body, []byte(signature)) {
		t.Errorf("the stored reply was not restored:\n%s", body)
	}
}

// TestRestoreNamedConversation: a client that names its conversation
// (Convo-Conversation) gets the reply restored as one the gateway
// recognises does.
func TestRestoreNamedConversation(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	hdr := map[string]string{"Convo-Conversation": "loop-1"}
	h, _ := toolTurn(t, rg, "openai-chat", nil, hdr)
	if body := secondBody(t, rg, h, hdr); !bytes.Contains(body, []byte(signature)) {
		t.Errorf("the stored reply was not restored:\n%s", body)
	}
}

// TestRestoreTurnAfterRestart: a gateway that did not record a tool loop's
// steps reads every step of the current turn back from the store, not the
// last one only.
func TestRestoreTurnAfterRestart(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	h, _ := toolTurn(t, rg, "openai-chat", nil, nil)
	resp := rg.post(t, "openai-chat", "m-1", requestBody(t, "openai-chat", "m-1", h, false), false, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	seen := wantReply(t, "openai-chat", got, false)
	h = append(h, seen, answers(seen, `{"temp_c":19}`))
	rg.drain(t)
	rg2 := newRig(t, "anthropic", func(o *gateway.Options) { o.Store = rg.st })
	if body := secondBody(t, rg2, h, nil); bytes.Count(body, []byte(signature)) != 2 {
		t.Errorf("the third step's request does not have both steps' signed thinking:\n%s", body)
	}
}

// TestContinueClientWithoutIDs: many Ollama clients keep a tool call's
// function and drop its id. Their next request still continues the
// conversation the gateway recorded, whose calls have the upstream's ids,
// and its results are recorded under those ids.
func TestContinueClientWithoutIDs(t *testing.T) {
	rg := newRig(t, "openai-chat", nil)
	h, conv := toolTurn(t, rg, "ollama", nil, nil)
	body := dropIDs(t, requestBody(t, "ollama", "m-1", h, false))
	if c := rg.conversation(t, "ollama", "m-1", body); c != conv {
		t.Fatalf("the next request was recorded in %s, want %s", c, conv)
	}
	rg.drain(t)
	stored, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
	if err != nil || len(stored) < 2 {
		t.Fatalf("stored %v, %v", roles(stored), err)
	}
	checkLoop(t, rg, conv, stored[1].ToolCalls()) // the results under the stored calls' ids
}

// dropIDs removes the tool-call ids from an Ollama request body, as a
// client whose tool calls keep only their function sends it.
func dropIDs(t *testing.T, body []byte) []byte {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	for _, m := range req["messages"].([]any) {
		m := m.(map[string]any)
		delete(m, "tool_call_id")
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			delete(c.(map[string]any), "id")
		}
	}
	out, err := json.Marshal(req)
	if err != nil || bytes.Contains(out, []byte(`"id"`)) {
		t.Fatalf("ids left in %s (%v)", out, err)
	}
	return out
}

// TestPreviousResponseID: a Responses client on a translated route goes on
// from a response with previous_response_id, as it would with OpenAI: the
// upstream gets the whole conversation from the record (the question, the
// reply with its signed thinking, the tool's result) and the recording
// continues it. Streamed, the next request may come before the first
// exchange is recorded. An id the gateway gave for a reply it has not
// recorded is answered 404.
func TestPreviousResponseID(t *testing.T) {
	for _, stream := range []bool{false, true} {
		rg := newRig(t, "anthropic", nil)
		body := fmt.Sprintf(`{"model":"m-1","stream":%t,"input":"Weather in Paris?"}`, stream)
		resp := rg.post(t, "openai-responses", "m-1", []byte(body), stream, nil)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		conv := resp.Header.Get("Convo-Conversation")
		id := responseIDOf(t, got, stream)
		call := wantReply(t, "openai-responses", got, stream).ToolCalls()[0]
		next := fmt.Sprintf(`{"model":"m-1","stream":%t,"previous_response_id":%q,"input":[{"type":"function_call_output","call_id":%q,"output":"{\"temp_c\":18}"}]}`, stream, id, call.ID)
		resp = rg.post(t, "openai-responses", "m-1", []byte(next), stream, nil)
		got, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %v: status %d: %s", stream, resp.StatusCode, got)
		}
		up := *rg.up.lastBody.Load()
		for _, want := range []string{"Weather in Paris?", signature, `"tool_use"`, `"tool_result"`} {
			if !bytes.Contains(up, []byte(want)) {
				t.Errorf("stream %v: the upstream's request lacks %s:\n%s", stream, want, up)
			}
		}
		checkPaired(t, "anthropic", up)
		if c := resp.Header.Get("Convo-Conversation"); c != conv {
			t.Errorf("stream %v: recorded in %s, want %s", stream, c, conv)
		}
		rg.drain(t)
		stored, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
		if want := []convo.Role{convo.RoleUser, convo.RoleAssistant, convo.RoleTool, convo.RoleAssistant}; err != nil || !slices.Equal(roles(stored), want) {
			t.Errorf("stream %v: stored %v (%v), want %v", stream, roles(stored), err, want)
		}
	}
	rg := newRig(t, "anthropic", nil)
	missing := `{"model":"m-1","previous_response_id":"resp_Y29udl94.msg_0123","input":"Go on."}`
	resp := rg.post(t, "openai-responses", "m-1", []byte(missing), false, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !bytes.Contains(got, []byte("previous_response_id")) {
		t.Errorf("an unrecorded response: status %d: %s", resp.StatusCode, got)
	}
}

// responseIDOf returns the id of a Responses reply, plain or streamed.
func responseIDOf(t *testing.T, body []byte, stream bool) string {
	t.Helper()
	if stream {
		_, data, _ := bytes.Cut(body, []byte("data: "))
		data, _, _ = bytes.Cut(data, []byte("\n"))
		var ev struct{ Response struct{ ID string } }
		if err := json.Unmarshal(data, &ev); err != nil || ev.Response.ID == "" {
			t.Fatalf("no response id in %s (%v)", data, err)
		}
		return ev.Response.ID
	}
	var r struct{ ID string }
	if err := json.Unmarshal(body, &r); err != nil || r.ID == "" {
		t.Fatalf("no response id in %s (%v)", body, err)
	}
	return r.ID
}

// TestPreviousResponseIDPassedThrough: a Responses client passed through
// to OpenAI that goes on from a response with previous_response_id sends
// its request as it came (OpenAI resolves the id), and the gateway records
// the exchange as the next one of the conversation it recorded that
// response in, its function_call_output items as the results they are.
func TestPreviousResponseIDPassedThrough(t *testing.T) {
	rg := newRig(t, "openai-responses", nil)
	resp := rg.post(t, "openai-responses", "m-1", []byte(`{"model":"m-1","input":"Weather in Paris?"}`), false, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	conv := resp.Header.Get("Convo-Conversation")
	id := responseIDOf(t, got, false)
	calls := wantReply(t, "openai-responses", got, false).ToolCalls()
	next := []byte(fmt.Sprintf(`{"model":"m-1","previous_response_id":%q,"input":%s}`, id, outputsFor(calls)))
	c := rg.conversation(t, "openai-responses", "m-1", next)
	if !bytes.Equal(*rg.up.lastBody.Load(), next) {
		t.Errorf("the request was not passed through as it came:\n%s", *rg.up.lastBody.Load())
	}
	if c != conv {
		t.Fatalf("recorded in %s, want %s", c, conv)
	}
	checkLoop(t, rg, conv, calls)
	// A gateway that did not record it finds it in the store.
	rg2 := newRig(t, "openai-responses", func(o *gateway.Options) { o.Store = rg.st })
	id2 := wantReply(t, "openai-responses", rg2.up.plain, false).Origin.ResponseID
	if c := rg2.conversation(t, "openai-responses", "m-1", []byte(fmt.Sprintf(`{"model":"m-1","previous_response_id":%q,"input":"Thanks"}`, id2))); c != conv {
		t.Errorf("after a restart, recorded in %s, want %s", c, conv)
	}
}

// conversation sends a plain request and returns the conversation the
// gateway recorded it in (Convo-Conversation); the reply is read and
// dropped.
func (rg *rig) conversation(t testing.TB, proto, model string, body []byte) string {
	t.Helper()
	resp := rg.post(t, proto, model, body, false, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Header.Get("Convo-Conversation")
}

// outputsFor is a Responses input answering calls.
func outputsFor(calls []convo.Part) string {
	var outputs []string
	for _, c := range calls {
		outputs = append(outputs, fmt.Sprintf(`{"type":"function_call_output","call_id":%q,"output":"{\"temp_c\":18}"}`, c.ID))
	}
	return "[" + strings.Join(outputs, ",") + "]"
}

// checkLoop checks that conversation conv holds a question, a reply with
// calls, their results as results, and the next reply.
func checkLoop(t *testing.T, rg *rig, conv string, calls []convo.Part) {
	t.Helper()
	rg.drain(t)
	stored, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
	if err != nil || len(stored) != 3+len(calls) || stored[len(stored)-1].Role != convo.RoleAssistant {
		t.Fatalf("stored %v (%v), want the question, the reply, %d results and the next reply", roles(stored), err, len(calls))
	}
	for i, m := range stored[2 : 2+len(calls)] {
		if r := m.Parts[0]; m.Role != convo.RoleTool || r.Type != convo.TypeToolResult || r.ID != calls[i].ID {
			t.Errorf("output %d was recorded as %s %s %q, want the result of %q", i, m.Role, r.Type, r.ID, calls[i].ID)
		}
	}
}

// TestOpenAIConversationPassedThrough: Responses requests passed through
// to OpenAI that name an OpenAI conversation (as an id, or an object with
// one) are recorded as one conversation, named after it, the outputs of a
// step as the results of the calls before them, by a gateway started anew
// too.
func TestOpenAIConversationPassedThrough(t *testing.T) {
	rg := newRig(t, "openai-responses", nil)
	resp := rg.post(t, "openai-responses", "m-1", []byte(`{"model":"m-1","conversation":"conv_68b0","input":"Weather in Paris?"}`), false, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	conv := resp.Header.Get("Convo-Conversation")
	if conv != "openai:conv_68b0" {
		t.Errorf("recorded in %s, want openai:conv_68b0", conv)
	}
	calls := wantReply(t, "openai-responses", got, false).ToolCalls()
	next := fmt.Sprintf(`{"model":"m-1","conversation":{"id":"conv_68b0"},"input":%s}`, outputsFor(calls))
	if c := rg.conversation(t, "openai-responses", "m-1", []byte(next)); c != conv {
		t.Fatalf("recorded in %s, want %s", c, conv)
	}
	checkLoop(t, rg, conv, calls)
	rg2 := newRig(t, "openai-responses", func(o *gateway.Options) { o.Store = rg.st })
	if c := rg2.conversation(t, "openai-responses", "m-1", []byte(`{"model":"m-1","conversation":"conv_68b0","input":"Thanks"}`)); c != conv {
		t.Errorf("after a restart, recorded in %s, want %s", c, conv)
	}
	if c := rg2.conversation(t, "openai-responses", "m-1", []byte(`{"model":"m-1","conversation":"conv_other","input":"Hi"}`)); c == conv {
		t.Error("another OpenAI conversation was recorded in the same one")
	}
}

// loadCounting counts the messages reads of a store.
type loadCounting struct {
	store.Store
	loads atomic.Int64
}

func (l *loadCounting) Load(ctx context.Context, tenant, id string, from int) (convo.History, store.Conversation, error) {
	l.loads.Add(1)
	return l.Store.Load(ctx, tenant, id, from)
}

func (l *loadCounting) LoadRange(ctx context.Context, tenant, id string, from, n int) (convo.History, store.Conversation, error) {
	l.loads.Add(1)
	return l.Store.LoadRange(ctx, tenant, id, from, n)
}

// TestMadeUpIDsFromMemory: the next step of an Ollama client whose calls
// had ids made up, on a translated route, has its results paired and its
// reply restored from what the gateway kept, without reading the
// conversation back from the store.
func TestMadeUpIDsFromMemory(t *testing.T) {
	var counted *loadCounting
	rg := newRig(t, "openai-chat", func(o *gateway.Options) {
		counted = &loadCounting{Store: o.Store}
		o.Store = counted
	})
	h, conv := toolTurn(t, rg, "ollama", nil, nil)
	rg.drain(t)
	before := counted.loads.Load()
	body := dropIDs(t, requestBody(t, "ollama", "m-1", h, false))
	if c := rg.conversation(t, "ollama", "m-1", body); c != conv {
		t.Fatalf("recorded in %s, want %s", c, conv)
	}
	if n := counted.loads.Load() - before; n != 0 {
		t.Errorf("the next step read the conversation back %d times", n)
	}
	checkPaired(t, "openai-chat", *rg.up.lastBody.Load())
}

// TestGetResponse: a Responses client retrieves a translated reply by the
// id the gateway gave it (GET /v1/responses/{id}, as openai-go's
// Responses.Get does), even the moment it was answered; another key, or an
// id the gateway did not give, gets 404.
func TestGetResponse(t *testing.T) {
	rg := newRig(t, "anthropic", func(o *gateway.Options) { o.Tokens["tok-other"] = "other" })
	resp := rg.post(t, "openai-responses", "m-1", []byte(`{"model":"m-1","input":"Weather in Paris?"}`), false, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	id := responseIDOf(t, got, false)
	// Asked for at once: before the writer has stored it.
	get := func(id, tok string) (int, []byte) {
		req, _ := http.NewRequest("GET", rg.srv.URL+"/v1/responses/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	status, body := get(id, token)
	if status != http.StatusOK || responseIDOf(t, body, false) != id {
		t.Fatalf("status %d: %s", status, body)
	}
	calls := func(b []byte) (out []string) {
		for _, c := range wantReply(t, "openai-responses", b, false).ToolCalls() {
			out = append(out, c.ID+" "+c.Name+" "+string(c.Args))
		}
		return out
	}
	if g, w := calls(body), calls(got); len(w) == 0 || !slices.Equal(g, w) {
		t.Errorf("retrieved calls %v, answered %v", g, w)
	}
	for _, c := range []struct{ id, tok string }{{id, "tok-other"}, {"resp_68af0c2a", token}, {"resp_bm9wZQ.msg_0", token}} {
		if status, body := get(c.id, c.tok); status != http.StatusNotFound {
			t.Errorf("%s with %s: status %d: %s", c.id, c.tok, status, body)
		}
	}
}
