package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// writeBigHistory writes n user/assistant messages as JSON Lines, about
// 120 bytes each.
func writeBigHistory(t *testing.T, n int) (string, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(w, `{"role":%q,"parts":[{"type":"text","text":"message %d: what is the weather like in Paris today? mild"}]}`+"\n", role, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	f.Close()
	return p, fi.Size()
}

// peakRSS runs the command line args in a child process (this test binary)
// and returns its peak resident memory in bytes and its stdout.
func peakRSS(t *testing.T, args ...string) (int64, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryChild$")
	cmd.Env = append(os.Environ(), "CONVO_MEMORY_CHILD="+strings.Join(args, "\x1f"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ru.Maxrss << 10, string(out) // Linux reports KiB
}

// TestMemoryChild is the child of peakRSS: it runs one command line.
func TestMemoryChild(t *testing.T) {
	args := os.Getenv("CONVO_MEMORY_CHILD")
	if args == "" {
		t.Skip("run by peakRSS")
	}
	e := &env{stdin: strings.NewReader(""), stdout: os.Stdout, stderr: io.Discard, getenv: func(string) string { return "" }}
	if code := run(e, strings.Split(args, "\x1f")); code != 0 {
		os.Exit(code)
	}
}

// TestValidateMemory: validate reads a history message by message, so its
// peak memory does not grow with the file: a 36 MB file is checked within
// the memory of an empty one plus a few MiB (reading it whole took some
// 150 MB).
func TestValidateMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 36 MB file")
	}
	small, _ := writeBigHistory(t, 10)
	base, _ := peakRSS(t, "validate", small)
	big, size := writeBigHistory(t, 900000)
	peak, out := peakRSS(t, "validate", big)
	if !strings.Contains(out, "ok: 900000 messages") {
		t.Fatalf("validate: %q", out)
	}
	t.Logf("file %d MiB; peak RSS %d MiB, %d MiB for 10 messages", size>>20, peak>>20, base>>20)
	if peak > base+size/4 {
		t.Errorf("peak RSS %d MiB for a %d MiB file (%d MiB for 10 messages): the file is held whole", peak>>20, size>>20, base>>20)
	}
}
