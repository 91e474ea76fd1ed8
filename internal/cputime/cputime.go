// Package cputime reads the CPU time the process has used, for benchmarks
// that report it beside wall time: on a shared machine it is the steadier
// of the two.
package cputime

import "time"

// Process is the user and system CPU time the process has used so far,
// every thread included (the garbage collector's too); 0 where the system
// does not tell.
func Process() time.Duration { return process() }
