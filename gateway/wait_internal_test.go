package gateway

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/background"
	"github.com/convo-go/convo/store"
)

// gatedStore holds each Batch until the test lets it through.
type gatedStore struct {
	store.Store
	entered chan batchStart // each Batch that starts
	release chan struct{}
}

// batchStart is what a gatedStore tells of a Batch that starts.
type batchStart struct {
	writes int
	yields bool // asked to give way (store.Yielding)
	nice   int  // the nice value of the thread it was called on (Linux)
}

func (g *gatedStore) Batch(ctx context.Context, writes []store.Write) []store.WriteResult {
	nice, _ := background.ThreadNice()
	g.entered <- batchStart{len(writes), store.Yields(ctx), nice}
	<-g.release
	return make([]store.WriteResult, len(writes))
}

// heldRecorder is a recorder whose store holds each batch until the test
// lets it through; at the test's end every batch is let through. Its
// queue holds 16 records and 1 MiB.
func heldRecorder(t *testing.T) (*recorder, *gatedStore) { return heldRecorderOf(t, 1<<20) }

// heldRecorderOf is heldRecorder with a queue of maxBytes.
func heldRecorderOf(t *testing.T, maxBytes int64) (*recorder, *gatedStore) {
	st := &gatedStore{entered: make(chan batchStart), release: make(chan struct{})}
	rc := newRecorder(st, 16, maxBytes, -1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() {
		close(st.release)
		go func() {
			for range st.entered {
			}
		}()
		_ = rc.close(context.Background())
	})
	return rc, st
}

// testRecord is the record of an exchange of tenant "t" in conversation
// conv, its reply "hi".
func testRecord(conv string) *record {
	m := convo.Assistant("hi")
	return &record{tenant: "t", conv: conv, mode: RecordFull, reply: &m}
}

// TestWaitWrittenOnlyEarlier: a request waits for the records its tenant
// queued before it, not for those queued while it waits, so a tenant's
// steady traffic holds no request up until the bound.
func TestWaitWrittenOnlyEarlier(t *testing.T) {
	rc, st := heldRecorder(t)
	rc.enqueue(testRecord("c1"))
	target := rc.queuedBefore("t")
	if target == (handedOver{}) {
		t.Fatal("nothing queued")
	}
	done := make(chan error)
	go func() {
		_, err := rc.waitWritten(context.Background(), target)
		done <- err
	}()
	if b := <-st.entered; b.writes != 1 { // c1 alone: c2 comes after
		t.Fatalf("first batch of %d writes", b.writes)
	}
	rc.enqueue(testRecord("c2")) // queued after the request: its batch is held
	st.release <- struct{}{}
	// Whether the wait began before c1 was written is the scheduler's
	// choice; either way it must end without c2, well before its bound.
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(waitPending / 2):
		t.Fatal("the request waited for a record queued after it")
	}
	<-st.entered // c2's batch, held until cleanup
}

// okStore takes every write.
type okStore struct{ store.Store }

func (okStore) Batch(_ context.Context, writes []store.Write) []store.WriteResult {
	return make([]store.WriteResult, len(writes))
}

// TestRepliesKeptWhenTranslated: the writer keeps the reply of a
// translated exchange for the next request, and not that of a pass-through
// one, whose next request has nothing to restore.
func TestRepliesKeptWhenTranslated(t *testing.T) {
	rc := newRecorder(okStore{}, 16, 1<<20, -1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, translated := range []bool{false, true} {
		m := convo.Assistant("hi")
		conv := map[bool]string{false: "passed", true: "translated"}[translated]
		rec := &record{tenant: "t", conv: conv, mode: RecordFull, reply: &m, fp: &fingerprinter{},
			client: protocols["openai-chat"], upstream: protocols["openai-chat"]}
		if translated {
			rec.upstream = protocols["anthropic"]
		}
		rc.enqueue(rec)
	}
	if err := rc.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := rc.replies.take("t", "passed"); ok {
		t.Error("a pass-through exchange's reply was kept")
	}
	if _, _, ok := rc.replies.take("t", "translated"); !ok {
		t.Error("a translated exchange's reply was not kept")
	}
}

// TestLookupLongerPrefixQueued: a tool loop's next step, sent the moment
// the step before it was answered, continues the conversation where that
// step's record leaves it, not where the fingerprint cache last saw it: the
// lookup that knows a shorter prefix waits for the conversation's queued
// record.
func TestLookupLongerPrefixQueued(t *testing.T) {
	rc, st, h, queueStep := toolLoop(t)
	queueStep()
	<-st.entered // the second step's record, held
	type found struct {
		conv string
		n    int
	}
	done := make(chan found)
	go func() {
		conv, n, _, err := rc.lookup(context.Background(), "t", prefixes(h, false))
		if err != nil {
			t.Error(err)
		}
		done <- found{conv, n}
	}()
	select {
	case f := <-done:
		t.Fatalf("the lookup did not wait for the queued step: %s at %d messages", f.conv, f.n)
	case <-time.After(50 * time.Millisecond):
	}
	st.release <- struct{}{}
	if f := <-done; f.conv != "conv" || f.n != 4 {
		t.Errorf("found %s at %d messages, want conv at 4", f.conv, f.n)
	}
}

// TestLookupWaitsForFlight: a request sent the moment a reply ended may
// reach the gateway before that exchange is queued for recording. Its
// lookup waits for the exchange whose request it continues, then for its
// record; a request that does not continue it (the same request again, a
// fan-out) does not wait.
func TestLookupWaitsForFlight(t *testing.T) {
	rc, st, h, queueStep := toolLoop(t)
	asked := fingerprint(h[:3], false) // the second step's request
	rc.flights.start("t", asked)
	if conv, n, _, _ := rc.lookup(context.Background(), "t", prefixes(h[:3], false)); conv != "conv" || n != 2 {
		t.Fatalf("the request under way itself, sent again, found %q at %d", conv, n)
	}
	done := make(chan int)
	go func() {
		_, n, _, _ := rc.lookup(context.Background(), "t", prefixes(h, false))
		done <- n
	}()
	select {
	case n := <-done:
		t.Fatalf("the lookup did not wait for the step under way: found %d messages", n)
	case <-time.After(50 * time.Millisecond):
	}
	queueStep()
	rc.flights.end("t", asked)
	<-st.entered
	st.release <- struct{}{}
	if n := <-done; n != 4 {
		t.Errorf("found %d messages, want 4", n)
	}
}

// toolLoop is a recorder whose store holds each batch until the test lets
// it through, and a tool loop's history: a question, a call, its result,
// the answer, thanks. The recorder knows the conversation "conv" up to the
// call; queueStep queues the record of the loop's second step (the result
// and the answer).
func toolLoop(t *testing.T) (rc *recorder, st *gatedStore, h convo.History, queueStep func()) {
	rc, st = heldRecorder(t)
	call := convo.ToolCall("c1", "get_weather", []byte(`{"city":"Paris"}`))
	step1 := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{call}}
	results := convo.ToolResults(convo.ToolResult("c1", "get_weather", `{"temp_c":18}`))
	step2 := convo.Assistant("Sunny, 18°C.")
	h = convo.History{convo.User("Weather in Paris?"), step1, results, step2, convo.User("Thanks")}
	sums := prefixes(h[:2], false).sums
	rc.remember("t", sums[0], "conv")
	return rc, st, h, func() {
		fp := &fingerprinter{}
		for i := range h[:3] {
			fp.add(&h[i])
		}
		rc.enqueue(&record{tenant: "t", conv: "conv", exists: true, mode: RecordFull, msgs: h[2:3:3], reply: &step2, fp: fp,
			client: protocols["openai-chat"], upstream: protocols["anthropic"]})
	}
}

// countingStore counts the store's List calls: each reads every
// conversation of the tenant.
type countingStore struct {
	okStore
	lists int
}

func (c *countingStore) List(context.Context, string, store.ListOptions) ([]store.Conversation, string, error) {
	c.lists++
	return nil, "", nil
}

// TestLookupMissNotAskedAgain: a prefix the store did not have (few-shot
// examples at the head of every request) is not asked for again at once;
// once recorded, it is found in memory.
func TestLookupMissNotAskedAgain(t *testing.T) {
	st := &countingStore{}
	rc := newRecorder(st, 16, 1<<20, -1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { _ = rc.close(context.Background()) })
	h := convo.History{convo.System("Answer in one word."), convo.User("Capital of France?"), convo.Assistant("Paris"), convo.User("Of Italy?")}
	for range 3 {
		if conv, _, _, err := rc.lookup(context.Background(), "t", prefixes(h, false)); conv != "" || err != nil {
			t.Fatalf("found %q (%v)", conv, err)
		}
	}
	if st.lists != 1 {
		t.Errorf("the store was asked %d times for one unknown prefix, want once", st.lists)
	}
	sums := prefixes(h, false).sums
	rc.remember("t", sums[0], "conv")
	if conv, n, _, _ := rc.lookup(context.Background(), "t", prefixes(h, false)); conv != "conv" || n != 3 {
		t.Errorf("after it was recorded, found %q at %d", conv, n)
	}
	if conv, _ := rc.listed(context.Background(), "other tenant", metaKey, sums[0]); conv != "" || st.lists != 2 {
		t.Errorf("another tenant's lookup found %q, or was not asked of the store (%d)", conv, st.lists)
	}
}

// TestWriterInBackground: a writer that took all the queue held is keeping
// up: it prepares its batch and calls the store on a thread of lower
// priority, asking the store to give way too, unless the batch holds a
// long reply, whose copies go sooner at the process's priority. One behind
// its queue, or waited for by a request, gives way in nothing either
// (TestWriterBehind).
func TestWriterInBackground(t *testing.T) {
	base, err := background.ThreadNice()
	if err != nil {
		t.Skip(err)
	}
	rc, st := heldRecorderOf(t, 64<<20)
	for _, c := range []struct {
		conv string
		size int // of the reply's copy
		bg   bool
	}{{"c1", 0, true}, {"c2", decodeHere, false}, {"c3", 64 << 10, true}} {
		rec := testRecord(c.conv)
		if c.size > 0 {
			rec.body = [][]byte{make([]byte, 0, c.size)}
		}
		rc.enqueue(rec)
		b := <-st.entered // the queue is empty
		want := base
		if c.bg {
			want = min(base+background.Nice, 19)
		}
		if b.yields != c.bg || b.nice != want {
			t.Errorf("%s, a reply of %d bytes, the writer keeping up: asked to give way %v, at nice %d; want %v at %d", c.conv, c.size, b.yields, b.nice, c.bg, want)
		}
		st.release <- struct{}{}
	}
}

// TestWriterBehind: a writer is behind while records are queued after the
// batch it took, or while a request waits for a record to be written (that
// request goes first).
func TestWriterBehind(t *testing.T) {
	held := func() *recorder {
		rc, st := heldRecorder(t)
		rc.enqueue(testRecord("c1"))
		<-st.entered // c1's batch, held: the queue is empty
		if rc.behind() {
			t.Fatal("behind with nothing queued and no one waiting")
		}
		return rc
	}
	rc := held()
	rc.enqueue(testRecord("c2"))
	if !rc.behind() {
		t.Error("not behind with a record queued after its batch")
	}
	// Behind, it asks the store to give way in nothing (a recorder of its
	// own, whose writer has written nothing: only this call writes).
	idle, st := heldRecorder(t)
	go idle.writeBatch([]*record{testRecord("c3")}, true)
	if (<-st.entered).yields {
		t.Error("a writer behind asked the store to give way")
	}
	rc = held()
	go func() { _, _ = rc.waitWritten(context.Background(), rc.queuedBefore("t")) }()
	for start := time.Now(); rc.waiting.Load() == 0; runtime.Gosched() {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the request never counted as waiting")
		}
	}
	if !rc.behind() {
		t.Error("not behind while a request waits for a record")
	}
}

// heldStore holds every Batch until open is closed, then takes it (without
// keeping anything) and logs the ids of its writes' last messages.
type heldStore struct {
	store.Store
	open    chan struct{}
	entered atomic.Int32 // the batches begun
	mu      sync.Mutex
	log     []string
}

// written is the replies the store has written, in order, comma-separated.
func (h *heldStore) written() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.log, ",")
}

func (h *heldStore) Batch(ctx context.Context, writes []store.Write) []store.WriteResult {
	h.entered.Add(1)
	<-h.open
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, w := range writes {
		h.log = append(h.log, w.Messages[len(w.Messages)-1].ID)
	}
	return make([]store.WriteResult, len(writes))
}

// TestSpoolDirectOrder: with the queue full, a record whose conversation
// has records queued is not spooled ahead of them (the handler waits);
// one whose conversation has records on their way to the spool directly
// follows them there, even with room in the queue, and reaches the store
// after them; a request waits for a tenant's records spooled directly as
// for those queued.
func TestSpoolDirectOrder(t *testing.T) {
	st := &heldStore{open: make(chan struct{})}
	rc := spooledRecorder(t, st)
	rec := func(conv, reply string) *record {
		r := testRecord(conv)
		r.replyID = reply
		return r
	}
	rc.enqueue(rec("c1", "a"))
	for start := time.Now(); st.entered.Load() == 0; time.Sleep(time.Millisecond) { // the writer writes a, and is held
		if time.Since(start) > 10*time.Second {
			t.Fatal("the writer never took the first record")
		}
	}
	for _, id := range []string{"b1", "b2"} {
		if ticket, why := rc.offer(rec("c1", id)); ticket != 0 || why != "" {
			t.Fatalf("%s: ticket %d, %q: want it queued", id, ticket, why)
		}
	}
	if ticket, why := rc.offer(rec("c1", "c")); ticket != 0 || why != queueFull {
		t.Fatalf("c, behind b1 and b2 in a full queue: ticket %d, %q: want it to wait", ticket, why)
	}
	d, e := rec("c2", "d"), rec("c2", "e")
	if ticket, why := rc.offer(d); ticket != 1 || why != "" {
		t.Fatalf("d, in a full queue: ticket %d, %q: want ticket 1", ticket, why)
	}
	close(st.open) // a, b1 and b2 are written: the queue is empty
	if _, err := rc.waitWritten(context.Background(), handedOver{seq: 3}); err != nil || rc.queuedBefore("t\x00c1") != (handedOver{}) {
		t.Fatalf("a, b1 and b2 not written: %v", err)
	}
	if ticket, why := rc.offer(e); ticket != 2 || why != "" {
		t.Fatalf("e, after d on its way to the spool: ticket %d, %q: want ticket 2", ticket, why)
	}
	target := rc.queuedBefore("t")
	if target != (handedOver{ticket: 2}) {
		t.Fatalf("the tenant's records before a request: %+v, want ticket 2", target)
	}
	done := make(chan struct{})
	go func() { rc.spoolDirect(e, 2); close(done) }()
	rc.spoolDirect(d, 1)
	<-done
	if waited, err := rc.waitWritten(context.Background(), target); err != nil || waited {
		t.Fatalf("waited %v (%v) for records spooled already", waited, err)
	}
	for start := time.Now(); rc.recorded.Load() < 5; time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the spool was never replayed")
		}
	}
	log := st.written()
	if log != "a,b1,b2,d,e" {
		t.Fatalf("the store got %s, want a,b1,b2,d,e", log)
	}
	closeRecorder(t, rc)
}

// TestWaitReplayed: a conversation in the spool is not in the store until
// the replayer has written it; a lookup that reads it from the store waits
// for that, and only for conversations in the spool.
func TestWaitReplayed(t *testing.T) {
	st := &heldStore{open: make(chan struct{})}
	rc := spooledRecorder(t, st)
	r := testRecord("c1")
	r.replyID = "a"
	rc.mu.Lock()
	ticket := rc.ticketLocked(r, "t\x00c1")
	rc.mu.Unlock()
	rc.spoolDirect(r, ticket) // the replayer's write of it is held
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if rc.waitReplayed(canceled, "t", "c1") {
		t.Fatal("c1 counted replayed while the store holds its write")
	}
	if !rc.waitReplayed(canceled, "t", "c2") {
		t.Fatal("c2, never spooled, waited for")
	}
	close(st.open)
	if !rc.waitReplayed(context.Background(), "t", "c1") {
		t.Fatal("c1 not replayed within the bound")
	}
	log := st.written()
	if log != "a" {
		t.Fatalf("the store got %q once c1 counted replayed, want a", log)
	}
	closeRecorder(t, rc)
}

// TestSpoolDirectPanic: a record whose preparation panics leaves its
// ticket empty, and the records with later tickets are spooled all the
// same.
func TestSpoolDirectPanic(t *testing.T) {
	st := &heldStore{open: make(chan struct{})}
	close(st.open)
	rc := spooledRecorder(t, st)
	bad, good := testRecord("c1"), testRecord("c2")
	bad.req = []byte("{}") // with no client protocol to read it again in: prepare panics
	rc.mu.Lock()
	t1, t2 := rc.ticketLocked(bad, "t\x00c1"), rc.ticketLocked(good, "t\x00c2")
	rc.mu.Unlock()
	done := make(chan struct{})
	go func() { rc.spoolDirect(good, t2); close(done) }()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("preparing the bad record did not panic")
			}
		}()
		rc.spoolDirect(bad, t1)
	}()
	<-done
	if n := rc.dur.spooled.Load(); n != 1 {
		t.Fatalf("%d spooled, want the good record's 1", n)
	}
	closeRecorder(t, rc)
}

// spooledRecorder is a recorder on st with a queue of 2 and a spool.
func spooledRecorder(t *testing.T, st store.Store) *recorder {
	rc := newRecorder(st, 2, 1<<20, -1, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := rc.openDurable(t.TempDir(), 1<<20); err != nil {
		t.Fatal(err)
	}
	return rc
}

// closeRecorder closes rc and its spool, as Gateway.Close does.
func closeRecorder(t *testing.T, rc *recorder) {
	if err := rc.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rc.closeDurable(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestDecodedHereOnlyShort: with the queue pressed, a handler decodes a
// short streamed reply before queuing it, and leaves a long one (more
// than decodeHere) to the writer, whose decoding does not hold the
// client's response open.
func TestDecodedHereOnlyShort(t *testing.T) {
	rc, st := heldRecorder(t)
	rc.enqueue(testRecord("c0"))
	<-st.entered // the writer holds c0's batch
	for i := range cap(rc.q) / 2 {
		rc.enqueue(testRecord("c" + strconv.Itoa(i+1)))
	}
	if !rc.pressed() {
		t.Fatal("the queue is not pressed")
	}
	chunk := []byte(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi "},"finish_reason":null}]}` + "\n\n")
	tapOf := func(n int) *record {
		body := bytes.Repeat(chunk, n/len(chunk)+1)
		return &record{tenant: "t", conv: "long", mode: RecordFull, upstream: protocols["openai-chat"], streamed: true, body: [][]byte{body}}
	}
	short, long := tapOf(64<<10), tapOf(decodeHere+1)
	rc.enqueue(short)
	if short.body != nil || short.reply == nil || short.reply.Text() == "" {
		t.Errorf("a short reply queued under pressure is not decoded: reply %v", short.reply)
	}
	rc.enqueue(long)
	if long.body == nil || long.reply != nil {
		t.Error("a long reply was decoded by its handler")
	}
}

// delayedRecorder is a recorder that waits an hour to fill a batch, its
// store telling the test of each batch (let through at once).
func delayedRecorder(t *testing.T) (*recorder, chan batchStart) {
	st := &gatedStore{entered: make(chan batchStart, maxBatch), release: make(chan struct{})}
	close(st.release)
	rc := newRecorder(st, 2*maxBatch, 1<<30, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() {
		// Bounded: a writer that missed its wake-up waits an hour.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rc.close(ctx)
	})
	return rc, st.entered
}

// nextBatch is the size of the next batch the writer writes, failing the
// test when none comes within a generous bound (the writer would wait an
// hour: it was not told to stop waiting).
func nextBatch(t *testing.T, entered chan batchStart) int {
	t.Helper()
	select {
	case b := <-entered:
		return b.writes
	case <-time.After(10 * time.Second):
		t.Fatal("no batch written: the writer is still waiting for more records")
		return 0
	}
}

// TestWriterSleepsThroughDelay: while the writer waits to fill a batch,
// what is handed over stays in the queue, and the writer takes it all
// when its wait ends; it is not woken for each record (a thread's wake-up
// an exchange).
func TestWriterSleepsThroughDelay(t *testing.T) {
	rc, entered := delayedRecorder(t)
	rc.enqueue(testRecord("c0")) // wakes the idle writer, which then waits for more
	for start := time.Now(); len(rc.q) > 0; runtime.Gosched() {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the writer never took the first record")
		}
	}
	time.Sleep(20 * time.Millisecond) // let it settle into its wait
	for i := 1; i <= 5; i++ {
		rc.enqueue(testRecord("c" + strconv.Itoa(i)))
		if got := len(rc.q); got != i {
			t.Fatalf("%d records queued after handing over %d while the writer waits: it took them one by one", got, i)
		}
	}
	rc.hurry <- struct{}{} // a lookup waits: the wait ends
	if n := nextBatch(t, entered); n != 6 {
		t.Fatalf("a batch of %d records, want the 6 handed over", n)
	}
}

// TestWriterWakesForFullBatch: a batch's worth of records handed over
// ends the writer's wait without a lookup, and closing the recorder ends
// it too, writing what is queued.
func TestWriterWakesForFullBatch(t *testing.T) {
	rc, entered := delayedRecorder(t)
	for i := range maxBatch {
		rc.enqueue(testRecord("c" + strconv.Itoa(i)))
	}
	total := 0
	for total < maxBatch {
		total += nextBatch(t, entered)
	}
	rc.enqueue(testRecord("last"))
	for start := time.Now(); rc.gathered.Load() == 0; runtime.Gosched() {
		if time.Since(start) > 10*time.Second {
			t.Fatal("the writer never waited for more after the last record")
		}
	}
	done := make(chan error)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- rc.close(ctx)
	}()
	if n := nextBatch(t, entered); n != 1 {
		t.Fatalf("closing wrote a batch of %d, want the last record", n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
