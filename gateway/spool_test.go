package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
)

// Modes of a faultyStore.
const (
	storeUp      = iota
	storeDown    // every write fails, nothing is written
	storeCommits // writes are committed, then reported failed (a connection lost at the commit)
	storeStalls  // writes wait until their context ends (or the mode changes)
	storeHangs   // writes wait until the mode changes, whatever their context says
	storeSlow    // writes take slowWrite, as a store on a saturated machine's may
)

// slowWrite is how long a storeSlow write takes: far more than the
// writer's batch delay, far less than stallMin.
const slowWrite = 100 * time.Millisecond

// faultyStore fails its batches as its mode says.
type faultyStore struct {
	store.Store
	mode     atomic.Int32
	batches  atomic.Int64
	canceled atomic.Int64 // writes whose context ended before they did
}

var errStoreDown = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

func (f *faultyStore) Batch(ctx context.Context, writes []store.Write) []store.WriteResult {
	f.batches.Add(1)
	fail := func(err error) []store.WriteResult {
		res := make([]store.WriteResult, len(writes))
		for i := range res {
			res[i].Err = err
		}
		return res
	}
	switch f.mode.Load() {
	case storeDown:
		return fail(errStoreDown)
	case storeCommits:
		f.Store.Batch(ctx, writes)
		return fail(errStoreDown)
	case storeHangs:
		for f.mode.Load() == storeHangs {
			time.Sleep(5 * time.Millisecond)
		}
	case storeSlow:
		time.Sleep(slowWrite)
		if ctx.Err() != nil {
			f.canceled.Add(1)
			return fail(ctx.Err())
		}
	case storeStalls:
		for f.mode.Load() == storeStalls {
			select {
			case <-ctx.Done():
				return fail(ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return f.Store.Batch(ctx, writes)
}

// waitFor waits until cond holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// answered is an exchange a client had a whole reply to: where the gateway
// said it records it.
type answered struct {
	conv string
	ids  []string // the request's new messages, then the reply
}

// spoolRig is a rig whose store fails as told, with a spool.
func spoolRig(t *testing.T, dir string, mod func(*gateway.Options)) (*rig, *faultyStore, *prometheus.Registry) {
	t.Helper()
	fs := &faultyStore{}
	reg := prometheus.NewRegistry()
	rg := newRig(t, "anthropic", func(o *gateway.Options) {
		fs.Store = o.Store
		o.Store, o.SpoolDir, o.Metrics = fs, dir, reg
		if mod != nil {
			mod(o)
		}
	})
	return rg, fs, reg
}

// ask sends exchange i (a conversation of its own) and checks the client
// got the whole reply.
func (rg *rig) ask(t *testing.T, i int) answered {
	t.Helper()
	x, err := rg.try(t, i)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// try is ask for another goroutine than the test's.
func (rg *rig) try(t *testing.T, i int) (answered, error) {
	body := requestBody(t, "anthropic", "m", convo.History{convo.User(fmt.Sprintf("question %d", i))}, true)
	req, _ := http.NewRequest("POST", rg.srv.URL+clientPath("anthropic", "m", true), bytes.NewReader(body))
	req.Header.Set("X-Api-Key", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answered{}, err
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, rg.up.stream) {
		return answered{}, fmt.Errorf("exchange %d: status %d, %v: the client must get the whole reply", i, resp.StatusCode, err)
	}
	return answered{conv: resp.Header.Get("Convo-Conversation"), ids: strings.Split(resp.Header.Get("Convo-Message-Ids"), ",")}, nil
}

// checkRecorded checks that every exchange is in st once: its
// conversation holds its messages, under their ids, and nothing more.
func checkRecorded(t *testing.T, st store.Store, xs []answered) {
	t.Helper()
	for i, x := range xs {
		h, _, err := st.Load(context.Background(), tenant, x.conv, 0)
		if err != nil {
			t.Fatalf("exchange %d (%s): %v", i, x.conv, err)
		}
		var ids []string
		for _, m := range h {
			ids = append(ids, m.ID)
		}
		if strings.Join(ids, ",") != strings.Join(x.ids, ",") {
			t.Fatalf("exchange %d: stored messages %v, want %v (once each)", i, ids, x.ids)
		}
	}
}

// gauge returns a metric's value from reg (0 when absent).
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			m := mf.GetMetric()[0]
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// readyz returns /readyz's status code and body.
func (rg *rig) readyz(t *testing.T) (int, map[string]any) {
	t.Helper()
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(rg.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if path == "/readyz" {
			return resp.StatusCode, body
		}
		if resp.StatusCode != 200 || body["status"] != "ok" {
			t.Fatalf("/healthz: %d %v, want 200 ok whatever the store does", resp.StatusCode, body)
		}
	}
	return 0, nil
}

// TestSpoolStoreFails: while the store fails, exchanges are answered and
// spooled; /readyz says so (200, degraded) and /metrics counts them; once
// the store is back every one is recorded, once, in its conversation — also
// when the store had committed writes it reported failed — and a request
// continuing one finds it.
func TestSpoolStoreFails(t *testing.T) {
	for _, mode := range []int32{storeDown, storeCommits} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			rg, fs, reg := spoolRig(t, t.TempDir(), nil)
			fs.mode.Store(mode)
			const n = 20
			var xs []answered
			for i := range n {
				xs = append(xs, rg.ask(t, i))
			}
			waitFor(t, "the exchanges to be spooled", func() bool { return rg.gw.Stats().Spooled == n })
			code, body := rg.readyz(t)
			if code != 200 || body["status"] != "degraded" || len(body["reasons"].([]any)) == 0 {
				t.Fatalf("/readyz with the store down: %d %v, want 200 degraded with reasons", code, body)
			}
			if got := gauge(t, reg, "convo_gateway_spool_exchanges"); got == 0 {
				t.Fatalf("convo_gateway_spool_exchanges %v with %d exchanges spooled", got, n)
			}
			if got := gauge(t, reg, "convo_gateway_store_failing"); got != 1 {
				t.Fatalf("convo_gateway_store_failing %v, want 1", got)
			}
			waitFor(t, "the replayer to try", func() bool { return rg.gw.Stats().Retried > 0 })
			fs.mode.Store(storeUp)
			waitFor(t, "the spool to be replayed", func() bool { return rg.gw.Stats().Recorded == n })
			checkRecorded(t, rg.st, xs)
			if s := rg.gw.Stats(); s.Dropped != 0 || s.Failed != 0 {
				t.Fatalf("stats %+v, want none dropped or failed", s)
			}
			if code, body := rg.readyz(t); code != 200 || body["status"] != "ready" {
				t.Fatalf("/readyz once replayed: %d %v", code, body)
			}
			if got := gauge(t, reg, "convo_gateway_spool_exchanges"); got != 0 {
				t.Fatalf("convo_gateway_spool_exchanges %v once replayed, want 0", got)
			}
			if got := gauge(t, reg, "convo_gateway_spool_bytes"); got > 8 {
				t.Fatalf("convo_gateway_spool_bytes %v once replayed, want an empty segment's 8", got)
			}
			// The next turn of a spooled exchange continues it.
			reply, _ := rg.st.Message(context.Background(), tenant, xs[3].conv, xs[3].ids[1])
			h := convo.History{convo.User("question 3"), reply, convo.User("and then?")}
			if conv := rg.conversation(t, "anthropic", "m", requestBody(t, "anthropic", "m", h, false)); conv != xs[3].conv {
				t.Fatalf("the next turn went to %s, not the spooled exchange's %s", conv, xs[3].conv)
			}
			rg.drain(t)
		})
	}
}

// TestSpoolStoreStalls: a store whose writes hang while the queue fills
// does not make the gateway drop: the stalled batch is given up and
// spooled, and everything is recorded once the store moves again.
func TestSpoolStoreStalls(t *testing.T) {
	// A queue of 4 fills long before the stalled write is given up: the
	// handlers spool what it has no room for rather than drop.
	rg, fs, _ := spoolRig(t, t.TempDir(), func(o *gateway.Options) { o.QueueSize = 4 })
	fs.mode.Store(storeStalls)
	const n = 200
	var xs []answered
	for i := range n {
		xs = append(xs, rg.ask(t, i))
		if i == 0 {
			waitFor(t, "the first write", func() bool { return fs.batches.Load() > 0 })
		}
	}
	waitFor(t, "the exchanges to be spooled", func() bool { s := rg.gw.Stats(); return s.Spooled+s.Dropped == n })
	fs.mode.Store(storeUp)
	waitFor(t, "the spool to be replayed", func() bool { return rg.gw.Stats().Recorded+rg.gw.Stats().Dropped == n })
	if s := rg.gw.Stats(); s.Dropped != 0 || s.Failed != 0 {
		t.Fatalf("stats %+v, want nothing dropped or failed", s)
	}
	checkRecorded(t, rg.st, xs)
	rg.drain(t)
}

// TestSpoolSlowStore: a store that keeps pace, each write taking
// tens of milliseconds while the queue fills past half (as on a saturated
// machine), is not given up for the spool: no write is canceled, nothing
// is spooled (the queue, as long as the exchanges, never fills), and every
// exchange is recorded. Giving its writes up at the queue's pressure made
// a saturated gateway spool, read back and decode most exchanges on top
// of writing them.
func TestSpoolSlowStore(t *testing.T) {
	const streams, each = 8, 8
	rg, fs, _ := spoolRig(t, t.TempDir(), func(o *gateway.Options) { o.QueueSize = 1 + streams*each })
	fs.mode.Store(storeSlow)
	xs := []answered{rg.ask(t, 0)}
	waitFor(t, "the first write", func() bool { return fs.batches.Load() > 0 })
	xs = append(xs, rg.askAll(t, streams, each, nil)...)
	if t.Failed() {
		return
	}
	waitFor(t, "every exchange recorded", func() bool { return rg.gw.Stats().Recorded == 1+streams*each })
	if s, c := rg.gw.Stats(), fs.canceled.Load(); s.Dropped != 0 || s.Failed != 0 || s.Spooled != 0 || c != 0 {
		t.Fatalf("stats %+v, %d writes canceled; want none dropped, failed, spooled or canceled", s, c)
	}
	checkRecorded(t, rg.st, xs)
	rg.drain(t)
}

// TestSpoolDirect: with the writer held up for good by a store that
// hangs (past its context) and a queue of 2, the handlers spool what the
// queue has no room for themselves: every exchange is handed over while
// the writer is still held up — no handler waits for it — and nothing is
// dropped; the next turn of a conversation spooled so continues it; once
// the store moves, every exchange is in it once, in order.
func TestSpoolDirect(t *testing.T) {
	rg, fs, _ := spoolRig(t, t.TempDir(), func(o *gateway.Options) { o.QueueSize = 2 })
	fs.mode.Store(storeHangs)
	xs := []answered{rg.ask(t, 0)}
	waitFor(t, "the first write", func() bool { return fs.batches.Load() > 0 })
	const streams, each = 8, 25
	xs = append(xs, rg.askAll(t, streams, each, nil)...)
	if t.Failed() {
		return
	}
	// The writer holds the first exchange, the queue two more: the
	// others are in the spool, put there by their handlers.
	const n = 1 + streams*each
	if s := rg.gw.Stats(); s.Dropped != 0 || s.Failed != 0 || s.Recorded != 0 || s.Spooled < n-3 {
		t.Fatalf("stats %+v with the store hung, want %d spooled at least, none dropped", s, n-3)
	}

	// The next turn of an exchange spooled directly (the queue is full)
	// goes on in its conversation, after it.
	xs = append(xs, rg.ask(t, n))
	last := &xs[n]
	reply := wantReply(t, "anthropic", rg.up.stream, true)
	h := convo.History{convo.User(fmt.Sprintf("question %d", n)), reply, answers(reply, `{"temp_c":18}`)}
	resp := rg.post(t, "anthropic", "m", requestBody(t, "anthropic", "m", h, true), true, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if conv := resp.Header.Get("Convo-Conversation"); conv != last.conv {
		t.Fatalf("the next turn went to %s, not the spooled exchange's %s", conv, last.conv)
	}
	last.ids = append(last.ids, strings.Split(resp.Header.Get("Convo-Message-Ids"), ",")...)

	fs.mode.Store(storeUp)
	waitFor(t, "every exchange recorded", func() bool { return rg.gw.Stats().Recorded == n+2 })
	checkRecorded(t, rg.st, xs)
	if s := rg.gw.Stats(); s.Dropped != 0 || s.Failed != 0 {
		t.Fatalf("stats %+v, want nothing dropped or failed", s)
	}
	rg.drain(t)
}

// TestSpoolFull: with the store down and the spool full, exchanges are
// still answered; the recordings that do not fit are counted dropped (and
// /readyz says 503, losing), the others recorded once the store is back.
func TestSpoolFull(t *testing.T) {
	logs := &lockedLog{}
	start := time.Now()
	rg, fs, _ := spoolRig(t, t.TempDir(), func(o *gateway.Options) {
		o.SpoolMaxBytes, o.BatchDelay = 20<<10, -1
		o.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelError}))
	})
	fs.mode.Store(storeDown)
	const n = 30
	var xs []answered
	for i := range n {
		xs = append(xs, rg.ask(t, i))
	}
	waitFor(t, "every exchange spooled or dropped", func() bool { s := rg.gw.Stats(); return s.Spooled+s.Dropped == n })
	s := rg.gw.Stats()
	if s.Dropped == 0 || s.Spooled == 0 {
		t.Fatalf("stats %+v: want some spooled and the rest dropped in a 20 KiB spool", s)
	}
	if code, body := rg.readyz(t); code != 503 || body["status"] != "losing" {
		t.Fatalf("/readyz while dropping: %d %v, want 503 losing", code, body)
	}
	// The loss is logged, never silent, and at most once a second: the
	// lines' counts add up to at most what was dropped (a second's worth
	// may still wait for its line).
	lines, lost := logs.count(t, "gateway: recordings lost")
	if lines == 0 || lost == 0 || lost > s.Dropped || float64(lines) > 1+time.Since(start).Seconds() {
		t.Fatalf("%d lines logging %d lost recordings in %v, with %d dropped: want at least one, at most one a second",
			lines, lost, time.Since(start), s.Dropped)
	}
	fs.mode.Store(storeUp)
	waitFor(t, "the spool to be replayed", func() bool { return rg.gw.Stats().Recorded == s.Spooled })
	// The first ones were spooled: the spool keeps the oldest.
	checkRecorded(t, rg.st, xs[:s.Spooled])
	rg.drain(t)
}

// TestSpoolRestart: what a gateway left in its spool — closed with the
// store down, or killed (its spool copied as it was, a torn frame at the
// end) — is recorded by the next gateway on the spool, once.
func TestSpoolRestart(t *testing.T) {
	dir := t.TempDir()
	rg, fs, _ := spoolRig(t, dir, nil)
	fs.mode.Store(storeDown)
	const n = 12
	var xs []answered
	for i := range n {
		xs = append(xs, rg.ask(t, i))
	}
	waitFor(t, "the exchanges to be spooled", func() bool { return rg.gw.Stats().Spooled == n })
	// A kill -9: the files as they are now, and half a frame being written.
	killed := t.TempDir()
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*"))
	if len(segs) == 0 {
		t.Fatal("no spool segment")
	}
	for _, s := range segs {
		b, _ := os.ReadFile(s)
		if s == segs[len(segs)-1] {
			b = append(b, 0x20, 0, 0, 0, 1, 2, 3, 4, 5) // a torn frame
		}
		os.WriteFile(filepath.Join(killed, filepath.Base(s)), b, 0o600)
	}
	rg.drain(t) // closed with the store down: the spool keeps them
	for _, from := range []string{dir, killed} {
		inner := fs.Store
		g2, err := gateway.New(gateway.Options{Config: gateway.Config{
			Upstreams: []gateway.Upstream{{Name: "up", Protocol: "anthropic", URL: rg.up.URL}},
			Routes:    []gateway.Route{{Model: "*", Upstream: "up"}},
		}, Store: inner, Anonymous: true, SpoolDir: from, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the restarted gateway to replay", func() bool { return g2.Stats().Recorded == n })
		checkRecorded(t, rg.st, xs)
		if err := g2.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSpoolPrivate: what is spooled is what the store would get: redacted,
// and without content in metadata mode.
func TestSpoolPrivate(t *testing.T) {
	dir := t.TempDir()
	rg, fs, _ := spoolRig(t, dir, func(o *gateway.Options) {
		o.Config.Record = gateway.RecordConfig{Redact: gateway.RedactConfig{Builtin: true}}
	})
	fs.mode.Store(storeDown)
	_, conv, _ := rg.secretExchange(t, nil)
	h := convo.History{convo.User("metadata only: the word zanzibar")}
	resp := rg.post(t, "openai-chat", "m-1", requestBody(t, "openai-chat", "m-1", h, true), true, map[string]string{"Convo-Record": "metadata"})
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	waitFor(t, "the exchanges to be spooled", func() bool { return rg.gw.Stats().Spooled == 2 })
	var all []byte
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*"))
	for _, s := range segs {
		b, _ := os.ReadFile(s)
		all = append(all, b...)
	}
	if !bytes.Contains(all, []byte(conv)) {
		t.Fatal("the spool does not hold the exchange")
	}
	for _, secret := range []string{"alice@example.org", "4111 1111 1111 1111", "zanzibar"} {
		if bytes.Contains(all, []byte(secret)) {
			t.Errorf("the spool holds %q", secret)
		}
	}
	fs.mode.Store(storeUp)
	waitFor(t, "the spool to be replayed", func() bool { return rg.gw.Stats().Recorded == 2 })
	rg.drain(t)
}

// TestSpoolConcurrent: many streams while the store goes down and comes
// back, twice: every exchange answered is recorded once.
func TestSpoolConcurrent(t *testing.T) {
	rg, fs, _ := spoolRig(t, t.TempDir(), nil)
	const streams, each = 16, 15
	xs := rg.askAll(t, streams, each, func(i int) {
		switch i {
		case 40, 160:
			fs.mode.Store(storeDown)
		case 100, 200:
			fs.mode.Store(storeUp)
		}
	})
	fs.mode.Store(storeUp)
	waitFor(t, "every exchange recorded", func() bool { return rg.gw.Stats().Recorded == streams*each })
	checkRecorded(t, rg.st, xs)
	if s := rg.gw.Stats(); s.Dropped != 0 || s.Failed != 0 {
		t.Fatalf("stats %+v", s)
	}
	rg.drain(t)
}

// askAll sends streams×each exchanges, numbered from 1, over streams
// clients at once, calling before (when not nil) with each number before
// its exchange, and returns those answered whole (failing the test for
// the others).
func (rg *rig) askAll(t *testing.T, streams, each int, before func(i int)) []answered {
	var mu sync.Mutex
	var xs []answered
	var wg sync.WaitGroup
	var next atomic.Int64
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				i := int(next.Add(1))
				if before != nil {
					before(i)
				}
				x, err := rg.try(t, i)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				xs = append(xs, x)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return xs
}

// lockedLog collects a gateway's JSON log lines.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count returns how many lines have msg and the sum of their exchanges.
func (l *lockedLog) count(t *testing.T, msg string) (lines int, exchanges int64) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		var e struct {
			Msg       string `json:"msg"`
			Exchanges int64  `json:"exchanges"`
		}
		if line == "" || json.Unmarshal([]byte(line), &e) != nil || !strings.HasPrefix(e.Msg, msg) {
			continue
		}
		lines, exchanges = lines+1, exchanges+e.Exchanges
	}
	return lines, exchanges
}
