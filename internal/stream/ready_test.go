package stream

import (
	"errors"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chunked returns data in pieces of 1 to 97 bytes, as a network delivers
// a stream, and fails the test when it is read while forbid is set.
type chunked struct {
	t      *testing.T
	data   []byte
	rng    *rand.Rand
	forbid bool
	name   string
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.forbid {
		c.t.Errorf("%s: Ready said the next event was buffered, but Next read from the network", c.name)
		c.forbid = false
	}
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.data), 1+c.rng.Intn(97))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// TestReady reads every recorded stream in pieces of random sizes and
// checks that when Ready reports the next event buffered, Next does not
// read, and that Ready does report it when the whole stream is buffered.
func TestReady(t *testing.T) {
	type readySource interface {
		Source
		Ready() bool
	}
	framings := []struct {
		glob string
		open func(io.Reader) readySource
	}{
		{"../../provider/*/testdata/*/*.sse", func(r io.Reader) readySource { return NewSSE(r) }},
		{"../../provider/*/testdata/*/*/*.sse", func(r io.Reader) readySource { return NewSSE(r) }},
		{"../../provider/*/testdata/*/*.ndjson", func(r io.Reader) readySource { return NewNDJSON(r) }},
		{"../../provider/*/testdata/*/*.jsonl", func(r io.Reader) readySource { return NewNDJSON(r) }},
		{"../../provider/bedrock/testdata/*/*.bin", func(r io.Reader) readySource { return NewEventStream(r) }},
		{"testdata/eventstream/*.bin", func(r io.Reader) readySource { return NewEventStream(r) }},
	}
	// Line ends of every kind, comments, events without data.
	extra := []string{
		"data: a\r\n\r\n: c\r\n\r\nevent: x\r\n\r\ndata: b\r\rdata\n\n",
		":ping\n\n:ping\n\ndata: z\n\n",
	}
	n := 0
	for _, f := range framings {
		files, _ := filepath.Glob(f.glob)
		var inputs [][]byte
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, data)
		}
		if strings.HasSuffix(f.glob, "/*.sse") && !strings.Contains(f.glob, "*/*/*") {
			for _, s := range extra {
				inputs = append(inputs, []byte(s))
				files = append(files, "extra")
			}
		}
		for i, data := range inputs {
			n++
			for seed := int64(0); seed < 20; seed++ {
				c := &chunked{t: t, data: data, rng: rand.New(rand.NewSource(seed)), name: files[i]}
				src := f.open(c)
				for {
					c.forbid = src.Ready()
					_, err := src.Next()
					c.forbid = false
					if err != nil {
						break
					}
				}
			}
			if len(data) > bufSize {
				continue
			}
			// Whole in the buffer: after the first read every event but
			// the first is buffered.
			src := f.open(strings.NewReader(string(data)))
			events, ready := 0, 0
			for {
				r := src.Ready()
				if _, err := src.Next(); err != nil {
					if !errors.Is(err, io.EOF) {
						events-- // a stream cut or failing at its end
					}
					break
				}
				events++
				if r {
					ready++
				}
			}
			if events > 1 && ready < events-1 {
				t.Errorf("%s: whole in the buffer, Ready for %d of %d events", files[i], ready, events)
			}
		}
	}
	if n < 40 {
		t.Errorf("only %d recorded streams found", n)
	}
}
