// Package storetest is the conformance suite of store.Store: every backend
// passes Run unchanged. It also holds the reliability harness (Durability,
// Concurrency) that runs writers in child processes, and Bench, the load test
// whose numbers docs/store.md records.
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

// Run runs the conformance suite. newStore returns a new, empty store for
// each subtest; Run closes it when the subtest ends.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"CreateGet", testCreateGet},
		{"CreateInvalid", testCreateInvalid},
		{"CreateExists", testCreateExists},
		{"Append", testAppend},
		{"AppendConflict", testAppendConflict},
		{"AppendAtomic", testAppendAtomic},
		{"AppendPairing", testAppendPairing},
		{"Lossless", testLossless},
		{"Load", testLoad},
		{"LoadRange", testLoadRange},
		{"Message", testMessage},
		{"DeleteMessage", testDeleteMessage},
		{"Fork", testFork},
		{"Update", testUpdate},
		{"Delete", testDelete},
		{"List", testList},
		{"ListFilters", testListFilters},
		{"ListMetaWritten", testListMetaWritten},
		{"Tenants", testTenants},
		{"Canceled", testCanceled},
		{"ConcurrentAppend", testConcurrentAppend},
		{"Batch", testBatch},
		{"BatchCanceled", testBatchCanceled},
		{"BatchLateFailure", testBatchLateFailure},
		{"BatchMetaTwice", testBatchMetaTwice},
		{"BatchToolLoop", testBatchToolLoop},
		{"BatchConcurrent", testBatchConcurrent},
		{"ExportImport", testExportImport},
		{"Search", testSearch},
		{"SearchModel", testSearchModel},
		{"Model", testModel},
		{"Retention", testRetention},
		{"Usage", testUsage},
		{"UsageBatch", testUsageBatch},
		{"Spend", testSpend},
		{"SpendConcurrent", testSpendConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

func ctx(t *testing.T) context.Context { return t.Context() }

// call is a tool call part with a fixed argument.
func call(id, name string) convo.Part {
	return convo.ToolCall(id, name, json.RawMessage(`{"q":"`+id+`"}`))
}

func mustCreate(t *testing.T, s store.Store, c store.Conversation, msgs ...convo.Message) store.Conversation {
	t.Helper()
	got, err := s.Create(ctx(t), c, msgs...)
	if err != nil {
		t.Fatalf("Create(%q): %v", c.ID, err)
	}
	return got
}

func mustAppend(t *testing.T, s store.Store, c store.Conversation, msgs ...convo.Message) store.Conversation {
	t.Helper()
	got, err := s.Append(ctx(t), c.Tenant, c.ID, c.Version, msgs...)
	if err != nil {
		t.Fatalf("Append(%q, version %d): %v", c.ID, c.Version, err)
	}
	return got
}

func mustLoad(t *testing.T, s store.Store, tenant, id string) (convo.History, store.Conversation) {
	t.Helper()
	h, c, err := s.Load(ctx(t), tenant, id, 0)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	return h, c
}

// wantErr fails unless err wraps want.
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error %v, want %v", what, err, want)
	}
}

// sameHistory compares histories message by message, naming the first
// difference in canonical JSON.
func sameHistory(t *testing.T, what string, got, want convo.History) {
	t.Helper()
	if got.Equal(want) {
		return
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d messages, want %d\ngot  %s\nwant %s", what, len(got), len(want), ids(got), ids(want))
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			g, _ := convo.AppendMessage(nil, got[i])
			w, _ := convo.AppendMessage(nil, want[i])
			t.Fatalf("%s: messages[%d] differs\ngot  %s\nwant %s", what, i, g, w)
		}
	}
}

func ids(h convo.History) string {
	s := make([]string, len(h))
	for i, m := range h {
		s[i] = m.ID
	}
	return strings.Join(s, " ")
}

// withIDs returns msgs with the ids the store gave them, read from h.
func withIDs(msgs convo.History, h convo.History) convo.History {
	out := slices.Clone(msgs)
	for i := range out {
		out[i].ID = h[i].ID
	}
	return out
}

func sameDescription(t *testing.T, what string, got, want store.Conversation) {
	t.Helper()
	g, w := got, want
	if !jsonEqual(g.Meta, w.Meta) {
		t.Fatalf("%s: meta %s, want %s", what, g.Meta, w.Meta)
	}
	if !g.Created.Equal(w.Created) || !g.Updated.Equal(w.Updated) {
		t.Fatalf("%s: created/updated %v/%v, want %v/%v", what, g.Created, g.Updated, w.Created, w.Updated)
	}
	if g.ID != w.ID || g.Tenant != w.Tenant || g.Title != w.Title || g.Version != w.Version ||
		g.Messages != w.Messages || g.ForkedFrom != w.ForkedFrom || g.ForkedAt != w.ForkedAt {
		t.Fatalf("%s:\ngot  %+v\nwant %+v", what, g, w)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func testCreateGet(t *testing.T, s store.Store) {
	before := time.Now().Add(-time.Second)
	c := mustCreate(t, s, store.Conversation{Tenant: "acme", Title: "Trip", Meta: json.RawMessage(`{ "k" : [1, 2] }`)})
	if !strings.HasPrefix(c.ID, "conv_") || c.Tenant != "acme" || c.Title != "Trip" || string(c.Meta) != `{"k":[1,2]}` {
		t.Fatalf("Create: %+v (want a conv_ id, the tenant, the title and compacted meta)", c)
	}
	if c.Version != 1 || c.Messages != 0 || c.ForkedFrom != "" || c.ForkedAt != 0 {
		t.Fatalf("Create: version %d messages %d fork %q/%d, want 1, 0, none", c.Version, c.Messages, c.ForkedFrom, c.ForkedAt)
	}
	if c.Created.Location() != time.UTC || c.Created.Before(before) || c.Created.After(time.Now().Add(time.Second)) ||
		!c.Updated.Equal(c.Created) || c.Created.Nanosecond()%1000 != 0 {
		t.Fatalf("Create: created %v updated %v: want now, UTC, to the microsecond, equal", c.Created, c.Updated)
	}
	got, err := s.Get(ctx(t), "acme", c.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameDescription(t, "Get", got, c)

	msgs := convo.History{convo.System("Be brief."), convo.User("Hi")}
	msgs[1].ID = "u1"
	d := mustCreate(t, s, store.Conversation{Tenant: "acme", ID: "chat-2"}, msgs...)
	if d.ID != "chat-2" || d.Messages != 2 || d.Version != 1 || d.Meta != nil {
		t.Fatalf("Create with messages: %+v", d)
	}
	h, got := mustLoad(t, s, "acme", "chat-2")
	sameDescription(t, "Load", got, d)
	if !strings.HasPrefix(h[0].ID, "msg_") || h[1].ID != "u1" {
		t.Fatalf("ids %q %q: want a new msg_ id and the caller's", h[0].ID, h[1].ID)
	}
	sameHistory(t, "Load", h, withIDs(msgs, h))
	if msgs[0].ID != "" {
		t.Fatal("Create changed the caller's message")
	}
}

func testCreateInvalid(t *testing.T, s store.Store) {
	bad := convo.Message{Role: convo.RoleUser, Parts: []convo.Part{convo.Text("\xff")}}
	deep := convo.User("x")
	deep.Meta = json.RawMessage(strings.Repeat("[", 70) + strings.Repeat("]", 70))
	deep.Meta = json.RawMessage(`{"a":` + string(deep.Meta) + `}`)
	tests := []struct {
		name string
		c    store.Conversation
		msgs []convo.Message
	}{
		{"id with slash", store.Conversation{ID: "a/b"}, nil},
		{"id with space", store.Conversation{ID: "a b"}, nil},
		{"id with NUL", store.Conversation{ID: "a\x00"}, nil},
		{"id not UTF-8", store.Conversation{ID: "a\xff"}, nil},
		{"id too long", store.Conversation{ID: strings.Repeat("x", store.MaxIDBytes+1)}, nil},
		{"tenant not UTF-8", store.Conversation{Tenant: "\xff"}, nil},
		{"title with NUL", store.Conversation{Title: "a\x00b"}, nil},
		{"title too long", store.Conversation{Title: strings.Repeat("x", store.MaxTitleBytes+1)}, nil},
		{"meta array", store.Conversation{Meta: json.RawMessage(`[1]`)}, nil},
		{"meta number", store.Conversation{Meta: json.RawMessage(`1`)}, nil},
		{"meta broken", store.Conversation{Meta: json.RawMessage(`{"a":}`)}, nil},
		{"meta duplicate key", store.Conversation{Meta: json.RawMessage(`{"a":1,"a":2}`)}, nil},
		{"unknown role", store.Conversation{}, []convo.Message{{Role: "robot", Parts: []convo.Part{convo.Text("x")}}}},
		{"invalid UTF-8 text", store.Conversation{}, []convo.Message{bad}},
		{"tool call in user message", store.Conversation{}, []convo.Message{{Role: convo.RoleUser, Parts: []convo.Part{call("c1", "f")}}}},
		{"result without call", store.Conversation{}, []convo.Message{convo.User("x"), convo.ToolResults(convo.ToolResult("c1", "f", "ok"))}},
		{"duplicate message ids", store.Conversation{}, []convo.Message{{Role: convo.RoleUser, ID: "m", Parts: []convo.Part{convo.Text("a")}}, {Role: convo.RoleUser, ID: "m", Parts: []convo.Part{convo.Text("b")}}}},
		{"message id with NUL", store.Conversation{}, []convo.Message{{Role: convo.RoleUser, ID: "m\x00", Parts: []convo.Part{convo.Text("a")}}}},
		{"message too deep to read back", store.Conversation{}, []convo.Message{deep}},
		{"broken args", store.Conversation{}, []convo.Message{convo.Assistant("", convo.ToolCall("c1", "f", json.RawMessage(`{`)))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			if c.ID == "" {
				c.ID = "c-" + strings.ReplaceAll(tc.name, " ", "-")
			}
			_, err := s.Create(ctx(t), c, tc.msgs...)
			wantErr(t, "Create", err, store.ErrInvalid)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error has more than one line: %q", err)
			}
			if _, err := s.Get(ctx(t), c.Tenant, c.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("refused conversation exists: Get error %v", err)
			}
		})
	}
	_, err := s.Create(ctx(t), store.Conversation{ID: "pairs"}, convo.User("x"), convo.ToolResults(convo.ToolResult("c9", "f", "ok")))
	var ve *convo.ValidationError
	if !errors.As(err, &ve) || ve.Problems[0].Path != "messages[1].parts[0]" {
		t.Fatalf("Create: %v, want a *convo.ValidationError at messages[1].parts[0]", err)
	}
}

func testCreateExists(t *testing.T, s store.Store) {
	mustCreate(t, s, store.Conversation{ID: "same", Tenant: "a"})
	_, err := s.Create(ctx(t), store.Conversation{ID: "same", Tenant: "a"}, convo.User("x"))
	wantErr(t, "Create twice", err, store.ErrExists)
	// Ids are per tenant: another tenant using one must not learn of it.
	b := mustCreate(t, s, store.Conversation{ID: "same", Tenant: "b", Title: "B"})
	if b.Tenant != "b" {
		t.Fatalf("tenant %q", b.Tenant)
	}
	a, err := s.Get(ctx(t), "a", "same")
	if err != nil || a.Title != "" || a.Messages != 0 {
		t.Fatalf("tenant a's conversation changed: %+v %v", a, err)
	}
}

func testAppend(t *testing.T, s store.Store) {
	c := mustCreate(t, s, store.Conversation{ID: "c"})
	created := c.Created
	first := convo.History{convo.System("sys"), convo.User("one")}
	c2 := mustAppend(t, s, c, first...)
	if c2.Version <= c.Version || c2.Messages != 2 || c2.Updated.Before(c.Updated) || !c2.Created.Equal(created) {
		t.Fatalf("after Append: %+v (want a higher version, 2 messages, same created)", c2)
	}
	second := convo.History{convo.Assistant("two"), convo.User("three")}
	second[0].ID = "a2"
	c3 := mustAppend(t, s, c2, second...)
	if c3.Version <= c2.Version || c3.Messages != 4 {
		t.Fatalf("after second Append: %+v", c3)
	}
	h, got := mustLoad(t, s, "", "c")
	sameDescription(t, "Load after Append", got, c3)
	sameHistory(t, "Load", h, withIDs(append(slices.Clone(first), second...), h))
	if h[2].ID != "a2" || h[0].ID == h[1].ID || !strings.HasPrefix(h[3].ID, "msg_") {
		t.Fatalf("ids %s", ids(h))
	}

	// Appending nothing only checks the version.
	same, err := s.Append(ctx(t), "", "c", c3.Version)
	if err != nil || same.Version != c3.Version || same.Messages != 4 {
		t.Fatalf("empty Append: %+v %v", same, err)
	}
	_, err = s.Append(ctx(t), "", "c", c2.Version)
	wantErr(t, "empty Append, stale version", err, store.ErrConflict)

	// AnyVersion skips the check.
	c4, err := s.Append(ctx(t), "", "c", store.AnyVersion, convo.Assistant("four"))
	if err != nil || c4.Version <= c3.Version || c4.Messages != 5 {
		t.Fatalf("Append(AnyVersion): %+v %v", c4, err)
	}
	_, err = s.Append(ctx(t), "", "missing", 1, convo.User("x"))
	wantErr(t, "Append to a missing conversation", err, store.ErrNotFound)
	_, err = s.Append(ctx(t), "", "missing", store.AnyVersion, convo.User("x"))
	wantErr(t, "Append(AnyVersion) to a missing conversation", err, store.ErrNotFound)
}

func testAppendConflict(t *testing.T, s store.Store) {
	c := mustCreate(t, s, store.Conversation{ID: "c"}, convo.User("hello"))
	mine := mustAppend(t, s, c, convo.Assistant("first writer"))
	_, err := s.Append(ctx(t), "", "c", c.Version, convo.Assistant("second writer"))
	wantErr(t, "Append with a stale version", err, store.ErrConflict)
	for _, v := range []int64{0, mine.Version + 1, 1 << 40} {
		_, err = s.Append(ctx(t), "", "c", v, convo.Assistant("wrong version"))
		wantErr(t, fmt.Sprintf("Append with version %d", v), err, store.ErrConflict)
	}
	h, got := mustLoad(t, s, "", "c")
	if len(h) != 2 || h[1].Text() != "first writer" || got.Version != mine.Version {
		t.Fatalf("after conflicts: %d messages, last %q, version %d (want 2, first writer, %d)", len(h), h[len(h)-1].Text(), got.Version, mine.Version)
	}
	_, err = s.DeleteMessage(ctx(t), "", "c", c.Version, h[1].ID)
	wantErr(t, "DeleteMessage with a stale version", err, store.ErrConflict)
	if h2, _ := mustLoad(t, s, "", "c"); len(h2) != 2 {
		t.Fatal("a stale DeleteMessage removed a message")
	}
}

func testAppendAtomic(t *testing.T, s store.Store) {
	c := mustCreate(t, s, store.Conversation{ID: "c"}, convo.User("hello"))
	h0, _ := mustLoad(t, s, "", "c")
	bad := convo.Message{Role: convo.RoleAssistant, Phase: "thinking", Parts: []convo.Part{convo.Text("x")}}
	_, err := s.Append(ctx(t), "", "c", c.Version, convo.Assistant("ok"), convo.User("ok"), bad)
	wantErr(t, "Append with one invalid message", err, store.ErrInvalid)
	var ve *convo.ValidationError
	if !errors.As(err, &ve) || !strings.HasPrefix(ve.Problems[0].Path, "messages[2]") {
		t.Fatalf("want a *convo.ValidationError at messages[2], got %v", err)
	}

	dup := convo.Assistant("dup")
	dup.ID = h0[0].ID
	_, err = s.Append(ctx(t), "", "c", c.Version, convo.Assistant("ok"), dup)
	wantErr(t, "Append of a stored message id", err, store.ErrExists)

	h, got := mustLoad(t, s, "", "c")
	if len(h) != 1 || got.Version != c.Version || got.Messages != 1 {
		t.Fatalf("refused appends left %d messages, version %d (want 1, %d)", len(h), got.Version, c.Version)
	}
	// The refused batch's ids are free.
	ok := convo.Assistant("ok")
	ok.ID = "fresh"
	mustAppend(t, s, got, ok)
}

func testAppendPairing(t *testing.T, s store.Store) {
	c := mustCreate(t, s, store.Conversation{ID: "c"}, convo.User("weather?"))
	c = mustAppend(t, s, c, convo.Assistant("", call("t1", "weather"), call("t2", "time")))

	check := func(name string, want error, path string, msgs ...convo.Message) {
		t.Helper()
		_, err := s.Append(ctx(t), "", "c", c.Version, msgs...)
		if want == nil {
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return
		}
		wantErr(t, name, err, want)
		var ve *convo.ValidationError
		if !errors.As(err, &ve) || ve.Problems[0].Path != path {
			t.Fatalf("%s: %v, want a problem at %s", name, err, path)
		}
	}
	check("user message while calls are open", store.ErrInvalid, "messages[0]", convo.User("hello?"))
	check("result of an unknown call", store.ErrInvalid, "messages[0].parts[0]", convo.ToolResults(convo.ToolResult("t9", "x", "?")))
	check("one result, then a user message", store.ErrInvalid, "messages[1]",
		convo.ToolResults(convo.ToolResult("t1", "weather", "sunny")), convo.User("and?"))
	check("tool call in the wrong place", store.ErrInvalid, "messages[0].parts[1]",
		convo.ToolResults(convo.ToolResult("t1", "weather", "sunny"), call("t3", "x")))

	// Results may come one append at a time.
	c = mustAppend(t, s, c, convo.ToolResults(convo.ToolResult("t2", "time", "noon")))
	check("the same result twice", store.ErrInvalid, "messages[0].parts[0]", convo.ToolResults(convo.ToolResult("t2", "time", "noon")))
	c = mustAppend(t, s, c, convo.ToolResults(convo.ToolResult("t1", "weather", "sunny")))
	check("a late result", store.ErrInvalid, "messages[0].parts[0]", convo.ToolResults(convo.ToolResult("t1", "weather", "again")))

	// A whole turn in one append, leaving a call open at its end.
	c = mustAppend(t, s, c, convo.Assistant("Sunny at noon."), convo.User("and tomorrow?"),
		convo.Assistant("", call("t3", "weather")), convo.ToolResults(convo.ToolResult("t3", "weather", "rain")),
		convo.Assistant("", call("t4", "weather")))
	check("user message while t4 is open", store.ErrInvalid, "messages[0]", convo.User("?"))
	c = mustAppend(t, s, c, convo.ToolResults(convo.ToolResult("t4", "weather", "rain")), convo.Assistant("Rain."))

	h, _ := mustLoad(t, s, "", "c")
	if err := h.Validate(); err != nil {
		t.Fatalf("stored history does not validate: %v", err)
	}
}

// RichHistory returns a valid history that uses every kind of content the
// canonical format has (reasoning signatures, encrypted reasoning, native
// and unknown fields, media, tool calls with malformed arguments, all
// roles), so a backend that drops or rewrites any field fails Lossless.
func RichHistory() convo.History {
	when := time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC)
	sys := convo.System("Be brief.")
	sys.Native = convo.Native{"openai": json.RawMessage(`{"role":"developer"}`)}
	turn := convo.TurnSystem("This turn only.")
	user := convo.User("Weather in Paris? ☀ \u2028 \"quoted\" <tag> & \\",
		convo.Image("image/png", []byte{0x89, 'P', 'N', 'G', 0, 1, 2}),
		convo.File("text/plain", "notes.txt", []byte("hello")).WithCache("1h"),
		convo.ImageURL("image/jpeg", "https://example.com/a.jpg"))
	user.Time = when
	user.Name = "Alice"
	user.Meta = json.RawMessage(`{"z":1,"a":{"nested":[true,null,1.5e3]}}`)
	reasoning := convo.Part{Type: convo.TypeReasoning, Text: "Use the tool.", Signature: "EqQBCkYIARgCKkD+/==", Provider: "anthropic", Model: "claude-x"}
	encrypted := convo.Part{Type: convo.TypeReasoning, Encrypted: "gAAAAABo…opaque", ID: "rs_1", Summary: []string{"one", "two"}, Provider: "openai"}
	tc := convo.ToolCall("toolu_1", "get_weather", json.RawMessage(`{"city":"Paris","days":[1,2]}`))
	tc.Native = convo.Native{"gemini": json.RawMessage(`{"thoughtSignature":"c2ln"}`)}
	bad := convo.Part{Type: convo.TypeToolCall, ID: "toolu_2", Name: "broken", ArgsRaw: `{"city": "Par`}
	asst := convo.Assistant("", reasoning, encrypted, tc, bad)
	asst.Origin = &convo.Origin{Provider: "anthropic", Model: "claude-x", ResponseID: "msg_01"}
	asst.Usage = &convo.Usage{Input: 10, Output: 20, CacheRead: 3, CacheWrite: 4, Reasoning: 5, Total: 30}
	asst.Finish = convo.FinishToolUse
	asst.Effort = "high"
	asst.Extra = convo.Fields{{Key: "x_custom", Value: json.RawMessage(`{"kept":true}`)}}
	result := convo.ToolResultParts("toolu_1", "get_weather", convo.JSON(json.RawMessage(`{"temp_c":18}`)), convo.Text("mild"))
	failed := convo.ToolError("toolu_2", "broken", "arguments were not JSON")
	tool := convo.ToolResults(result, failed)
	var unknown convo.Part
	if err := json.Unmarshal([]byte(`{"type":"hologram","frames":[1,2,3]}`), &unknown); err != nil {
		panic(err)
	}
	final := convo.Assistant("18 °C.", convo.Refusal("not that"), unknown)
	final.Phase = convo.PhaseFinal
	final.Native = convo.Native{"openai": json.RawMessage(`{"id":"msg_abc"}`), "anthropic": json.RawMessage(`{"x":1}`)}
	summary := convo.Summary("Earlier: greetings.", 4)
	errm := convo.ErrorMessage("provider timed out")
	h := convo.History{sys, turn, summary, user, asst, tool, final, errm}
	for i := range h {
		h[i].ID = fmt.Sprintf("m%d", i)
	}
	return h
}

func testLossless(t *testing.T, s store.Store) {
	h := RichHistory()
	if err := h.Validate(); err != nil {
		t.Fatalf("richHistory is not valid: %v", err)
	}
	want, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, store.Conversation{ID: "rich"}, h[:3]...)
	c, _ := s.Get(ctx(t), "", "rich")
	for _, m := range h[3:] { // one by one, so pairing runs across appends
		c = mustAppend(t, s, c, m)
	}
	got, _ := mustLoad(t, s, "", "rich")
	sameHistory(t, "Load", got, h)
	b, err := convo.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(want) {
		t.Fatalf("canonical bytes differ after a round trip:\ngot  %s\nwant %s", b, want)
	}
	m, err := s.Message(ctx(t), "", "rich", "m4")
	if err != nil || !m.Equal(h[4]) {
		t.Fatalf("Message(m4): %v", err)
	}
}

func testLoad(t *testing.T, s store.Store) {
	var msgs convo.History
	for i := range 7 {
		msgs = append(msgs, convo.User(fmt.Sprint("u", i)), convo.Assistant(fmt.Sprint("a", i)))
	}
	c := mustCreate(t, s, store.Conversation{ID: "c"}, msgs...)
	all, _ := mustLoad(t, s, "", "c")
	for _, from := range []int{0, 1, 5, 13, 14, 15, 100} {
		h, got, err := s.Load(ctx(t), "", "c", from)
		if err != nil {
			t.Fatalf("Load(from %d): %v", from, err)
		}
		want := all[min(from, len(all)):]
		sameHistory(t, fmt.Sprintf("Load(from %d)", from), h, want)
		sameDescription(t, "Load description", got, c)
	}
	_, _, err := s.Load(ctx(t), "", "c", -1)
	wantErr(t, "Load(from -1)", err, store.ErrInvalid)
	_, _, err = s.Load(ctx(t), "", "nope", 0)
	wantErr(t, "Load of a missing conversation", err, store.ErrNotFound)
	empty := mustCreate(t, s, store.Conversation{ID: "empty"})
	h, got := mustLoad(t, s, "", "empty")
	if len(h) != 0 || got.ID != empty.ID {
		t.Fatalf("empty conversation: %d messages", len(h))
	}
}

func testMessage(t *testing.T, s store.Store) {
	u := convo.User("find me")
	u.ID = "needle"
	mustCreate(t, s, store.Conversation{ID: "c", Tenant: "t"}, convo.System("s"), u, convo.Assistant("a"))
	m, err := s.Message(ctx(t), "t", "c", "needle")
	if err != nil || !m.Equal(u) {
		t.Fatalf("Message: %+v %v", m, err)
	}
	for _, tc := range []struct{ tenant, conv, msg string }{
		{"t", "c", "hay"}, {"t", "other", "needle"}, {"u", "c", "needle"}, {"", "c", "needle"},
	} {
		_, err := s.Message(ctx(t), tc.tenant, tc.conv, tc.msg)
		wantErr(t, fmt.Sprintf("Message(%q, %q, %q)", tc.tenant, tc.conv, tc.msg), err, store.ErrNotFound)
	}
}

func testDeleteMessage(t *testing.T, s store.Store) {
	c := mustCreate(t, s, store.Conversation{ID: "c"}, convo.User("u0"), convo.Assistant("a0"), convo.User("u1"), convo.Assistant("a1"))
	h, _ := mustLoad(t, s, "", "c")
	c2, err := s.DeleteMessage(ctx(t), "", "c", c.Version, h[1].ID)
	if err != nil || c2.Version <= c.Version || c2.Messages != 3 {
		t.Fatalf("DeleteMessage: %+v %v", c2, err)
	}
	_, err = s.DeleteMessage(ctx(t), "", "c", c2.Version, h[1].ID)
	wantErr(t, "DeleteMessage twice", err, store.ErrNotFound)
	_, err = s.DeleteMessage(ctx(t), "", "c", c.Version, h[2].ID)
	wantErr(t, "DeleteMessage with the old version", err, store.ErrConflict)

	want := convo.History{h[0], h[2], h[3]}
	got, _ := mustLoad(t, s, "", "c")
	sameHistory(t, "after DeleteMessage", got, want)
	from1, _, err := s.Load(ctx(t), "", "c", 1)
	if err != nil {
		t.Fatal(err)
	}
	sameHistory(t, "Load(from 1) after DeleteMessage", from1, want[1:])

	c3 := mustAppend(t, s, c2, convo.User("u2"))
	got, _ = mustLoad(t, s, "", "c")
	if len(got) != 4 || got[3].Text() != "u2" || c3.Messages != 4 {
		t.Fatalf("append after DeleteMessage: %s", ids(got))
	}
	f := mustFork(t, s, "", "c", 2, store.Conversation{ID: "f"})
	fh, _ := mustLoad(t, s, "", f.ID)
	sameHistory(t, "fork after DeleteMessage", fh, got[:2])

	// Deleting the assistant message whose calls are open lets the
	// conversation go on without their results.
	c4 := mustAppend(t, s, c3, convo.Assistant("", call("t1", "f")))
	_, err = s.Append(ctx(t), "", "c", c4.Version, convo.User("x"))
	wantErr(t, "user message while t1 is open", err, store.ErrInvalid)
	got, _ = mustLoad(t, s, "", "c")
	c5, err := s.DeleteMessage(ctx(t), "", "c", store.AnyVersion, got[len(got)-1].ID)
	if err != nil {
		t.Fatalf("DeleteMessage(AnyVersion): %v", err)
	}
	mustAppend(t, s, c5, convo.User("x"))

	_, err = s.DeleteMessage(ctx(t), "", "nope", 1, "m")
	wantErr(t, "DeleteMessage in a missing conversation", err, store.ErrNotFound)
}

func mustFork(t *testing.T, s store.Store, tenant, id string, at int, c store.Conversation) store.Conversation {
	t.Helper()
	f, err := s.Fork(ctx(t), tenant, id, at, c)
	if err != nil {
		t.Fatalf("Fork(%q at %d): %v", id, at, err)
	}
	return f
}

func testFork(t *testing.T, s store.Store) {
	orig := mustCreate(t, s, store.Conversation{ID: "orig", Tenant: "t", Title: "Original", Meta: json.RawMessage(`{"a":1}`)},
		convo.User("u0"), convo.Assistant("a0"), convo.User("u1"), convo.Assistant("a1"))
	oh, _ := mustLoad(t, s, "t", "orig")

	f := mustFork(t, s, "t", "orig", 2, store.Conversation{})
	if f.ID == "orig" || !strings.HasPrefix(f.ID, "conv_") || f.Tenant != "t" || f.Title != "Original" || string(f.Meta) != `{"a":1}` ||
		f.ForkedFrom != "orig" || f.ForkedAt != 2 || f.Messages != 2 || f.Version != 1 {
		t.Fatalf("Fork: %+v", f)
	}
	fh, _ := mustLoad(t, s, "t", f.ID)
	sameHistory(t, "fork", fh, oh[:2])

	// The branch regenerates the answer; the original keeps its own.
	regen := mustAppend(t, s, f, convo.User("u1 edited"), convo.Assistant("a1 again"))
	if regen.Messages != 4 {
		t.Fatalf("fork after append: %+v", regen)
	}
	oh2, oc := mustLoad(t, s, "t", "orig")
	sameHistory(t, "original after the fork changed", oh2, oh)
	if oc.Version != orig.Version {
		t.Fatal("forking changed the original's version")
	}

	g := mustFork(t, s, "t", "orig", 0, store.Conversation{ID: "empty-branch", Title: "New", Meta: json.RawMessage(`{"b":2}`)})
	if g.ID != "empty-branch" || g.Title != "New" || string(g.Meta) != `{"b":2}` || g.Messages != 0 || g.ForkedAt != 0 {
		t.Fatalf("Fork at 0: %+v", g)
	}
	all := mustFork(t, s, "t", "orig", 4, store.Conversation{})
	ah, _ := mustLoad(t, s, "t", all.ID)
	sameHistory(t, "Fork of everything", ah, oh)

	// A fork of a fork.
	ff := mustFork(t, s, "t", f.ID, 3, store.Conversation{})
	ffh, _ := mustLoad(t, s, "t", ff.ID)
	rh, _ := mustLoad(t, s, "t", f.ID)
	sameHistory(t, "fork of a fork", ffh, rh[:3])

	for _, at := range []int{-1, 5} {
		_, err := s.Fork(ctx(t), "t", "orig", at, store.Conversation{})
		wantErr(t, fmt.Sprintf("Fork at %d", at), err, store.ErrInvalid)
	}
	_, err := s.Fork(ctx(t), "t", "orig", 1, store.Conversation{ID: "empty-branch"})
	wantErr(t, "Fork onto an existing id", err, store.ErrExists)
	_, err = s.Fork(ctx(t), "t", "orig", 1, store.Conversation{ID: "bad id"})
	wantErr(t, "Fork to a bad id", err, store.ErrInvalid)
	_, err = s.Fork(ctx(t), "other", "orig", 1, store.Conversation{})
	wantErr(t, "Fork from another tenant", err, store.ErrNotFound)

	// A fork inside a tool call keeps the call open.
	tc := mustCreate(t, s, store.Conversation{ID: "tools", Tenant: "t"}, convo.User("q"), convo.Assistant("", call("t1", "f")),
		convo.ToolResults(convo.ToolResult("t1", "f", "r")), convo.Assistant("done"))
	mid := mustFork(t, s, "t", tc.ID, 2, store.Conversation{})
	_, err = s.Append(ctx(t), "t", mid.ID, mid.Version, convo.User("skip the tool"))
	wantErr(t, "user message in a fork with an open call", err, store.ErrInvalid)
	mustAppend(t, s, mid, convo.ToolResults(convo.ToolResult("t1", "f", "other result")))
}

func testUpdate(t *testing.T, s store.Store) {
	c := mustCreate(t, s, store.Conversation{ID: "c", Tenant: "t", Title: "Old", Meta: json.RawMessage(`{"a":1}`)}, convo.User("x"))
	title := "New"
	u, err := s.Update(ctx(t), "t", "c", &title, nil)
	if err != nil || u.Title != "New" || string(u.Meta) != `{"a":1}` || u.Version != c.Version || u.Updated.Before(c.Updated) {
		t.Fatalf("Update title: %+v %v", u, err)
	}
	u, err = s.Update(ctx(t), "t", "c", nil, json.RawMessage(` {"b" : [2]} `))
	if err != nil || u.Title != "New" || string(u.Meta) != `{"b":[2]}` {
		t.Fatalf("Update meta: %+v %v", u, err)
	}
	got, _ := s.Get(ctx(t), "t", "c")
	sameDescription(t, "Get after Update", got, u)
	empty := ""
	u, err = s.Update(ctx(t), "t", "c", &empty, json.RawMessage(`null`))
	if err != nil || u.Title != "" || u.Meta != nil {
		t.Fatalf("Update clearing: %+v %v", u, err)
	}
	u2, err := s.Update(ctx(t), "t", "c", nil, nil)
	if err != nil || u2.Title != "" || u2.Meta != nil {
		t.Fatalf("Update changing nothing: %+v %v", u2, err)
	}
	_, err = s.Update(ctx(t), "t", "c", nil, json.RawMessage(`[1]`))
	wantErr(t, "Update with array meta", err, store.ErrInvalid)
	bad := "a\x00"
	_, err = s.Update(ctx(t), "t", "c", &bad, nil)
	wantErr(t, "Update with a NUL title", err, store.ErrInvalid)
	_, err = s.Update(ctx(t), "other", "c", &title, nil)
	wantErr(t, "Update in another tenant", err, store.ErrNotFound)
	got, _ = s.Get(ctx(t), "t", "c")
	if got.Title != "" {
		t.Fatal("an Update of another tenant changed the conversation")
	}
}

func testDelete(t *testing.T, s store.Store) {
	mustCreate(t, s, store.Conversation{ID: "c", Tenant: "t"}, convo.User("x"), convo.Assistant("y"))
	f := mustFork(t, s, "t", "c", 2, store.Conversation{ID: "f"})
	wantErr(t, "Delete in another tenant", s.Delete(ctx(t), "other", "c"), store.ErrNotFound)
	if _, err := s.Get(ctx(t), "t", "c"); err != nil {
		t.Fatalf("Delete of another tenant removed the conversation: %v", err)
	}
	if err := s.Delete(ctx(t), "t", "c"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx(t), "t", "c")
	wantErr(t, "Get after Delete", err, store.ErrNotFound)
	_, _, err = s.Load(ctx(t), "t", "c", 0)
	wantErr(t, "Load after Delete", err, store.ErrNotFound)
	wantErr(t, "Delete twice", s.Delete(ctx(t), "t", "c"), store.ErrNotFound)
	fh, _ := mustLoad(t, s, "t", f.ID)
	if len(fh) != 2 {
		t.Fatalf("the fork lost its messages with the original: %d", len(fh))
	}
	// The id is free again, and the new conversation starts empty.
	c := mustCreate(t, s, store.Conversation{ID: "c", Tenant: "t"})
	h, _ := mustLoad(t, s, "t", c.ID)
	if len(h) != 0 || c.Version != 1 {
		t.Fatalf("recreated conversation: %d messages, version %d", len(h), c.Version)
	}
}

// listAll pages through the tenant's conversations limit at a time.
func listAll(t *testing.T, s store.Store, tenant string, opts store.ListOptions) []store.Conversation {
	t.Helper()
	var all []store.Conversation
	for pages := 0; ; pages++ {
		page, next, err := s.List(ctx(t), tenant, opts)
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if opts.Limit > 0 && len(page) > opts.Limit {
			t.Fatalf("List returned %d, limit %d", len(page), opts.Limit)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		if pages > 10000 {
			t.Fatal("List never ends")
		}
		opts.After = next
	}
}

func testList(t *testing.T, s store.Store) {
	var want []string
	for i := range 23 {
		c := mustCreate(t, s, store.Conversation{ID: fmt.Sprintf("c%02d", i), Tenant: "t"})
		want = append(want, c.ID)
		if i%5 == 0 {
			mustCreate(t, s, store.Conversation{ID: fmt.Sprintf("other%02d", i), Tenant: "u"})
		}
	}
	slices.Reverse(want)
	for _, limit := range []int{1, 4, 23, 0, 5000} {
		got := listAll(t, s, "t", store.ListOptions{Limit: limit})
		var gotIDs []string
		for _, c := range got {
			gotIDs = append(gotIDs, c.ID)
			if c.Tenant != "t" {
				t.Fatalf("List(t) returned tenant %q", c.Tenant)
			}
		}
		// Newest first; conversations made in the same microsecond may
		// come in any order, so compare creation times, then the sets.
		for i := 1; i < len(got); i++ {
			if got[i].Created.After(got[i-1].Created) {
				t.Fatalf("limit %d: not newest first at %d: %v after %v", limit, i, got[i].Created, got[i-1].Created)
			}
		}
		if !slices.Equal(sorted(gotIDs), sorted(want)) {
			t.Fatalf("limit %d: listed %v\nwant %v", limit, gotIDs, want)
		}
	}
	page, next, err := s.List(ctx(t), "t", store.ListOptions{Limit: 23})
	if err != nil || len(page) != 23 || next != "" {
		t.Fatalf("an exact page: %d conversations, next %q, %v (want no cursor at the end)", len(page), next, err)
	}
	page, _, _ = s.List(ctx(t), "t", store.ListOptions{Limit: 3})
	got, _ := s.Get(ctx(t), "t", page[0].ID)
	sameDescription(t, "List entry", page[0], got)

	for _, bad := range []string{"garbage!", "bm90IGEgY3Vyc29y", "MS54eC5jMDE"} {
		_, _, err = s.List(ctx(t), "t", store.ListOptions{After: bad})
		wantErr(t, fmt.Sprintf("List after %q", bad), err, store.ErrInvalid)
	}
	_, _, err = s.List(ctx(t), "t", store.ListOptions{Limit: -1})
	wantErr(t, "List with a negative limit", err, store.ErrInvalid)
	none, next, err := s.List(ctx(t), "nobody", store.ListOptions{})
	if err != nil || len(none) != 0 || next != "" {
		t.Fatalf("List of an empty tenant: %v %q %v", none, next, err)
	}

	// A cursor stays valid when the conversation it names is deleted.
	first, next, _ := s.List(ctx(t), "t", store.ListOptions{Limit: 2})
	if err := s.Delete(ctx(t), "t", first[1].ID); err != nil {
		t.Fatal(err)
	}
	rest := listAll(t, s, "t", store.ListOptions{Limit: 7, After: next})
	if len(rest) != 21 {
		t.Fatalf("after deleting the cursor's conversation: %d more, want 21", len(rest))
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func testListFilters(t *testing.T, s store.Store) {
	convs := []struct {
		id, title, meta string
	}{
		{"a", "Trip to Paris", `{"project":"travel","n":1,"tags":["x","y"],"o":{"k":1,"j":2}}`},
		{"b", "paris notes", `{"project":"travel","n":1.0}`},
		{"c", "Budget", `{"project":"money","n":2}`},
		{"d", "Trip to Rome", ``},
		{"e", "Tripe recipes 100%_", `{"project":"food","tags":["y","x"],"o":{"j":2,"k":1}}`},
		{"f", "Notes d'été", ``},
		{"g", "Escaped", `{"project":"tr\u0061vel","name":"travel"}`},
		{"h", "Key", `{"travel":"project","project":"<&>"}`},
	}
	for _, c := range convs {
		var meta json.RawMessage
		if c.meta != "" {
			meta = json.RawMessage(c.meta)
		}
		mustCreate(t, s, store.Conversation{ID: c.id, Tenant: "t", Title: c.title, Meta: meta})
	}
	mustCreate(t, s, store.Conversation{ID: "x", Tenant: "other", Title: "Trip", Meta: json.RawMessage(`{"project":"travel"}`)})
	tests := []struct {
		title, meta string
		want        []string
	}{
		{"Trip", "", []string{"a", "d", "e"}},
		{"Paris", "", []string{"a", "b"}}, // case-insensitive
		{"pARIS", "", []string{"a", "b"}},
		{"ÉTÉ", "", []string{"f"}}, // beyond ASCII
		{"TRIP", "", []string{"a", "d", "e"}},
		{"100%_", "", []string{"e"}}, // no LIKE wildcards
		{"%", "", []string{"e"}},
		{"", `{"project":"travel"}`, []string{"a", "b", "g"}}, // escaped in g's text
		{"", `{"project":"<&>"}`, []string{"h"}},
		{"", `{"project":"\u003c\u0026\u003e"}`, []string{"h"}},
		{"", `{"name":"travel","project":"travel"}`, []string{"g"}},
		{"", `{"n":1}`, []string{"a", "b"}}, // numbers by value
		{"", `{"n":1e0}`, []string{"a", "b"}},
		{"", `{"project":"travel","n":2}`, nil},
		{"", `{"tags":["x","y"]}`, []string{"a"}}, // arrays in order
		{"", `{"o":{"j":2,"k":1}}`, []string{"a", "e"}},
		{"", `{"o":{"k":1}}`, nil}, // members compare whole
		{"", `{"missing":null}`, nil},
		{"", `{}`, []string{"a", "b", "c", "d", "e", "f", "g", "h"}},
		{"Trip", `{"project":"travel"}`, []string{"a"}},
	}
	for _, tc := range tests {
		var meta json.RawMessage
		if tc.meta != "" {
			meta = json.RawMessage(tc.meta)
		}
		for _, limit := range []int{1, 0} {
			got := listAll(t, s, "t", store.ListOptions{Title: tc.title, Meta: meta, Limit: limit})
			var ids []string
			for _, c := range got {
				ids = append(ids, c.ID)
			}
			if !slices.Equal(sorted(ids), tc.want) {
				t.Errorf("List(title %q, meta %s, limit %d) = %v, want %v", tc.title, tc.meta, limit, ids, tc.want)
			}
		}
	}
	_, _, err := s.List(ctx(t), "t", store.ListOptions{Meta: json.RawMessage(`[1]`)})
	wantErr(t, "List with an array filter", err, store.ErrInvalid)
}

// testListMetaWritten lists by metadata after every way it is written —
// Create, Update, Batch, Fork, Delete — so that a store keeping an index of
// metadata beside the conversations cannot find a stale value or miss a
// new one.
func testListMetaWritten(t *testing.T, s store.Store) {
	long := strings.Repeat("é", 200) // 400 bytes: longer than an index keeps
	find := func(meta string, want ...string) {
		t.Helper()
		for _, limit := range []int{1, 0} {
			var ids []string
			for _, c := range listAll(t, s, "t", store.ListOptions{Meta: json.RawMessage(meta), Limit: limit}) {
				ids = append(ids, c.ID)
			}
			if !slices.Equal(sorted(ids), want) {
				t.Errorf("List(meta %s, limit %d) = %v, want %v", meta, limit, ids, want)
			}
		}
	}
	mustCreate(t, s, store.Conversation{ID: "a", Tenant: "t", Meta: json.RawMessage(`{"fp":"one","n":1}`)})
	mustCreate(t, s, store.Conversation{ID: "b", Tenant: "t", Meta: json.RawMessage(`{"fp":"one","long":"` + long + `"}`)})
	mustCreate(t, s, store.Conversation{ID: "c", Tenant: "other", Meta: json.RawMessage(`{"fp":"one"}`)})
	mustCreate(t, s, store.Conversation{ID: "s", Tenant: "t", Meta: json.RawMessage(`{"fp":"\ud83d\ude00 \u00e9\/\n"}`)})
	find(`{"fp":"one"}`, "a", "b")
	find(`{"fp":"😀 é/\u000a"}`, "s") // escapes written otherwise
	find(`{"fp":"one","n":1}`, "a")
	find(`{"long":"`+long+`"}`, "b")

	if _, err := s.Update(ctx(t), "t", "a", nil, json.RawMessage(`{"fp":"two"}`)); err != nil {
		t.Fatal(err)
	}
	find(`{"fp":"one"}`, "b")
	find(`{"fp":"two"}`, "a")
	if _, err := s.Update(ctx(t), "t", "b", nil, json.RawMessage(`null`)); err != nil {
		t.Fatal(err)
	}
	find(`{"fp":"one"}`)

	res := s.Batch(ctx(t), []store.Write{
		{Tenant: "t", ID: "a", Version: store.AnyVersion, Meta: json.RawMessage(`{"fp":"three"}`)},
		{Tenant: "t", ID: "d", Create: true, Meta: json.RawMessage(`{"fp":"three"}`)},
	})
	for _, r := range res {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	find(`{"fp":"two"}`)
	find(`{"fp":"three"}`, "a", "d")

	u := convo.User("hi")
	u.ID = "m1"
	if _, err := s.Append(ctx(t), "t", "d", store.AnyVersion, u); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fork(ctx(t), "t", "d", 1, store.Conversation{ID: "e", Meta: json.RawMessage(`{"fp":"four"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fork(ctx(t), "t", "d", 1, store.Conversation{ID: "f"}); err != nil {
		t.Fatal(err)
	}
	find(`{"fp":"four"}`, "e")
	find(`{"fp":"three"}`, "a", "d", "f") // a fork keeps the original's metadata

	if err := s.Delete(ctx(t), "t", "a"); err != nil {
		t.Fatal(err)
	}
	find(`{"fp":"three"}`, "d", "f")
	mustCreate(t, s, store.Conversation{ID: "a", Tenant: "t", Meta: json.RawMessage(`{"fp":"five"}`)})
	find(`{"fp":"three"}`, "d", "f")
	find(`{"fp":"five"}`, "a")
}

// testTenants calls every method with the wrong tenant: each must answer
// ErrNotFound and change nothing.
func testTenants(t *testing.T, s store.Store) {
	u := convo.User("secret")
	u.ID = "m1"
	c := mustCreate(t, s, store.Conversation{ID: "c", Tenant: "alice", Title: "private"}, u)
	title := "pwned"
	calls := map[string]func(tenant string) error{
		"Get":    func(tn string) error { _, err := s.Get(ctx(t), tn, "c"); return err },
		"Update": func(tn string) error { _, err := s.Update(ctx(t), tn, "c", &title, nil); return err },
		"Append": func(tn string) error {
			_, err := s.Append(ctx(t), tn, "c", c.Version, convo.Assistant("x"))
			return err
		},
		"AppendAny": func(tn string) error {
			_, err := s.Append(ctx(t), tn, "c", store.AnyVersion, convo.Assistant("x"))
			return err
		},
		"Load":          func(tn string) error { _, _, err := s.Load(ctx(t), tn, "c", 0); return err },
		"Message":       func(tn string) error { _, err := s.Message(ctx(t), tn, "c", "m1"); return err },
		"DeleteMessage": func(tn string) error { _, err := s.DeleteMessage(ctx(t), tn, "c", c.Version, "m1"); return err },
		"Fork":          func(tn string) error { _, err := s.Fork(ctx(t), tn, "c", 1, store.Conversation{}); return err },
		"Delete":        func(tn string) error { return s.Delete(ctx(t), tn, "c") },
	}
	for name, fn := range calls {
		for _, tenant := range []string{"bob", "", "Alice", "alice ", "alice\x00", "\xff"} {
			wantErr(t, fmt.Sprintf("%s as %q", name, tenant), fn(tenant), store.ErrNotFound)
		}
	}
	got, err := s.Get(ctx(t), "alice", "c")
	if err != nil {
		t.Fatal(err)
	}
	sameDescription(t, "after other tenants' calls", got, c)
	for _, tenant := range []string{"bob", "\xff", "alice\x00"} {
		if page, _, err := s.List(ctx(t), tenant, store.ListOptions{}); len(page) != 0 || err != nil {
			t.Fatalf("%q lists %d conversations (%v)", tenant, len(page), err)
		}
	}
	for _, id := range []string{"c\x00", "\xff"} {
		_, err := s.Get(ctx(t), "alice", id)
		wantErr(t, fmt.Sprintf("Get(%q)", id), err, store.ErrNotFound)
		_, err = s.Message(ctx(t), "alice", "c", id)
		wantErr(t, fmt.Sprintf("Message(%q)", id), err, store.ErrNotFound)
	}
	if page, _, err := s.List(ctx(t), "alice", store.ListOptions{Title: "\xff"}); len(page) != 0 || err != nil {
		t.Fatalf("a title filter that is not UTF-8 found %d (%v)", len(page), err)
	}
}

func testCanceled(t *testing.T, s store.Store) {
	c := mustCreate(t, s, store.Conversation{ID: "c"}, convo.User("x"))
	cctx, cancel := context.WithCancel(ctx(t))
	cancel()
	// Many times: a store that lets a select choose between a free
	// writer and the ended context succeeds now and then.
	for range 32 {
		if _, err := s.Append(cctx, "", "c", c.Version, convo.Assistant("y")); err == nil {
			t.Fatal("Append with a canceled context succeeded")
		}
	}
	if _, err := s.Create(cctx, store.Conversation{ID: "d"}); err == nil {
		t.Fatal("Create with a canceled context succeeded")
	}
	if _, _, err := s.Load(cctx, "", "c", 0); err == nil {
		t.Fatal("Load with a canceled context succeeded")
	}
	h, got := mustLoad(t, s, "", "c")
	if len(h) != 1 || got.Version != c.Version {
		t.Fatalf("a canceled Append changed the conversation: %d messages", len(h))
	}
	if _, err := s.Get(ctx(t), "", "d"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a canceled Create made the conversation: %v", err)
	}
}

// testConcurrentAppend runs writers that read the version and append one
// message, retrying on conflict: every append must land exactly once, at the
// place its returned version says.
func testConcurrentAppend(t *testing.T, s store.Store) {
	const writers, each = 8, 12
	c := mustCreate(t, s, store.Conversation{ID: "c"})
	res := make(chan ack, writers*each)
	var wg sync.WaitGroup
	var conflicts int64
	var mu sync.Mutex
	for w := range writers {
		wg.Go(func() {
			n, err := appendLoop(ctx(t), s, "", c.ID, fmt.Sprintf("w%d", w), each, func(a ack) { res <- a })
			mu.Lock()
			conflicts += n
			mu.Unlock()
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	close(res)
	var acks []ack
	for a := range res {
		acks = append(acks, a)
	}
	h, got := mustLoad(t, s, "", c.ID)
	checkAppends(t, h, got, c.Version, acks)
	t.Logf("%d appends, %d conflicts retried", len(acks), conflicts)
}

func testExportImport(t *testing.T, s store.Store) {
	h := RichHistory()
	c := mustCreate(t, s, store.Conversation{ID: "src", Tenant: "t"}, h...)
	for _, lines := range []bool{false, true} {
		var buf strings.Builder
		if err := store.Export(ctx(t), s, "t", c.ID, &buf, lines); err != nil {
			t.Fatalf("Export(lines %v): %v", lines, err)
		}
		want, _ := convo.Marshal(h)
		if lines {
			want, _ = convo.MarshalLines(h)
		}
		if buf.String() != string(want) {
			t.Fatalf("Export(lines %v):\ngot  %s\nwant %s", lines, buf.String(), want)
		}
		id := fmt.Sprintf("imported-%v", lines)
		got, err := store.Import(ctx(t), s, store.Conversation{ID: id, Tenant: "t2", Title: "copy"}, strings.NewReader(buf.String()))
		if err != nil || got.ID != id || got.Tenant != "t2" || got.Messages != len(h) {
			t.Fatalf("Import: %+v %v", got, err)
		}
		back, _ := mustLoad(t, s, "t2", id)
		sameHistory(t, "imported", back, h)
	}
	err := store.Export(ctx(t), s, "other", c.ID, new(strings.Builder), false)
	wantErr(t, "Export from another tenant", err, store.ErrNotFound)
	_, err = store.Import(ctx(t), s, store.Conversation{ID: "broken"}, strings.NewReader(`{"format":"convo/v1","messages":[{"role":"robot"}]}`))
	wantErr(t, "Import of a broken document", err, store.ErrInvalid)
	_, err = store.Import(ctx(t), s, store.Conversation{ID: "unpaired"}, strings.NewReader(`[{"role":"tool","parts":[{"type":"tool_result","id":"x","parts":[]}]}]`))
	wantErr(t, "Import of an invalid history", err, store.ErrInvalid)
	for _, id := range []string{"broken", "unpaired"} {
		if _, err := s.Get(ctx(t), "", id); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("a refused Import made %q: %v", id, err)
		}
	}
}

// testLoadRange checks every page of a conversation against the whole of
// it: while positions are indexes, after a deletion in the middle and at
// the end (positions with gaps), and in a fork of such a conversation.
func testLoadRange(t *testing.T, s store.Store) {
	var msgs []convo.Message
	for i := range 7 {
		msgs = append(msgs, convo.User(fmt.Sprintf("u%d", i)), convo.Assistant(fmt.Sprintf("a%d", i)))
	}
	c := mustCreate(t, s, store.Conversation{ID: "c", Tenant: "t"}, msgs...)
	pages := func(what, id string) {
		t.Helper()
		all, desc := mustLoad(t, s, "t", id)
		for from := 0; from <= len(all)+1; from++ {
			for n := -1; n <= len(all)+1; n++ {
				got, gotDesc, err := s.LoadRange(ctx(t), "t", id, from, n)
				if err != nil {
					t.Fatalf("%s: LoadRange(%d, %d): %v", what, from, n, err)
				}
				want := convo.History{}
				if from < len(all) {
					want = all[from:]
					if n >= 0 && n < len(want) {
						want = want[:n]
					}
				}
				sameHistory(t, fmt.Sprintf("%s: LoadRange(%d, %d)", what, from, n), got, want)
				sameDescription(t, what, gotDesc, desc)
			}
		}
	}
	pages("contiguous", "c")
	h, _ := mustLoad(t, s, "t", "c")
	c, err := s.DeleteMessage(ctx(t), "t", "c", c.Version, h[5].ID)
	if err != nil {
		t.Fatal(err)
	}
	pages("after deleting messages[5]", "c")
	if _, err := s.DeleteMessage(ctx(t), "t", "c", c.Version, h[len(h)-1].ID); err != nil {
		t.Fatal(err)
	}
	pages("after deleting the last message", "c")
	mustFork(t, s, "t", "c", 9, store.Conversation{ID: "f"})
	pages("fork", "f")

	_, _, err = s.LoadRange(ctx(t), "t", "c", -1, 2)
	wantErr(t, "LoadRange from -1", err, store.ErrInvalid)
	_, _, err = s.LoadRange(ctx(t), "other", "c", 0, 2)
	wantErr(t, "LoadRange of another tenant", err, store.ErrNotFound)
	_, _, err = s.LoadRange(ctx(t), "t", "nope", 0, 2)
	wantErr(t, "LoadRange of no conversation", err, store.ErrNotFound)
}
