package growth

import (
	"math"
	"testing"
)

func TestMedianSpread(t *testing.T) {
	for _, c := range []struct {
		xs             []float64
		median, spread float64
	}{
		{nil, 0, 0},
		{[]float64{5}, 5, 0},
		{[]float64{4, 2}, 3, 1.0 / 3},
		// Five rounds: the quartiles are the second and the fourth value,
		// so one slow round (1000) changes neither.
		{[]float64{100, 90, 110, 1000, 95}, 100, 0.075},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 5, 0.4},
	} {
		m, s := medianSpread(c.xs)
		if m != c.median || math.Abs(s-c.spread) > 1e-9 {
			t.Errorf("medianSpread(%v) = %v, %v; want %v, %v", c.xs, m, s, c.median, c.spread)
		}
	}
}

func TestFlatness(t *testing.T) {
	if f := flatness([]float64{100, 105, 110, 95}); math.Abs(f-110.0/95) > 1e-9 {
		t.Errorf("flatness = %v", f)
	}
	if f := flatness([]float64{0, 5}); f != 0 {
		t.Errorf("flatness with a zero = %v, want 0", f)
	}
}

// TestRoundOrder checks that every round runs every job once, each size's
// jobs together, and that the size that starts a round moves on.
func TestRoundOrder(t *testing.T) {
	var jobs []*job
	for _, n := range Sizes {
		jobs = append(jobs, &job{n: n, op: "decode"}, &job{n: n, op: "encode"})
	}
	for r := range len(Sizes) + 1 {
		got := roundOrder(jobs, r)
		if len(got) != len(jobs) {
			t.Fatalf("round %d: %d jobs, want %d", r, len(got), len(jobs))
		}
		seen := map[*job]bool{}
		for i, j := range got {
			seen[j] = true
			if i%2 == 1 && got[i-1].n != j.n {
				t.Errorf("round %d: a size's jobs are apart", r)
			}
		}
		if len(seen) != len(jobs) {
			t.Errorf("round %d: a job runs twice", r)
		}
		if want := Sizes[r%len(Sizes)]; got[0].n != want {
			t.Errorf("round %d starts with n=%d, want %d", r, got[0].n, want)
		}
	}
}
