package tokens

import (
	"slices"
	"testing"

	"github.com/convo-go/convo"
)

// TestProgress: Count reports every message counted, Cheap only those it
// counts after the usage baseline.
func TestProgress(t *testing.T) {
	var got []int
	c, err := NewCounter("gpt-4o", Options{Progress: func(done int) { got = append(got, done) }})
	if err != nil {
		t.Fatal(err)
	}
	a := convo.Assistant("Hi.")
	a.Usage = &convo.Usage{Input: 10, Output: 3}
	h := convo.History{convo.System("Be brief."), convo.User("Hello"), a, convo.User("Again")}
	c.Count(h)
	if want := []int{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("Count reported %v, want %v", got, want)
	}
	got = nil
	c.Cheap(h)
	if want := []int{4}; !slices.Equal(got, want) {
		t.Errorf("Cheap reported %v, want %v", got, want)
	}
}
