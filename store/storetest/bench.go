package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/cputime"
	"github.com/convo-go/convo/store"
)

// benchMessage is a typical chat message of about 300 bytes encoded.
func benchMessage(i int) convo.Message {
	if i%2 == 0 {
		return convo.User(fmt.Sprintf("Question %d: what is the weather like in Paris this weekend, and should I take an umbrella to the museum?", i))
	}
	m := convo.Assistant(fmt.Sprintf("Answer %d: showers are likely on Saturday afternoon and Sunday is mostly dry; take a small umbrella.", i))
	m.Origin = &convo.Origin{Provider: "anthropic", Model: "claude-x"}
	m.Usage = &convo.Usage{Input: 812, Output: 96, Total: 908}
	m.Finish = convo.FinishStop
	return m
}

// BenchAppend measures single-message appends from clients goroutines,
// each appending to a conversation of its own with the version its last
// append returned (so there are no conflicts: this is the store's
// throughput, not a contention test). b.N is the total number of appends.
// It reports appends/s and the p50 and p99 latency of one append.
func BenchAppend(b *testing.B, s store.Store, clients int) {
	ctx := b.Context()
	convs := make([]store.Conversation, clients)
	for i := range convs {
		c, err := s.Create(ctx, store.Conversation{Tenant: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		convs[i] = c
	}
	latencies := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for cl := range clients {
		wg.Go(func() {
			c := convs[cl]
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				t0 := time.Now()
				got, err := s.Append(ctx, c.Tenant, c.ID, c.Version, benchMessage(i))
				latencies[i] = time.Since(t0)
				if err != nil {
					b.Error(err)
					return
				}
				c = got
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64(latencies[b.N/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(latencies[min(b.N-1, b.N*99/100)].Microseconds()), "p99-µs")
}

// BenchAppendLong measures single-message appends by one client to a
// conversation that already holds n messages: the cost of an append must
// not grow with the conversation.
func BenchAppendLong(b *testing.B, s store.Store, n int) {
	ctx := b.Context()
	c, err := s.Create(ctx, store.Conversation{Tenant: "bench"}, benchHistory(n)...)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if c, err = s.Append(ctx, c.Tenant, c.ID, c.Version, benchMessage(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

// benchHistory is n messages of chat turns and tool calls with results,
// about 330 bytes a message.
func benchHistory(n int) convo.History {
	h := make(convo.History, 0, n)
	for i := 0; len(h) < n; i++ {
		if i%5 == 4 && len(h)+2 <= n {
			id := fmt.Sprintf("call_%d", i)
			h = append(h, convo.Assistant("", convo.ToolCall(id, "get_weather", json.RawMessage(`{"city":"Paris","days":2}`))),
				convo.ToolResults(convo.ToolResult(id, "get_weather", `{"sat":"showers","sun":"dry"}`)))
			continue
		}
		h = append(h, benchMessage(i))
	}
	return h
}

// BenchLoad measures loading a conversation of n messages: a mix of chat
// turns and tool calls with results, about 330 bytes a message. It reports
// the time per load and per message.
func BenchLoad(b *testing.B, s store.Store, n int) {
	ctx := b.Context()
	c, err := s.Create(ctx, store.Conversation{Tenant: "bench"}, benchHistory(n)...)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, _, err := s.Load(ctx, c.Tenant, c.ID, 0)
		if err != nil || len(got) != n {
			b.Fatalf("Load: %d messages, %v", len(got), err)
		}
	}
	b.StopTimer()
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(per.Microseconds())/1000, "ms/load")
	b.ReportMetric(float64(per.Nanoseconds())/float64(n), "ns/msg")
}

// BenchRecord measures what convo gateway's recorder writes: exchanges of
// two messages (the request's new user message and the reply) with the
// conversation's metadata (its fingerprint), one writer, every other
// exchange starting a new conversation and the others continuing one of
// 64. batch 0 writes each exchange as the recorder did before Batch —
// Create, or Append then Update: one or two commits; batch n > 0 writes n
// exchanges per Batch call. b.N is the number of exchanges. It reports
// exchanges/s, appends/s (messages stored per second) and the process's
// CPU time per exchange (for PostgreSQL the client's only, not the
// server's): with synchronous commits the wall time is mostly the disk's.
func BenchRecord(b *testing.B, s store.Store, batch int) {
	ctx := b.Context()
	const live = 64
	convs := make([]string, live)
	for i := range convs {
		c, err := s.Create(ctx, store.Conversation{Tenant: "bench"}, benchMessage(0), benchMessage(1))
		if err != nil {
			b.Fatal(err)
		}
		convs[i] = c.ID
	}
	write := func(i int) store.Write {
		w := store.Write{Tenant: "bench", Version: store.AnyVersion, Messages: []convo.Message{benchMessage(2 * i), benchMessage(2*i + 1)},
			Meta: json.RawMessage(fmt.Sprintf(`{"convo_gateway_fingerprint":"%064d"}`, i))}
		if i%2 == 0 {
			w.ID, w.Create = store.NewID("conv"), true
		} else {
			w.ID = convs[i%live]
		}
		return w
	}
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cputime.Process()
	for i := 0; i < b.N; {
		if batch == 0 {
			if err := recordOne(ctx, s, write(i)); err != nil {
				b.Fatal(err)
			}
			i++
			continue
		}
		ws := make([]store.Write, 0, batch)
		for ; i < b.N && len(ws) < batch; i++ {
			ws = append(ws, write(i))
		}
		for _, r := range s.Batch(ctx, ws) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "exchanges/s")
	b.ReportMetric(float64(2*b.N)/elapsed.Seconds(), "appends/s")
	b.ReportMetric(float64((cputime.Process()-cpu0).Microseconds())/float64(b.N), "cpu-µs/exchange")
}

// recordOne writes w as the gateway's recorder did one exchange at a time.
func recordOne(ctx context.Context, s store.Store, w store.Write) error {
	if w.Create {
		_, err := s.Create(ctx, store.Conversation{Tenant: w.Tenant, ID: w.ID, Meta: w.Meta}, w.Messages...)
		return err
	}
	if _, err := s.Append(ctx, w.Tenant, w.ID, w.Version, w.Messages...); err != nil {
		return err
	}
	_, err := s.Update(ctx, w.Tenant, w.ID, nil, w.Meta)
	return err
}

// BenchListMeta lists by metadata among n conversations of one tenant,
// none of which matches: what the gateway's lookups by fingerprint cost
// when they miss. The filter's member is a short string, which the index
// of metadata holds, so the store need read none of them (without the
// index it read every one). "member=every" asks for a member every
// conversation has, with another value; "member=none" for one none has.
func BenchListMeta(b *testing.B, s store.Store, n int) {
	ctx := b.Context()
	var writes []store.Write
	for i := range n {
		writes = append(writes, store.Write{Tenant: "bench-list", ID: fmt.Sprintf("c%d", i), Create: true, Version: store.AnyVersion,
			Meta: json.RawMessage(fmt.Sprintf(`{"convo_gateway_fingerprint":"%032x"}`, i)), Messages: []convo.Message{convo.User("hi")}})
		if len(writes) == 500 || i == n-1 {
			for _, r := range s.Batch(ctx, writes) {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
			writes = writes[:0]
		}
	}
	for _, c := range []struct{ name, key string }{{"every", "convo_gateway_fingerprint"}, {"none", "convo_gateway_response"}} {
		meta := json.RawMessage(fmt.Sprintf(`{%q:"resp_missing"}`, c.key))
		b.Run("member="+c.name, func(b *testing.B) {
			for b.Loop() {
				if cs, _, err := s.List(ctx, "bench-list", store.ListOptions{Limit: 1, Meta: meta}); err != nil || len(cs) > 0 {
					b.Fatal(cs, err)
				}
			}
		})
	}
}
