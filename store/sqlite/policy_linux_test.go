package sqlite

import "syscall"

// schedIdle is Linux's SCHED_IDLE scheduling policy (sched(7)).
const schedIdle = 5

// threadPolicy returns the scheduling policy of the calling thread, -1 if
// it cannot be read.
func threadPolicy() int {
	p, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, 0, 0, 0)
	if e != 0 {
		return -1
	}
	return int(p)
}
