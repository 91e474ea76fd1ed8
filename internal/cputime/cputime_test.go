package cputime

import (
	"testing"
	"time"
)

// TestProcessAdvances: spinning for a while shows as CPU time (where the
// system tells it at all).
func TestProcessAdvances(t *testing.T) {
	start := Process()
	if start == 0 {
		t.Skip("no CPU time on this system")
	}
	x := 0
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		x++
	}
	if Process() <= start {
		t.Errorf("CPU time did not advance over 50 ms of work (%d iterations)", x)
	}
}
