package all

import (
	"encoding/json"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// TestRequestCandidatesCross: the number of candidates crosses a whole
// request conversion between the two formats that can ask for several —
// a Chat request with n = 3 reaches Gemini as candidateCount 3 and comes
// back as n = 3 — and every other format leaves it out with a
// candidates-dropped warning, never silently.
func TestRequestCandidatesCross(t *testing.T) {
	chatBody := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Explain LLMs to a child"}],"n":3}`)
	chat, _ := LookupRequest("openai-chat")
	gem, _ := LookupRequest("gemini")
	r, warns, err := chat.DecodeRequest(chatBody, provider.Options{})
	if err != nil || len(warns) > 0 || r.Candidates != 3 {
		t.Fatalf("chat decode: candidates %d, %v, %v", r.Candidates, warns, err)
	}
	gBody, warns, err := gem.EncodeRequest(r, provider.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatalf("to gemini: %v, %v", warns, err)
	}
	var g struct {
		GenerationConfig struct {
			CandidateCount *int `json:"candidateCount"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(gBody, &g); err != nil || g.GenerationConfig.CandidateCount == nil || *g.GenerationConfig.CandidateCount != 3 {
		t.Fatalf("gemini body has no candidateCount 3: %s", gBody)
	}
	back, warns, err := gem.DecodeRequest(gBody, provider.Options{})
	if err != nil || len(warns) > 0 || back.Candidates != 3 {
		t.Fatalf("gemini decode: candidates %d, %v, %v", back.Candidates, warns, err)
	}
	back.Model = r.Model // Gemini carries the model in the URL
	out, warns, err := chat.EncodeRequest(back, provider.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatalf("back to chat: %v, %v", warns, err)
	}
	if !sameJSON(t, out, chatBody) {
		t.Errorf("chat → gemini → chat:\n got %s\nwant %s", out, chatBody)
	}
	// Same format, same bytes.
	if out, _, _ := chat.EncodeRequest(r, provider.Options{}); string(out) != string(chatBody) {
		t.Errorf("chat round trip:\n got %s\nwant %s", out, chatBody)
	}
	if out, _, _ := gem.EncodeRequest(back, provider.Options{}); string(out) != string(gBody) {
		t.Errorf("gemini round trip:\n got %s\nwant %s", out, gBody)
	}

	for _, name := range []string{"openai-responses", "anthropic", "ollama", "bedrock", "litert"} {
		to, err := LookupRequest(name)
		if err != nil {
			t.Fatal(err)
		}
		req := &provider.Request{Model: "m", History: convo.History{convo.User("hi")}, Candidates: 3, MaxTokens: 10}
		_, warns, err := to.EncodeRequest(req, provider.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !hasCode(warns, "candidates", provider.CodeCandidatesDropped) {
			t.Errorf("%s: no candidates-dropped warning: %v", name, warns)
		}
		if _, warns, _ := to.EncodeRequest(req, provider.Options{Accept: []provider.Code{provider.CodeCandidatesDropped}}); hasCode(warns, "candidates", provider.CodeCandidatesDropped) {
			t.Errorf("%s: the accepted loss is still warned about: %v", name, warns)
		}
		// One candidate is the only reply any format gives: nothing lost.
		req.Candidates = 1
		if _, warns, _ := to.EncodeRequest(req, provider.Options{}); hasCode(warns, "candidates", provider.CodeCandidatesDropped) {
			t.Errorf("%s: a warning for one candidate: %v", name, warns)
		}
	}
}

func hasCode(warns []provider.Warning, path string, code provider.Code) bool {
	for _, w := range warns {
		if w.Path == path && w.Code == code {
			return true
		}
	}
	return false
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}
