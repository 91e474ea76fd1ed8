package background

import (
	"syscall"
	"unsafe"
)

// lower raises the nice value of the calling thread by Nice. Linux keeps
// a nice value for each thread, which setpriority(2) sets when given the
// thread's id. An error (a system that forbids it) leaves it as it was.
func lower() {
	if nice, err := ThreadNice(); err == nil {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), min(nice+Nice, 19))
	}
}

// ThreadNice returns the nice value of the thread the calling goroutine
// runs on (lock the goroutine to it for a value that stays its own).
func ThreadNice() (int, error) {
	// The system call answers 20 − nice, so that it is never negative.
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	return 20 - prio, err
}

// schedIdle is Linux's SCHED_IDLE scheduling policy (sched(7)).
const schedIdle = 5

// idle sets the calling thread's scheduling policy to SCHED_IDLE, which
// any thread may do to itself (sched_setscheduler(2) on the thread's id),
// or raises its nice value as lower does where that is refused.
func idle() {
	var param struct{ priority int32 } // SCHED_IDLE's static priority is 0
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(syscall.Gettid()), schedIdle, uintptr(unsafe.Pointer(&param))); e != 0 {
		lower()
	}
}

// firstThread reports whether the calling thread is the process's first,
// whose thread id is the process id.
func firstThread() bool { return syscall.Gettid() == syscall.Getpid() }
