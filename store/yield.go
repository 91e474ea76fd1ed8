package store

import "context"

type yieldingKey struct{}

// Yielding returns a context that asks a store to give way, while it
// writes a Batch made under it, to the work of requests being served. It
// is for writes off any request's path, such as a recorder draining its
// queue: a batch of a hundred writes takes milliseconds of CPU, and on a
// machine with few cores the requests that became ready meanwhile would
// wait for all of it. SQLite runs such writes on a thread that runs only
// when a processor has nothing else to run (on Linux; see Store.writer in
// package sqlite), so such a Batch may wait long while the processors are
// busy. A writer that is falling behind should not ask: giving way, it
// would fall further. A backend that spends its time waiting on the
// network rather than computing may ignore it (PostgreSQL does).
func Yielding(ctx context.Context) context.Context {
	return context.WithValue(ctx, yieldingKey{}, true)
}

// Yields reports whether ctx asks a store to give way while it writes a
// Batch (see Yielding).
func Yields(ctx context.Context) bool {
	y, _ := ctx.Value(yieldingKey{}).(bool)
	return y
}
