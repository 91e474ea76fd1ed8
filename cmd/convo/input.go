package main

import (
	"errors"
	"fmt"
	"io"
	"os"
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
