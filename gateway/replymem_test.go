package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
)

// bigChatStream is an OpenAI Chat completion stream of about size bytes,
// text of 1 KiB an event.
func bigChatStream(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	words := strings.Repeat("the quick brown fox jumps over a lazy dog ", 25)[:1024]
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", words)
	}
	b.WriteString(`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// TestLargeReplyAllocations bounds what the gateway allocates to pass
// through and record (SQLite, spool on) a 10 MB streamed OpenAI Chat
// reply, written to the store directly and, with a store whose first write
// fails (a blip), through the spool (encoded, appended, read back,
// decoded, then written), so that an extra whole copy of a reply (a tap
// that grows by doubling, a decode that joins the stream first, a record
// kept twice) fails here rather than in production's resident memory.
// Allocation totals are deterministic enough for CI where RSS and timing
// are not.
//
// The bounds, in units of the reply (its text is 0.84 of its bytes),
// measured 2026-12-05 (pprof alloc_space): to the store 5.6× — the tap
// (1.0×), the SSE reader's per-event copies (1.05×), the text's chunks
// (0.86×) and the text joined once (0.84×), the store's canonical JSON
// (0.84×) and its read-back (0.84×); through the spool 8.2×, besides
// those the spool entry's JSON (0.84×), the frame read back (0.84×) and
// the entry decoded (0.84×). On 2026-12-06 the Chat fold stopped copying
// each SSE event (stream.SSE.Share): 4.51× to the store, 7.10× through the
// spool. On 2026-12-06 the store's read-back of a long message stopped
// copying its text (internal/lend): 3.65× to the store, 6.24× through the
// spool. On 2026-12-06 a stream past liveFrom was folded as it arrived
// rather than kept whole for the writer (the tap's 1.0× and its chunks'
// zeroing gone): 2.76× to the store, 5.34× through the spool.
// A second whole copy of the reply adds at least 0.84×.
//
// The reply must also reach the store with its garbage's pages given back
// (pagesStore): kept, SQLite's copies on the C heap came on top of them.
// The heap's resident bytes at the write, over those before the exchange,
// measured 2026-12-06: 9 MB for the 10 MB reply (its message); the
// replayer, which collected nothing before its write, kept 9 MB of the
// spool's frame more. (In this process the writer's collection alone left
// as little: the gateway's own process kept more, see bench/gatewaymem in
// docs/benchmarks.md.)
func TestLargeReplyAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 10 MB")
	}
	for _, c := range []struct {
		name string
		blip bool // the store fails its first write
		max  float64
	}{
		{"store", false, 3.2},
		{"spooled", true, 5.8},
	} {
		t.Run(c.name, func(t *testing.T) {
			const size = 10 << 20
			fs := &faultyStore{}
			if c.blip {
				fs.mode.Store(storeDown)
			}
			ps := &pagesStore{Store: fs}
			rg := newRig(t, "openai-chat", func(o *gateway.Options) { fs.Store, o.Store, o.SpoolDir = o.Store, ps, t.TempDir() })
			rg.up.stream = bigChatStream(size)
			body := requestBody(t, "openai-chat", "gpt-4o", convo.History{convo.User("write a long story")}, true)
			debug.FreeOSMemory()
			base := heapResident()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			resp := rg.post(t, "openai-chat", "gpt-4o", body, true, nil)
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			for deadline := time.Now().Add(time.Minute); c.blip && fs.batches.Load() == 0 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			fs.mode.Store(storeUp) // the blip is over: the replayer writes the spool
			for deadline := time.Now().Add(time.Minute); rg.gw.Stats().Recorded == 0 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond) // the spool's replayer writes it
			}
			rg.drain(t)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			ratio := float64(alloc) / float64(n)
			st := rg.gw.Stats()
			t.Logf("reply %d bytes: allocated %d bytes, %.2f× the reply; %d bytes more of heap resident at the write than before; %+v", n, alloc, ratio, int64(ps.resident.Load())-int64(base), st)
			if n < size {
				t.Fatalf("the client got %d bytes of a %d-byte stream", n, size)
			}
			if st.Recorded != 1 || (st.Spooled == 1) != c.blip {
				t.Fatalf("stats %+v: want the reply recorded, spooled only after the blip", st)
			}
			if after.NumForcedGC == before.NumForcedGC {
				t.Error("the writer kept a 10 MB reply's garbage: no collection forced after writing it (returnAfter)")
			}
			// Resident in the heap at the write, more than before the
			// exchange: the message (0.84×), little else.
			if res := int64(ps.resident.Load()) - int64(base); res > int64(n)*5/4 {
				t.Errorf("the store was handed a %d-byte reply with the heap's resident bytes %d more than before the exchange, more than 1.25×: garbage not given back before SQLite's copies (on the C heap) add to it (returnAfter)", n, res)
			}
			if ratio > c.max {
				t.Errorf("recording a %d-byte streamed reply allocated %.1f× its size, more than %.1f×: a new whole copy of the reply?", n, ratio, c.max)
			}
		})
	}
}

// pagesStore notes, at each Batch, the bytes of heap pages resident (live,
// garbage not yet collected, or free but not given back to the system):
// what a write to SQLite, whose copies are on modernc's C heap, adds its
// copies to. The last one noted is the write
// that recorded the reply (the writer's, or after a blip the replayer's).
type pagesStore struct {
	store.Store
	resident atomic.Uint64
}

func (p *pagesStore) Batch(ctx context.Context, writes []store.Write) []store.WriteResult {
	p.resident.Store(heapResident())
	return p.Store.Batch(ctx, writes)
}

// heapResident is the heap's bytes held from the system: objects (live or
// garbage not yet collected) and free pages not given back.
func heapResident() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

// TestBatchOfRepliesNotForced: a batch large only by its number of
// replies — 128 of 80 KB, together past returnAfter — forces no
// collection: under load that was a full collection and the return of
// every free page after each batch, an eighth of the gateway's CPU in
// bench/gateway at 64 streams of the 303-chunk stream.
func TestBatchOfRepliesNotForced(t *testing.T) {
	const n = 128 // maxBatch: the batch is written when it is full
	cs := &countingStore{}
	rg := newRig(t, "openai-chat", func(o *gateway.Options) {
		o.BatchDelay = time.Hour
		cs.Store = o.Store
		o.Store = cs
	})
	rg.up.stream = bigChatStream(80 << 10)
	body := requestBody(t, "openai-chat", "gpt-4o", convo.History{convo.User("a story")}, true)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		resp := rg.post(t, "openai-chat", "gpt-4o", body, true, nil)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	rg.drain(t)
	runtime.ReadMemStats(&after)
	if !slices.Equal(cs.batches, []int{n}) {
		t.Fatalf("batches %v, want the %d exchanges in one", cs.batches, n)
	}
	if forced := after.NumForcedGC - before.NumForcedGC; forced != 0 {
		t.Errorf("writing a batch of %d replies of 80 KB forced %d collections, want none", n, forced)
	}
}

// TestLargeTranslatedReplyCollected checks that a translated stream past
// returnAfter (8 MiB) has its garbage collected and given back before its
// text is joined (debug.FreeOSMemory, counted as a forced collection):
// left to the collector, the events read and written out came on top of
// the text's chunks and its joined string, and the gateway's peak went
// past twice the reply (bench/gatewaymem). Nothing is recorded, so the
// writer, which collects after a long reply too, does not run.
func TestLargeTranslatedReplyCollected(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 10 MB")
	}
	rg := newRig(t, "openai-chat", nil)
	rg.up.stream = bigChatStream(10 << 20)
	body := requestBody(t, "anthropic", "gpt-4o", convo.History{convo.User("write a long story")}, true)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp := rg.post(t, "anthropic", "gpt-4o", body, true, map[string]string{"Convo-Record": "off"})
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	runtime.ReadMemStats(&after)
	if resp.StatusCode != 200 || !bytes.Contains(got, []byte("message_stop")) {
		t.Fatalf("status %d, %d bytes without the stream's end", resp.StatusCode, len(got))
	}
	if after.NumForcedGC == before.NumForcedGC {
		t.Error("a 10 MB translated reply's garbage was left to the collector before its text was joined")
	}
}
