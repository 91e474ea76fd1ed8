package all_test

import (
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// TestEncodeReplies: a format with candidates gets every reply, one with a
// single reply the first and a warning.
func TestEncodeReplies(t *testing.T) {
	ms := []convo.Message{
		{Role: convo.RoleAssistant, Parts: []convo.Part{{Type: convo.TypeText, Text: "one"}}, Finish: convo.FinishStop},
		{Role: convo.RoleAssistant, Parts: []convo.Part{{Type: convo.TypeText, Text: "two"}}, Finish: convo.FinishLength},
	}
	for _, f := range all.Formats() {
		name := f.Name()
		body, warns, err := all.EncodeReplies(name, ms, provider.StreamOptions{Model: "m"})
		if err != nil {
			continue // no reply encoder for this format
		}
		rc, err := all.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := provider.DecodeReplies(rc, body, provider.Options{})
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, body)
			continue
		}
		want := 1
		if all.StreamsCandidates(name) {
			want = 2
		}
		if len(got) != want || (want == 1) != (len(warns) == 1) {
			t.Errorf("%s: %d replies, %v", name, len(got), warns)
			continue
		}
		for k := range got {
			if got[k].Text() != ms[k].Text() || got[k].Finish != ms[k].Finish {
				t.Errorf("%s: reply %d is %q %q", name, k, got[k].Text(), got[k].Finish)
			}
		}
	}
	if !all.StreamsCandidates("gemini") || all.StreamsCandidates("anthropic") {
		t.Error("StreamsCandidates")
	}
	if _, _, err := all.EncodeReplies("gemini", nil, provider.StreamOptions{}); err == nil {
		t.Error("no replies encoded")
	}
	if _, _, err := all.EncodeReplies("nope", ms, provider.StreamOptions{}); err == nil {
		t.Error("unknown format encoded")
	}
}
