//go:build !linux

package growth

import "syscall"

// rusageThread falls back to the whole process where there is no
// RUSAGE_THREAD: the background collector is then charged where it ran.
const rusageThread = syscall.RUSAGE_SELF
