package wire

import (
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

func TestEncode(t *testing.T) {
	target := provider.Target{Provider: "p", PlainReasoning: true}
	h := convo.History{convo.User("hi"), {Role: convo.RoleError, Parts: []convo.Part{convo.Text("boom")}}}
	own := []provider.Warning{provider.Warnf("messages[0]", "own")}
	enc := func(dst []byte, ph convo.History, from []int) ([]byte, error) {
		if len(ph) != 1 || len(from) != 1 || from[0] != 0 {
			return nil, errors.New("unexpected prepared history")
		}
		return append(dst, "body"...), nil
	}
	out, warns, err := Encode(nil, h, target, provider.Options{}, own, enc)
	if err != nil || string(out) != "body" || len(warns) != 2 || warns[1].Msg != "own" {
		t.Fatalf("lenient: %s, %v, %v", out, warns, err)
	}
	// Under Strict, Prepare's warning fails the encoding with the format's
	// own listed after it; so does the format's own alone.
	var se *provider.StrictError
	_, warns, err = Encode(nil, h, target, provider.Options{Strict: true}, own, enc)
	if !errors.As(err, &se) || len(se.Warnings) != 2 || len(warns) != 2 {
		t.Errorf("strict with Prepare's warning: %v, %v", err, warns)
	}
	_, _, err = Encode(nil, h[:1], target, provider.Options{Strict: true}, own, enc)
	if !errors.As(err, &se) || len(se.Warnings) != 1 {
		t.Errorf("strict with the format's own warning: %v", err)
	}
	// The mapping's error comes back as it is.
	failing := func([]byte, convo.History, []int) ([]byte, error) { return nil, errors.New("mapping failed") }
	if _, _, err := Encode(nil, h[:1], target, provider.Options{}, nil, failing); err == nil || err.Error() != "mapping failed" {
		t.Errorf("mapping error: %v", err)
	}
	// As does an error of Prepare's own.
	unpaired := convo.History{convo.User("q"), convo.Assistant("", convo.ToolCall("c1", "f", nil)), convo.User("next")}
	if _, _, err := Encode(nil, unpaired, target, provider.Options{}, nil, enc); err == nil || !strings.Contains(err.Error(), "messages[1]") {
		t.Errorf("Prepare error: %v", err)
	}
}

func TestPlaceOf(t *testing.T) {
	from := []int{0, 3, -1}
	for k, want := range []string{"messages[0]", "messages[3]", "inserted message", "inserted message"} {
		if got := PlaceOf(from, k); got != want {
			t.Errorf("PlaceOf(%v, %d) = %q, want %q", from, k, got, want)
		}
	}
}

func TestKeptReasoning(t *testing.T) {
	own := convo.Part{Type: convo.TypeReasoning, Provider: "p", Encrypted: "x"}
	foreign := convo.Part{Type: convo.TypeReasoning, Provider: "q", Text: "hm", Signature: "s"}
	summary := convo.Part{Type: convo.TypeReasoning, Provider: "q", Summary: []string{"hm"}}
	sealed := convo.Part{Type: convo.TypeReasoning, Provider: "q", Encrypted: "x"}
	text := provider.Options{Reasoning: provider.ReasoningText}
	for _, tc := range []struct {
		p    convo.Part
		opts provider.Options
		want bool
	}{
		{own, provider.Options{}, true}, {own, text, true},
		{foreign, provider.Options{}, true}, {foreign, text, false},
		{summary, provider.Options{}, true}, {sealed, provider.Options{}, false},
	} {
		if got := KeptReasoning(&tc.p, "p", tc.opts); got != tc.want {
			t.Errorf("KeptReasoning(%+v, %+v) = %v, want %v", tc.p, tc.opts, got, tc.want)
		}
	}
}
