package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// TestSpoolPath: --spool's default is beside a SQLite file; "off" turns
// it off.
func TestSpoolPath(t *testing.T) {
	for _, c := range []struct{ flag, db, want string }{
		{"", "convo.db", "convo.db.spool"},
		{"", "sqlite:/var/lib/c.db", "/var/lib/c.db.spool"},
		{"", "sqlite:/var/lib/c.db?synchronous=normal", "/var/lib/c.db.spool"},
		{"", "postgres://h/db", "convo-gateway.spool"},
		{"/spool", "convo.db", "/spool"},
		{"off", "convo.db", ""},
	} {
		if got := spoolPath(c.flag, c.db); got != c.want {
			t.Errorf("spoolPath(%q, %q) = %q, want %q", c.flag, c.db, got, c.want)
		}
	}
}

// downWhile fails the store's batches while its file exists: the parent
// test takes the store down and up by making and removing it.
type downWhile struct {
	store.Store
	file string
}

func (d downWhile) Batch(ctx context.Context, writes []store.Write) []store.WriteResult {
	if _, err := os.Stat(d.file); err == nil {
		res := make([]store.WriteResult, len(writes))
		for i := range res {
			res[i].Err = errors.New("the store is down (test)")
		}
		return res
	}
	return d.Store.Batch(ctx, writes)
}

// TestGatewayKillHelper is the gateway process of TestGatewayKill.
func TestGatewayKillHelper(t *testing.T) {
	if os.Getenv("CONVO_KILL_HELPER") != "1" {
		t.Skip("the child process of TestGatewayKill")
	}
	down := os.Getenv("CONVO_KILL_DOWN")
	wrapGatewayStore = func(st store.Store) store.Store { return downWhile{Store: st, file: down} }
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	os.Exit(run(e, strings.Fields(os.Getenv("CONVO_KILL_ARGS"))))
}

// startKillHelper starts the gateway process and returns its address.
func startKillHelper(t *testing.T, args, down string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestGatewayKillHelper$")
	cmd.Env = append(os.Environ(), "CONVO_KILL_HELPER=1", "CONVO_KILL_ARGS="+args, "CONVO_KILL_DOWN="+down, "CONVO_TOKENS=tok=alice")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), "listening on http://"); ok {
			go io.Copy(io.Discard, stderr)
			return cmd, strings.Fields(rest)[0]
		}
	}
	t.Fatal("the gateway ended before listening")
	return nil, ""
}

// TestGatewayKill kills a gateway process with SIGKILL at a random moment
// of a load of 8 streams, its store down for part of it (the spool taking
// the recordings), then starts it again: every exchange whose reply the
// client had whole more than killGrace before the kill is recorded, once;
// none is recorded twice. CONVO_KILL_RUNS sets the number of runs (1 by
// default; docs/gateway.md reports 30).
func TestGatewayKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gateway processes")
	}
	runs := 1
	if n, err := strconv.Atoi(os.Getenv("CONVO_KILL_RUNS")); err == nil {
		runs = n
	}
	up, sse := anthropicUpstream(t)
	for run := range runs {
		killRun(t, run, up.URL, sse)
	}
}

// killGrace is how long before the kill an exchange must have ended to be
// promised: the writer's batch delay (20 ms) and a commit, with room for
// a machine shared with other work.
const killGrace = 2 * time.Second

// killed is an exchange of TestGatewayKill.
type killed struct {
	conv, ids string
	end       time.Time
}

func killRun(t *testing.T, run int, upURL string, sse []byte) {
	dir := t.TempDir()
	db, down := filepath.Join(dir, "convo.db"), filepath.Join(dir, "down")
	args := fmt.Sprintf("gateway --addr 127.0.0.1:0 --db %s --upstream a=anthropic@%s --route *=a", db, upURL)
	cmd, addr := startKillHelper(t, args, down)
	var mu sync.Mutex
	var xs []killed
	stopLoad := make(chan struct{})
	var wg sync.WaitGroup
	for s := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stopLoad:
					return
				default:
				}
				body := fmt.Sprintf(`{"model":"claude-x","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"run %d stream %d question %d"}]}`, run, s, i)
				req, _ := http.NewRequest("POST", "http://"+addr+"/v1/messages", strings.NewReader(body))
				req.Header.Set("X-Api-Key", "tok")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return // killed
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || string(got) != string(sse) {
					return // killed mid-reply: not promised
				}
				mu.Lock()
				xs = append(xs, killed{conv: resp.Header.Get("Convo-Conversation"), ids: resp.Header.Get("Convo-Message-Ids"), end: time.Now()})
				mu.Unlock()
			}
		}()
	}
	// The store goes down for a while, and the kill comes at a random
	// moment: while it is down, or after it came back.
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(run)))
	time.Sleep(time.Duration(2500+r.IntN(1000)) * time.Millisecond)
	os.WriteFile(down, nil, 0o600)
	time.Sleep(time.Duration(300+r.IntN(700)) * time.Millisecond)
	if r.IntN(2) == 0 {
		os.Remove(down)
		time.Sleep(time.Duration(r.IntN(300)) * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	kill := time.Now()
	cmd.Wait()
	close(stopLoad)
	wg.Wait()
	os.Remove(down)

	// Started again on the same store and spool, the gateway writes what
	// the spool holds; SIGTERM waits for it to finish.
	cmd, _ = startKillHelper(t, args, down)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run %d: the restarted gateway: %v", run, err)
	}
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	promised, recorded := 0, 0
	for _, x := range xs {
		h, _, err := st.Load(context.Background(), "alice", x.conv, 0)
		if errors.Is(err, store.ErrNotFound) {
			if x.end.Before(kill.Add(-killGrace)) {
				t.Fatalf("run %d: an exchange answered %v before the kill is not recorded", run, kill.Sub(x.end))
			}
			continue
		}
		var ids []string
		for _, m := range h {
			ids = append(ids, m.ID)
		}
		if err != nil || strings.Join(ids, ",") != x.ids {
			t.Fatalf("run %d: conversation %s holds %v (%v), want %s once", run, x.conv, ids, err, x.ids)
		}
		recorded++
		if x.end.Before(kill.Add(-killGrace)) {
			promised++
		}
	}
	t.Logf("run %d: %d exchanges answered, %d recorded, %d of them promised", run, len(xs), recorded, promised)
}
