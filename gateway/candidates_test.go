package gateway_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// clientReplies reads every candidate of what a client of proto got.
func clientReplies(t *testing.T, proto string, body []byte, streamed bool) []convo.Message {
	t.Helper()
	rc, err := all.Lookup(proto)
	if err != nil {
		t.Fatal(err)
	}
	if !streamed {
		ms, _, err := provider.DecodeReplies(rc, body, provider.Options{})
		if err != nil {
			t.Fatalf("%v\n%s", err, body)
		}
		return ms
	}
	acc := rc.NewAccumulator(provider.Options{})
	src := stream.NewSSE(bytes.NewReader(body))
	for {
		ev, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil || acc.Add(ev) != nil {
			t.Fatalf("%v\n%s", err, body)
		}
	}
	ms, _, err := provider.AccumulatedReplies(acc)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return ms
}

// TestTranslateCandidates: the three choices of an OpenAI Chat upstream's
// n = 3 reply (a recorded stream) reach a Gemini client as three
// candidates, plain and streamed; an Anthropic client gets the first.
func TestTranslateCandidates(t *testing.T) {
	for _, client := range []string{"gemini", "anthropic"} {
		for _, streamed := range []bool{false, true} {
			rg := newRig(t, "openai-chat", nil)
			var err error
			if rg.up.plain, err = os.ReadFile("../provider/openai/testdata/candidates/n3.json"); err != nil {
				t.Fatal(err)
			}
			if rg.up.stream, err = os.ReadFile("../provider/openai/testdata/candidates/n3-recorded.sse"); err != nil {
				t.Fatal(err)
			}
			up := rg.up.plain
			if streamed {
				up = rg.up.stream
			}
			want := clientReplies(t, "openai-chat", up, streamed)
			resp := rg.post(t, client, "m-1", requestBody(t, client, "m-1", convo.History{convo.User("Explain LLMs to a child")}, streamed), streamed, nil)
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s: status %d: %s", client, resp.StatusCode, got)
			}
			ms := clientReplies(t, client, got, streamed)
			n := len(want)
			if client == "anthropic" {
				n = 1
			}
			if len(ms) != n {
				t.Fatalf("%s (stream %v): %d replies, want %d", client, streamed, len(ms), n)
			}
			for k := range ms {
				if ms[k].Text() != want[k].Text() || ms[k].Finish != want[k].Finish {
					t.Errorf("%s (stream %v): reply %d is %q, want %q", client, streamed, k, ms[k].Text(), want[k].Text())
				}
			}
			rg.drain(t)
		}
	}
}

// TestTranslateApprovals: a Responses client that answers an MCP approval
// request, sent to an Anthropic upstream (no tool approvals): neither the
// request nor the answer reaches the upstream, the rest of the
// conversation does, and the reply comes back.
func TestTranslateApprovals(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	body := `{"model":"m-1","input":[
{"role":"user","content":"Roll 2d4+1"},
{"type":"mcp_approval_request","id":"mcpr_1","server_label":"dmcp","name":"roll","arguments":"{\"diceRollExpression\":\"2d4 + 1\"}"},
{"type":"mcp_approval_response","approval_request_id":"mcpr_1","approve":false,"reason":"not now"},
{"role":"user","content":"Then just guess."}]}`
	resp := rg.post(t, "openai-responses", "m-1", []byte(body), false, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, got)
	}
	sent := string(*rg.up.lastBody.Load())
	for _, leak := range []string{"mcpr_1", "approval", "not now", "diceRollExpression"} {
		if strings.Contains(sent, leak) {
			t.Errorf("the upstream got %q: %s", leak, sent)
		}
	}
	if !strings.Contains(sent, "Roll 2d4+1") || !strings.Contains(sent, "Then just guess.") {
		t.Errorf("the conversation did not reach the upstream: %s", sent)
	}
	if ms := clientReplies(t, "openai-responses", got, false); len(ms) != 1 || len(ms[0].Parts) == 0 {
		t.Errorf("reply %s", got)
	}
	rg.drain(t)
}

// TestRecordCandidates: an exchange whose reply has several candidates is
// recorded whole — the first in the conversation, each other one in a fork
// of it at the reply, under the ids the response headers named before the
// reply started — plain and streamed, passed through (an OpenAI Chat
// client with n = 3 to a Chat upstream, the recorded kgateway stream) and
// translated (the same client to a Gemini upstream, which is asked for
// candidateCount 3). A client that goes on with the second candidate's
// reply continues its fork.
func TestRecordCandidates(t *testing.T) {
	replies := map[string][2]string{
		"openai-chat": {"../provider/openai/testdata/candidates/n3.json", "../provider/openai/testdata/candidates/n3-recorded.sse"},
		"gemini":      {"../provider/gemini/testdata/candidates/count3.json", "../provider/gemini/testdata/candidates/count3.sse"},
	}
	for _, upstream := range []string{"openai-chat", "gemini"} {
		for _, streamed := range []bool{false, true} {
			t.Run(upstream+map[bool]string{false: "/plain", true: "/stream"}[streamed], func(t *testing.T) {
				testRecordCandidates(t, upstream, replies[upstream], streamed)
			})
		}
	}
}

func testRecordCandidates(t *testing.T, upstream string, files [2]string, streamed bool) {
	rg := newRig(t, upstream, nil)
	var err error
	if rg.up.plain, err = os.ReadFile(files[0]); err != nil {
		t.Fatal(err)
	}
	if rg.up.stream, err = os.ReadFile(files[1]); err != nil {
		t.Fatal(err)
	}
	up := rg.up.plain
	if streamed {
		up = rg.up.stream
	}
	want := clientReplies(t, upstream, up, streamed)
	if len(want) != 3 {
		t.Fatalf("the upstream's reply has %d candidates, want 3", len(want))
	}
	h := convo.History{convo.User("Explain LLMs to a child")}
	body := requestBody(t, "openai-chat", "m-1", h, streamed)
	body = append([]byte(`{"n":3,`), body[1:]...)
	resp := rg.post(t, "openai-chat", "m-1", body, streamed, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, got)
	}
	if upstream == "gemini" && !strings.Contains(string(*rg.up.lastBody.Load()), `"candidateCount":3`) {
		t.Errorf("the Gemini upstream was not asked for 3 candidates: %s", *rg.up.lastBody.Load())
	}
	if n := len(clientReplies(t, "openai-chat", got, streamed)); n != 3 {
		t.Errorf("the client got %d replies, want 3", n)
	}
	conv := resp.Header.Get("Convo-Conversation")
	ids := strings.Split(resp.Header.Get("Convo-Message-Ids"), ",")
	forks := strings.Split(resp.Header.Get("Convo-Candidate-Conversations"), ",")
	forkIDs := strings.Split(resp.Header.Get("Convo-Candidate-Message-Ids"), ",")
	if len(ids) != 2 || len(forks) != 2 || len(forkIDs) != 2 {
		t.Fatalf("headers: %v", resp.Header)
	}
	// The client goes on with the second candidate's reply, as it renders
	// it.
	h2 := append(h[:1:1], want[1], convo.User("Shorter, please."))
	resp = rg.post(t, "openai-chat", "m-1", requestBody(t, "openai-chat", "m-1", h2, streamed), streamed, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if c := resp.Header.Get("Convo-Conversation"); c != forks[0] {
		t.Errorf("the next turn after candidate 2 went to %s, want its fork %s", c, forks[0])
	}
	if resp.Header.Get("Convo-Candidate-Conversations") != "" {
		t.Errorf("candidate headers for a request of one reply: %v", resp.Header)
	}
	rg.drain(t)
	ctx := context.Background()
	main, _, err := rg.st.Load(ctx, tenant, conv, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(main) != 2 || main[1].ID != ids[1] || main[1].Text() != want[0].Text() {
		t.Fatalf("conversation %v, want the question and the first candidate %q", roles(main), want[0].Text())
	}
	for k, id := range forks {
		c, err := rg.st.Get(ctx, tenant, id)
		if err != nil {
			t.Fatalf("candidate %d: %v", k+1, err)
		}
		if c.ForkedFrom != conv || c.ForkedAt != 1 {
			t.Errorf("candidate %d: forked from %s at %d, want %s at 1", k+1, c.ForkedFrom, c.ForkedAt, conv)
		}
		msgs, _, err := rg.st.Load(ctx, tenant, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The first fork also holds the next turn (with the error result
		// the client's request got for a tool call it did not answer).
		if k == 0 && (len(msgs) < 4 || !msgs[len(msgs)-1].IsAssistant()) || k > 0 && len(msgs) != 2 ||
			msgs[0].ID != main[0].ID || msgs[1].ID != forkIDs[k] {
			t.Fatalf("candidate %d: %v (ids %s, %s), want the question and the reply %s", k+1, roles(msgs), msgs[0].ID, msgs[1].ID, forkIDs[k])
		}
		r := msgs[1]
		if r.Text() != want[k+1].Text() || r.Finish != want[k+1].Finish || r.Usage != nil {
			t.Errorf("candidate %d: stored %q (%s, usage %v), want %q (%s)", k+1, r.Text(), r.Finish, r.Usage, want[k+1].Text(), want[k+1].Finish)
		}
	}
	if st := rg.gw.Stats(); st.Recorded != 2 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
}
