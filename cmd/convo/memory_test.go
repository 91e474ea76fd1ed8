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
	hwm := filepath.Join(t.TempDir(), "hwm")
	// Collections stop the world, so the peak is what the command keeps
	// live (within GOGC), not how far a background collection on a loaded
	// machine fell behind the allocating goroutine.
	cmd.Env = append(os.Environ(), "CONVO_MEMORY_CHILD="+strings.Join(args, "\x1f"), "CONVO_MEMORY_HWM="+hwm,
		"GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+",gcstoptheworld=1", ","))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	// The child's own high-water mark: the rusage maximum counts the
	// parent's memory at the fork too, before the exec.
	if b, err := os.ReadFile(hwm); err == nil {
		var kb int64
		if _, err := fmt.Sscan(string(b), &kb); err == nil {
			return kb << 10, string(out)
		}
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return ru.Maxrss << 10, string(out) // Linux reports KiB
}

// writeHWM writes the process's peak resident memory in KiB (VmHWM in
// /proc/self/status, Linux) to the file $CONVO_MEMORY_HWM names.
func writeHWM() {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			os.WriteFile(os.Getenv("CONVO_MEMORY_HWM"), []byte(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))), 0o644)
		}
	}
}

// TestMemoryChild is the child of peakRSS: it runs one command line.
func TestMemoryChild(t *testing.T) {
	args := os.Getenv("CONVO_MEMORY_CHILD")
	if args == "" {
		t.Skip("run by peakRSS")
	}
	e := &env{stdin: strings.NewReader(""), stdout: os.Stdout, stderr: io.Discard, getenv: func(string) string { return "" }}
	code := run(e, strings.Split(args, "\x1f"))
	writeHWM()
	if code != 0 {
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

// writeBigMessage writes one user message of about size bytes of words.
func writeBigMessage(t *testing.T, size int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "one.jsonl")
	words := []string{"weather", "Paris", "today", "mild", "the", "is", "what", "like", "in", "sunny", "18", "°C,"}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriter(f) // not built in memory: the parent's size is not measured
	w.WriteString(`{"role":"user","parts":[{"type":"text","text":"`)
	for i, n := 0, 0; n < size; i++ {
		k, _ := w.WriteString(words[i*7%len(words)] + " ")
		n += k
	}
	w.WriteString(`"}]}` + "\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTokensStreamMemory: tokens counts a message at a time and writes each row
// as it goes, so its peak memory does not grow with the number of messages
// (200,000 within 12 MiB of 50,000; holding every count took some 48 MiB more),
// and one large message makes it grow about as validate grows (the
// tokenizer once held some 14 times the text).
func TestTokensStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("counts 200,000 messages")
	}
	mid, _ := writeBigHistory(t, 50000)
	base, _ := peakRSS(t, "tokens", "--model", "gpt-4o", mid)
	big, size := writeBigHistory(t, 200000)
	peak, out := peakRSS(t, "tokens", "--model", "gpt-4o", big)
	if !strings.Contains(out, "199999  assistant") {
		t.Fatalf("tokens: %q", out[max(0, len(out)-300):])
	}
	t.Logf("200,000 messages, %d MiB: peak RSS %d MiB, %d MiB for 50,000", size>>20, peak>>20, base>>20)
	if peak > base+12<<20 {
		t.Errorf("peak RSS %d MiB for 200,000 messages, %d MiB for 50,000: it grows with the messages", peak>>20, base>>20)
	}

	// One large message: what memory grows by from a 4 MiB message to a
	// 16 MiB one, against validate's growth on the same files.
	grow := func(args ...string) int64 {
		a, _ := peakRSS(t, append(args, writeBigMessage(t, 4<<20))...)
		b, _ := peakRSS(t, append(args, writeBigMessage(t, 16<<20))...)
		return b - a
	}
	tGrow, vGrow := grow("tokens", "--model", "gpt-4o"), grow("validate")
	t.Logf("a message from 4 to 16 MiB: tokens grows by %d MiB, validate by %d MiB", tGrow>>20, vGrow>>20)
	if tGrow > vGrow*3/2+8<<20 {
		t.Errorf("a message from 4 to 16 MiB: tokens grows by %d MiB, validate by %d MiB: the tokenizer holds the text many times over", tGrow>>20, vGrow>>20)
	}
}
