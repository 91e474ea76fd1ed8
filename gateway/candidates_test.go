package gateway_test

import (
	"bytes"
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
