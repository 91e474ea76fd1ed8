package background_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/convo-go/convo/internal/background"
)

// The main goroutine stays on the process's first thread until TestMain.
func init() { runtime.LockOSThread() }

// firstTids are the threads of the first Workers, started by the main
// goroutine on the process's first thread, as a server's main goroutine
// starts them.
var firstTids []int

// firstNice and firstPolicy are the first thread's before any Worker.
var firstNice, firstPolicy int

func TestMain(m *testing.M) {
	firstNice, _ = background.ThreadNice()
	firstPolicy, _ = policyOf(syscall.Getpid())
	// Unlocked, the first thread is free to run the Worker's goroutine,
	// which Start made ready to run next.
	runtime.UnlockOSThread()
	for _, start := range []func() *background.Worker{background.New, background.NewIdle} {
		w := start()
		var tid int
		w.Do(func() { tid = syscall.Gettid() })
		w.Stop()
		firstTids = append(firstTids, tid)
	}
	os.Exit(m.Run())
}

// TestNotOnFirstThread: a Worker never takes the process's first thread,
// whose nice value and policy ps and top show as the process's (and which
// Go never ends, so it would keep them).
func TestNotOnFirstThread(t *testing.T) {
	for i, tid := range firstTids {
		if tid == syscall.Getpid() {
			t.Errorf("Worker %d ran on the process's first thread", i)
		}
	}
	if p, err := policyOf(syscall.Getpid()); err != nil || p != firstPolicy {
		t.Errorf("the first thread's policy is %d (%v), want %d", p, err, firstPolicy)
	}
	if n, err := niceOf(syscall.Getpid()); err != nil || n != firstNice {
		t.Errorf("the first thread's nice value is %d (%v), want %d", n, err, firstNice)
	}
}

// niceOf is the nice value of the thread tid of this process, from its
// /proc entry. It reports an error rather than fail the test: it is
// called on the Worker's thread, which a t.Fatal would end.
func niceOf(tid int) (int, error) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return 0, err
	}
	// After the command's name in parentheses, nice is the 17th field.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	return strconv.Atoi(f[16])
}

// TestDoLowersPriority checks that Do runs its function on a thread of its
// own whose nice value is Nice above the caller's (at most 19), and that
// the caller's thread keeps its own.
func TestDoLowersPriority(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	me := syscall.Gettid()
	base, err := niceOf(me)
	if err != nil {
		t.Fatal(err)
	}
	w := background.New()
	defer w.Stop()
	for range 3 { // the same thread each time
		var tid, nice, told int
		var err error
		w.Do(func() {
			tid = syscall.Gettid()
			nice, err = niceOf(tid)
			told, _ = background.ThreadNice()
		})
		if err != nil {
			t.Fatal(err)
		}
		if told != nice {
			t.Errorf("ThreadNice says %d, /proc %d", told, nice)
		}
		if tid == me || nice != min(base+background.Nice, 19) {
			t.Fatalf("ran on thread %d (the caller's %d) of nice %d; want another of nice %d", tid, me, nice, min(base+background.Nice, 19))
		}
	}
	if n, _ := niceOf(me); n != base {
		t.Errorf("the caller's thread's nice value went from %d to %d", base, n)
	}
}

// policyOf returns the scheduling policy of thread tid (sched(7)).
func policyOf(tid int) (int, error) {
	p, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(p), nil
}

func TestNewIdle(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	me := syscall.Gettid()
	w := background.NewIdle()
	defer w.Stop()
	for range 3 { // the same thread each time
		var tid, policy int
		var err error
		w.Do(func() {
			tid = syscall.Gettid()
			policy, err = policyOf(tid)
		})
		if err != nil {
			t.Fatal(err)
		}
		if tid == me || policy != 5 {
			t.Fatalf("ran on thread %d (the caller's %d) of policy %d; want another of policy 5 (SCHED_IDLE)", tid, me, policy)
		}
	}
	if p, err := policyOf(me); err != nil || p != 0 {
		t.Errorf("the caller's thread's policy is %d (%v), want 0 (SCHED_OTHER)", p, err)
	}
}
