package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/background"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/telemetry"
)

// Members of a recorded conversation's metadata: metaKey holds its
// fingerprint; for a conversation of passed-through OpenAI Responses
// exchanges, responseKey holds the id of the OpenAI response the last one
// ended with (see Gateway.previous).
const (
	metaKey     = "convo_gateway_fingerprint"
	responseKey = "convo_gateway_response"
)

// RequestMeta is the member of a recorded conversation's metadata that
// keeps the settings of its last request: the request in
// provider.Request's JSON form without its messages, model, stream,
// user and metadata (tools, tool_choice, output, max_tokens,
// temperature, reasoning, …), so that the request can be made again
// (package replay). It is recorded in the full mode only, without
// redaction rules (they apply to messages), and only up to
// maxSettingsMeta bytes.
const RequestMeta = "convo_request"

// maxSettingsMeta bounds the settings recorded: the store keeps at most
// store.MaxMetaBytes of metadata a conversation.
const maxSettingsMeta = 32 << 10

// recordMeta is the metadata of a recorded conversation: its fingerprint,
// the id of the OpenAI response it ends with and its request's settings,
// each when not empty; nil when all are, so that a write leaves the
// metadata as it is.
func recordMeta(fp, response string, settings json.RawMessage) json.RawMessage {
	if fp == "" && response == "" && settings == nil {
		return nil
	}
	// The bytes json.Marshal gives the map of these members (its keys
	// sorted, as they are written here), without its reflection: the
	// writer builds one for every exchange. settings is json.Marshal's
	// own output (settingsMeta), compact and escaped as Marshal would
	// write it again.
	meta := make([]byte, 0, 64+len(fp)+len(response)+len(settings))
	meta = append(meta, '{')
	if fp != "" {
		meta = appendMetaString(append(meta, `"`+metaKey+`":`...), fp)
	}
	if response != "" {
		if len(meta) > 1 {
			meta = append(meta, ',')
		}
		meta = appendMetaString(append(meta, `"`+responseKey+`":`...), response)
	}
	if settings != nil {
		if len(meta) > 1 {
			meta = append(meta, ',')
		}
		meta = append(append(meta, `"`+RequestMeta+`":`...), settings...)
	}
	return append(meta, '}')
}

// appendMetaString appends s as json.Marshal writes it: as it is when it
// is printable ASCII that Marshal escapes nothing of (a fingerprint, an
// OpenAI response id), by Marshal otherwise.
func appendMetaString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string cannot fail
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// settingsOf is what of a request is recorded under RequestMeta, or nil
// when it has nothing but messages. Who the end user is (user, metadata)
// is not kept.
func settingsOf(req *provider.Request) *provider.Request {
	s := *req
	s.History, s.Model, s.Stream, s.StreamUsage, s.User, s.Metadata = nil, "", false, false, "", nil
	if reflect.ValueOf(s).IsZero() {
		return nil
	}
	return &s
}

// settingsMeta is the JSON of a record's settings, when they are
// recorded: in the full mode, without redaction rules, small enough.
func (rc *recorder) settingsMeta(rec *record) json.RawMessage {
	if rec.settings == nil || (rec.mode != "" && rec.mode != RecordFull) || rc.policy.red != nil {
		return nil
	}
	if c := rc.lastSettings.Load(); c != nil && reflect.DeepEqual(c.req, rec.settings) {
		return c.json
	}
	b, err := json.Marshal(rec.settings)
	if err != nil {
		return nil
	}
	if len(b) > maxSettingsMeta {
		b = nil // not recorded, and not encoded again while they stay the same
	}
	rc.lastSettings.Store(&settingsJSON{rec.settings, b})
	return b
}

// settingsJSON is the last settings settingsMeta encoded and their JSON.
// A client sends the same settings (tools with their schemas, limits)
// with each request of its conversation, and comparing them is cheaper
// than encoding them again when they hold tools: json.Marshal validates
// and compacts every schema again (eight tools: 8.5 µs to encode, 2.5 to
// compare; settings of a single limit: 0.3 and 0.5). Equal values encode to the
// same bytes; neither is changed once recorded (recordMeta copies the
// JSON), so both are shared by the writer and the handlers that prepare
// their own records (prepareDirect).
type settingsJSON struct {
	req  *provider.Request
	json json.RawMessage
}

// cacheKey is the fingerprint cache's key, within a tenant, for the
// conversation whose metadata member name (metaKey, responseKey) is value:
// fingerprints as they are, other members by name too.
func cacheKey(name, value string) string {
	if name == metaKey {
		return value
	}
	return name + "\x00" + value
}

// record is one exchange waiting to be written to the store.
type record struct {
	tenant  string
	conv    string
	exists  bool            // conv is stored: append, else create
	msgs    []convo.Message // the request's messages the store does not hold yet
	fp      *fingerprinter  // the request's fingerprint chain, extended by the reply
	replyID string

	// The reply, one of: reply (decoded already), or body in the
	// upstream's protocol (the tap's copy of a pass-through), or fail.
	reply    *convo.Message
	body     [][]byte  // in chunks (copyReply); nil once decoded
	client   *protocol // the client's protocol, req's
	upstream *protocol
	streamed bool
	fail     string // an error message to record instead of (or after) the reply
	unread   string // why body did not decode (see decode)

	// The request's new messages are msgs or, when that is smaller, the
	// request's bytes (req, in the client's protocol) decoded again by the
	// writer: the messages after the first skip, stored under ids. See
	// compact.
	req  []byte
	skip int
	ids  []string

	cands *candidates // nil unless the request asked for several replies

	// settings is the request without its messages (RequestMeta), or nil.
	settings *provider.Request

	// response is the id of the OpenAI response a passed-through
	// Responses exchange recorded, set by the writer.
	response string

	// turn holds the stored replies of the current turn restored into the
	// request (Gateway.restore), which the turn kept after this write
	// starts with.
	turn []convo.Message

	// charges are the spend counters the reply's cost is charged to (the
	// budgets the exchange is under).
	charges []string

	span *exchangeSpan // for the exchange's span, when the gateway makes spans
	mode RecordMode    // "" is full
	size int64         // what it holds, counted against the queue's bytes (footprint)
	seq  uint64        // its place in the queue: records are written in this order
}

// Sizes of what a queued record holds besides its bytes.
var (
	recordSize  = int64(reflect.TypeFor[record]().Size())
	messageSize = int64(reflect.TypeFor[convo.Message]().Size())
	partSize    = int64(reflect.TypeFor[convo.Part]().Size())
	stringSize  = int64(reflect.TypeFor[string]().Size())
)

// compact keeps the request's bytes instead of its decoded new messages
// when they take less memory, as they do for a short request: a message
// with one text part is some 900 bytes decoded, the JSON of a short
// question a tenth of that. A long history is the other way round (all of
// it is in the request, only its last turn is new), and keeps the
// messages. The writer decodes the bytes again (see messages), so enqueue
// compacts only a record queued past half the queue's bytes.
func (r *record) compact() {
	if r.req == nil {
		return
	}
	keep := int64(len(r.req))
	var decoded int64
	for i := range r.msgs {
		decoded += messageFootprint(&r.msgs[i])
		keep += stringSize + int64(len(r.msgs[i].ID))
	}
	if keep >= decoded {
		r.req = nil
		return
	}
	r.ids = make([]string, len(r.msgs))
	for i := range r.msgs {
		r.ids[i] = r.msgs[i].ID
	}
	r.req, r.msgs = bytes.Clone(r.req), nil
}

// messages returns the request's new messages, decoded again from the
// request's bytes when compact kept those.
func (r *record) messages() ([]convo.Message, error) {
	if r.req == nil {
		return r.msgs, nil
	}
	codec, err := all.Lookup(r.client.name)
	var h convo.History
	if err == nil {
		h, _, err = codec.Decode(r.req, provider.Options{Repair: true})
	}
	if err == nil && len(h)-r.skip != len(r.ids) {
		err = fmt.Errorf("%d new messages, not %d", len(h)-r.skip, len(r.ids))
	}
	if err != nil {
		return nil, fmt.Errorf("the request, read again for recording: %w", err)
	}
	msgs := h[r.skip:]
	for i := range msgs {
		msgs[i].ID = r.ids[i]
	}
	return msgs, nil
}

// footprint estimates the memory a queued record keeps alive: the record,
// the reply's bytes, and the messages it carries (the turn restored
// included) — their structs, parts and (by their canonical JSON's
// estimated size) contents.
func (r *record) footprint() int64 {
	n := recordSize + int64(cap(r.req))
	for _, c := range r.body {
		n += int64(cap(c))
	}
	for _, id := range r.ids {
		n += stringSize + int64(len(id))
	}
	for i := range r.msgs {
		n += messageFootprint(&r.msgs[i])
	}
	if r.reply != nil {
		n += messageFootprint(r.reply)
	}
	for i := range r.others() {
		n += messageFootprint(&r.cands.others[i])
	}
	for i := range r.turn {
		n += messageFootprint(&r.turn[i])
	}
	if r.settings != nil {
		for _, t := range r.settings.Tools {
			n += int64(len(t.Name) + len(t.Description) + len(t.Parameters))
		}
		n += int64(len(r.settings.Output.Schema))
	}
	return n
}

func messageFootprint(m *convo.Message) int64 {
	return messageSize + int64(cap(m.Parts))*partSize + int64(m.EstimatedBytes())
}

// recorder writes records to the store from one goroutine, so recording
// never holds up a client: handlers hand a record over and return.
type recorder struct {
	st      store.Store
	log     *slog.Logger
	tel     *telemetry.Tracer // nil: no spans
	policy  policy            // what is kept: modes and redaction
	spend   *spend            // prices replies and counts them (cost.go)
	flights flights           // the exchanges under way, for lookups that continue them
	// lastSettings is what settingsMeta encoded last.
	lastSettings atomic.Pointer[settingsJSON]
	q            chan *record
	done         chan struct{}
	mu           sync.Mutex // guards closed, the send side of q, seq, queued, wrote, bytes and written
	closed       bool
	seq          uint64            // the last record queued
	queued       map[string]uint64 // the last record queued and not written, by tenant and by tenant \x00 conversation
	wrote        uint64            // the last record written (records are written in queue order)
	bytes        int64             // the footprint of the records queued and not written
	maxBytes     int64             // the bound on bytes
	written      chan struct{}     // closed (and replaced) whenever a record is written, or spooled directly
	delay        time.Duration     // how long an idle writer waits to fill a batch (≤ 0: not at all)
	hurry        chan struct{}     // a lookup waits for a batch: write it now
	wake         chan struct{}     // a batch's worth is queued, or the queue closed: stop waiting for more
	gathered     atomic.Int32      // the records the writer holds while it waits for more (0: it does not wait)
	waiting      atomic.Int32      // requests waiting for records to be written (waitWritten)

	// Records a handler spools itself (spoolDirect) take tickets, and
	// reach the spool in their order; guarded by mu.
	tickets        uint64            // the last ticket given
	spooledThrough uint64            // the last ticket whose record is spooled (or lost): those before it are too
	spooling       map[string]uint64 // the last ticket not spooled, by tenant and by tenant \x00 conversation

	cacheMu sync.Mutex
	cache   map[string]string    // tenant \x00 fingerprint -> conversation id
	missed  map[string]time.Time // cache keys the store did not have, and when it said so
	replies replies              // the reply each conversation's last write ended with

	recorded, dropped, failed atomic.Int64

	dur       *durable      // the spool; nil: none
	health    health        // the store's, for /readyz
	pressure  chan struct{} // the queue passed half its bounds (see watch)
	lagging   bool          // the last store write took stallMin or more, or failed (the writer's own)
	lost      rateLog       // lines about lost recordings
	storeErrs rateLog       // lines about store failures the spool took
}

// waitPending bounds how long a lookup waits for the tenant's queued
// records to be written.
const waitPending = 2 * time.Second

// maxCache bounds the fingerprint cache; it is cleared when full (the
// store answers the misses).
const maxCache = 1 << 16

func newRecorder(st store.Store, size int, maxBytes int64, delay time.Duration, log *slog.Logger) *recorder {
	rc := &recorder{st: st, log: log, q: make(chan *record, size), done: make(chan struct{}), cache: map[string]string{},
		queued: map[string]uint64{}, maxBytes: maxBytes, written: make(chan struct{}), delay: delay, hurry: make(chan struct{}, 1),
		wake: make(chan struct{}, 1), pressure: make(chan struct{}, 1)}
	go rc.run()
	return rc
}

// spoolWait bounds how long a handler waits for its conversation's
// queued records to be written, when the queue is full and a spool would
// take its record but for them (see offer).
const spoolWait = 5 * time.Second

// enqueue hands rec to the writer. A full queue — as many records as it
// holds, or as many bytes — drops the record (counted in Stats, logged, and
// marked on the exchange's span): the client's exchange has been answered
// already, and memory stays bounded. With a spool, the handler appends the
// record to the spool itself instead (see spoolDirect), so only a full
// spool loses it; it waits (up to spoolWait) only while its conversation
// has records queued ahead of it, which must reach the spool first.
func (rc *recorder) enqueue(rec *record) {
	if rec.mode == RecordOff {
		return // the client asked that nothing be kept
	}
	if rec.span != nil {
		rec.span.end = time.Now() // the exchange ends as it is handed over
	}
	pressed := rc.pressed()
	if pressed {
		rec.compact()
	} else {
		// The writer keeps up: the queue's room is not short, and
		// reading the request again would cost the writer more (a short
		// request's decoding was 7–9% of a recorded exchange's CPU in
		// BenchmarkRecordedExchange) than its decoded messages cost the
		// queue.
		rec.req = nil
	}
	if pressed && rec.tapped() <= decodeHere {
		// The writer is behind. A streamed reply's copy is many times
		// the message it decodes to (a 303-chunk Chat stream: 100 KB for
		// 1.7 KB of text), and the queue's bytes bound what it holds:
		// decoded here, on the handler's goroutine, the record takes a
		// fraction of the room, and the writer, whose one goroutine
		// competes with every handler for the processors, has that much
		// less to do. Not a long reply (see decodeHere).
		rec.decode()
	}
	ticket, reason := rc.offer(rec)
	if reason == queueFull && rc.dur != nil {
		ticket, reason = rc.offerWaiting(rec)
	}
	switch {
	case ticket != 0:
		rc.spoolDirect(rec, ticket)
	case reason != "":
		rc.lose(1, reason)
		rc.dropSpan(rec, reason)
	}
}

// decodeHere bounds the replies a handler decodes itself when the queue
// is pressed (see enqueue): the client's response ends only when its
// handler returns, and a long reply's decoding would hold it (a megabyte
// is about a millisecond).
const decodeHere = 1 << 20

// tapped is how many bytes of the reply the tap copied.
func (r *record) tapped() int {
	n := 0
	for _, c := range r.body {
		n += len(c)
	}
	return n
}

// queueFull is offer's answer when the queue has no room.
const queueFull = "queue full"

// offer puts rec in the queue, or, with a spool, gives it a ticket for
// the spool (see spoolDirect), or returns why it can do neither. A record
// larger than the byte bound is taken when nothing else is queued:
// MaxReplyBytes bounds it, and an empty queue is the least memory it can
// wait in.
//
// A conversation's records reach the store in the order they were handed
// over: a record whose conversation has records on their way to the spool
// directly goes there too, after them, even when the queue has room; one
// whose conversation has records queued is not spooled directly ahead of
// them (queueFull: wait for the writer).
func (rc *recorder) offer(rec *record) (ticket uint64, dropped string) {
	rec.size = rec.footprint()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.closed {
		return 0, "shutting down"
	}
	conv := rec.tenant + "\x00" + rec.conv
	if rc.spooling[conv] != 0 {
		return rc.ticketLocked(rec, conv), ""
	}
	if rc.bytes > 0 && rc.bytes+rec.size > rc.maxBytes {
		return rc.fullLocked(rec, conv)
	}
	select {
	case rc.q <- rec:
		rc.seq++
		rec.seq = rc.seq
		rc.queued[rec.tenant] = rec.seq
		rc.queued[conv] = rec.seq
		rc.bytes += rec.size
		if n := rc.gathered.Load(); n > 0 && len(rc.q)+int(n) >= maxBatch {
			rc.wakeWriter()
		}
		if rc.dur != nil && rc.pressedLocked() {
			select {
			case rc.pressure <- struct{}{}:
			default:
			}
		}
		return 0, ""
	default:
		return rc.fullLocked(rec, conv)
	}
}

// fullLocked is offer's answer when the queue has no room for rec: a
// ticket for the spool, when there is one and rec's conversation (key
// conv) has no records queued. Called with mu held.
func (rc *recorder) fullLocked(rec *record, conv string) (ticket uint64, dropped string) {
	if _, behind := rc.queued[conv]; rc.dur != nil && !behind {
		return rc.ticketLocked(rec, conv), ""
	}
	return 0, queueFull
}

// ticketLocked gives rec the next ticket for the spool, and notes it as
// its tenant's and conversation's (key) latest. Called with mu held.
func (rc *recorder) ticketLocked(rec *record, conv string) uint64 {
	rc.tickets++
	rc.spooling[rec.tenant] = rc.tickets
	rc.spooling[conv] = rc.tickets
	return rc.tickets
}

// offerWaiting offers rec again each time the writer has taken a batch,
// until it is queued or given a ticket, or spoolWait has passed.
func (rc *recorder) offerWaiting(rec *record) (ticket uint64, dropped string) {
	deadline := time.NewTimer(spoolWait)
	defer deadline.Stop()
	for {
		rc.mu.Lock()
		written := rc.written
		rc.mu.Unlock()
		if ticket, reason := rc.offer(rec); reason != queueFull {
			return ticket, reason
		}
		select {
		case <-written:
		case <-deadline.C:
			return 0, queueFull
		}
	}
}

// wakeWriter ends the writer's wait for more records (see gather).
func (rc *recorder) wakeWriter() {
	select {
	case rc.wake <- struct{}{}:
	default:
	}
}

// pressedLocked reports whether the queue is past half of either bound.
// Called with mu held.
func (rc *recorder) pressedLocked() bool {
	return len(rc.q) >= cap(rc.q)/2 || rc.bytes >= rc.maxBytes/2
}

// pressed is pressedLocked for a caller without mu.
func (rc *recorder) pressed() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.pressedLocked()
}

// watch cancels a store write that cannot keep up — one under way for
// stallMin or more while the queue passes half full, or that has taken
// stallMax — so that the writer spools its batch and drains the queue (the
// store's batch commits all or nothing; one that committed as it was
// canceled is recognised when replayed). A write that ends sooner is let
// be: the store keeps pace, and on a saturated machine giving up its work
// for the spool's would only cost more. It returns ctx; cancel ends the
// watch.
func (rc *recorder) watch(ctx context.Context, cancel context.CancelFunc, start time.Time) context.Context {
	select {
	case <-rc.pressure: // from before this write
	default:
	}
	go func() {
		t := time.NewTimer(stallMax)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-rc.pressure:
			if wait := time.Until(start.Add(stallMin)); wait > 0 {
				t.Reset(wait)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}
		cancel()
	}()
	return ctx
}

func (rc *recorder) remember(tenant, fp, conv string) {
	rc.cacheMu.Lock()
	delete(rc.missed, tenant+"\x00"+fp)
	if len(rc.cache) >= maxCache {
		clear(rc.cache)
	}
	rc.cache[tenant+"\x00"+fp] = conv
	rc.cacheMu.Unlock()
}

// lookup finds the stored conversation a request continues: the one whose
// fingerprint is that of the longest prefix of its history (whose trail is
// t) ending with an assistant message. It returns the conversation's id,
// how many messages of the history it holds and that prefix's
// fingerprint.
func (rc *recorder) lookup(ctx context.Context, tenant string, t trail) (conv string, n int, fp string, err error) {
	sums, lens := t.sums, t.lens
	if len(sums) == 0 {
		return "", 0, "", nil // nothing a provider answered: a new conversation
	}
	rc.flights.wait(ctx, tenant, t.asked)
	target := rc.queuedBefore(tenant)
	i, conv := rc.cached(tenant, sums)
	if conv != "" {
		if i == 0 {
			return conv, lens[i], sums[i], nil
		}
		// A shorter prefix is known: the conversation's record of a
		// longer one, the step before this request in a tool loop, may
		// still be queued (a client sends its next step the moment a
		// reply ends). Wait for that conversation's records only.
		target = rc.queuedBefore(tenant + "\x00" + conv)
	}
	// The conversation may be among the records queued before this
	// request: look again once they are written.
	if _, err := rc.waitWritten(ctx, target); err != nil {
		return "", 0, "", err
	}
	if i, conv := rc.cached(tenant, sums); conv != "" {
		return conv, lens[i], sums[i], nil
	}
	// Not in memory (the gateway restarted, or another one recorded it):
	// ask the store, for the two longest prefixes only.
	for i, fp := range sums[:min(2, len(sums))] {
		conv, err := rc.listed(ctx, tenant, metaKey, fp)
		if err != nil {
			return "", 0, "", err
		}
		if conv != "" {
			return conv, lens[i], fp, nil
		}
	}
	return "", 0, "", nil
}

// listed returns the conversation of the tenant whose metadata member
// name (metaKey, responseKey) is value, from the store,
// and notes it in the cache. A value the store did not have is not asked
// again for missTTL: a request whose history starts with few-shot
// examples would otherwise ask every time.
func (rc *recorder) listed(ctx context.Context, tenant, name, value string) (string, error) {
	key := cacheKey(name, value)
	rc.cacheMu.Lock()
	at, missed := rc.missed[tenant+"\x00"+key]
	rc.cacheMu.Unlock()
	if missed && time.Since(at) < missTTL {
		return "", nil
	}
	meta, _ := json.Marshal(map[string]string{name: value}) // strings cannot fail
	cs, _, err := rc.st.List(ctx, tenant, store.ListOptions{Limit: 1, Meta: meta})
	switch {
	case err != nil:
		return "", err
	case len(cs) > 0:
		rc.remember(tenant, key, cs[0].ID)
		return cs[0].ID, nil
	}
	rc.cacheMu.Lock()
	if rc.missed == nil || len(rc.missed) >= maxCache {
		rc.missed = map[string]time.Time{}
	}
	rc.missed[tenant+"\x00"+key] = time.Now()
	rc.cacheMu.Unlock()
	return "", nil
}

// missTTL is how long a value the store did not have is not asked for
// again (see listed). A conversation another gateway records meanwhile is
// found by this one once it has passed.
const missTTL = 30 * time.Second

// cached returns the conversation the fingerprint cache has for the first
// of sums it knows, and that one's index.
func (rc *recorder) cached(tenant string, sums []string) (int, string) {
	rc.cacheMu.Lock()
	defer rc.cacheMu.Unlock()
	for i, fp := range sums {
		if conv, ok := rc.cache[tenant+"\x00"+fp]; ok {
			return i, conv
		}
	}
	return 0, ""
}

// handedOver is a place in the order records are handed over: the last
// queued (seq) and the last spooled directly (ticket) of some key, or 0
// for none.
type handedOver struct{ seq, ticket uint64 }

// queuedBefore is the last record a tenant (key: its name) or one of its
// conversations (tenant \x00 conversation) has queued and not written,
// and the last it is spooling directly: zero when there is none.
func (rc *recorder) queuedBefore(key string) handedOver {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return handedOver{rc.queued[key], rc.spooling[key]}
}

// waitWritten waits until the records up to target (see queuedBefore) are
// written (to the store, or to the spool ahead of it), and reports whether
// it waited: a client that sends its next turn the moment a reply ends can
// be quicker than the writer. Records
// queued after target are not waited for, so a tenant's steady traffic
// holds no request up. The wait is short and bounded (waitPending), and
// comes before the upstream request.
func (rc *recorder) waitWritten(ctx context.Context, target handedOver) (bool, error) {
	var deadline <-chan time.Time
	waited := false
	for {
		rc.mu.Lock()
		wrote, spooled, written := rc.wrote, rc.spooledThrough, rc.written
		rc.mu.Unlock()
		if wrote >= target.seq && spooled >= target.ticket {
			return waited, nil
		}
		if !waited {
			waited = true
			t := time.NewTimer(waitPending)
			defer t.Stop()
			deadline = t.C
			rc.waiting.Add(1)
			defer rc.waiting.Add(-1)
		}
		select {
		case rc.hurry <- struct{}{}:
		default: // already asked
		}
		select {
		case <-written:
		case <-deadline:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// stored returns how many messages of a request's history (whose trail is
// t) the conversation conv holds, by its recorded fingerprint, and the
// fingerprint when it is that of those messages (not when the history does
// not extend what is stored); -1 when the conversation does not exist.
// When the history does not extend what is stored yet and the conversation
// has records queued, it waits for them, as lookup does, and looks again.
func (rc *recorder) stored(ctx context.Context, tenant, conv string, t trail) (int, string, error) {
	rc.flights.wait(ctx, tenant, t.asked)
	target := rc.queuedBefore(tenant + "\x00" + conv)
	n, fp, err := rc.storedNow(ctx, tenant, conv, t.sums, t.lens)
	if err != nil || fp != "" {
		return n, fp, err
	}
	waited, err := rc.waitWritten(ctx, target)
	if err != nil {
		return 0, "", err
	}
	if !waited {
		return n, fp, nil
	}
	return rc.storedNow(ctx, tenant, conv, t.sums, t.lens)
}

// storedNow is stored without the wait, given the prefixes of the
// request's history.
func (rc *recorder) storedNow(ctx context.Context, tenant, conv string, sums []string, lens []int) (int, string, error) {
	c, err := rc.st.Get(ctx, tenant, conv)
	if errors.Is(err, store.ErrNotFound) {
		return -1, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	fp := metaFingerprint(c.Meta)
	for i, s := range sums {
		if s == fp {
			return lens[i], fp, nil
		}
	}
	// The request does not extend what is stored (the client edited its
	// history): its last turn — the messages after its last assistant
	// message — is what is new.
	if len(lens) > 0 {
		return lens[0], "", nil
	}
	return 0, "", nil
}

// metaFingerprint is the fingerprint a conversation's metadata records, or
// "".
func metaFingerprint(meta json.RawMessage) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(meta, &m)
	var fp string
	_ = json.Unmarshal(m[metaKey], &fp)
	return fp
}

// tail returns the last n messages stored in conversation conv (fewer
// when it holds fewer), and the conversation's fingerprint as of the same
// read.
func (rc *recorder) tail(ctx context.Context, tenant, conv string, n int) (convo.History, string, bool) {
	c, err := rc.st.Get(ctx, tenant, conv)
	if err != nil || c.Messages == 0 {
		return nil, "", false
	}
	h, c, err := rc.st.Load(ctx, tenant, conv, max(0, c.Messages-n))
	if err != nil || len(h) == 0 {
		return nil, "", false
	}
	return h, metaFingerprint(c.Meta), true
}

// byResponse returns the conversation whose recording ended with OpenAI
// response id (a passed-through Responses exchange), or "": from the
// cache, after the records queued before this request are written, or
// from the store (which has a conversation's last response only).
func (rc *recorder) byResponse(ctx context.Context, tenant, id string) string {
	key := []string{cacheKey(responseKey, id)}
	if _, conv := rc.cached(tenant, key); conv != "" {
		return conv
	}
	if _, err := rc.waitWritten(ctx, rc.queuedBefore(tenant)); err != nil {
		return ""
	}
	if _, conv := rc.cached(tenant, key); conv != "" {
		return conv
	}
	conv, _ := rc.listed(ctx, tenant, responseKey, id)
	return conv
}

// flights are the exchanges under way, by tenant and a key: the
// fingerprint of their request (recorder.flights), or the id of the reply
// they gave (Gateway.handed). A client may send the next request of a
// conversation the moment a reply ends, before its exchange is queued for
// recording, and that request waits for it (see lookup and
// Gateway.recorded).
type flights struct {
	mu sync.Mutex
	m  map[string]*flight
}

// A flight is the exchanges under way with one key.
type flight struct {
	n    int
	done chan struct{} // closed when the last of them ends
}

// start notes an exchange under way with key.
func (f *flights) start(tenant, key string) {
	key = tenant + "\x00" + key
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]*flight{}
	}
	if fl := f.m[key]; fl != nil {
		fl.n++
		return
	}
	f.m[key] = &flight{n: 1, done: make(chan struct{})}
}

// end notes that an exchange start noted is queued for recording, or given
// up.
func (f *flights) end(tenant, key string) {
	key = tenant + "\x00" + key
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl := f.m[key]; fl != nil {
		if fl.n--; fl.n == 0 {
			close(fl.done)
			delete(f.m, key)
		}
	}
}

// wait waits, at most waitPending in all, for the exchanges under way
// with one of keys: for lookup, those a request with those prefixes
// continues.
func (f *flights) wait(ctx context.Context, tenant string, keys []string) {
	var t *time.Timer
	for _, key := range keys {
		f.mu.Lock()
		fl := f.m[tenant+"\x00"+key]
		f.mu.Unlock()
		if fl == nil {
			continue
		}
		if t == nil {
			t = time.NewTimer(waitPending)
			defer t.Stop()
		}
		select {
		case <-fl.done:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// returnAfter is the footprint of a written record past which the writer
// returns the memory it held to the system at once (see run).
const returnAfter = 8 << 20

// maxBatch bounds the records written in one store batch: enough that a
// burst costs few commits, few enough that a lookup waiting for its
// tenant's records does not wait long.
const maxBatch = 128

// run writes the queue in batches of up to maxBatch records, one commit
// each: whatever is queued when the writer is free, and, when that is less
// than a batch, what arrives within rc.delay after (see gather).
func (rc *recorder) run() {
	defer close(rc.done)
	batch := make([]*record, 0, maxBatch)
	wait := time.NewTimer(time.Hour)
	wait.Stop()
	bg := background.New()
	defer bg.Stop()
	inBackground := func() { rc.writeBatch(batch, false) } // of the batch at the time
	for rec := range rc.q {
		batch = rc.gather(append(batch[:0], rec), wait)
		var largest int64
		for _, rec := range batch {
			largest = max(largest, rec.size)
		}
		// A writer that took all the queue held is keeping up: it
		// decodes the replies and has the store write them (milliseconds
		// for a batch) on a thread of lower priority, so that on a
		// machine of few cores the handlers that became ready meanwhile
		// run first (package background). One that left records queued
		// is behind and takes its share, or it would fall further behind
		// and drop; while a request waits for a record to be written,
		// that request goes first; and a long reply's copies are let go
		// as soon as they can be: written at a lower priority while
		// another long stream went on, two 40 MiB replies held the
		// gateway's memory at up to 2.4 times their size, not 1.9
		// (bench/gatewaymem).
		if rc.behind() || largest >= decodeHere {
			rc.writeBatch(batch, true)
		} else {
			bg.Do(inBackground)
		}
		rc.mu.Lock()
		for _, rec := range batch {
			rc.bytes -= rec.size
			rc.wrote = rec.seq
			for _, key := range [...]string{rec.tenant, rec.tenant + "\x00" + rec.conv} {
				if rc.queued[key] == rec.seq {
					delete(rc.queued, key)
				}
			}
		}
		close(rc.written)
		rc.written = make(chan struct{})
		rc.mu.Unlock()
		clear(batch) // the records' replies are garbage now
		if largest >= returnAfter {
			// A large reply's copies are garbage now, but a gateway
			// that goes idle after it runs no collection for two
			// minutes and keeps them resident: collect and give the
			// memory back now (a few milliseconds, rare). Not for a
			// batch that is large only by its number of replies: under
			// load the collector runs anyway, and a full collection
			// and the return of every free page after each such batch
			// (128 replies of the 303-chunk stream, 9 MiB) took an
			// eighth of the gateway's CPU in bench/gateway at 64
			// streams, most of it returning pages the next batch
			// faulted in again.
			debug.FreeOSMemory()
		}
	}
}

// behind reports whether the writer is behind: records were queued after
// the batch it took, or a request waits for one to be written.
func (rc *recorder) behind() bool { return len(rc.q) > 0 || rc.waiting.Load() > 0 }

// gather adds to batch what is queued and, once the queue is empty, what
// arrives within rc.delay after, until the batch is full. At low load a
// commit per exchange costs the store far more than the exchange itself
// (most of the gateway's CPU in bench/gateway at one stream); waiting a
// few milliseconds shares one commit among several. It sleeps through the
// delay and takes what came when it ends, rather than take each record as
// it comes: a writer woken for every record handed over cost a thread's
// wake-up an exchange (in BenchmarkGateway/translate, a futex call and a
// twentieth of the exchange's CPU). It stops waiting when a batch's worth
// is queued (offer), a lookup waits for this batch (rc.hurry) or the queue
// closes (shutdown writes at once).
func (rc *recorder) gather(batch []*record, wait *time.Timer) []*record {
	select {
	case <-rc.wake: // left from a wait that ended otherwise
	default:
	}
	batch, open := rc.drain(batch)
	if !open || len(batch) == maxBatch || rc.delay <= 0 {
		return batch
	}
	// Told how many it holds, offer wakes the writer once the queue holds
	// the rest of a batch; what came before it was told is counted here.
	rc.gathered.Store(int32(len(batch)))
	defer rc.gathered.Store(0)
	if len(rc.q)+len(batch) < maxBatch {
		wait.Reset(rc.delay)
		defer wait.Stop()
		select {
		case <-wait.C:
		case <-rc.hurry:
		case <-rc.wake:
		}
	}
	batch, _ = rc.drain(batch)
	return batch
}

// drain adds to batch what is queued, up to maxBatch records, without
// waiting; open is false once the queue is closed and empty.
func (rc *recorder) drain(batch []*record) (_ []*record, open bool) {
	for len(batch) < maxBatch {
		select {
		case rec, ok := <-rc.q:
			if !ok {
				return batch, false
			}
			batch = append(batch, rec)
		default:
			return batch, true
		}
	}
	return batch, true
}

// writeBatch stores records in one store batch. Unless the batch is
// urgent, the store is asked to give way (store.Yielding), as the writer
// does (see run).
func (rc *recorder) writeBatch(batch []*record, urgent bool) {
	writes := make([]store.Write, len(batch))
	fps := make([]string, len(batch))
	forks := make([][]forkWrite, len(batch))
	for i, rec := range batch {
		writes[i], fps[i], forks[i] = rc.prepare(rec)
	}
	if rc.dur != nil && rc.spill(batch, writes, fps, forks, rc.lagging && rc.pressed()) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	if rc.dur != nil {
		ctx = rc.watch(ctx, cancel, start)
	}
	if !urgent {
		ctx = store.Yielding(ctx)
	}
	var again []int // the store's failures, when there is a spool to keep them
	troubled := 0   // the store's failures
	for i, res := range rc.st.Batch(ctx, writes) {
		rec := batch[i]
		if res.Err != nil && transient(res.Err) {
			troubled++
		}
		if res.Err != nil && rc.dur != nil && transient(res.Err) {
			again = append(again, i)
			rc.storeFailed(res.Err, 1)
			continue
		}
		if res.Err != nil {
			if transient(res.Err) {
				rc.health.failed(res.Err)
			}
			rc.failed.Add(1)
			rc.log.Error("gateway: recording failed", "conversation", rec.conv, "err", res.Err)
			continue
		}
		rc.recorded.Add(1)
		rc.noteWritten(rec, writes[i], fps[i])
		if len(forks[i]) > 0 {
			// The reply, and the failure recorded after it if any, end
			// the conversation as this write left it.
			rc.writeForks(ctx, rec, res.Conversation.Messages-forks[i][0].tail, forks[i])
		}
	}
	if troubled < len(batch) {
		rc.health.ok() // the store took writes (or refused them for their own faults)
	}
	rc.lagging = troubled > 0 || time.Since(start) >= stallMin
	if len(again) > 0 {
		ok := func(i int) bool { return !slices.Contains(again, i) }
		rc.spill(except(batch, ok), except(writes, ok), except(fps, ok), except(forks, ok), true)
	}
}

// except returns the elements of s whose index drop does not report.
func except[T any](s []T, drop func(int) bool) []T {
	out := make([]T, 0, len(s))
	for i, v := range s {
		if !drop(i) {
			out = append(out, v)
		}
	}
	return out
}

// noteWritten notes in memory what a recorded exchange (in the store, or
// in the spool ahead of it) lets the next requests find: its fingerprint,
// its response id, its reply for the next translated request.
func (rc *recorder) noteWritten(rec *record, w store.Write, fp string) {
	// Known once stored: a lookup that finds it can load it.
	if fp != "" {
		rc.remember(rec.tenant, fp, rec.conv)
	}
	if rec.response != "" {
		rc.remember(rec.tenant, cacheKey(responseKey, rec.response), rec.conv)
	}
	if rec.client != rec.upstream { // translated: the next request may need the reply (Gateway.restore)
		rc.replies.put(rec.tenant, rec.conv, fp, rec.turn, w.Messages)
	}
}

// writeForks records the candidates after the first of an exchange just
// stored: each fork is made from the conversation's first at messages
// (store.Fork: the request and what preceded it), then its reply appended.
func (rc *recorder) writeForks(ctx context.Context, rec *record, at int, forks []forkWrite) {
	for _, f := range forks {
		_, err := rc.st.Fork(ctx, rec.tenant, rec.conv, at, store.Conversation{ID: f.conv, Meta: f.meta})
		if err == nil {
			_, err = rc.st.Append(ctx, rec.tenant, f.conv, store.AnyVersion, f.msgs...)
		}
		if err != nil {
			rc.log.Error("gateway: recording a candidate failed", "conversation", rec.conv, "fork", f.conv, "err", err)
			continue
		}
		if f.fp != "" {
			rc.remember(rec.tenant, f.fp, f.conv)
		}
	}
}

// failed returns n with the failure recorded under the convo key, as
// {"convo":{"error":"…"}}, keeping convo's other records.
func failed(n convo.Native, fail string) convo.Native {
	msg, _ := json.Marshal(fail) // a string cannot fail
	return n.With("convo", "error", msg)
}

// candidates are the replies after the first of an exchange whose request
// asked for several (n > 1, candidateCount > 1), each recorded in a fork
// of the conversation at the reply. A pointer in record: most exchanges
// have none.
type candidates struct {
	forks  []fork          // decided before the reply started, for the headers
	others []convo.Message // the replies of candidates 1, 2, …, once decoded
}

// others returns the replies of the candidates after the first.
func (r *record) others() []convo.Message {
	if r.cands == nil {
		return nil
	}
	return r.cands.others
}

// fork is where a candidate reply after the first is recorded: a new
// conversation forked from the exchange's at its reply, and the id of the
// candidate's reply there.
type fork struct {
	conv, replyID string
}

// forkWrite is one candidate's fork, made once its exchange is stored.
type forkWrite struct {
	conv string
	meta json.RawMessage // the fork's fingerprint
	fp   string
	msgs []convo.Message // the candidate's reply (and the failure, if any)
	// tail is how many messages end the exchange's conversation from its
	// reply on (the reply, and an error message after it): the fork is
	// made of those before.
	tail int
}

// prepare turns a record into the store write that keeps it, and returns
// the fingerprint the conversation has after it ("" for none) and the
// forks that keep the other candidates.
func (rc *recorder) prepare(rec *record) (store.Write, string, []forkWrite) {
	now := time.Now().UTC()
	fail := rec.fail
	msgs, err := rec.messages()
	if err != nil {
		rc.log.Error("gateway: recording the request", "conversation", rec.conv, "err", err)
		if fail == "" {
			fail = err.Error()
		}
	}
	rec.decode()
	reply := rec.reply
	if fail == "" {
		fail = rec.unread
	}
	var base *fingerprinter
	if reply != nil && rec.fp != nil && len(rec.others()) > 0 {
		base = rec.fp.clone() // the request's: each fork adds its own reply
	}
	asked := len(msgs)
	reply = rc.spend.price(rec.tenant, reply)
	msgs = withReply(msgs, reply, fail, rec.replyID, now)
	if reply != nil && rec.fp != nil {
		rec.fp.add(reply) // what the client saw, unredacted: its next request matches it
	}
	for i := range msgs {
		if msgs[i].Time.IsZero() {
			msgs[i].Time = now
		}
	}
	var forks []forkWrite
	if reply != nil && len(rec.others()) > 0 {
		// The policy keeps one message for each of the reply's (a
		// redacted one, or one without content).
		forks = rc.forkWrites(rec, base, fail, now, len(msgs)-asked)
	}
	// Nothing unredacted, and in metadata mode no content, goes further:
	// not to the store, not to the span.
	msgs = rc.policy.keep(rec.mode, slices.Clone(msgs))
	rc.emitSpan(rec, msgs)
	w := store.Write{Tenant: rec.tenant, ID: rec.conv, Create: !rec.exists, Version: store.AnyVersion, Messages: msgs}
	var fp string
	if rec.fp != nil {
		fp = rec.fp.sum()
	}
	if reply != nil && reply.Origin != nil && rec.client != nil && rec.client.namesReplies && rec.client == rec.upstream {
		// A passed-through Responses reply: the client may go on from
		// it by its id.
		rec.response = reply.Origin.ResponseID
	}
	w.Meta = recordMeta(fp, rec.response, rc.settingsMeta(rec))
	if reply != nil && reply.Cost != nil && reply.Cost.USD > 0 {
		for _, k := range rec.charges {
			w.Charges = append(w.Charges, store.Charge{Key: k, Day: now, USD: reply.Cost.USD})
		}
	}
	if rec.size >= returnAfter {
		// A long reply's tap and what decoding it left (as much again)
		// are garbage now, and the heap may grow to twice what was live
		// before they are collected: collect them before the store
		// copies the reply, and give their pages back. Collected alone,
		// the pages stayed resident for the store's JSON to reuse, but
		// SQLite's two copies of it are on modernc's C heap, which cannot
		// reuse them: they added to the peak (bench/gatewaymem, 1
		// stream, two runs of each mode: 4.1–6.8× the reply with the
		// pages kept, 3.7–5.0× given back). A few milliseconds, for a
		// rare reply.
		debug.FreeOSMemory()
	}
	return w, fp, forks
}

// withReply appends to msgs the reply, under replyID, and the exchange's
// failure: an error message after the reply, or on the reply itself when
// it holds tool calls.
func withReply(msgs []convo.Message, reply *convo.Message, fail, replyID string, now time.Time) []convo.Message {
	if reply != nil {
		m := *reply
		m.ID, m.Time = replyID, now
		msgs = append(msgs, m)
	}
	switch {
	case fail != "" && reply != nil && len(reply.ToolCalls()) > 0:
		// The format lets nothing but their results follow tool calls, so
		// an error message here would make the store refuse the whole
		// exchange: the failure is recorded on the partial reply itself.
		last := &msgs[len(msgs)-1]
		last.Finish = convo.FinishError
		last.Native = failed(last.Native, fail)
	case fail != "":
		e := convo.ErrorMessage(fail)
		e.ID, e.Time = store.NewID("msg"), now
		if reply == nil {
			e.ID = replyID
		}
		msgs = append(msgs, e)
	}
	return msgs
}

// forkWrites returns the forks keeping the candidates after the first:
// each holds the conversation up to the reply, then that candidate's reply
// (with the exchange's failure, as the first's), kept as the policy says,
// and the fingerprint of the request with that reply, so a client that
// goes on with it continues the fork.
func (rc *recorder) forkWrites(rec *record, base *fingerprinter, fail string, now time.Time, tail int) []forkWrite {
	c := rec.cands
	out := make([]forkWrite, 0, len(c.others))
	for k := range c.others {
		if k == len(c.forks) { // more candidates than asked for: ids of their own
			c.forks = append(c.forks, fork{conv: store.NewID("conv"), replyID: store.NewID("msg")})
		}
		f := c.forks[k]
		fw := forkWrite{conv: f.conv, tail: tail, msgs: rc.policy.keep(rec.mode, withReply(nil, &c.others[k], fail, f.replyID, now))}
		if base != nil {
			fp := base.clone()
			fp.add(&c.others[k])
			fw.fp = fp.sum()
			fw.meta = recordMeta(fw.fp, "", rc.settingsMeta(rec))
		}
		out = append(out, fw)
	}
	return out
}

// decode decodes the tap's copy of the reply, once, into reply (and the
// other candidates), noting in unread why it did not decode; the copy is
// let go as it is decoded. The writer decodes a record as it prepares it;
// a handler that finds the queue past half full decodes its own before
// queuing it (see enqueue).
func (r *record) decode() {
	if r.reply != nil || r.body == nil {
		return
	}
	// A short streamed reply's chunks go back to their pools once decoded:
	// the stream's reader keeps nothing of them. A longer one is let go of
	// chunk by chunk as it is read (tapReader), and a reply that is not
	// streamed may be decoded into strings that share its bytes.
	var reuse [][]byte
	if r.streamed && len(r.body) <= maxReused {
		reuse = append(make([][]byte, 0, maxReused), r.body...)
	}
	ms, err := decodeTap(r)
	r.body = nil // decoded: the copy is garbage now, not when the batch is written
	reuseTap(reuse)
	if len(ms) == 0 {
		if err != nil {
			r.unread = err.Error()
		}
		return
	}
	if r.folded(ms[0], err) && r.cands != nil {
		r.cands.others = ms[1:]
	}
}

// maxReused is the most chunks of a decoded reply decode gives back to
// their pools (about half a MiB).
const maxReused = 8

// folded sets the reply to m, decoded from the upstream's reply with err,
// when there is anything of it to keep (the parts that came before an
// error), noting in unread why it did not decode; it reports whether it
// kept m.
func (r *record) folded(m convo.Message, err error) bool {
	if err != nil {
		r.unread = err.Error()
	}
	if len(m.Parts) == 0 && err != nil {
		return false
	}
	r.reply = &m
	return true
}

// decodeTap decodes the reply the tap copied: every candidate when the
// request asked for several, else the one reply.
func decodeTap(rec *record) ([]convo.Message, error) {
	if rec.cands != nil {
		return decodeReplies(rec.upstream, rec.body, rec.streamed)
	}
	m, err := decodeReply(rec.upstream, rec.body, rec.streamed)
	return []convo.Message{m}, err
}

// tapReader reads the chunks the tap copied in order, without joining them
// (stream.Chunks): a stream reader reads its events where they lie, and
// each chunk is let go of as it is read (the reader clears body's
// elements): the decoded reply grows as the copy shrinks, so a long reply
// is not held twice.
func tapReader(body [][]byte) io.Reader { return stream.NewChunks(body) }

// joined returns the chunks the tap copied as one slice: a reply that is
// not streamed is decoded whole (it fits in one chunk but for a long one).
func joined(body [][]byte) []byte {
	if len(body) == 1 {
		return body[0]
	}
	return bytes.Join(body, nil)
}

// decodeReplies decodes every candidate of a reply the tap copied, in the
// upstream's protocol.
func decodeReplies(p *protocol, body [][]byte, streamed bool) ([]convo.Message, error) {
	rc, err := all.Lookup(p.name)
	if err != nil {
		return nil, err
	}
	if !streamed {
		ms, _, err := provider.DecodeReplies(rc, joined(body), provider.Options{})
		return ms, err
	}
	acc := rc.NewAccumulator(provider.Options{})
	_, _, err = stream.Feed(p.source(tapReader(body)), acc)
	ms, _, merr := provider.AccumulatedReplies(acc)
	if err == nil {
		err = merr
	}
	return ms, err
}

// decodeReply decodes a reply the tap copied, in the upstream's protocol.
func decodeReply(p *protocol, body [][]byte, streamed bool) (convo.Message, error) {
	if streamed {
		return readStream(p, tapReader(body))
	}
	rc, err := all.Lookup(p.name)
	if err != nil {
		return convo.Message{}, err
	}
	m, _, err := rc.DecodeReply(joined(body), provider.Options{})
	return m, err
}

// readStream folds a reply streamed in protocol p: kept by the tap, or
// as it arrives (liveFold).
func readStream(p *protocol, r io.Reader) (convo.Message, error) {
	rc, err := all.Lookup(p.name)
	if err != nil {
		return convo.Message{}, err
	}
	m, _, err := rc.ReadStream(r, provider.Options{})
	return m, err
}

// close stops taking records and waits until the queue is written or ctx
// ends.
func (rc *recorder) close(ctx context.Context) error {
	rc.mu.Lock()
	if !rc.closed {
		rc.closed = true
		close(rc.q)
		rc.wakeWriter()
	}
	rc.mu.Unlock()
	select {
	case <-rc.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("gateway: %d recordings not written: %w", len(rc.q), ctx.Err())
	}
}
