package server_test

import (
	"strings"
	"testing"

	"github.com/convo-go/convo/store"
)

// TestCreateFromCanonicalDocument: a canonical document as export writes
// it is a create request; a "format" other than convo/v1 is refused with
// what to do.
func TestCreateFromCanonicalDocument(t *testing.T) {
	each(t, func(t *testing.T, open func(t *testing.T) store.Store) {
		ts := newServer(t, open(t), nil)
		var c conversation
		ts.do(t, "POST", "/convo/v1/conversations", ts.alice, `{"format":"convo/v1","messages":[`+userHi+`]}`).want(t, 201).decode(t, &c)
		if c.Messages != 1 {
			t.Errorf("%+v", c)
		}
		p := ts.do(t, "POST", "/convo/v1/conversations", ts.alice, `{"format":"anthropic","messages":[`+userHi+`]}`).problem(t, 400, "bad-request")
		if !strings.Contains(p.Detail, `"anthropic" is not a canonical document`) {
			t.Errorf("detail %q", p.Detail)
		}
	})
}
