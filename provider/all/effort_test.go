package all_test

import (
	"bytes"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// TestEffortOnlyMessage: an assistant message that only records an effort
// change is left out by every encoder the same way: the request is the one
// made without it, byte for byte, with no warning (it is not an empty turn,
// and nothing the user wrote is lost).
func TestEffortOnlyMessage(t *testing.T) {
	without := convo.History{convo.User("hi"), convo.Assistant("Hello."), convo.User("Think harder.")}
	for _, at := range []int{0, 1, 2, 3} {
		with := append(append(append(convo.History{}, without[:at]...), convo.Message{Role: convo.RoleAssistant, Effort: "high"}), without[at:]...)
		for _, f := range all.Formats() {
			want, wwarns, err := f.Encode(without, provider.Options{})
			if err != nil {
				t.Fatalf("%s: %v", f.Name(), err)
			}
			got, warns, err := f.Encode(with, provider.Options{})
			if err != nil {
				t.Fatalf("%s, effort message at %d: %v", f.Name(), at, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s, effort message at %d:\n got %s\nwant %s", f.Name(), at, got, want)
			}
			if len(warns) != len(wwarns) {
				t.Errorf("%s, effort message at %d: warnings %v, want %v", f.Name(), at, warns, wwarns)
			}
		}
	}
}
