package gateway

import (
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// TestCompact: a queued record keeps a short request's bytes instead of
// its decoded new messages, and the writer gets the same messages (under
// the ids the response named) back from them; a long history, of which
// only the last turn is new, keeps the decoded messages.
func TestCompact(t *testing.T) {
	codec, _ := all.Lookup("anthropic")
	long := convo.History{convo.User(strings.Repeat("a long question ", 200)), convo.Assistant(strings.Repeat("a long answer ", 200))}
	for _, c := range []struct {
		name    string
		h       convo.History
		skip    int
		compact bool
	}{
		{"short", convo.History{convo.System("Be brief."), convo.User("Weather in Paris?")}, 0, true},
		{"long history", append(long, convo.User("And tomorrow?")), 2, false},
	} {
		body, _, err := codec.Encode(c.h, provider.Options{Repair: true})
		if err != nil {
			t.Fatal(err)
		}
		h, _, err := codec.Decode(body, provider.Options{Repair: true})
		if err != nil {
			t.Fatal(err)
		}
		rec := &record{req: body, client: protocols["anthropic"], skip: c.skip}
		for i, m := range h[c.skip:] {
			m.ID = "msg_" + string(rune('a'+i))
			rec.msgs = append(rec.msgs, m)
		}
		want := append([]convo.Message(nil), rec.msgs...)
		before := rec.footprint()
		rec.compact()
		if got := rec.msgs == nil; got != c.compact {
			t.Errorf("%s: compacted %v, want %v", c.name, got, c.compact)
		}
		if after := rec.footprint(); after > before {
			t.Errorf("%s: footprint grew from %d to %d", c.name, before, after)
		}
		got, err := rec.messages()
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: messages %+v, %v; want %+v", c.name, got, err, want)
		}
	}
}
