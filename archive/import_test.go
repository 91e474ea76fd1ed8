package archive

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convo-go/convo/internal/cputime"

	"github.com/convo-go/convo/store/sqlite"
)

// writeChatGPTExport writes a ChatGPT-style conversations.json of about
// size bytes: conversations of 40 messages of about 1 KiB each, every one
// with a regenerated answer (a fork). It writes as it goes, holding one
// conversation at a time.
func writeChatGPTExport(w io.Writer, size int64) (conversations int, err error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countingWriter{w: bw}
	text := strings.Repeat("lorem ipsum dolor sit amet ", 38)
	fmt.Fprint(cw, "[")
	for cw.n < size {
		if conversations > 0 {
			fmt.Fprint(cw, ",")
		}
		c := conversations
		fmt.Fprintf(cw, `{"title":"conversation %d","create_time":%d.5,"update_time":%d.5,"conversation_id":"gen-%d","current_node":"n39","mapping":{"root":{"id":"root","message":null,"parent":null,"children":["n0"]}`, c, 1.7e9+c, 1.7e9+c+60, c)
		for i := range 40 {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			parent := "root"
			if i > 0 {
				parent = "n" + strconv.Itoa(i-1)
			}
			fmt.Fprintf(cw, `,"n%d":{"id":"n%d","message":{"id":"n%d","author":{"role":%q},"create_time":%d,"content":{"content_type":"text","parts":["%d: %s"]},"metadata":{"model_slug":"gpt-4o"},"recipient":"all"},"parent":%q,"children":["n%d"]}`,
				i, i, i, role, int(1.7e9)+c+i, i, text, parent, i+1)
		}
		// The regenerated first answer: a fork after the first question.
		fmt.Fprintf(cw, `,"alt":{"id":"alt","message":{"id":"alt","author":{"role":"assistant"},"content":{"content_type":"text","parts":["another answer"]},"metadata":{},"recipient":"all"},"parent":"n0","children":[]}}}`)
		conversations++
	}
	fmt.Fprint(cw, "]")
	return conversations, bw.Flush()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// peakHeap samples the Go heap until stop is called and returns the
// highest value seen.
func peakHeap() (stop func() uint64) {
	var mu sync.Mutex
	var peak uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapInuse)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// peakRSS reads the process's peak resident set (Linux), or 0.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestImportBoundedMemory imports a generated ChatGPT-style export larger
// than the heap bound it asserts: the reader holds one conversation at a
// time, so the heap stays flat whatever the size of the file. The file is
// 24 MiB here; CONVO_IMPORT_BYTES sets another size (the 1 GB measurement in
// docs/archive.md ran with CONVO_IMPORT_BYTES=1073741824).
func TestImportBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and imports a 24 MiB file")
	}
	size := int64(24 << 20)
	if s := os.Getenv("CONVO_IMPORT_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("CONVO_IMPORT_BYTES: %v", err)
		}
		size = n
	}
	const heapBound = 12 << 20
	dir := t.TempDir()
	path := filepath.Join(dir, "conversations.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := writeChatGPTExport(f, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)

	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := Open(path, ChatGPT, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	runtime.GC()
	stop := peakHeap()
	start, cpu0 := time.Now(), cputime.Process()
	updates := 0
	p, warns, err := Import(ctx, s, ChatGPT, r, ImportOptions{Progress: func(ImportProgress) { updates++ }})
	wall, cpu := time.Since(start), cputime.Process()-cpu0
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) > 0 {
		t.Errorf("warnings: %v", warns[:min(len(warns), 5)])
	}
	if p.Conversations != want || p.Forks != want || p.BytesRead != st.Size() || updates != want {
		t.Errorf("progress %+v after %d updates, want %d conversations and forks, %d bytes", p, updates, want, st.Size())
	}
	t.Logf("imported %d conversations (%d MiB) in %v wall, %v CPU (%.1f MiB/s); peak Go heap in use %d MiB, peak RSS %d MiB",
		p.Conversations, st.Size()>>20, wall.Round(time.Millisecond), cpu.Round(time.Millisecond),
		float64(st.Size())/(1<<20)/wall.Seconds(), peak>>20, peakRSS()>>20)
	if peak > heapBound {
		t.Errorf("peak heap in use %d MiB, want under %d MiB for a %d MiB file", peak>>20, heapBound>>20, st.Size()>>20)
	}
}
