package background_test

import (
	"testing"

	"github.com/convo-go/convo/internal/background"
)

// TestDoPanics checks that a panic in the function Do runs reaches Do's
// caller with its value, and that the Worker runs the next one.
func TestDoPanics(t *testing.T) {
	w := background.New()
	defer w.Stop()
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want boom", r)
			}
		}()
		w.Do(func() { panic("boom") })
		t.Error("Do returned after a panic")
	}()
	ran := false
	w.Do(func() { ran = true })
	if !ran {
		t.Error("the Worker did not run the function after a panic")
	}
}

// TestDoAllocates checks that Do allocates nothing of its own: the
// recorder and the store call it for every batch they write.
func TestDoAllocates(t *testing.T) {
	w := background.New()
	defer w.Stop()
	n := 0
	f := func() { n++ }
	if a := testing.AllocsPerRun(100, func() { w.Do(f) }); a != 0 {
		t.Errorf("Do allocated %v times a call", a)
	}
	if n != 101 {
		t.Errorf("f ran %d times, want 101", n)
	}
}

// TestStopUnused: a Worker whose Do was never called has no thread to end,
// and Stop returns at once.
func TestStopUnused(t *testing.T) {
	for _, w := range []*background.Worker{background.New(), background.NewIdle()} {
		w.Stop()
	}
}
