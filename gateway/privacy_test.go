package gateway_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/redact"
	"github.com/convo-go/convo/store"
)

// secretReply is an OpenAI Chat stream whose text holds an e-mail address
// split across two chunks and an Anthropic key: what redaction must catch in
// the assembled reply, not chunk by chunk.
const secretReply = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":"Write to bob@"},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[{"index":0,"delta":{"content":"example.com, key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA."},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":7,"total_tokens":16}}

data: [DONE]

`

func privacyRig(t *testing.T, rc gateway.RecordConfig) *rig {
	rg := newRig(t, "openai-chat", func(o *gateway.Options) { o.Config.Record = rc })
	rg.up.stream = []byte(secretReply)
	return rg
}

// exchange posts a streamed request carrying secrets and returns the
// response body, its conversation id and the response.
func (rg *rig) secretExchange(t *testing.T, hdr map[string]string) ([]byte, string, *http.Response) {
	t.Helper()
	h := convo.History{convo.User("I am alice@example.org, card 4111 1111 1111 1111")}
	resp := rg.post(t, "openai-chat", "m-1", requestBody(t, "openai-chat", "m-1", h, true), true, hdr)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return body, resp.Header.Get("Convo-Conversation"), resp
}

func TestRecordModes(t *testing.T) {
	rc := gateway.RecordConfig{Redact: gateway.RedactConfig{Builtin: true}}
	bodies := map[string][]byte{}
	for _, mode := range []string{"full", "metadata", "off"} {
		t.Run(mode, func(t *testing.T) {
			rg := privacyRig(t, rc)
			body, conv, resp := rg.secretExchange(t, map[string]string{"Convo-Record": mode})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			bodies[mode] = body
			if !bytes.Equal(body, []byte(secretReply)) {
				t.Fatalf("the client got other bytes than the upstream sent:\n%s", body)
			}
			rg.drain(t)
			ctx := context.Background()
			stored, _, err := rg.st.Load(ctx, tenant, conv, 0)
			switch mode {
			case "off":
				if !errors.Is(err, store.ErrNotFound) {
					t.Fatalf("off: load = %v, %v; want not found", stored, err)
				}
				if s := rg.gw.Stats(); s.Recorded != 0 {
					t.Errorf("off: stats %+v", s)
				}
				return
			case "metadata":
				if err != nil || len(stored) != 1 {
					t.Fatalf("metadata: stored %v, %v; want the reply's metadata only", roles(stored), err)
				}
				m := stored[0]
				if len(m.Parts) != 0 || m.Usage == nil || m.Usage.Output != 7 || m.Finish != convo.FinishStop || m.Origin == nil || m.Origin.Model != "m-1" {
					t.Errorf("metadata: stored %+v", m)
				}
				if note := string(m.Native[redact.NativeKey]); !strings.Contains(note, `"content":"not recorded"`) || !strings.Contains(note, `"parts":["text"]`) {
					t.Errorf("metadata: the message does not say its content was left out: %s", note)
				}
				return
			}
			if err != nil || len(stored) != 2 {
				t.Fatalf("full: stored %v, %v", roles(stored), err)
			}
			user, reply := stored[0], stored[1]
			if got, want := user.Text(), "I am [REDACTED:email], card [REDACTED:card-number]"; got != want {
				t.Errorf("stored user text %q, want %q", got, want)
			}
			if got, want := reply.Text(), "Write to [REDACTED:email], key [REDACTED:anthropic-key]."; got != want {
				t.Errorf("stored streamed reply %q, want %q", got, want)
			}
			if c := redact.Redacted(reply.Parts[0].Native); c[redact.Email] != 1 || c[redact.AnthropicKey] != 1 {
				t.Errorf("the reply's part does not say it was redacted: %v", reply.Parts[0].Native)
			}
		})
	}
	if !bytes.Equal(bodies["full"], bodies["metadata"]) || !bytes.Equal(bodies["full"], bodies["off"]) {
		t.Error("the client's response differs between modes")
	}
}

// TestRecordContinuesRedacted: a conversation recorded redacted is still
// continued by the next request, which carries the unredacted reply back.
func TestRecordContinuesRedacted(t *testing.T) {
	rg := privacyRig(t, gateway.RecordConfig{Redact: gateway.RedactConfig{Builtin: true}})
	_, conv, _ := rg.secretExchange(t, nil)
	rg.drain(t) // writes the first exchange; a new gateway on the same store continues it
	rg2 := newRig(t, "openai-chat", func(o *gateway.Options) {
		o.Store = rg.st
		o.Config.Record = gateway.RecordConfig{Redact: gateway.RedactConfig{Builtin: true}}
	})
	rg2.up.stream = []byte(secretReply)
	reply := wantReply(t, "openai-chat", []byte(secretReply), true)
	h := convo.History{convo.User("I am alice@example.org, card 4111 1111 1111 1111"), reply, convo.User("thanks")}
	resp := rg2.post(t, "openai-chat", "m-1", requestBody(t, "openai-chat", "m-1", h, true), true, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := resp.Header.Get("Convo-Conversation"); got != conv {
		t.Errorf("second turn recorded in %s, want %s", got, conv)
	}
	rg2.drain(t)
}

func TestRecordTokenDefault(t *testing.T) {
	sum := sha256.Sum256([]byte(token))
	rc := gateway.RecordConfig{Tokens: map[string]string{hex.EncodeToString(sum[:]): "off"}}
	rg := privacyRig(t, rc)
	_, offConv, _ := rg.secretExchange(t, nil)
	_, fullConv, _ := rg.secretExchange(t, map[string]string{"Convo-Record": "full"})
	rg.drain(t)
	ctx := context.Background()
	if _, err := rg.st.Get(ctx, tenant, offConv); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("token default off: conversation stored (%v)", err)
	}
	stored, _, err := rg.st.Load(ctx, tenant, fullConv, 0)
	if err != nil || len(stored) != 2 || !strings.Contains(stored[0].Text(), "alice@example.org") {
		t.Errorf("header full over token default off: %v %v (no redaction configured: kept as sent)", roles(stored), err)
	}

	rg = privacyRig(t, gateway.RecordConfig{})
	body, _, resp := rg.secretExchange(t, map[string]string{"Convo-Record": "everything"})
	if resp.StatusCode != 400 || !strings.Contains(string(body), "Convo-Record") {
		t.Errorf("bad header: %d %s", resp.StatusCode, body)
	}
}

func TestRecordConfigErrors(t *testing.T) {
	st := newRig(t, "ollama", nil).st
	for _, rc := range []gateway.RecordConfig{
		{Default: "some"},
		{Tokens: map[string]string{"abc": "off"}},
		{Redact: gateway.RedactConfig{Rules: []gateway.RedactRule{{Name: "x", Pattern: "("}}}},
	} {
		cfg := gateway.Config{Upstreams: []gateway.Upstream{{Name: "u", Protocol: "ollama", URL: "http://127.0.0.1:1"}},
			Routes: []gateway.Route{{Model: "*", Upstream: "u"}}, Record: rc}
		if _, err := gateway.New(gateway.Options{Config: cfg, Store: st, Anonymous: true}); err == nil || !strings.Contains(err.Error(), "record.") {
			t.Errorf("%+v: %v, want an error naming the record member", rc, err)
		}
	}
}
