package background

import "syscall"

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
