package gateway

import "time"

// The tests take down a store for moments: the replayer tries it again
// sooner than in production, so they wait less.
func init() { retryMax = 500 * time.Millisecond }

// SetLiveFrom sets how long a streamed reply grows before the rest is
// folded as it arrives, until the test ends.
func SetLiveFrom(t interface{ Cleanup(func()) }, n int64) {
	was := liveFrom
	liveFrom = n
	t.Cleanup(func() { liveFrom = was })
}

// QueuedBytes returns the bytes of the records the recording queue holds,
// which the writer lets go once it has written them (after it counts them
// Recorded).
func QueuedBytes(g *Gateway) int64 {
	g.rec.mu.Lock()
	defer g.rec.mu.Unlock()
	return g.rec.bytes
}
