//go:build !linux

package sqlite

// schedIdle is Linux's SCHED_IDLE scheduling policy; elsewhere
// TestBackgroundWrites is skipped.
const schedIdle = 5

// threadPolicy returns -1: only Linux has a policy for each thread.
func threadPolicy() int { return -1 }
