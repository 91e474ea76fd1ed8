package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
)

// errTooLarge marks input over a command's size limit.
var errTooLarge = errors.New("too large")

// openInput opens the file named by args[0], or stdin when there is none
// or it is "-". A file larger than limit is refused before any of it is
// read; stdin fails as soon as it passes the limit. done closes the file.
func (e *env) openInput(args []string, limit int64) (r io.Reader, name string, done func(), err error) {
	done = func() {}
	if len(args) == 0 || args[0] == "-" {
		return &limitedReader{r: e.stdin, name: "stdin", left: limit, limit: limit}, "stdin", done, nil
	}
	name = args[0]
	f, err := os.Open(name)
	if err != nil {
		return nil, name, done, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		f.Close()
		return nil, name, done, fmt.Errorf("%s is %s, more than the limit of %s (raise it with --max-size): %w", name, mib(fi.Size()), mib(limit), errTooLarge)
	}
	return &limitedReader{r: f, name: name, left: limit, limit: limit}, name, func() { f.Close() }, nil
}

// input reads the whole of what openInput opens.
func (e *env) input(args []string, limit int64) ([]byte, string, error) {
	r, name, done, err := e.openInput(args, limit)
	if err != nil {
		return nil, name, err
	}
	defer done()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, name, err
	}
	return b, name, nil
}

// limitedReader fails once more than limit bytes are read.
type limitedReader struct {
	r           io.Reader
	name        string
	left, limit int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, l.tooLarge()
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return 0, l.tooLarge()
	}
	if err != nil && err != io.EOF {
		err = fmt.Errorf("reading %s: %w", l.name, err)
	}
	return n, err
}

func (l *limitedReader) tooLarge() error {
	return fmt.Errorf("%s is more than the limit of %s (raise it with --max-size): %w", l.name, mib(l.limit), errTooLarge)
}

// sizeFlag is the value of --max-size in MiB.
type sizeFlag struct{ bytes int64 }

func (s *sizeFlag) String() string { return fmt.Sprint(s.bytes >> 20) }

func (s *sizeFlag) Set(v string) error {
	var n int64
	if _, err := fmt.Sscan(v, &n); err != nil || n <= 0 {
		return errors.New("want a positive number of MiB")
	}
	s.bytes = n << 20
	return nil
}

// meter shows how far a long read has got: on a terminal only (stderr),
// and only once the work has taken more than a second, redrawn in place at
// most five times a second and erased at the end.
type meter struct {
	w           io.Writer
	on, shown   bool
	start, last time.Time
	now         func() time.Time
	// verb says what is done to the messages: "read" when empty.
	verb string
}

func (e *env) newMeter() *meter {
	return &meter{w: e.stderr, on: isTerminalWriter(e.stderr), start: time.Now(), now: time.Now}
}

// update shows n messages and the bytes r has delivered so far.
func (m *meter) update(n int, r io.Reader) {
	if !m.on {
		return
	}
	t := m.now()
	if t.Sub(m.start) < time.Second || t.Sub(m.last) < 200*time.Millisecond {
		return
	}
	m.last, m.shown = t, true
	s := plural(n, "messages")
	if l, ok := r.(*limitedReader); ok {
		s += " (" + mib(l.limit-l.left) + ")"
	}
	verb := m.verb
	if verb == "" {
		verb = "read"
	}
	fmt.Fprintf(m.w, "\r%s %s\x1b[K", s, verb)
}

// counting returns the meter of counting messages: n of total counted.
func (e *env) counting(total int) (*meter, func(done int)) {
	m := e.newMeter()
	m.verb = "of " + strconv.Itoa(total) + " counted"
	// Fit counts again what it shortens: the count stops at the total.
	return m, func(done int) { m.update(min(done, total), nil) }
}

// done erases the progress line, if one was shown.
func (m *meter) done() {
	if m.shown {
		fmt.Fprint(m.w, "\r\x1b[K")
	}
}
