package storetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// Opener opens a store from a data source name. Child processes of the
// reliability tests open their stores with it.
type Opener func(ctx context.Context, dsn string) (store.Store, error)

// The environment of a child process.
const (
	envRole       = "CONVO_STORETEST_CHILD" // "durable" or "append"
	envDSN        = "CONVO_STORETEST_DSN"
	envConv       = "CONVO_STORETEST_CONV"
	envTenant     = "CONVO_STORETEST_TENANT"
	envRound      = "CONVO_STORETEST_ROUND"
	envWriter     = "CONVO_STORETEST_WRITER"
	envGoroutines = "CONVO_STORETEST_GOROUTINES"
	envEach       = "CONVO_STORETEST_EACH"
)

// Main is the TestMain of a backend's tests: in a child process started by
// Durability or Concurrency it plays the child's part and exits; otherwise
// it runs the tests.
func Main(m *testing.M, open Opener) {
	if role := os.Getenv(envRole); role != "" {
		os.Exit(child(role, open))
	}
	os.Exit(m.Run())
}

func child(role string, open Opener) int {
	// A child whose parent died must not write forever.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := open(ctx, os.Getenv(envDSN))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open:", err)
		return 1
	}
	defer s.Close()
	tenant, conv := os.Getenv(envTenant), os.Getenv(envConv)
	out := &lockedWriter{w: os.Stdout}
	switch role {
	case "durable":
		round, _ := strconv.Atoi(os.Getenv(envRound))
		err = durableWriter(ctx, s, tenant, conv, round, out)
	case "append":
		goroutines, _ := strconv.Atoi(os.Getenv(envGoroutines))
		each, _ := strconv.Atoi(os.Getenv(envEach))
		writer := os.Getenv(envWriter)
		var wg sync.WaitGroup
		errs := make(chan error, goroutines)
		var conflicts int64
		var mu sync.Mutex
		for g := range goroutines {
			wg.Go(func() {
				n, err := appendLoop(ctx, s, tenant, conv, fmt.Sprintf("%s.g%d", writer, g), each, func(a ack) {
					out.printf("ack %s %d %s %d\n", a.Writer, a.Seq, a.ID, a.Version)
				})
				mu.Lock()
				conflicts += n
				mu.Unlock()
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			err = errors.Join(err, e)
		}
		out.printf("conflicts %d\n", conflicts)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	return 0
}

// lockedWriter writes whole lines from many goroutines. Stdout is not
// buffered, so a line is in the pipe once printf returns: what the parent
// reads after a SIGKILL is exactly what was acknowledged.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// durableWriter appends batches of one to four messages until it is killed,
// printing "ack r<round>.b<batch> <version>" after each. Every third batch
// carries a large message, so that commits take long enough for kills to
// land inside them. A message's id, r.b.i.n, says it is the i-th of n in
// its batch.
func durableWriter(ctx context.Context, s store.Store, tenant, conv string, round int, out *lockedWriter) error {
	big := strings.Repeat("0123456789abcdef", 1<<14) // 256 KiB
	for b := 0; ; b++ {
		c, err := s.Get(ctx, tenant, conv)
		if err != nil {
			return err
		}
		n := 1 + b%4
		msgs := make([]convo.Message, n)
		for i := range msgs {
			text := fmt.Sprintf("round %d batch %d message %d of %d", round, b, i, n)
			if b%3 == 2 && i == 0 {
				text += big
			}
			msgs[i] = convo.User(text)
			msgs[i].ID = fmt.Sprintf("r%d.b%d.%d.%d", round, b, i, n)
		}
		got, err := s.Append(ctx, tenant, conv, c.Version, msgs...)
		if err != nil {
			return fmt.Errorf("append batch %d: %w", b, err)
		}
		out.printf("ack r%d.b%d %d\n", round, b, got.Version)
	}
}

// ack is one acknowledged single-message append.
type ack struct {
	Writer  string
	Seq     int
	ID      string
	Version int64 // the version Append returned
}

// appendLoop appends n messages one at a time, each after reading the
// current version, retrying when another writer got in first. It returns
// how many conflicts it retried. A conflict must be real: the version read
// afterwards must differ from the one refused.
func appendLoop(ctx context.Context, s store.Store, tenant, conv, writer string, n int, onAck func(ack)) (int64, error) {
	var conflicts int64
	for seq := range n {
		m := convo.User(fmt.Sprintf("%s says %d", writer, seq))
		m.ID = fmt.Sprintf("%s.%d", writer, seq)
		for attempt := 0; ; attempt++ {
			c, err := s.Get(ctx, tenant, conv)
			if err != nil {
				return conflicts, fmt.Errorf("%s: Get: %w", writer, err)
			}
			got, err := s.Append(ctx, tenant, conv, c.Version, m)
			if errors.Is(err, store.ErrConflict) {
				conflicts++
				now, err := s.Get(ctx, tenant, conv)
				if err != nil {
					return conflicts, fmt.Errorf("%s: Get: %w", writer, err)
				}
				if now.Version == c.Version {
					return conflicts, fmt.Errorf("%s: conflict at version %d, but the version is unchanged", writer, c.Version)
				}
				// Back off a little, more after repeated losses, so the
				// writers do not move in lockstep.
				time.Sleep(time.Duration(rand.IntN(200*(1+min(attempt, 10)))) * time.Microsecond)
				continue
			}
			if err != nil {
				return conflicts, fmt.Errorf("%s: Append %s: %w", writer, m.ID, err)
			}
			if got.Version != c.Version+1 {
				return conflicts, fmt.Errorf("%s: Append at version %d returned version %d, want %d", writer, c.Version, got.Version, c.Version+1)
			}
			onAck(ack{Writer: writer, Seq: seq, ID: m.ID, Version: got.Version})
			break
		}
	}
	return conflicts, nil
}

// checkAppends checks a conversation that started at version base, empty,
// and took acks: single-message appends. The message an append stored must
// sit at the index its version says, so nothing was lost, duplicated,
// reordered or overwritten.
func checkAppends(t *testing.T, h convo.History, c store.Conversation, base int64, acks []ack) {
	t.Helper()
	if len(h) != len(acks) || c.Messages != len(acks) || c.Version != base+int64(len(acks)) {
		t.Fatalf("%d acknowledged appends, but %d messages (description says %d) at version %d (want %d)",
			len(acks), len(h), c.Messages, c.Version, base+int64(len(acks)))
	}
	seen := map[int64]string{}
	last := map[string]int64{}
	for _, a := range acks {
		if other, dup := seen[a.Version]; dup {
			t.Fatalf("two appends returned version %d: %s and %s", a.Version, other, a.ID)
		}
		seen[a.Version] = a.ID
		i := a.Version - base - 1
		if i < 0 || i >= int64(len(h)) || h[i].ID != a.ID {
			t.Fatalf("append of %s returned version %d, but messages[%d] is %q", a.ID, a.Version, i, idAt(h, i))
		}
		if a.Version <= last[a.Writer] {
			t.Fatalf("writer %s: version %d after %d", a.Writer, a.Version, last[a.Writer])
		}
		last[a.Writer] = a.Version
	}
}

func idAt(h convo.History, i int64) string {
	if i < 0 || i >= int64(len(h)) {
		return "(none)"
	}
	return h[i].ID
}

// startChild starts the test binary again in role with env added; stdout
// lines go to lines, which is closed when the child's stdout is.
func startChild(t *testing.T, role string, env []string, lines chan<- string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, envRole+"="+role)...)
	stderr := new(strings.Builder)
	cmd.Stderr = &syncWriter{w: stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, stderr
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Checker is implemented by stores that can check their database's
// integrity (SQLite's integrity_check); Durability calls it after every
// crash.
type Checker interface {
	Check(ctx context.Context) error
}

// Durability kills a writer process with SIGKILL at a random moment while
// it appends, rounds times, reopening the store after each crash: the store
// must open cleanly, hold every batch the writer acknowledged, and hold each
// batch whole or not at all (only the batch in flight at the kill may be
// there unacknowledged).
//
// settle, if not nil, is called after each kill and must return once
// nothing the dead writer started can still change the database. A
// database server may still be running (and will then commit) the
// statement the writer sent just before it died; settle waits for the
// server to finish with the dead connection.
func Durability(t *testing.T, dsn string, open Opener, rounds int, settle func(context.Context) error) {
	const tenant, conv = "durability", "crash"
	s, err := open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(t.Context(), store.Conversation{ID: conv, Tenant: tenant}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	acked := map[string]bool{} // batch keys the writer acknowledged
	lastAck := map[int]int{}   // round → last acknowledged batch
	var killedAfter []int      // acks per round, for the log
	for round := range rounds {
		lines := make(chan string, 1024)
		cmd, stderr := startChild(t, "durable", []string{
			envDSN + "=" + dsn, envTenant + "=" + tenant, envConv + "=" + conv, envRound + "=" + strconv.Itoa(round),
		}, lines)
		// Kill at a random moment once the writer is under way.
		first, ok := <-lines
		if !ok {
			cmd.Wait()
			t.Fatalf("round %d: the writer exited before its first append: %s", round, stderr)
		}
		time.Sleep(time.Duration(rand.IntN(20000)) * time.Microsecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for line := range prepend(first, lines) {
			var r, b int
			var version int64
			if _, err := fmt.Sscanf(line, "ack r%d.b%d %d", &r, &b, &version); err != nil || r != round {
				t.Fatalf("round %d: bad line from the writer: %q", round, line)
			}
			acked[fmt.Sprintf("r%d.b%d", r, b)] = true
			lastAck[r] = b
			n++
		}
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.Success() {
			t.Fatalf("round %d: the writer was not killed: %v %s", round, err, stderr)
		}
		if settle != nil {
			if err := settle(t.Context()); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		killedAfter = append(killedAfter, n)
		checkDurable(t, dsn, open, tenant, conv, round, acked, lastAck)
	}
	t.Logf("%d kills, after %v acknowledged appends", rounds, killedAfter)
}

func prepend(first string, rest <-chan string) func(func(string) bool) {
	return func(yield func(string) bool) {
		if !yield(first) {
			return
		}
		for s := range rest {
			if !yield(s) {
				return
			}
		}
	}
}

func checkDurable(t *testing.T, dsn string, open Opener, tenant, conv string, round int, acked map[string]bool, lastAck map[int]int) {
	t.Helper()
	s, err := open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("round %d: the store does not open after the crash: %v", round, err)
	}
	defer s.Close()
	if ck, ok := s.(Checker); ok {
		if err := ck.Check(t.Context()); err != nil {
			t.Fatalf("round %d: integrity check after the crash: %v", round, err)
		}
	}
	h, c, err := s.Load(t.Context(), tenant, conv, 0)
	if err != nil {
		t.Fatalf("round %d: Load after the crash: %v", round, err)
	}
	if c.Messages != len(h) {
		t.Fatalf("round %d: the description says %d messages, Load returned %d", round, c.Messages, len(h))
	}
	present := map[string]bool{}
	batches := 0
	prevRound, prevBatch := -1, -1
	for i := 0; i < len(h); {
		var r, b, k, n int
		if _, err := fmt.Sscanf(h[i].ID, "r%d.b%d.%d.%d", &r, &b, &k, &n); err != nil || k != 0 {
			t.Fatalf("round %d: messages[%d] %q does not start a batch", round, i, h[i].ID)
		}
		for j := range n {
			want := fmt.Sprintf("r%d.b%d.%d.%d", r, b, j, n)
			if i+j >= len(h) || h[i+j].ID != want {
				t.Fatalf("round %d: batch r%d.b%d is partial: messages[%d] is %q, want %q", round, r, b, i+j, idAt(h, int64(i+j)), want)
			}
			if !strings.HasPrefix(h[i+j].Text(), fmt.Sprintf("round %d batch %d message %d of %d", r, b, j, n)) {
				t.Fatalf("round %d: message %s has the wrong text", round, want)
			}
		}
		if r < prevRound || (r == prevRound && b <= prevBatch) {
			t.Fatalf("round %d: batch r%d.b%d after r%d.b%d", round, r, b, prevRound, prevBatch)
		}
		key := fmt.Sprintf("r%d.b%d", r, b)
		if !acked[key] && b != lastAck[r]+1 {
			t.Fatalf("round %d: batch %s is stored but was neither acknowledged nor in flight (last ack b%d)", round, key, lastAck[r])
		}
		present[key] = true
		prevRound, prevBatch = r, b
		batches++
		i += n
	}
	for key := range acked {
		if !present[key] {
			t.Fatalf("round %d: acknowledged batch %s is lost", round, key)
		}
	}
	if c.Version != 1+int64(batches) {
		t.Fatalf("round %d: version %d after %d appends, want %d", round, c.Version, batches, 1+batches)
	}
	// The store takes writes again.
	if _, err := s.Append(t.Context(), tenant, conv, c.Version); err != nil {
		t.Fatalf("round %d: the store does not take writes after the crash: %v", round, err)
	}
}

// Concurrency appends to one conversation from goroutines writers in this
// process and in each of procs child processes, each writer appending each
// messages one at a time and retrying on conflict. Nothing may be lost,
// duplicated or reordered: every append's message must sit where its
// version says.
func Concurrency(t *testing.T, dsn string, open Opener, procs, goroutines, each int) {
	const tenant = "concurrency"
	s, err := open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Create(t.Context(), store.Conversation{Tenant: tenant})
	if err != nil {
		t.Fatal(err)
	}

	var tl tally
	var children []writerProc
	for p := range procs {
		lines := make(chan string, 1024)
		cmd, stderr := startChild(t, "append", []string{
			envDSN + "=" + dsn, envTenant + "=" + tenant, envConv + "=" + c.ID,
			envWriter + "=" + fmt.Sprintf("p%d", p), envGoroutines + "=" + strconv.Itoa(goroutines), envEach + "=" + strconv.Itoa(each),
		}, lines)
		children = append(children, writerProc{cmd, stderr, lines})
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			n, err := appendLoop(t.Context(), s, tenant, c.ID, fmt.Sprintf("parent.g%d", g), each, tl.record)
			tl.conflicted(n)
			if err != nil {
				t.Error(err)
			}
		})
	}
	for _, ch := range children {
		wg.Go(func() { tl.read(t, ch) })
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	acks, conflicts := tl.acks, tl.conflicts
	h, got, err := s.Load(t.Context(), tenant, c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := (procs + 1) * goroutines * each
	if len(acks) != want {
		t.Fatalf("%d appends acknowledged, want %d", len(acks), want)
	}
	checkAppends(t, h, got, c.Version, acks)
	t.Logf("%d processes × %d goroutines × %d appends: %d conflicts reported and retried", procs+1, goroutines, each, conflicts)
}

// writerProc is a writer process of Concurrency and the lines it prints.
type writerProc struct {
	cmd    *exec.Cmd
	stderr *strings.Builder
	lines  chan string
}

// tally collects what Concurrency's writers acknowledged, from every
// goroutine.
type tally struct {
	mu        sync.Mutex
	acks      []ack
	conflicts int64
}

func (tl *tally) record(a ack) {
	tl.mu.Lock()
	tl.acks = append(tl.acks, a)
	tl.mu.Unlock()
}

func (tl *tally) conflicted(n int64) {
	tl.mu.Lock()
	tl.conflicts += n
	tl.mu.Unlock()
}

// read takes a writer process's acknowledgements and its count of
// conflicts until it exits, which it must do cleanly after the count.
func (tl *tally) read(t *testing.T, ch writerProc) {
	sawEnd := false
	for line := range ch.lines {
		var a ack
		var n int64
		if _, err := fmt.Sscanf(line, "ack %s %d %s %d", &a.Writer, &a.Seq, &a.ID, &a.Version); err == nil {
			tl.record(a)
		} else if _, err := fmt.Sscanf(line, "conflicts %d", &n); err == nil {
			tl.conflicted(n)
			sawEnd = true
		} else {
			t.Errorf("bad line from a writer: %q", line)
		}
	}
	if err := ch.cmd.Wait(); err != nil || !sawEnd {
		t.Errorf("writer process: %v: %s", err, ch.stderr)
	}
}
