//go:build race

package gateway_test

// raceEnabled: the race detector's build allocates for its own
// bookkeeping, so allocation counts mean nothing there.
const raceEnabled = true
