package backend

import (
	"errors"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// TestPreamble: the checks both backends make before asking their
// database refuse with the store's errors.
func TestPreamble(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"unstorable id", Find("t", "a\x00b"), store.ErrNotFound},
		{"unstorable tenant", Find("\xff", "a"), store.ErrNotFound},
		{"unstorable message id", FindMessage("t", "a", "m\x00"), store.ErrNotFound},
		{"stale version", CheckVersion("a", 3, 2), store.ErrConflict},
		{"negative start", CheckLoad("t", "a", -1), store.ErrInvalid},
		{"long title", func() error {
			long := string(make([]byte, store.MaxTitleBytes+1))
			_, err := PrepareUpdate("t", "a", &long, nil)
			return err
		}(), store.ErrInvalid},
		{"unanswered call", func() error {
			_, err := PrepareCreate(store.Conversation{Tenant: "t"}, []convo.Message{convo.User("hi"), convo.ToolResults(convo.ToolResult("c1", "f", "x"))}, 0)
			return err
		}(), store.ErrInvalid},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	for _, err := range []error{Find("t", "a"), FindMessage("t", "a", "m"), CheckVersion("a", 3, 3), CheckVersion("a", 3, store.AnyVersion), CheckLoad("t", "a", 0)} {
		if err != nil {
			t.Errorf("refused: %v", err)
		}
	}
	for _, tc := range []struct{ from, n, messages, want int }{
		{0, -1, 5, 5}, {2, 10, 5, 3}, {2, 2, 5, 2}, {7, 1, 5, 0}, {5, -1, 5, 0},
	} {
		if got := Span(tc.from, tc.n, tc.messages); got != tc.want {
			t.Errorf("Span(%d, %d, %d) = %d, want %d", tc.from, tc.n, tc.messages, got, tc.want)
		}
	}
	cr, err := PrepareCreate(store.Conversation{Tenant: "t", ID: "c"}, []convo.Message{convo.User("hi")}, 0)
	if err != nil || cr.Conversation.Version != 1 || cr.Conversation.Messages != 1 || len(cr.Rows) != 1 || cr.Conversation.Created.IsZero() {
		t.Errorf("PrepareCreate: %+v, %v", cr.Conversation, err)
	}
}
