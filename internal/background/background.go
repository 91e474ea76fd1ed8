// Package background runs work that no request waits for, such as
// recording an exchange already answered, on an operating-system thread
// of its own whose scheduling priority is lower than the process's other
// threads': while the processors are contended, the threads serving
// requests run first, and the work runs when they leave it room.
//
// A Worker from New runs at a raised nice value; one from NewIdle runs
// only on processor time nothing else wants. Its thread is started by its
// first Do, so that a Worker costs nothing until it is used. Lowering one thread's
// priority is possible on Linux; elsewhere a Worker's thread runs at the
// process's priority.
package background

import (
	"runtime"
	"sync"
)

// Nice is how much higher than the process's a Worker's thread's nice
// value is set (at most 19, the lowest priority). On Linux, a thread of
// nice 10 is given about a tenth of the processor time one of nice 0 is
// when both want it, and all of it when nothing else does.
const Nice = 10

// A Worker runs functions one at a time on its thread.
type Worker struct {
	lower   func()     // lowers the calling thread's priority
	once    sync.Once  // starts the thread, or (Stop) keeps it from starting
	begin   func()     // what once runs in Do: made once, so Do allocates nothing
	started bool       // the thread was started (by begin; read after once)
	mu      sync.Mutex // held by a Do from handing its function over to its result
	jobs    chan func()
	result  chan any // what the function panicked with, or nil
	done    chan struct{}
}

// New returns a Worker whose thread's nice value is Nice more than the
// process's.
func New() *Worker { return newWorker(lower) }

// NewIdle returns a Worker whose thread runs only when a processor has
// nothing else to run (Linux's SCHED_IDLE policy; New's nice value where
// the system refuses it). Linux then preempts the thread as soon as any
// other becomes ready, and places a thread that wakes up on a processor
// that runs only such a thread as if that processor were idle; a thread
// of nice 10 keeps its processor for the rest of its time slice. While
// the processors are busy the thread may wait for hundreds of
// milliseconds: give it work whose caller can wait that long, and run
// work that is falling behind elsewhere.
func NewIdle() *Worker { return newWorker(idle) }

func newWorker(lower func()) *Worker {
	w := &Worker{lower: lower, jobs: make(chan func()), result: make(chan any), done: make(chan struct{})}
	w.begin = func() {
		w.started = true
		go w.run()
	}
	return w
}

func (w *Worker) run() {
	runtime.LockOSThread()
	if firstThread() {
		// The process's first thread is the one ps and top show for the
		// process, and Go never ends it: lowered, the whole process would
		// look lowered, and stay so after Stop. Holding it, start the
		// loop on a goroutine that must take another thread.
		locked := make(chan struct{})
		go w.loop(locked)
		<-locked
		runtime.UnlockOSThread()
		return
	}
	w.loop(nil)
}

// loop runs the Worker's functions on a thread of its own, closing locked
// (when not nil) once it holds that thread.
func (w *Worker) loop(locked chan struct{}) {
	defer close(w.done)
	// Never unlocked: the thread ends with this goroutine, so its lowered
	// priority is never lent to another.
	runtime.LockOSThread()
	if locked != nil {
		close(locked)
	}
	w.lower()
	for f := range w.jobs {
		w.result <- call(f)
	}
}

// call runs f and returns what it panicked with, nil if it did not.
func call(f func()) (panicked any) {
	defer func() { panicked = recover() }()
	f()
	return nil
}

// Do runs f on the Worker's thread and returns once f has; calls from
// several goroutines run one after the other. A panic in f is raised again
// in Do's caller, with the value f panicked with. f must not end its
// goroutine (runtime.Goexit). Do allocates nothing.
func (w *Worker) Do(f func()) {
	w.once.Do(w.begin)
	w.mu.Lock()
	w.jobs <- f
	panicked := <-w.result
	w.mu.Unlock()
	if panicked != nil {
		panic(panicked)
	}
}

// Stop ends the Worker and its thread, if Do started it, once the
// function it runs, if any, has returned. Do must not be called after
// Stop.
func (w *Worker) Stop() {
	w.once.Do(func() {}) // not started: never to be
	if !w.started {
		return
	}
	close(w.jobs)
	<-w.done
}
