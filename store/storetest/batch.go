package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// testBatch checks that each write of a batch is applied or refused on its
// own, with the checks of Create, Append and Update, and that writes to
// one conversation keep their order.
func testBatch(t *testing.T, s store.Store) {
	b := mustCreate(t, s, store.Conversation{ID: "b", Meta: json.RawMessage(`{"k":"old"}`)}, convo.User("hi"))
	mustCreate(t, s, store.Conversation{ID: "keep", Tenant: "t2"}, convo.User("other tenant"))
	orphan := convo.ToolResults(convo.ToolResult("nope", "lookup", "no call"))
	hello := convo.Assistant("hello")
	hello.ID = "m_hello"
	// A write that fails half-way: its first message is stored before
	// its second's id is found taken (by writes[1]).
	partial, again := convo.User("partially stored"), convo.Assistant("again")
	partial.ID, again.ID = "m_partial", "m_hello"
	res := s.Batch(ctx(t), []store.Write{
		{ID: "a", Create: true, Meta: json.RawMessage(`{ "k" : "a" }`), Messages: []convo.Message{convo.User("q1")}},
		{ID: "b", Version: b.Version, Messages: []convo.Message{hello}, Meta: json.RawMessage(`{"k":"new"}`)},
		{ID: "b", Version: b.Version, Messages: []convo.Message{convo.User("stale")}},                  // the version moved
		{ID: "a", Version: store.AnyVersion, Messages: []convo.Message{convo.Assistant("a1"), orphan}}, // invalid
		{ID: "a", Version: store.AnyVersion, Messages: []convo.Message{convo.Assistant("a2")}},
		{ID: "missing", Version: store.AnyVersion, Messages: []convo.Message{convo.User("x")}},
		{ID: "keep", Create: true, Version: store.AnyVersion, Messages: []convo.Message{convo.User("mine")}}, // tenant "": a new one
		{ID: "bad id/", Create: true},
		{Create: true, Messages: []convo.Message{convo.User("new id")}},
		{ID: "b", Version: store.AnyVersion, Meta: json.RawMessage(`[1]`)},
		{ID: "b", Version: store.AnyVersion, Messages: []convo.Message{partial, again}}, // m_hello is taken
	})
	wantResults(t, res, nil, nil, store.ErrConflict, store.ErrInvalid, nil, store.ErrNotFound, nil, store.ErrInvalid, nil, store.ErrInvalid, store.ErrExists)
	if c := res[1].Conversation; c.ID != "b" || c.Version != b.Version+1 || c.Messages != 2 || string(c.Meta) != `{"k":"new"}` {
		t.Errorf("writes[1] returned %+v", c)
	}
	if c := res[4].Conversation; c.Version != 2 || c.Messages != 2 {
		t.Errorf("writes[4] returned version %d, %d messages: want 2, 2", c.Version, c.Messages)
	}
	wantTexts(t, s, "", "a", "q1", "a2")
	wantTexts(t, s, "", "b", "hi", "hello")
	wantTexts(t, s, "", "keep", "mine")
	wantTexts(t, s, "t2", "keep", "other tenant")
	if id := res[8].Conversation.ID; !strings.HasPrefix(id, "conv_") {
		t.Errorf("a created conversation without an id got %q", id)
	} else {
		wantTexts(t, s, "", id, "new id")
	}
	for id, meta := range map[string]string{"a": `{"k":"a"}`, "b": `{"k":"new"}`} {
		if c, err := s.Get(ctx(t), "", id); err != nil || string(c.Meta) != meta {
			t.Errorf("Get(%s): meta %s, %v; want %s", id, c.Meta, err, meta)
		}
	}
	wantListedByMeta(t, s)
	if _, err := s.Get(ctx(t), "", "missing"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a write without Create made a conversation: %v", err)
	}
	// What a batch wrote is searchable at once; a refused write's messages
	// are not there.
	wantHits(t, s, "", "hello", "b/1/m_hello")
	for _, word := range []string{"stale", "partially"} {
		if hits := searchAll(t, s, "", word, 10); len(hits) != 0 {
			t.Errorf("a refused write's message is found: %+v", hits)
		}
	}
	testBatchCreateContinues(t, s)
	// "null" removes the metadata; a batch without writes is nothing.
	if res := s.Batch(ctx(t), []store.Write{{ID: "b", Version: store.AnyVersion, Meta: json.RawMessage(`null`)}}); res[0].Err != nil || res[0].Conversation.Meta != nil {
		t.Errorf("clearing the metadata: %+v", res[0])
	}
	if res := s.Batch(ctx(t), nil); len(res) != 0 {
		t.Errorf("an empty batch returned %d results", len(res))
	}
}

// testBatchLateFailure checks a batch whose writes all pass their checks
// but one, whose message id is already taken in its conversation, which
// only the table's unique key finds: that write fails alone, naming
// itself, and the others are kept whole, their usage and metadata too.
// (A store may insert the batch's rows together at its end.)
func testBatchLateFailure(t *testing.T, s store.Store) {
	taken := convo.User("first")
	taken.ID = "m_taken"
	mustCreate(t, s, store.Conversation{ID: "late"}, taken)
	again := convo.Assistant("again")
	again.ID = "m_taken"
	reply := usageReply("late-model", time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC), 7, 3, 0, 0, 0)
	res := s.Batch(ctx(t), []store.Write{
		{ID: "late-a", Create: true, Meta: json.RawMessage(`{"late":"a"}`), Messages: []convo.Message{convo.User("qa"), reply}},
		{ID: "late", Version: store.AnyVersion, Messages: []convo.Message{again}},
		{ID: "late-b", Create: true, Meta: json.RawMessage(`{"late":"b"}`), Messages: []convo.Message{convo.User("qb")}},
	})
	wantResults(t, res, nil, store.ErrExists, nil)
	wantTexts(t, s, "", "late-a", "qa", reply.Text())
	wantTexts(t, s, "", "late", "first")
	wantTexts(t, s, "", "late-b", "qb")
	for _, id := range []string{"a", "b"} {
		if cs, _, err := s.List(ctx(t), "", store.ListOptions{Meta: json.RawMessage(`{"late":"` + id + `"}`)}); err != nil || len(cs) != 1 || cs[0].ID != "late-"+id {
			t.Errorf("List by the metadata of late-%s: %+v, %v", id, cs, err)
		}
	}
	if ur, ok := s.(store.UsageReporter); ok {
		rows, err := ur.Usage(ctx(t), store.UsageQuery{By: store.ByModel})
		if err != nil {
			t.Fatal(err)
		}
		if got := usageRows(rows); !strings.Contains(got, "late-model  1/0 7/3/0/0/0") {
			t.Errorf("usage of the kept write's reply:\n%s", got)
		}
	}
}

// testBatchMetaTwice checks a batch that creates a conversation with
// metadata and then changes it, with and without messages: List's filter
// finds it by the last metadata only.
func testBatchMetaTwice(t *testing.T, s store.Store) {
	res := s.Batch(ctx(t), []store.Write{
		{ID: "twice", Create: true, Meta: json.RawMessage(`{"step":"one"}`), Messages: []convo.Message{convo.User("q")}},
		{ID: "twice", Version: store.AnyVersion, Meta: json.RawMessage(`{"step":"two"}`)},
		{ID: "thrice", Create: true, Meta: json.RawMessage(`{"step":"one"}`), Messages: []convo.Message{convo.User("q")}},
		{ID: "thrice", Version: store.AnyVersion, Meta: json.RawMessage(`{"step":"three"}`), Messages: []convo.Message{convo.Assistant("a")}},
	})
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("writes[%d]: %v", i, r.Err)
		}
	}
	for step, want := range map[string]string{"one": "", "two": "twice", "three": "thrice"} {
		cs, _, err := s.List(ctx(t), "", store.ListOptions{Meta: json.RawMessage(`{"step":"` + step + `"}`)})
		var got string
		for _, c := range cs {
			got += c.ID
		}
		if err != nil || got != want {
			t.Errorf("List by step %q: %q, %v; want %q", step, got, err, want)
		}
	}
}

// testBatchToolLoop checks a tool loop written over one batch's writes:
// a call, its result and the answer, each a write of its own after the
// conversation's creation, as a recorder that fell behind writes them.
// Each write's pairing check sees what the writes before it appended (a
// store may insert the batch's rows together at its end), and the
// messages read back in order.
func testBatchToolLoop(t *testing.T, s store.Store) {
	tc := convo.ToolCall("call_1", "get_weather", json.RawMessage(`{"city":"Paris"}`))
	res := s.Batch(ctx(t), []store.Write{
		{ID: "loop", Create: true, Messages: []convo.Message{convo.User("Weather in Paris?"), convo.Assistant("", tc)}},
		{ID: "loop", Version: store.AnyVersion, Messages: []convo.Message{convo.ToolResults(convo.ToolResult("call_1", "get_weather", "sunny"))}},
		{ID: "loop", Version: store.AnyVersion, Messages: []convo.Message{convo.ToolResults(convo.ToolResult("call_1", "get_weather", "again"))}},
		{ID: "loop", Version: store.AnyVersion, Messages: []convo.Message{convo.Assistant("Sunny.")}},
	})
	wantResults(t, res, nil, nil, store.ErrInvalid, nil)
	if c := res[3].Conversation; c.Messages != 4 {
		t.Errorf("writes[3] returned %d messages, want 4", c.Messages)
	}
	h, _ := mustLoad(t, s, "", "loop")
	var roles []convo.Role
	var last string
	for _, m := range h {
		roles, last = append(roles, m.Role), m.Text()
	}
	want := []convo.Role{convo.RoleUser, convo.RoleAssistant, convo.RoleTool, convo.RoleAssistant}
	if !slices.Equal(roles, want) || last != "Sunny." {
		t.Errorf("loaded roles %v, last %q; want %v, %q", roles, last, want, "Sunny.")
	}
}

// testBatchConcurrent checks batches made at the same time by several
// goroutines (a store may hold one batch's encodings in memory it reuses
// for the next): every conversation holds what its write gave it.
func testBatchConcurrent(t *testing.T, s store.Store) {
	const goroutines, batches, writes = 8, 16, 8
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for b := range batches {
				var ws []store.Write
				for w := range writes {
					id := fmt.Sprintf("cc-%d-%d-%d", g, b, w)
					ws = append(ws, store.Write{ID: id, Create: true, Messages: []convo.Message{
						convo.User("question " + id), convo.Assistant(strings.Repeat("answer "+id+" ", 10*w+1))}})
				}
				for i, r := range s.Batch(ctx(t), ws) {
					if r.Err != nil {
						t.Errorf("%s: %v", ws[i].ID, r.Err)
					}
				}
			}
		})
	}
	wg.Wait()
	for g := range goroutines {
		for b := range batches {
			for w := range writes {
				id := fmt.Sprintf("cc-%d-%d-%d", g, b, w)
				wantTexts(t, s, "", id, "question "+id, strings.Repeat("answer "+id+" ", 10*w+1))
			}
		}
	}
}

// wantListedByMeta checks that the metadata testBatch's writes[1] set
// with its messages is found by List's filter, which may read only an
// index of the metadata, and the metadata it replaced is not.
func wantListedByMeta(t *testing.T, s store.Store) {
	t.Helper()
	if cs, _, err := s.List(ctx(t), "", store.ListOptions{Meta: json.RawMessage(`{"k":"new"}`)}); err != nil || len(cs) != 1 || cs[0].ID != "b" {
		t.Errorf("List by the metadata writes[1] set: %+v, %v; want b", cs, err)
	}
	if cs, _, err := s.List(ctx(t), "", store.ListOptions{Meta: json.RawMessage(`{"k":"old"}`)}); err != nil || len(cs) != 0 {
		t.Errorf("List by the metadata writes[1] replaced: %+v, %v; want none", cs, err)
	}
}

// testBatchCreateContinues checks that a write that may create its
// conversation continues it when it exists, even with messages no new
// conversation may begin with (the result of its open call); where it
// does not exist, they are refused.
func testBatchCreateContinues(t *testing.T, s store.Store) {
	t.Helper()
	calls := mustCreate(t, s, store.Conversation{ID: "calls"}, convo.User("look it up"),
		convo.Assistant("", convo.ToolCall("k1", "lookup", json.RawMessage(`{}`))))
	answer := convo.ToolResults(convo.ToolResult("k1", "lookup", "found"))
	res := s.Batch(ctx(t), []store.Write{
		{ID: "calls", Create: true, Version: calls.Version, Messages: []convo.Message{answer}},
		{ID: "no-calls", Create: true, Messages: []convo.Message{answer}},
	})
	if res[0].Err != nil || res[0].Conversation.Messages != 3 {
		t.Errorf("a write with Create to a conversation awaiting its result: %+v", res[0])
	}
	wantErr(t, "a new conversation beginning with a result", res[1].Err, store.ErrInvalid)
	if _, err := s.Get(ctx(t), "", "no-calls"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a refused write with Create made its conversation: %v", err)
	}
}

func wantTexts(t *testing.T, s store.Store, tenant, id string, texts ...string) {
	t.Helper()
	h, c, err := s.Load(ctx(t), tenant, id, 0)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	var got []string
	for _, m := range h {
		got = append(got, m.Text())
	}
	if strings.Join(got, "|") != strings.Join(texts, "|") || c.Messages != len(texts) {
		t.Fatalf("conversation %q holds %q (%d), want %q", id, got, c.Messages, texts)
	}
}

// testBatchCanceled checks that a batch whose context ends before it runs
// writes nothing, and that concurrent batches to the same conversations
// (in opposite orders) all land.
func testBatchCanceled(t *testing.T, s store.Store) {
	mustCreate(t, s, store.Conversation{ID: "c"}, convo.User("x"))
	cctx, cancel := context.WithCancel(ctx(t))
	cancel()
	res := s.Batch(cctx, []store.Write{
		{ID: "c", Version: store.AnyVersion, Messages: []convo.Message{convo.Assistant("y")}},
		{ID: "d", Create: true, Messages: []convo.Message{convo.User("z")}},
	})
	for i, r := range res {
		if r.Err == nil {
			t.Fatalf("writes[%d] with a canceled context succeeded", i)
		}
	}
	wantTexts(t, s, "", "c", "x")
	if _, err := s.Get(ctx(t), "", "d"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a canceled batch created a conversation: %v", err)
	}

	const batches, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, batches*each*2)
	for g := range batches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range each {
				ws := []store.Write{
					{ID: "p", Create: true, Version: store.AnyVersion, Messages: []convo.Message{convo.User(fmt.Sprintf("%d.%d", g, n))}},
					{ID: "q", Create: true, Version: store.AnyVersion, Messages: []convo.Message{convo.User(fmt.Sprintf("%d.%d", g, n))}},
				}
				if g%2 == 1 {
					ws[0], ws[1] = ws[1], ws[0]
				}
				for _, r := range s.Batch(ctx(t), ws) {
					errs <- r.Err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent batch: %v", err)
		}
	}
	for _, id := range []string{"p", "q"} {
		if _, c := mustLoad(t, s, "", id); c.Messages != batches*each {
			t.Errorf("conversation %s holds %d messages, want %d", id, c.Messages, batches*each)
		}
	}
}

// wantResults checks a batch's results against the errors its writes
// should have (nil: none), each error naming its write.
func wantResults(t *testing.T, res []store.WriteResult, want ...error) {
	t.Helper()
	if len(res) != len(want) {
		t.Fatalf("Batch returned %d results for %d writes", len(res), len(want))
	}
	for i, want := range want {
		if want == nil && res[i].Err != nil {
			t.Fatalf("writes[%d]: %v", i, res[i].Err)
		}
		if want != nil {
			wantErr(t, fmt.Sprintf("writes[%d]", i), res[i].Err, want)
			if !strings.Contains(res[i].Err.Error(), fmt.Sprintf("writes[%d]", i)) {
				t.Errorf("writes[%d]: error %q does not name the write", i, res[i].Err)
			}
		}
	}
}
