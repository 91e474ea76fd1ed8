package gateway_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
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
// through and record (spool on, SQLite) a 10 MB streamed OpenAI Chat
// reply, so that an extra whole copy of a reply (a tap that grows by
// doubling, a decode that joins the stream first, a record kept twice)
// fails here rather than in production's resident memory. Allocation
// totals are deterministic enough for CI where RSS and timing are not.
//
// The bound: measured 15.7× the reply (2026-12-05; pprof alloc_space,
// in units of the reply's text, 0.82 of its bytes): the tap once (1.2×),
// the OpenAI accumulator's text grown by append (5×: append grows a large
// slice by 1.25×), the folded message's JSON built and read back into the
// message (4×), the SSE reader's per-event copies (1.3×), the fingerprint
// (3×), the store's canonical encoding (1×). A second whole copy of the
// reply adds at least 1×: the bound is 16.5×. Lower it when one of those goes.
func TestLargeReplyAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 10 MB")
	}
	const size = 10 << 20
	rg := newRig(t, "openai-chat", func(o *gateway.Options) { o.SpoolDir = t.TempDir() })
	rg.up.stream = bigChatStream(size)
	body := requestBody(t, "openai-chat", "gpt-4o", convo.History{convo.User("write a long story")}, true)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp := rg.post(t, "openai-chat", "gpt-4o", body, true, nil)
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rg.drain(t)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	ratio := float64(alloc) / float64(n)
	t.Logf("reply %d bytes: allocated %d bytes, %.2f× the reply", n, alloc, ratio)
	if n < size {
		t.Fatalf("the client got %d bytes of a %d-byte stream", n, size)
	}
	if after.NumForcedGC == before.NumForcedGC {
		t.Error("the writer kept a 10 MB reply's garbage: no collection forced after writing it (returnAfter)")
	}
	if ratio > 16.5 {
		t.Errorf("recording a %d-byte streamed reply allocated %.1f× its size, more than 16.5×: a new whole copy of the reply?", n, ratio)
	}
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
