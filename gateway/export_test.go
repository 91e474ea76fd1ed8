package gateway

import "time"

// The tests take down a store for moments: the replayer tries it again
// sooner than in production, so they wait less.
func init() { retryMax = 500 * time.Millisecond }
