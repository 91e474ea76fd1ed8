package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// upstreamRequest makes the request to the upstream: its endpoint, its key
// (or the client's own, see exchange.setAuth), and of the client's headers
// only those the protocol defines for the request itself (never the
// client's gateway token, cookies or other credentials).
func (g *Gateway) upstreamRequest(ctx context.Context, r *http.Request, x *exchange, body []byte) (*http.Request, error) {
	up := x.up
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, up.proto.endpoint(up.URL, x.model, x.stream), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if x.stream && !up.proto.ndjson {
		req.Header.Set("Accept", "text/event-stream")
	}
	if x.client == up.proto {
		for _, k := range up.proto.forward {
			if v := r.Header.Values(k); len(v) > 0 {
				req.Header[http.CanonicalHeaderKey(k)] = v
			}
		}
	}
	x.setAuth(req.Header)
	if up.proto.eventstream {
		if x.stream {
			req.Header.Set("Accept", "application/vnd.amazon.eventstream")
		}
		if err := g.opts.SignBedrock(req, body); err != nil {
			return nil, fmt.Errorf("signing the request: %w", err)
		}
	}
	return req, nil
}

// call sends the upstream request. A transport failure is answered to the
// client (502, or 504 for a timeout) and recorded; resp is nil then.
func (g *Gateway) call(w http.ResponseWriter, r *http.Request, x *exchange, body []byte) (*http.Response, context.CancelFunc) {
	// The client's context: a client that goes away cancels the upstream
	// request.
	ctx, cancel := context.WithTimeout(r.Context(), g.opts.Timeout)
	req, err := g.upstreamRequest(ctx, r, x, body)
	x.upStart = time.Now()
	if err == nil {
		var resp *http.Response
		if resp, err = g.client.Do(req); err == nil {
			return resp, cancel
		}
	}
	cancel()
	status, msg := g.upstreamFailed(x, err)
	if r.Context().Err() != nil {
		msg = "client disconnected before the upstream answered"
	}
	x.headers(w.Header())
	writeError(w, x.client, status, msg)
	x.rec.fail = msg
	g.rec.enqueue(x.rec)
	return nil, nil
}

// upstreamError relays an upstream error status: the body as is for the
// same protocol, else its message in the client's shape; Retry-After is
// kept either way. It is recorded as an error message.
func (g *Gateway) upstreamError(w http.ResponseWriter, x *exchange, resp *http.Response) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	msg := upstreamMessage(body)
	if msg == "" {
		msg = fmt.Sprintf("upstream %s answered %s", x.up.Name, resp.Status)
	}
	if x.key != "" {
		// A provider may quote the key it refused; the record must not.
		msg = strings.ReplaceAll(msg, x.key, "[the client's key]")
	}
	x.headers(w.Header())
	if v := resp.Header.Get("Retry-After"); v != "" {
		w.Header().Set("Retry-After", v)
	}
	if x.client == x.up.proto {
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(body)
	} else {
		writeError(w, x.client, resp.StatusCode, msg)
	}
	x.rec.fail = fmt.Sprintf("upstream %s: %d: %s", x.up.Name, resp.StatusCode, msg)
	g.rec.enqueue(x.rec)
}

// upstreamMessage finds the message of an error body in any provider's
// shape: {"error":{"message":…}}, {"error":"…"}, {"message":…}.
func upstreamMessage(body []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	var inner struct {
		Message string `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
		return inner.Message
	case json.Unmarshal(e.Error, &s) == nil && s != "":
		return s
	}
	return e.Message
}

// passThrough forwards the request bytes unchanged and copies the reply to
// the client as it arrives, keeping a copy for the recording.
func (g *Gateway) passThrough(w http.ResponseWriter, r *http.Request, x *exchange) {
	resp, cancel := g.call(w, r, x, x.body)
	if resp == nil {
		return
	}
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		g.upstreamError(w, x, resp)
		return
	}
	h := w.Header()
	x.headers(h)
	h.Set("Content-Type", resp.Header.Get("Content-Type"))
	for _, k := range []string{"Request-Id", "X-Request-Id", "Openai-Processing-Ms"} {
		if v := resp.Header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	// A reply not to be recorded is only copied: nothing is kept of it.
	// A long stream of one reply is folded as it comes (see liveFold).
	var fold *protocol
	if x.stream && x.rec.cands == nil && x.rec.mode != RecordOff {
		fold = x.up.proto
	}
	tap, live, over, readErr := g.copyReply(w, resp.Body, x.stream, x.rec.mode != RecordOff, fold)
	if live != nil {
		x.rec.folded(live.m, live.err)
	}
	switch {
	case over:
		x.rec.fail = fmt.Sprintf("reply longer than %d bytes: not recorded", g.opts.MaxReplyBytes)
	case readErr != nil && r.Context().Err() != nil:
		x.rec.fail = "client disconnected: the upstream request was cancelled"
		x.rec.body = tap
	case readErr != nil:
		// The upstream failed mid-stream: the client's stream ends with
		// its protocol's error event.
		msg := "upstream " + x.up.Name + " failed mid-stream"
		g.log.Warn("gateway: upstream failed mid-stream", "upstream", x.up.Name, "err", readErr)
		if x.stream {
			if enc, err := all.Encoder(x.client.name); err == nil {
				_ = enc.NewStreamEncoder(w, provider.StreamOptions{}).Write(provider.Delta{Kind: provider.DeltaError, Err: errors.New(msg)})
			}
		}
		x.rec.fail = msg
		x.rec.body = tap
	default:
		x.rec.body = tap
	}
	g.rec.enqueue(x.rec)
}

// upstreamFailed logs a request to x's upstream that got no answer, and
// returns the status and message for the client: 502, or 504 for a
// timeout. The transport error is logged, not sent: it may name internal
// hosts.
func (g *Gateway) upstreamFailed(x *exchange, err error) (status int, msg string) {
	g.log.Warn("gateway: upstream request failed", "upstream", x.up.Name, "err", err)
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusGatewayTimeout, "upstream " + x.up.Name + " timed out"
	}
	return http.StatusBadGateway, "upstream " + x.up.Name + " unreachable"
}

// copyReply copies a passed-through reply to the client as it arrives and,
// with keep, returns what it copied, for the recording; over reports a
// reply longer than MaxReplyBytes (tap is nil then). Without keep, every
// read goes into the same pooled buffer of copyBuf bytes and tap is nil:
// nothing is allocated for the reply. With keep, the reply is read straight into
// the buffers that keep it: a pooled one of replyBuf bytes to begin with,
// as most replies fit in it, then chunks of tapChunk bytes. A growing
// reply is never copied into a larger buffer (doubling a buffer allocates
// twice a long reply's size and holds two copies while it copies), and
// what waits for the writer is about the reply's size, once.
//
// With fold, a stream that grows past liveFrom is not kept any further: what
// was kept and what comes after are folded into the reply's message as they
// arrive (live, once the copy ends), so that a long reply is not held as
// its stream beside the message it becomes.
func (g *Gateway) copyReply(w http.ResponseWriter, body io.Reader, stream, keep bool, fold *protocol) (tap [][]byte, live *foldResult, over bool, err error) {
	flusher, _ := w.(http.Flusher)
	var pool bufPool = replyBufs
	if !keep {
		pool = &copyBufs
	}
	bp := pool.Get().(*[]byte)
	buf := (*bp)[:0]
	pooled := true // buf is *bp's array
	defer func() {
		if pooled {
			pool.Put(bp)
		}
	}()
	var total int64
	var lf *liveFold
	for {
		if cap(buf)-len(buf) < minRead {
			switch {
			case over:
				buf = buf[:0] // nothing is kept: the buffer only copies
			case pooled:
				tap, pooled = append(tap, buf), false // back to the pool once decoded (reuseTap)
				buf = getTapChunk()
			default:
				tap = append(tap, buf)
				buf = getTapChunk()
			}
		}
		n, rerr := body.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			if _, werr := w.Write(buf[len(buf) : len(buf)+n]); werr != nil {
				err = fmt.Errorf("writing to the client: %w", werr)
				break
			}
			if stream && flusher != nil {
				flusher.Flush()
			}
			buf = buf[:len(buf)+n]
			total += int64(n)
			switch {
			case !keep:
				buf = buf[:0]
			case over || total > g.opts.MaxReplyBytes:
				over, buf, tap = true, buf[:0], nil
				if lf != nil {
					lf.finish(errOver)
					lf = nil
				}
			case lf != nil:
				lf.write(buf)
				buf = buf[:0]
			case fold != nil && total >= liveFrom:
				lf, buf = startFold(fold, tap, buf, pooled)
				tap = nil
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	switch {
	case over:
		return nil, nil, true, err
	case lf != nil:
		res := lf.finish(err)
		return nil, &res, false, err
	case total == 0 || !keep:
		return nil, nil, false, err // nothing came, or nothing is kept: no reply to decode
	}
	tap, pooled = endTap(tap, buf, pooled, stream)
	return tap, nil, false, err
}

// endTap ends a kept reply's tap with buf, the buffer its last bytes were
// read into, and reports whether buf is still the pool's to take back.
func endTap(tap [][]byte, buf []byte, pooled, stream bool) (_ [][]byte, stillPooled bool) {
	switch {
	case pooled && stream:
		// The pool's buffer goes with the reply and back to the pool
		// once the reply is decoded (reuseTap): copied out, it was a
		// tenth of what a recorded exchange of the tool stream allocated
		// (BenchmarkRecordedExchange). The record counts the buffer's
		// capacity (footprint).
		pooled = false
	case pooled:
		// A reply that is not streamed may be decoded into strings that
		// share its bytes: a copy of its own size.
		buf = bytes.Clone(buf)
	}
	return append(tap, buf), pooled
}

// replyBufs are the buffers pass-through reads replies into. A read from
// the upstream returns what has arrived, an event or a few, and most
// replies fit in 8 KiB; kept, the buffers are not garbage after every
// exchange. A recorded reply keeps its buffer until the writer has
// decoded it, so hundreds may be out at once under load; a sync.Pool,
// which the collector empties every other cycle, then had none for a
// third of the exchanges (BenchmarkRecordedExchange, 3 KB allocated an
// exchange for them).
var replyBufs = newFreeList(replyBuf, 512)

// A freeList keeps up to a number of buffers of one size for reuse,
// through collections; Get makes a new one when it has none.
type freeList struct {
	size int
	free chan *[]byte
}

func newFreeList(size, n int) *freeList {
	return &freeList{size: size, free: make(chan *[]byte, n)}
}

// Get returns a *[]byte of the list's size, as sync.Pool's Get would.
func (f *freeList) Get() any {
	select {
	case b := <-f.free:
		return b
	default:
		b := make([]byte, f.size)
		return &b
	}
}

// Put keeps b, a *[]byte of the list's size, unless the list is full.
func (f *freeList) Put(b any) {
	select {
	case f.free <- b.(*[]byte):
	default:
	}
}

// A bufPool is a sync.Pool or a freeList of *[]byte.
type bufPool interface {
	Get() any
	Put(any)
}

// tapChunks are the chunks of tapChunk bytes a kept reply longer than
// replyBuf grows into, given back once the reply is decoded (reuseTap).
// Allocated anew, they were most of what a recorded exchange allocated
// (bench/gateway's text stream: two 64 KiB chunks an exchange, 62% of its
// bytes), and as allocations of their size go to and from the page heap,
// the runtime cleared each and its scavenger gave their pages back to the
// system between exchanges, to fault them in again (6% of the recording
// gateway's CPU).
var tapChunks = sync.Pool{New: func() any { b := make([]byte, tapChunk); return &b }}

// getTapChunk returns an empty chunk of tapChunk bytes.
func getTapChunk() []byte { return (*tapChunks.Get().(*[]byte))[:0] }

// reuseTap gives the pooled chunks of a reply the tap copied back to their
// pools. The chunks must no longer be read, nor anything made of them
// share their memory: a decoded reply does not (its accumulators copy
// what they keep, provider.DataCopier; TestTapChunksReused).
func reuseTap(body [][]byte) {
	for _, c := range body {
		var pool bufPool
		switch cap(c) {
		case replyBuf:
			pool = replyBufs
		case tapChunk:
			pool = &tapChunks
		default:
			continue // the copy of a short reply, of its size
		}
		c = c[:cap(c)]
		pool.Put(&c)
	}
}

// copyBufs are the buffers of replies that are not kept (Convo-Record:
// off): as large as httputil.ReverseProxy's, since nothing is kept of
// them, so that a stream that arrives faster than it is sent costs as
// few reads and writes as the reverse proxy's.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBuf); return &b }}

const (
	copyBuf  = 32 << 10
	replyBuf = 8 << 10
	// minRead is the least room a read is given: with less left, the
	// next chunk begins.
	minRead = 1 << 10
	// tapChunk is the size of the chunks a reply longer than replyBuf is
	// kept in: large enough that their count stays small (640 for a
	// 40 MB reply), small enough that the last one's unused room does not
	// matter.
	tapChunk = 64 << 10
)

// translate serves a client whose protocol is not the upstream's: the
// whole request is converted (provider.Request), and the reply or stream
// is converted into the client's protocol as it arrives — the upstream's
// stream read into deltas, the deltas written by the client's stream
// encoder, the upstream's accumulator folding the same events for the
// recording.
func (g *Gateway) translate(w http.ResponseWriter, r *http.Request, x *exchange) {
	from, err1 := all.LookupRequest(x.client.name)
	to, err2 := all.LookupRequest(x.up.proto.name)
	replies, err3 := all.Lookup(x.up.proto.name)
	enc, err4 := all.Encoder(x.client.name)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		g.log.Warn("gateway: no translation", "client", x.client.name, "upstream", x.up.proto.name, "err", err)
		writeError(w, x.client, http.StatusNotImplemented, fmt.Sprintf("model %q is routed to a %s upstream: requests cannot be translated from %s to %s yet", x.model, x.up.proto.name, x.client.name, x.up.proto.name))
		return
	}
	req, warns := x.req, x.reqWarns // decoded with the history (prepare)
	if req == nil {
		var err error
		if req, warns, err = from.DecodeRequest(x.body, provider.Options{Repair: true}); err != nil {
			writeError(w, x.client, http.StatusBadRequest, "request: "+err.Error())
			return
		}
	}
	if x.refused != nil {
		writeError(w, x.client, x.refused.status, x.refused.msg)
		return
	}
	if k := statefulMember(x.client, req); k != "" {
		// Sent on, the request would reach the upstream without the
		// conversation it continues.
		writeError(w, x.client, http.StatusBadRequest, fmt.Sprintf("%s: model %q is routed to a %s upstream, which cannot go on from what %s stored: send the conversation as input instead", k, x.model, x.up.proto.name, x.client.name))
		return
	}
	// An OpenAI Chat client gets the usage chunk only when it asked for
	// it (stream_options.include_usage, read into StreamUsage).
	omitUsage := x.client.name == "openai-chat" && !req.StreamUsage
	g.restore(r.Context(), x, req)
	req.Model, req.Stream = x.model, x.stream
	if req.Stream {
		req.StreamUsage = true // the recording wants the usage whatever the client asked
	}
	req.Target = g.target(x.model, &warns)
	if req.MaxTokens == 0 && req.Target.MaxOutput == 0 && x.up.proto.name == "anthropic" {
		req.MaxTokens = defaultMaxTokens // required by Anthropic, optional elsewhere
	}
	body, w2, err := to.EncodeRequest(req, provider.Options{Repair: true, Model: x.model})
	if err != nil {
		writeError(w, x.client, http.StatusBadRequest, fmt.Sprintf("request cannot be sent to %s: %v", x.up.proto.name, err))
		return
	}
	x.warns = append(warns, w2...)
	resp, cancel := g.call(w, r, x, body)
	if resp == nil {
		return
	}
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		g.upstreamError(w, x, resp)
		return
	}
	sopts := provider.StreamOptions{Model: x.model, OmitUsage: omitUsage}
	if x.client.namesReplies {
		// An id the client's previous_response_id can name (previous).
		sopts.ResponseID = responseID(x.rec.conv, x.rec.replyID)
		g.handed.start(x.tenant, x.rec.replyID)
		defer g.handed.end(x.tenant, x.rec.replyID)
	}
	x.headers(w.Header())
	if !x.stream {
		g.translateReply(w, x, resp, replies, enc, sopts)
	} else {
		g.translateStream(w, r, x, resp, replies, enc, sopts)
	}
	g.rec.enqueue(x.rec)
}

// translateReply answers a non-streamed reply in the client's protocol:
// every candidate the upstream returned (n > 1, candidateCount > 1) when
// the client's protocol carries several, else the first with the others
// logged as left out. All are recorded (the others in forks).
func (g *Gateway) translateReply(w http.ResponseWriter, x *exchange, resp *http.Response, replies provider.ReplyCodec, enc provider.ReplyEncoder, sopts provider.StreamOptions) {
	data, err := io.ReadAll(io.LimitReader(resp.Body, g.opts.MaxReplyBytes))
	var ms []convo.Message
	if err == nil {
		ms, _, err = provider.DecodeReplies(replies, data, provider.Options{})
	}
	if err != nil {
		writeError(w, x.client, http.StatusBadGateway, "upstream "+x.up.Name+" sent a reply convo cannot read")
		g.log.Warn("gateway: upstream reply unreadable", "upstream", x.up.Name, "err", err)
		x.rec.fail = "upstream reply unreadable: " + err.Error()
		return
	}
	out, warns, _ := provider.EncodeReplies(enc, ms, sopts)
	if len(warns) > 0 {
		g.log.Warn("gateway: candidates left out", "client", x.client.name, "upstream", x.up.proto.name, "warning", warns[0].String())
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
	g.warnApprovals(x, ms[0])
	x.rec.reply = &ms[0]
	if x.rec.cands != nil {
		x.rec.cands.others = ms[1:] // recorded in the forks the headers named
	}
}

// warnApprovals logs the MCP approval requests of a reply a client's
// protocol has no item for (all but OpenAI Responses): its encoder left
// them out, the record keeps them.
func (g *Gateway) warnApprovals(x *exchange, m convo.Message) {
	if x.client.name == "openai-responses" {
		return
	}
	n := 0
	for _, p := range m.Parts {
		if p.Type == convo.TypeApprovalRequest {
			n++
		}
	}
	if n > 0 {
		g.log.Warn("gateway: approval requests left out", "client", x.client.name, "upstream", x.up.proto.name, "count", n)
	}
}

// translateStream converts the upstream's stream into the client's as it
// arrives, with every candidate when the client's protocol streams several.
func (g *Gateway) translateStream(w http.ResponseWriter, r *http.Request, x *exchange, resp *http.Response, replies provider.ReplyCodec, re provider.ReplyEncoder, sopts provider.StreamOptions) {
	w.Header().Set("Content-Type", x.client.contentType())
	w.WriteHeader(http.StatusOK)
	out := &clientWriter{w: w}
	out.flusher, _ = w.(http.Flusher)
	enc := re.NewStreamEncoder(out, sopts)
	dr := provider.NewDeltaReader(replies.NewAccumulator(provider.Options{}))
	if _, ok := re.(provider.CandidatesEncoder); ok {
		dr.ReadCandidates() // the client's protocol streams every candidate
	}
	body := &countReader{r: resp.Body}
	src := x.up.proto.source(body)
	if r, ok := src.(interface{ Release() }); ok {
		defer r.Release() // its read buffer, for the next exchange's stream
	}
	share(src, dr.Accumulator())
	// Room for what one event brings and for the end (a DeltaPartEnd a
	// part, the usage, the finish): grown from nothing, the slice was
	// reallocated four times a stream.
	deltas, werr, serr := relay(src, dr, enc, out, make([]provider.Delta, 0, 8))
	if body.n >= returnAfter {
		// The reply's events, read and written out, are garbage, and the
		// heap may have grown to twice what is live before they are
		// collected; Finish is about to join the reply's text, as large
		// again as what is live. Collected first, and their pages given
		// back, they do not add to the peak (bench/gatewaymem, a 40 MiB
		// reply translated, A B A B: the peak 2.11–2.21× its size
		// before, 2.04–2.12× after). A few milliseconds, for a rare
		// reply.
		debug.FreeOSMemory()
	}
	// The end: the rest of the reply, or the error event of the
	// client's protocol for a stream that failed or was cut.
	deltas, m, _, ferr := dr.Finish(deltas[:0])
	if werr == nil {
		for _, d := range deltas {
			_ = enc.Write(d)
		}
	}
	out.flush()
	if werr == nil && serr == nil {
		// A client that leaves once it has the whole reply (openai-go
		// after [DONE]) cancels the rest of the upstream's stream:
		// that is not the upstream's failure.
		if err := drain(src); err != nil && r.Context().Err() == nil {
			serr = err
		}
	}
	switch {
	case r.Context().Err() != nil && (werr != nil || serr != nil || ferr != nil):
		// Only a stream cut short: a client that closes the connection as
		// soon as it has read the last event (openai-go after [DONE])
		// got the whole reply.
		x.rec.fail = "client disconnected: the upstream request was cancelled"
	case serr != nil || ferr != nil:
		g.log.Warn("gateway: upstream failed mid-stream", "upstream", x.up.Name, "err", errors.Join(serr, ferr))
		x.rec.fail = "upstream " + x.up.Name + " failed mid-stream"
	}
	g.warnApprovals(x, m)
	if len(m.Parts) > 0 || x.rec.fail == "" {
		x.rec.reply = &m
	}
	if ca, ok := dr.Accumulator().(provider.CandidatesAccumulator); ok && x.rec.cands != nil && ca.Candidates() > 1 {
		// The record keeps every candidate, whatever the client was sent.
		if ms, _, _ := ca.Messages(); len(ms) > 1 {
			x.rec.cands.others = ms[1:]
		}
	}
}

// countReader counts the bytes read from r.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// relay reads the upstream's events into dr and writes their deltas to
// enc until the stream ends, a write to the client fails, or the reply is
// whole (provider.Completer): then its end goes out with what is
// pending, in one write, without waiting for the stream's end (see
// drain). It returns the deltas' slice for the end, and the errors of the
// client's side and the upstream's.
func relay(src stream.Source, dr *provider.DeltaReader, enc provider.StreamEncoder, out *clientWriter, deltas []provider.Delta) ([]provider.Delta, error, error) {
	ready, _ := src.(interface{ Ready() bool })
	whole, _ := dr.Accumulator().(provider.Completer)
	var werr error
	for werr == nil {
		ev, err := src.Next()
		if err == io.EOF {
			break
		}
		if err == nil {
			deltas, err = dr.Add(deltas[:0], ev)
		}
		if err != nil {
			return deltas, nil, err
		}
		for _, d := range deltas {
			if werr = enc.Write(d); werr != nil {
				break
			}
		}
		if whole != nil && whole.Complete() {
			break
		}
		// What was written goes to the client now, unless the upstream's
		// next event has already arrived: then it goes with what that
		// one brings, in one write system call instead of two, and
		// nothing waits on the network. The first event's too: as
		// pass-through's copy sends what one read brought in one
		// write, events that arrived together go out together (a
		// write of its own for the first cost one more write system
		// call an exchange than pass-through's).
		if ready == nil || !ready.Ready() {
			out.flush()
		}
	}
	return deltas, werr, nil
}

// drain reads the rest of an upstream's stream after the reply it
// carried was whole: what follows changes nothing in it, but the
// connection is reused only once the body has been read to its end.
func drain(src stream.Source) error {
	for {
		if _, err := src.Next(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// share makes src give each event in its reader's own buffer, not a
// copy, when acc copies what it keeps: translateStream keeps no event.
func share(src stream.Source, acc provider.Accumulator) {
	s, ok := src.(interface{ Share() })
	if _, copies := acc.(provider.DataCopier); ok && copies {
		s.Share()
	}
}

// clientWriter is what a stream encoder writes the client's stream to: it
// notes whether anything was written since the last flush, so events that
// bring nothing to send (a ping, a block's end) cost no write system call.
type clientWriter struct {
	w       io.Writer
	flusher http.Flusher
	pending bool // written, not flushed
}

func (c *clientWriter) Write(p []byte) (int, error) {
	c.pending = c.pending || len(p) > 0
	return c.w.Write(p)
}

// flush sends what was written, if anything.
func (c *clientWriter) flush() {
	if c.pending && c.flusher != nil {
		c.flusher.Flush()
		c.pending = false
	}
}

// target describes model from the catalogue for a translated request; a
// model the catalogue knows only by its family, or not at all, adds a
// warning.
func (g *Gateway) target(model string, warns *[]provider.Warning) provider.Model {
	cat := g.opts.Models
	if cat == nil {
		cat = catalog.Default()
	}
	m, match := cat.Lookup(model)
	if match.Warning != "" {
		*warns = append(*warns, provider.WarnCode(provider.CodeModelUnknown, "model", "%s", match.Warning))
	}
	return provider.TargetOf(model, m, match)
}

// defaultMaxTokens is the max_tokens sent to Anthropic for a request that
// set none and whose model's maximum output the catalogue does not know.
const defaultMaxTokens = 4096

// upstreamTransport is the transport of the gateway's own client: the
// standard library's, but keeping an idle connection for each stream that
// was open to an upstream, up to 1,024, rather than two. Over HTTP/1.1
// (Ollama, a server on the same network) every exchange beyond the second
// would otherwise open a connection and leave one in TIME_WAIT.
func upstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 0, 1024
	return t
}
