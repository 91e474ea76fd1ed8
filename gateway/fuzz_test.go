package gateway

import (
	"strings"
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// FuzzRequestPeek: any request body gives a model and stream flag or an
// error, never a panic.
func FuzzRequestPeek(f *testing.F) {
	f.Add([]byte(`{"model":"claude-x","stream":true,"messages":[]}`))
	f.Add([]byte(`{"model":1,"stream":"yes"}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"model":"gpt-x","n":3,"messages":[]}`))
	f.Add([]byte(`{"contents":[],"generationConfig":{"temperature":1,"candidateCount":2}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		model, stream, n, err := peek(body)
		if err != nil && (model != "" || stream != nil || n != 0) {
			t.Fatalf("error %v with a result", err)
		}
	})
}

// TestPeekCandidates: the number of replies a request asks for is read
// from OpenAI Chat n and Gemini generationConfig.candidateCount; any other
// value is left to the upstream to judge.
func TestPeekCandidates(t *testing.T) {
	for body, want := range map[string]int64{
		`{"model":"m","messages":[],"n":3}`:                                3,
		`{"contents":[],"generationConfig":{"topK":3,"candidateCount":4}}`: 4,
		`{"contents":[],"generation_config":{"candidate_count":2}}`:        2,
		`{"model":"m","messages":[]}`:                                      0,
		`{"model":"m","n":"3"}`:                                            0,
		`{"model":"m","n":2.5}`:                                            0,
		`{"model":"m","generationConfig":[{"candidateCount":2}]}`:          0,
		`{"model":"m","options":{"n":7},"generationConfig":{"seed":1}}`:    0,
	} {
		_, _, n, err := peek([]byte(body))
		if err != nil || n != want {
			t.Errorf("%s: %d, %v; want %d", body, n, err, want)
		}
	}
	if _, _, _, err := peek([]byte(`{"n":3,"generationConfig":{"candidateCount":}}`)); err == nil {
		t.Error("a malformed body: no error")
	}
}

// FuzzConfigFlags: any --upstream or --route value parses or is refused
// with its text in the error.
func FuzzConfigFlags(f *testing.F) {
	f.Add("a=anthropic@https://api.anthropic.com,key-env=K")
	f.Add("gpt-*=openai")
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := ParseUpstream(s); err != nil && !strings.Contains(err.Error(), "want NAME=PROTOCOL@URL") {
			t.Fatal(err)
		}
		if _, err := ParseRoute(s); err != nil && !strings.Contains(err.Error(), "want MODEL_GLOB=UPSTREAM") {
			t.Fatal(err)
		}
		_, _ = ParseConfig(strings.NewReader(s))
	})
}

// FuzzFingerprint: any request body a client protocol decodes has a
// fingerprint per prefix that ends with an assistant turn, longest first,
// and the whole history's fingerprint extends the longest prefix's chain.
func FuzzFingerprint(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},{"role":"tool","tool_call_id":"c","content":"1"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for name := range protocols {
			c, err := all.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			h, _, err := c.Decode(body, provider.Options{Repair: true})
			if err != nil {
				continue
			}
			loose := protocols[name].looseIDs
			tr := prefixes(h, loose)
			sums, lens := tr.sums, tr.lens
			if len(sums) != len(lens) {
				t.Fatal("prefixes and lengths differ in number")
			}
			for i := range lens {
				if lens[i] < 1 || lens[i] > len(h) || (i > 0 && lens[i] >= lens[i-1]) {
					t.Fatalf("lengths %v for %d messages", lens, len(h))
				}
				if fingerprint(h[:lens[i]], loose) != sums[i] {
					t.Fatalf("prefix %d: fingerprint differs from the history's", lens[i])
				}
			}
		}
	})
}

// FuzzResponseID: the id of a translated Responses reply gives back the
// conversation and message it was made of, whatever the conversation's id,
// and reading any string as one never panics.
func FuzzResponseID(f *testing.F) {
	f.Add("conv_0193a7c1e5f24b6c8d9e0f1a2b3c4d5e", "msg_0193a7c1e5f24b6c")
	f.Add("loop.1", "msg_x.y")
	f.Add("", "resp_68af0c2a")
	f.Fuzz(func(t *testing.T, conv, msg string) {
		parseResponseID(conv) // any string
		if conv == "" || !strings.HasPrefix(msg, "msg_") {
			return
		}
		c, m, ok := parseResponseID(responseID(conv, msg))
		if !ok || c != conv || m != msg {
			t.Fatalf("%q %q came back as %q %q %v", conv, msg, c, m, ok)
		}
	})
}
