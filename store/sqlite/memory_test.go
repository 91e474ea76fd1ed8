package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// TestLongWriteMemory: writing a message of 32 MiB in a Batch raises the
// peak resident memory of the process by at most half its body. Its JSON
// is never whole: the store encodes it as it stores it, a piece of 256 KiB
// at a time (convo.WriteMessage, backend.Row.Msg), and SQLite's C heap,
// which cannot reuse the Go heap's free pages, holds one piece at a time
// (migration 7). Measured 0.16 times the body; 1.15 times with the body's
// JSON whole in Go (backend.Encode), 1.20 with it in pieces of 1 MiB, and
// 3.1 times stored whole (the bound copy of the body, SQLite's record and
// its pages). A fork of the conversation raises it by at most half the
// body: its pieces are copied one a statement (forkChunks); one INSERT …
// SELECT of them all first copied them into a temporary table in memory,
// 2.07 times the body. Measured in a child process (this test binary), its
// collections stopping the world so that the peak is what is live, not
// how far a collection fell behind.
func TestLongWriteMemory(t *testing.T) {
	if os.Getenv("CONVO_SQLITE_MEMORY_CHILD") != "" {
		longWriteChild()
		return
	}
	if testing.Short() {
		t.Skip("writes 32 MiB")
	}
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		t.Skip("needs Linux's /proc/self/clear_refs to reset the peak")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLongWriteMemory$")
	cmd.Env = append(os.Environ(), "CONVO_SQLITE_MEMORY_CHILD="+filepath.Join(t.TempDir(), "long.db"),
		"GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+",gcstoptheworld=1", ","))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var rise, body, fork int64
	if _, err := fmt.Sscanf(string(out), "rise %d body %d fork %d", &rise, &body, &fork); err != nil {
		t.Fatalf("child's output %q: %v", out, err)
	}
	ratio, forkRatio := float64(rise)/float64(body), float64(fork)/float64(body)
	t.Logf("peak resident memory rose %.1f MiB writing a body of %.1f MiB: %.2f times; forking its conversation, %.2f times", float64(rise)/(1<<20), float64(body)/(1<<20), ratio, forkRatio)
	if ratio > 0.5 {
		t.Errorf("writing a body of %d bytes raised the peak resident memory by %.2f times it, more than 0.5", body, ratio)
	}
	if forkRatio > 0.5 {
		t.Errorf("forking a conversation with a body of %d bytes raised the peak resident memory by %.2f times it, more than 0.5", body, forkRatio)
	}
}

// longWriteChild writes the message of TestLongWriteMemory, then forks its
// conversation, and prints the rise of the peak in each and the body's
// length.
func longWriteChild() {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, os.Getenv("CONVO_SQLITE_MEMORY_CHILD"))
	if err != nil {
		fail(err)
	}
	defer s.Close()
	m := longReply(32 << 20)
	m.Parts = m.Parts[:1] // no call: the fork below reads back only the last message
	body, err := convo.AppendMessage(nil, m)
	if err != nil {
		fail(err)
	}
	w := []store.Write{{Tenant: "t", ID: "c", Create: true, Version: store.AnyVersion, Messages: []convo.Message{m, convo.User("Thanks.")}}}
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil { // VmHWM = VmRSS
		fail(err)
	}
	before := procStatus("VmRSS:")
	if res := s.Batch(ctx, w); res[0].Err != nil {
		fail(res[0].Err)
	}
	rise := procStatus("VmHWM:") - before
	// A fork of the whole conversation copies the long body's pieces.
	w = nil
	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		fail(err)
	}
	before = procStatus("VmRSS:")
	if _, err := s.Fork(ctx, "t", "c", 2, store.Conversation{ID: "fork"}); err != nil {
		fail(err)
	}
	fmt.Printf("rise %d body %d fork %d\n", rise, len(body), procStatus("VmHWM:")-before)
}

func fail(err error) {
	fmt.Println(err)
	os.Exit(1)
}

// procStatus returns a field of /proc/self/status in bytes.
func procStatus(key string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fail(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				fail(err)
			}
			return kb << 10
		}
	}
	fail(fmt.Errorf("no %s in /proc/self/status", key))
	return 0
}
