package gateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
)

// TestQueueBytes: the queue is bounded by the bytes its records hold, not
// only by their count. With the writer held up and a bound smaller than
// one exchange, the first recording is still taken (nothing else is
// queued), the next ones are dropped and counted, and once the writer has
// caught up a recording is taken again.
func TestQueueBytes(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 10)
	rg := newRig(t, "anthropic", func(o *gateway.Options) {
		o.QueueBytes = 1
		o.Store = &blockingStore{Store: o.Store, release: release, entered: entered}
	})
	ask := func(i int) {
		body := requestBody(t, "anthropic", "m", convo.History{convo.User("hi " + strings.Repeat("!", i))}, true)
		resp := rg.post(t, "anthropic", "m", body, true, nil)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, rg.up.stream) {
			t.Fatalf("exchange %d: status %d, %v: the client must get the whole reply", i, resp.StatusCode, err)
		}
	}
	ask(0)
	<-entered // the writer holds the first record, still counted
	for i := 1; i < 4; i++ {
		ask(i)
	}
	if st := rg.gw.Stats(); st.Dropped != 3 {
		t.Fatalf("stats %+v, want 3 dropped while the first waits", st)
	}
	close(release)
	// Recorded is counted as the store answers, the queue's bytes let go
	// after: wait for both.
	for rg.gw.Stats().Recorded == 0 || gateway.QueuedBytes(rg.gw) > 0 {
		runtime.Gosched()
	}
	ask(4) // the queue is empty again
	rg.drain(t)
	if st := rg.gw.Stats(); st.Recorded != 2 || st.Dropped != 3 || st.Failed != 0 {
		t.Fatalf("stats %+v, want 2 recorded and 3 dropped", st)
	}
}

// TestQueueDecodedWhenPressed: while the writer is behind (the queue past
// half its bytes), a handler decodes its streamed reply before queuing it,
// so a record takes the room of its message, not of the stream's bytes: a
// 500-chunk Chat stream of 84 KB decodes to 1.5 KB of text. With the
// writer held up and room in the queue for less than two streams, the
// exchanges after the first are all taken, none dropped, and recorded
// whole once it resumes.
func TestQueueDecodedWhenPressed(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 10)
	var stream bytes.Buffer
	for range 500 {
		stream.WriteString(`data: {"id":"chatcmpl-q","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"hi "},"finish_reason":null}]}` + "\n\n")
	}
	stream.WriteString(`data: {"id":"chatcmpl-q","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	rg := newRig(t, "openai-chat", func(o *gateway.Options) {
		// Room for the first stream's copy (kept in 64 KiB chunks: 128 KiB
		// of room for its 84 KB) and a little more: past half full at once.
		o.QueueBytes = int64(stream.Len()) * 5 / 2
		o.Store = &blockingStore{Store: o.Store, release: release, entered: entered}
	})
	rg.up.stream = stream.Bytes()
	const n = 8
	var convs []string
	for i := range n {
		body := requestBody(t, "openai-chat", "gpt-4o", convo.History{convo.User("hi " + strconv.Itoa(i))}, true)
		resp := rg.post(t, "openai-chat", "gpt-4o", body, true, nil)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		convs = append(convs, resp.Header.Get("Convo-Conversation"))
		if i == 0 {
			<-entered // the writer holds the first record, still counted
		}
	}
	if st := rg.gw.Stats(); st.Dropped != 0 {
		t.Fatalf("stats %+v with the writer held up: want none dropped (decoded, the records fit)", st)
	}
	close(release)
	rg.drain(t)
	if st := rg.gw.Stats(); st.Recorded != n || st.Dropped != 0 || st.Failed != 0 {
		t.Fatalf("stats %+v, want %d recorded", st, n)
	}
	for i, conv := range convs {
		h, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The question too: a pressed queue keeps a short request's bytes,
		// which the writer reads again (compact).
		if len(h) != 2 || h[0].Role != convo.RoleUser || h[0].Text() != "hi "+strconv.Itoa(i) {
			t.Fatalf("%s: %d messages, the first %s %q, want the question", conv, len(h), h[0].Role, h[0].Text())
		}
		if m := h[len(h)-1]; m.Role != convo.RoleAssistant || m.Text() != strings.Repeat("hi ", 500) {
			t.Fatalf("%s: last message %s %q, want the reply of the 500 deltas", conv, m.Role, m.Text())
		}
	}
}

// TestLongReply: a passed-through reply longer than the buffer it is read
// into (8 KiB) reaches the client unchanged and is recorded whole; one
// longer than MaxReplyBytes reaches the client unchanged and is recorded as
// an error saying so.
func TestLongReply(t *testing.T) {
	for _, limit := range []int64{0, 4 << 10} {
		rg := newRig(t, "anthropic", func(o *gateway.Options) { o.MaxReplyBytes = limit })
		// The recorded stream with its first text delta repeated: 20 KiB.
		delta := []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me check \"}}\n\n")
		i := bytes.Index(rg.up.stream, delta)
		if i < 0 {
			t.Fatal("the recorded stream has no such delta")
		}
		long := append(append(bytes.Clone(rg.up.stream[:i]), bytes.Repeat(delta, 160)...), rg.up.stream[i:]...)
		rg.up.stream = long
		body := requestBody(t, "anthropic", "m", convo.History{convo.User("Weather in Paris?")}, true)
		resp := rg.post(t, "anthropic", "m", body, true, nil)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(got, long) {
			t.Fatalf("limit %d: the client got %d bytes, not the upstream's %d", limit, len(got), len(long))
		}
		rg.drain(t)
		h, _, err := rg.st.Load(context.Background(), tenant, resp.Header.Get("Convo-Conversation"), 0)
		if err != nil || len(h) != 2 {
			t.Fatalf("limit %d: stored %d messages (%v), want 2", limit, len(h), err)
		}
		if limit == 0 {
			want := wantReply(t, "anthropic", long, true)
			if h[1].Text() != want.Text() || !strings.HasPrefix(h[1].Text(), strings.Repeat("Let me check ", 161)) {
				t.Errorf("stored reply %.80q…, want the long text", h[1].Text())
			}
		} else if h[1].Role != convo.RoleError || !strings.Contains(h[1].Text(), "reply longer than 4096 bytes") {
			t.Errorf("stored %s %q, want the error that the reply was too long", h[1].Role, h[1].Text())
		}
	}
}

// BenchmarkQueuedExchange measures the heap a passed-through exchange
// keeps while it waits for the recording writer (held up here), as
// B/queued: what the queue costs per exchange under a burst.
func BenchmarkQueuedExchange(b *testing.B) {
	const k = 500
	body := requestBody(b, "anthropic", "m", convo.History{convo.User("Weather in Paris?")}, true)
	var ms runtime.MemStats
	for b.Loop() {
		release, entered := make(chan struct{}), make(chan struct{}, k)
		rg := newRig(b, "anthropic", func(o *gateway.Options) {
			o.Store = &blockingStore{Store: o.Store, release: release, entered: entered}
		})
		ask := func() {
			resp := rg.post(b, "anthropic", "m", body, true, nil)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		ask()
		<-entered
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		for range k {
			ask()
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc-before)/k, "B/queued")
		close(release)
		rg.drain(b)
	}
}

// countingStore records the size of every Batch it is given.
type countingStore struct {
	store.Store
	mu      sync.Mutex
	batches []int
}

func (c *countingStore) Batch(ctx context.Context, writes []store.Write) []store.WriteResult {
	c.mu.Lock()
	c.batches = append(c.batches, len(writes))
	c.mu.Unlock()
	return c.Store.Batch(ctx, writes)
}

// TestBatchDelay: an idle writer waits BatchDelay for more exchanges
// before committing. With a delay far longer than the test, exchanges
// answered meanwhile are written together — in one batch, at Close —
// while a request continuing a conversation whose recording waits cuts
// the delay short (it would otherwise give up after two seconds and
// start a new conversation).
func TestBatchDelay(t *testing.T) {
	ask := func(rg *rig, h convo.History) *http.Response {
		resp := rg.post(t, "anthropic", "m", requestBody(t, "anthropic", "m", h, true), true, nil)
		_, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("status %d, %v", resp.StatusCode, err)
		}
		return resp
	}
	t.Run("gathers", func(t *testing.T) {
		cs := &countingStore{}
		rg := newRig(t, "anthropic", func(o *gateway.Options) {
			o.BatchDelay = time.Hour
			cs.Store = o.Store
			o.Store = cs
		})
		for i := range 5 {
			ask(rg, convo.History{convo.User("question " + strconv.Itoa(i))})
		}
		if st := rg.gw.Stats(); st.Recorded != 0 {
			t.Fatalf("stats %+v: written before the delay ended", st)
		}
		rg.drain(t)
		if !slices.Equal(cs.batches, []int{5}) {
			t.Fatalf("batches %v, want the 5 exchanges in one", cs.batches)
		}
	})
	t.Run("continuation cuts it short", func(t *testing.T) {
		rg := newRig(t, "anthropic", func(o *gateway.Options) { o.BatchDelay = time.Hour })
		h := convo.History{convo.User("Weather in Paris?")}
		resp := ask(rg, h)
		reply := wantReply(t, "anthropic", rg.up.stream, true)
		start := time.Now()
		resp2 := ask(rg, append(h, reply, answers(reply, `{"temp_c":18}`)))
		if c1, c2 := resp.Header.Get("Convo-Conversation"), resp2.Header.Get("Convo-Conversation"); c1 != c2 {
			t.Fatalf("the next turn went to %s after %v, want %s: it did not cut the delay short", c2, time.Since(start), c1)
		}
		rg.drain(t)
	})
}
