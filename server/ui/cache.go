package ui

import "sync"

// statsKey names a conversation. Its creation time tells a conversation
// from a later one that reuses its id (and starts at version 1 again).
type statsKey struct {
	tenant, id string
	created    int64
}

type statsEntry struct {
	version int64
	count   int    // messages summed
	lastID  string // the id of the last of them
	stats   stats
}

// statsCache keeps the stats of conversations by version: a version
// changes with every change to the messages, so an entry is never stale.
// When full it forgets everything, which costs one load per conversation
// shown afterwards and needs no bookkeeping per hit.
type statsCache struct {
	mu  sync.Mutex
	max int
	m   map[statsKey]statsEntry
}

func newStatsCache(max int) *statsCache {
	return &statsCache{max: max, m: map[statsKey]statsEntry{}}
}

// get returns the entry of k, if any: current when its version is the
// conversation's.
func (c *statsCache) get(k statsKey) (statsEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	return e, ok
}

func (c *statsCache) put(k statsKey, e statsEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = e
}
