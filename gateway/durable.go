package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway/spool"
	"github.com/convo-go/convo/store"
)

// The spool (Options.SpoolDir) keeps what the store cannot take: the
// writer appends a batch to it, instead of writing it to the store, once
// a store write fails for a reason of the store's (not the record's), or
// a write stalls while the queue fills, and from then on until a replayer
// goroutine has written everything spooled to the store, in order. So the
// store receives exchanges in the order they were queued, and an exchange
// in the spool survives a crash of the gateway. What is spooled is what
// the store would get — the writes after the record modes and redaction —
// never the raw exchange.
//
// Exactly once: a replayed write whose messages the store holds already
// (it committed before the gateway could note so in the spool's head, or
// a write that timed out had committed) is refused by the store — its
// message ids are unique in a conversation (store.ErrExists), or its
// messages no longer follow what the conversation ends with
// (store.ErrInvalid) — and the replayer, finding the write's last message
// in the store under its id, counts it recorded.

// Timings of the spool.
const (
	// stallMax is how long a store write may take before the writer
	// gives up on it and spools its batch (see watch).
	stallMax = 10 * time.Second
	// stallMin is how long a store write must have taken before the
	// queue's pressure gives up on it (see watch), and before a full
	// queue sends batches to the spool rather than to the store: a
	// store that writes a batch in less keeps pace, however loaded the
	// machine, and spooling its batches would only add work (writing,
	// reading back and decoding each entry) while it catches up.
	stallMin = 2 * time.Second
	// retryMin and retryMax bound the replayer's wait between attempts
	// on a store that failed.
	retryMin = 250 * time.Millisecond
	// replayBytes bounds the payloads of one replayed batch.
	replayBytes = 8 << 20
)

// retryMax: see retryMin (a variable for the tests).
var retryMax = 5 * time.Second

// durable is the recorder's spool and its replayer.
type durable struct {
	sp    *spool.Spool
	wake  chan struct{} // something was spooled: the replayer looks
	stop  chan struct{} // closed by close: the replayer drains what it can, then ends
	abort chan struct{} // closed when close's context ends: the replayer stops after its batch
	done  chan struct{} // closed when the replayer has ended

	mu       sync.Mutex // guards spilling; held while a batch is appended
	spilling bool       // the spool holds exchanges the store has not: new ones go after them

	direct direct // the records handlers spool themselves

	// Where the conversations in the spool are, for a lookup that reads
	// one from the store (waitReplayed); guarded by mu.
	appended  uint64            // frames appended since the spool opened, those it had then included
	replayed  uint64            // frames replayed (the head advanced past them)
	lastFrame map[string]uint64 // by tenant \x00 conversation, its last frame not replayed (by appended's count)
	frames    []framed          // the frames lastFrame notes, oldest first
	unknown   uint64            // the last frame frames had no room for, or the earlier run's last
	moved     chan struct{}     // closed (and replaced) when the head advances

	spooled, retried atomic.Int64
}

// framed is a conversation's frame in the spool (durable.frames).
type framed struct {
	key string
	at  uint64
}

// maxFramed bounds the frames durable.frames notes; past it a lookup of a
// conversation lastFrame does not note waits for everything spooled
// before.
const maxFramed = 1 << 16

// direct is where handlers that found the queue full leave the records
// they prepared (spoolDirect), until they are appended to the spool in the
// order of their tickets, consecutive ones in one append (one fsync).
type direct struct {
	mu        sync.Mutex
	cond      sync.Cond               // signaled when an append ends; L is &mu
	ready     map[uint64]*directEntry // by ticket, prepared and not appended
	done      uint64                  // the last ticket appended
	appending bool                    // a handler is appending
}

// directEntry is a record a handler prepared for the spool.
type directEntry struct {
	ticket  uint64
	rec     *record
	w       store.Write
	fp      string
	payload []byte // its spoolEntry; nil when it could not be encoded
}

// health is what /readyz reports of the store, for the recorder with or
// without a spool.
type health struct {
	mu      sync.Mutex
	err     string    // the last store failure, "" once a write succeeded
	since   time.Time // when failures began
	dropped time.Time // the last time a recording was dropped
}

func (h *health) failed(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == "" {
		h.since = time.Now()
	}
	h.err = err.Error()
}

func (h *health) ok() {
	h.mu.Lock()
	h.err = ""
	h.mu.Unlock()
}

func (h *health) drop() {
	h.mu.Lock()
	h.dropped = time.Now()
	h.mu.Unlock()
}

// rateLog lets a kind of line be logged at most once a second, with how
// many events it stands for.
type rateLog struct {
	mu   sync.Mutex
	last time.Time
	n    int
}

// note counts n events and returns how many to log, 0 when a line was
// logged less than a second ago.
func (l *rateLog) note(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n += n
	if time.Since(l.last) < time.Second {
		return 0
	}
	n, l.n, l.last = l.n, 0, time.Now()
	return n
}

// lose counts n recordings lost for reason, logs it (at most once a
// second) and notes it for /readyz.
func (rc *recorder) lose(n int, reason string) {
	rc.dropped.Add(int64(n))
	rc.health.drop()
	if k := rc.lost.note(n); k > 0 {
		rc.log.Error("gateway: recordings lost: "+reason, "exchanges", k)
	}
}

// storeFailed notes a store failure the spool keeps the writes of, logs
// it (at most once a second) and notes it for /readyz.
func (rc *recorder) storeFailed(err error, n int) {
	rc.health.failed(err)
	if k := rc.storeErrs.note(n); k > 0 {
		rc.log.Error("gateway: the store failed; spooling", "exchanges", k, "err", err)
	}
}

// transient reports whether a store error is the store's trouble rather
// than the write's: the write may succeed later as it is.
func transient(err error) bool {
	for _, e := range []error{store.ErrInvalid, store.ErrNotFound, store.ErrConflict, store.ErrExists} {
		if errors.Is(err, e) {
			return false
		}
	}
	return true
}

// spoolEntry is a spooled exchange: the store write that records it and
// the forks of its other candidates. Stored format, version 1
// (testdata/spool/v1.seg): add members, never change these.
type spoolEntry struct {
	V        int             `json:"v"`
	Tenant   string          `json:"tenant"`
	Conv     string          `json:"conversation"`
	Create   bool            `json:"create,omitempty"`
	Meta     json.RawMessage `json:"meta,omitempty"`
	Messages []convo.Message `json:"messages"`
	Forks    []spoolFork     `json:"forks,omitempty"`
	// Charges are the write's spend charges (store.Write.Charges).
	Charges []store.Charge `json:"charges,omitempty"`
}

// spoolFork is a candidate's fork of a spooled exchange (forkWrite).
type spoolFork struct {
	Conv     string          `json:"conversation"`
	Meta     json.RawMessage `json:"meta,omitempty"`
	Messages []convo.Message `json:"messages"`
	Tail     int             `json:"tail"`
}

// encodeEntry encodes a spooled exchange: the bytes json.Marshal writes
// for its spoolEntry, but each message written once, into a buffer of the
// entry's size. json.Marshal writes a message, copies it into its buffer
// (growing it by doubling) and copies that buffer: a 40 MB reply 120 MB
// allocated, and held three times at once.
func encodeEntry(w store.Write, forks []forkWrite) ([]byte, error) {
	type head struct { // spoolEntry's members before messages
		V      int             `json:"v"`
		Tenant string          `json:"tenant"`
		Conv   string          `json:"conversation"`
		Create bool            `json:"create,omitempty"`
		Meta   json.RawMessage `json:"meta,omitempty"`
	}
	type forkHead struct { // spoolFork's
		Conv string          `json:"conversation"`
		Meta json.RawMessage `json:"meta,omitempty"`
	}
	size := 256 + messagesSize(w.Messages)
	for _, f := range forks {
		size += 256 + messagesSize(f.msgs)
	}
	b, err := appendObjectStart(make([]byte, 0, size), head{V: 1, Tenant: w.Tenant, Conv: w.ID, Create: w.Create, Meta: w.Meta})
	if err == nil {
		b, err = appendMessages(append(b, `,"messages":`...), w.Messages)
	}
	if err == nil && len(forks) > 0 {
		b = append(b, `,"forks":[`...)
		for i, f := range forks {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendObjectStart(b, forkHead{Conv: f.conv, Meta: f.meta}); err != nil {
				break
			}
			if b, err = appendMessages(append(b, `,"messages":`...), f.msgs); err != nil {
				break
			}
			b = strconv.AppendInt(append(b, `,"tail":`...), int64(f.tail), 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if err == nil && len(w.Charges) > 0 {
		var c []byte
		c, err = json.Marshal(w.Charges)
		b = append(append(b, `,"charges":`...), c...)
	}
	if err != nil {
		return nil, fmt.Errorf("spooled exchange: %w", err)
	}
	return append(b, '}'), nil
}

// messagesSize estimates the bytes of msgs encoded.
func messagesSize(msgs []convo.Message) int {
	n := 2
	for i := range msgs {
		n += msgs[i].EstimatedBytes() + 1
	}
	return n
}

// appendObjectStart appends v as json.Marshal writes it, without its
// closing brace.
func appendObjectStart(b []byte, v any) ([]byte, error) {
	o, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, o[:len(o)-1]...), nil
}

// appendMessages appends msgs as json.Marshal writes them: each message's
// canonical JSON compacted, with <, >, &, U+2028 and U+2029 escaped.
func appendMessages(b []byte, msgs []convo.Message) ([]byte, error) {
	if msgs == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	var scratch []byte
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		at := len(b)
		var err error
		if b, err = convo.AppendMessage(b, m); err != nil {
			return b, fmt.Errorf("messages[%d]: %w", i, err)
		}
		if !json.Valid(b[at:]) {
			return b, fmt.Errorf("messages[%d]: encoded as invalid JSON", i)
		}
		if _, same := marshalForm(nil, b[at:], false); !same {
			scratch = append(scratch[:0], b[at:]...)
			b, _ = marshalForm(b[:at], scratch, true)
		}
	}
	return append(b, ']'), nil
}

// marshalForm appends to dst, when write is set, the valid JSON value v as
// json.Marshal writes a Marshaler's output: no space outside strings, and
// <, >, &, U+2028 and U+2029 escaped. It reports whether that is v as it
// is; without write it returns at the first difference.
func marshalForm(dst, v []byte, write bool) ([]byte, bool) {
	const hex = "0123456789abcdef"
	in, esc, same := false, false, true
	for i := 0; i < len(v); i++ {
		c := v[i]
		var repl []byte // written instead of c (and, for U+2028 and U+2029, the two bytes after it)
		switch {
		case c == '<' || c == '>' || c == '&':
			repl = []byte{'\\', 'u', '0', '0', hex[c>>4], hex[c&0xF]}
		case c == 0xE2 && i+2 < len(v) && v[i+1] == 0x80 && v[i+2]&^1 == 0xA8:
			repl = []byte{'\\', 'u', '2', '0', '2', hex[v[i+2]&0xF]}
			i += 2
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			repl = []byte{}
		}
		switch {
		case repl == nil && write:
			dst = append(dst, c)
		case repl == nil:
		case !write:
			return dst, false
		default:
			dst, same = append(dst, repl...), false
		}
	}
	return dst, same
}

func decodeEntry(b []byte) (store.Write, []forkWrite, error) {
	var e spoolEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return store.Write{}, nil, fmt.Errorf("spooled exchange: %w", err)
	}
	if e.V != 1 {
		return store.Write{}, nil, fmt.Errorf("spooled exchange: version %d, want 1", e.V)
	}
	w := store.Write{Tenant: e.Tenant, ID: e.Conv, Create: e.Create, Version: store.AnyVersion, Meta: e.Meta, Messages: e.Messages, Charges: e.Charges}
	var forks []forkWrite
	for _, f := range e.Forks {
		forks = append(forks, forkWrite{conv: f.Conv, meta: f.Meta, msgs: f.Messages, tail: f.Tail})
	}
	return w, forks, nil
}

// openDurable opens the spool and starts its replayer, which writes what
// an earlier run left in it first.
func (rc *recorder) openDurable(dir string, maxBytes int64) error {
	sp, rec, err := spool.Open(dir, spool.Options{MaxBytes: maxBytes})
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	for _, c := range rec.Cuts {
		rc.log.Warn("gateway: spool: cut a torn tail (a write a crash interrupted)", "where", c)
	}
	d := &durable{sp: sp, wake: make(chan struct{}, 1), stop: make(chan struct{}), abort: make(chan struct{}), done: make(chan struct{}),
		direct: direct{ready: map[uint64]*directEntry{}}}
	d.direct.cond.L = &d.direct.mu
	d.lastFrame, d.moved = map[string]uint64{}, make(chan struct{})
	d.appended, d.unknown = uint64(rec.Frames), uint64(rec.Frames)
	rc.spooling = map[string]uint64{}
	if rec.Frames > 0 {
		rc.log.Info("gateway: spool: recording what an earlier run left", "exchanges", rec.Frames, "dir", dir)
		d.spilling = true
		d.wake <- struct{}{}
	}
	rc.dur = d
	go rc.replay()
	return nil
}

// spill appends a batch's writes to the spool when the spool already
// holds exchanges the store has not, or when force (the store failed
// them, or cannot keep up). It reports whether it took them: recorded or
// lost, the batch is done.
func (rc *recorder) spill(batch []*record, writes []store.Write, fps []string, forks [][]forkWrite, force bool) bool {
	d := rc.dur
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.spilling && !force {
		return false
	}
	payloads := make([][]byte, len(writes))
	for i := range writes {
		payloads[i] = rc.encodeEntry(batch[i], writes[i], forks[i])
	}
	rc.appendLocked(batch, writes, fps, payloads)
	return true
}

// encodeEntry returns rec's spoolEntry, or nil (counted failed, logged)
// when it cannot be encoded: a message the store would refuse as well.
func (rc *recorder) encodeEntry(rec *record, w store.Write, forks []forkWrite) []byte {
	b, err := encodeEntry(w, forks)
	if err != nil {
		rc.failed.Add(1)
		rc.log.Error("gateway: recording failed", "conversation", rec.conv, "err", err)
		return nil
	}
	return b
}

// appendLocked appends the records' entries (payloads, nil for none) to
// the spool in one append, counts what the spool had no room for lost,
// and notes the others written. Called with d.mu held.
func (rc *recorder) appendLocked(recs []*record, writes []store.Write, fps []string, payloads [][]byte) {
	d := rc.dur
	d.spilling = true
	taken := make([]int, 0, len(payloads))
	var ps [][]byte
	for i, p := range payloads {
		if p != nil {
			ps, taken = append(ps, p), append(taken, i)
		}
	}
	if len(ps) == 0 {
		return
	}
	n, err := d.sp.Append(ps, time.Now())
	d.spooled.Add(int64(n))
	if n < len(ps) {
		reason := "the spool is full"
		if !errors.Is(err, spool.ErrFull) {
			reason = fmt.Sprintf("writing the spool: %v", err)
		}
		rc.lose(len(ps)-n, reason)
	}
	for _, i := range taken[:n] {
		// Written in order, after the spool: a lookup may go on from it.
		rc.noteWritten(recs[i], writes[i], fps[i])
		d.appended++
		key := recs[i].tenant + "\x00" + recs[i].conv
		if len(d.frames) < maxFramed {
			d.lastFrame[key] = d.appended
			d.frames = append(d.frames, framed{key, d.appended})
		} else {
			d.unknown = d.appended
		}
	}
	if n > 0 {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// spoolDirect writes a record the queue had no room for to the spool, as
// the writer would — prepared (decoded, priced, kept as the record mode
// and redaction say) and encoded here, in the handler — after the records
// with earlier tickets: a handler appends the run of consecutive tickets
// prepared from the next one on, in one append, while the others wait for
// it. So a full queue costs the handler its record's preparation and at
// worst two appends, never a drop while the spool has room; and the
// writer, which a store in trouble may hold up for seconds (stallMax),
// holds no handler up.
func (rc *recorder) spoolDirect(rec *record, ticket uint64) {
	e := &directEntry{ticket: ticket, rec: rec}
	rc.prepareDirect(e)
	d := rc.dur
	q := &d.direct
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ready[ticket] = e
	for q.done < ticket {
		if q.appending || q.ready[q.done+1] == nil {
			q.cond.Wait()
			continue
		}
		var run []*directEntry
		for t := q.done + 1; q.ready[t] != nil; t++ {
			run = append(run, q.ready[t])
			delete(q.ready, t)
		}
		q.appending = true
		q.mu.Unlock()
		recs, writes, fps, payloads := make([]*record, len(run)), make([]store.Write, len(run)), make([]string, len(run)), make([][]byte, len(run))
		for i, e := range run {
			recs[i], writes[i], fps[i], payloads[i] = e.rec, e.w, e.fp, e.payload
		}
		d.mu.Lock()
		rc.appendLocked(recs, writes, fps, payloads)
		d.mu.Unlock()
		rc.spooledDirect(run)
		q.mu.Lock()
		q.done, q.appending = run[len(run)-1].ticket, false
		q.cond.Broadcast()
	}
}

// prepareDirect prepares e's record for the spool. Should that panic, the
// ticket is left empty, not missing, so that the tickets after it are
// appended all the same, and the panic goes on.
func (rc *recorder) prepareDirect(e *directEntry) {
	defer func() {
		if p := recover(); p != nil {
			q := &rc.dur.direct
			q.mu.Lock()
			q.ready[e.ticket] = e
			q.cond.Broadcast()
			q.mu.Unlock()
			panic(p)
		}
	}()
	w, fp, forks := rc.prepare(e.rec)
	e.w, e.fp, e.payload = w, fp, rc.encodeEntry(e.rec, w, forks)
}

// spooledDirect notes a run of records spoolDirect appended: the requests
// waiting for them (waitWritten) go on.
func (rc *recorder) spooledDirect(run []*directEntry) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, e := range run {
		for _, key := range [...]string{e.rec.tenant, e.rec.tenant + "\x00" + e.rec.conv} {
			if rc.spooling[key] == e.ticket {
				delete(rc.spooling, key)
			}
		}
	}
	rc.spooledThrough = run[len(run)-1].ticket
	close(rc.written)
	rc.written = make(chan struct{})
}

// replay writes what is spooled to the store, in order, whenever woken,
// until the spool is empty; a store that fails is tried again after a
// wait that doubles up to retryMax.
func (rc *recorder) replay() {
	d := rc.dur
	defer close(d.done)
	wait := retryMin
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	stopping, failing := false, false
	for {
		switch {
		case stopping:
		case failing:
			// Wait it out: the writer's spills do not hurry a store in
			// trouble.
			select {
			case <-retry.C:
			case <-d.stop:
				stopping = true
			}
		default:
			select {
			case <-d.wake:
			case <-d.stop:
				stopping = true
			}
		}
		failing = !rc.replayAll()
		switch {
		case stopping:
			return // what is left waits for the next start
		case failing:
			retry.Reset(wait)
			wait = min(2*wait, retryMax)
		default:
			wait = retryMin
		}
	}
}

// replayAll writes the spool to the store until it is empty (true) or the
// store fails (false).
func (rc *recorder) replayAll() bool {
	d := rc.dur
	for {
		frames, mark, err := d.sp.Read(maxBatch, replayBytes)
		if err != nil {
			rc.log.Error("gateway: spool: reading", "err", err)
			return false
		}
		if len(frames) == 0 {
			d.mu.Lock()
			empty := d.sp.Stats().Frames == 0
			if empty {
				d.spilling = false // the writer writes to the store again
			}
			d.mu.Unlock()
			return empty // else appended meanwhile: the writer woke the replayer
		}
		select {
		case <-d.abort:
			return false
		default:
		}
		largest := 0
		for _, f := range frames {
			largest = max(largest, len(f.Data))
		}
		if !rc.replayBatch(frames) {
			return false
		}
		if largest >= returnAfter {
			// As the writer does after a batch (run): a long reply's
			// copies are garbage now, which an idle gateway would keep
			// resident for minutes. Not for a batch long only by its
			// number of frames: replayBytes makes every full batch one,
			// and a store behind its traffic replays batch after batch.
			debug.FreeOSMemory()
		}
		if err := d.sp.Advance(mark); err != nil {
			// The frames are in the store: read again, they are
			// recognised (exactly once, above).
			rc.log.Error("gateway: spool: advancing", "err", err)
			return false
		}
		d.advanced(len(frames))
	}
}

// advanced notes that the head moved past n frames: the lookups waiting
// for them (waitReplayed) go on.
func (d *durable) advanced(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.replayed += uint64(n)
	i := 0
	for ; i < len(d.frames) && d.frames[i].at <= d.replayed; i++ {
		if f := d.frames[i]; d.lastFrame[f.key] == f.at {
			delete(d.lastFrame, f.key)
		}
	}
	d.frames = append(d.frames[:0], d.frames[i:]...)
	close(d.moved)
	d.moved = make(chan struct{})
}

// waitReplayed waits, at most waitPending, until what the spool holds of
// a conversation is in the store, for a lookup that reads the
// conversation from the store (Gateway.recorded), and reports whether it
// is. Without a spool, or with none of the conversation in it, it is at
// once.
func (rc *recorder) waitReplayed(ctx context.Context, tenant, conv string) bool {
	d := rc.dur
	if d == nil {
		return true
	}
	var deadline <-chan time.Time
	for {
		d.mu.Lock()
		target := max(d.lastFrame[tenant+"\x00"+conv], d.unknown)
		done, moved := d.replayed >= target, d.moved
		d.mu.Unlock()
		if done {
			return true
		}
		if deadline == nil {
			t := time.NewTimer(waitPending)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-moved:
		case <-deadline:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// replayBatch writes spooled frames to the store in one batch, and
// reports whether the store took them (each recorded, or refused for
// good: counted failed).
func (rc *recorder) replayBatch(frames []spool.Frame) bool {
	writes := make([]store.Write, 0, len(frames))
	forks := make([][]forkWrite, 0, len(frames))
	largest := 0
	for i := range frames {
		largest = max(largest, len(frames[i].Data))
		w, fw, err := decodeEntry(frames[i].Data)
		frames[i].Data = nil // decoded: a long reply is not held twice while the store writes it
		if err != nil {
			rc.failed.Add(1)
			rc.log.Error("gateway: spool: recording failed", "err", err)
			continue
		}
		writes, forks = append(writes, w), append(forks, fw)
	}
	if largest >= returnAfter {
		// As the writer does before a long reply's write (prepare): the
		// frame and what decoding it left are garbage, and SQLite's
		// copies of the reply, on the C heap, cannot reuse their pages.
		debug.FreeOSMemory()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results := rc.st.Batch(ctx, writes)
	for _, res := range results {
		if res.Err != nil && transient(res.Err) {
			rc.dur.retried.Add(int64(len(writes)))
			rc.storeFailed(res.Err, len(writes))
			return false
		}
	}
	rc.health.ok()
	for i, res := range results {
		w := writes[i]
		at := -1
		switch {
		case res.Err == nil:
			at = res.Conversation.Messages
		case rc.holds(ctx, w):
			// Written before (the gateway stopped before the spool noted
			// it, or a write reported failed had committed): its ids are
			// there, and the store refused them again — as existing, or
			// as not following what the conversation now ends with.
			at = rc.replyAt(ctx, w, forks[i])
		default:
			rc.failed.Add(1)
			rc.log.Error("gateway: recording failed", "conversation", w.ID, "err", res.Err)
			continue
		}
		rc.recorded.Add(1)
		if len(forks[i]) > 0 && at >= 0 {
			rc.writeForks(ctx, &record{tenant: w.Tenant, conv: w.ID}, at-forks[i][0].tail, forks[i])
		}
	}
	return true
}

// holds reports whether the store holds a write's last message: the
// write committed before (writes are all or nothing).
func (rc *recorder) holds(ctx context.Context, w store.Write) bool {
	if len(w.Messages) == 0 {
		return true
	}
	_, err := rc.st.Message(ctx, w.Tenant, w.ID, w.Messages[len(w.Messages)-1].ID)
	return err == nil
}

// replyAt returns, for a write the store held already, the number of
// messages its conversation had after it (where its forks are made from,
// with their tail), or -1 when it has no forks or that is not known.
func (rc *recorder) replyAt(ctx context.Context, w store.Write, forks []forkWrite) int {
	if len(forks) == 0 || len(w.Messages) == 0 {
		return -1
	}
	h, _, err := rc.st.Load(ctx, w.Tenant, w.ID, 0)
	if err != nil {
		return -1
	}
	last := w.Messages[len(w.Messages)-1].ID
	if i := slices.IndexFunc(h, func(m convo.Message) bool { return m.ID == last }); i >= 0 {
		return i + 1
	}
	return -1
}

// closeDurable lets the replayer write what it can of the spool (until
// the store fails or ctx ends), then closes the spool: what is left is
// written at the next start.
func (rc *recorder) closeDurable(ctx context.Context) error {
	d := rc.dur
	// Let the handlers spooling records themselves finish: the recorder
	// is closed, so theirs are the last tickets.
	for done := false; !done; {
		rc.mu.Lock()
		done = rc.spooledThrough >= rc.tickets
		written := rc.written
		rc.mu.Unlock()
		if !done {
			select {
			case <-written:
			case <-ctx.Done():
				done = true
			}
		}
	}
	close(d.stop)
	select {
	case <-d.done:
	case <-ctx.Done():
		// The replayer's batch ends within its own timeout; the spool
		// keeps what it had not advanced past.
		close(d.abort)
		<-d.done
	}
	return d.sp.Close()
}

// spoolStats returns the spool's state, zero without one.
func (rc *recorder) spoolStats() spool.Stats {
	if rc.dur == nil {
		return spool.Stats{}
	}
	return rc.dur.sp.Stats()
}
