//go:build race

package all

// raceEnabled: the race detector's build allocates a temporary for
// append(s, make([]T, n)...), which slices.Grow is, so allocation counts
// mean nothing there.
const raceEnabled = true
