package tokens

import (
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestTallyStream: a streaming Tally emits, in order, exactly the counts
// Count gives for the whole history (turn-scoped system messages marked
// unsent once their turn ends included), and the same totals, while holding
// no more counts than the messages since the oldest open turn-scoped system
// message.
func TestTallyStream(t *testing.T) {
	c, err := NewCounter("gpt-4o", Options{})
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		h := rapid.SliceOfN(rapid.Custom(genMessage), 0, 30).Draw(t, "history")
		var got []MessageCount
		tl := c.Tally()
		tl.Stream(func(mc MessageCount) { got = append(got, mc) })
		for i, m := range h {
			tl.Add(m)
			held := len(tl.msgs)
			if len(tl.open) == 0 && held != 0 || len(tl.open) > 0 && held != i+1-tl.open[0] {
				t.Fatalf("after messages[%d]: %d counts held, open %v", i, held, tl.open)
			}
		}
		res := tl.Result()
		want := c.Count(h)
		if len(want.Messages) == 0 {
			want.Messages = nil
		}
		if !reflect.DeepEqual(got, want.Messages) && !(len(got) == 0 && len(want.Messages) == 0) {
			t.Fatalf("emitted %+v\nwant %+v", got, want.Messages)
		}
		want.Messages = nil
		if len(want.Warnings) == 0 {
			want.Warnings = nil
		}
		if len(res.Warnings) == 0 {
			res.Warnings = nil
		}
		if !reflect.DeepEqual(res, want) {
			t.Fatalf("result %+v\nwant %+v", res, want)
		}
		if tl.Len() != len(h) {
			t.Fatalf("Len %d of %d", tl.Len(), len(h))
		}
	})
}
