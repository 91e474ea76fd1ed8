package gateway

import (
	"encoding/json"
	"fmt"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"pgregory.net/rapid"
)

// TestReplies: the replies of a conversation's current turn are kept for
// one taker, a user message starts the turn again, none is kept for a write
// that ended otherwise, and the bytes stay bounded.
func TestReplies(t *testing.T) {
	var r replies
	step1, step2 := convo.Assistant("checking"), convo.Assistant("sunny")
	r.put("t", "c", "fp1", nil, []convo.Message{convo.User("weather?"), step1})
	turn, fp, ok := r.take("t", "c")
	if !ok || fp != "fp1" || texts(turn) != "checking" {
		t.Fatalf("take: %q %q %v", texts(turn), fp, ok)
	}
	if _, _, ok := r.take("t", "c"); ok {
		t.Error("a turn was taken twice")
	}
	// The next step's write: the tool's result and the reply, after the
	// restored first step.
	r.put("t", "c", "fp2", turn, []convo.Message{convo.ToolResults(convo.ToolResult("1", "w", "{}")), step2})
	if turn, _, _ := r.take("t", "c"); texts(turn) != "checking|sunny" {
		t.Errorf("the turn after two steps is %q", texts(turn))
	}
	r.put("t", "c", "fp3", []convo.Message{step1, step2}, []convo.Message{convo.User("and tomorrow?"), convo.Assistant("rain")})
	if turn, _, _ := r.take("t", "c"); texts(turn) != "rain" {
		t.Errorf("a user message did not start the turn again: %q", texts(turn))
	}
	r.put("t", "c", "fp1", nil, []convo.Message{step2})
	r.put("t", "c", "fp2", nil, []convo.Message{step2, convo.ErrorMessage("upstream failed")})
	if _, _, ok := r.take("t", "c"); ok {
		t.Error("a write that ended with a failure left a reply to restore")
	}
	if _, _, ok := r.take("other tenant", "c"); ok {
		t.Error("a reply was given to another tenant")
	}
	big := convo.Assistant(strings.Repeat("x", maxReplyEntry/2))
	for i := range 2 * maxReplyCache / maxReplyEntry {
		r.put("t", strings.Repeat("c", i+1), "fp", nil, []convo.Message{big})
		if r.bytes > maxReplyCache {
			t.Fatalf("%d bytes kept, more than %d", r.bytes, maxReplyCache)
		}
	}
	r.put("t", "long", "fp", []convo.Message{big, big}, []convo.Message{step2})
	if turn, _, _ := r.take("t", "long"); len(turn) != 2 || turn[1].Text() != "sunny" {
		t.Errorf("a turn larger than an entry kept %d replies, want its last two", len(turn))
	}
	r.put("t", "huge", "fp", nil, []convo.Message{convo.Assistant(strings.Repeat("x", maxReplyEntry+1))})
	if _, _, ok := r.take("t", "huge"); ok {
		t.Error("a reply larger than an entry may be was kept")
	}
	// Nor is a long one encoded only to be dropped (a translated 40 MiB
	// reply was copied once more, a third of the gateway's peak memory).
	long := []convo.Message{convo.Assistant(strings.Repeat("x", 16*maxReplyEntry))}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r.put("t", "long", "fp", nil, long)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > maxReplyEntry {
		t.Errorf("not keeping a reply of %d bytes allocated %d bytes", 16*maxReplyEntry, n)
	}
}

// TestRepliesNotScanned: the replies kept for translated turns are kept
// encoded, so the heap the garbage collector walks at every cycle hardly
// grows with them (kept decoded, a busy translating gateway's were most of
// the heap it marked), and each comes back as it was put, read back as
// the store reads it (a signed thinking part, a tool call, usage).
func TestRepliesNotScanned(t *testing.T) {
	reply := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		{Type: convo.TypeReasoning, Text: "The user wants the weather in Paris: call the tool.", Signature: strings.Repeat("EqQBCkgIAhABGAIiQL", 12)},
		convo.Text("Let me check the weather in Paris."),
		convo.ToolCall("toolu_01", "get_weather", json.RawMessage(`{"city":"Paris","unit":"celsius"}`)),
	}, Usage: &convo.Usage{Input: 812, Output: 96, Total: 908}, Finish: convo.FinishToolUse}
	want, err := convo.AppendMessage(nil, reply)
	if err != nil {
		t.Fatal(err)
	}
	// What a collection marks: the objects live, and the bytes of
	// those holding pointers.
	heap := func() (objects, scannable int64) {
		runtime.GC()
		s := []rtmetrics.Sample{{Name: "/gc/heap/objects:objects"}, {Name: "/gc/scan/heap:bytes"}}
		rtmetrics.Read(s)
		return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
	}
	var r replies
	const n = 5000
	objects, scannable := heap()
	for i := range n {
		m, err := convo.UnmarshalMessage(want) // each reply its own, as decoded from its stream
		if err != nil {
			t.Fatal(err)
		}
		r.put("t", fmt.Sprint("c", i), "fp", nil, []convo.Message{convo.User("Weather in Paris?"), m})
	}
	objects2, scannable2 := heap()
	perObjects, perScannable := float64(objects2-objects)/n, float64(scannable2-scannable)/n
	t.Logf("a conversation's reply kept: %d bytes, %.1f objects, %.0f bytes with pointers", r.bytes/n, perObjects, perScannable)
	if perObjects > 4 || perScannable > 300 {
		t.Errorf("a conversation's reply kept is %.1f objects and %.0f bytes with pointers for the collector to mark, want at most 4 and 300", perObjects, perScannable)
	}
	turn, fp, ok := r.take("t", "c4999")
	if !ok || fp != "fp" || len(turn) != 1 {
		t.Fatalf("take: %d messages, %q, %v", len(turn), fp, ok)
	}
	if got, err := convo.AppendMessage(nil, turn[0]); err != nil || string(got) != string(want) {
		t.Fatalf("the reply taken back:\n%s\nwant\n%s (%v)", got, want, err)
	}
	runtime.KeepAlive(&r)
}

func texts(h []convo.Message) string {
	var s []string
	for _, m := range h {
		s = append(s, m.Text())
	}
	return strings.Join(s, "|")
}

// TestAssistantRunsProperty: the runs of a history's current turn cover
// every assistant message after its last user message and nothing else,
// in order, each run as long as it can be; turnOf keeps the same messages
// of a conversation's current turn.
func TestAssistantRunsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		roles := []convo.Role{convo.RoleUser, convo.RoleAssistant, convo.RoleTool, convo.RoleSystem}
		h := make(convo.History, rapid.IntRange(0, 12).Draw(t, "n"))
		for i := range h {
			h[i] = convo.Message{Role: rapid.SampledFrom(roles).Draw(t, "role"), ID: strconv.Itoa(i)}
		}
		last := -1
		for i := range h {
			if h[i].Role == convo.RoleUser {
				last = i
			}
		}
		var want, got []int
		for i := last + 1; i < len(h); i++ {
			if h[i].Role == convo.RoleAssistant {
				want = append(want, i)
			}
		}
		prevEnd := last + 1
		for _, r := range assistantRuns(h) {
			if r[0] < prevEnd || r[0] >= r[1] || (r[0] > 0 && h[r[0]-1].Role == convo.RoleAssistant) || (r[1] < len(h) && h[r[1]].Role == convo.RoleAssistant) {
				t.Fatalf("run %v of %v", r, roleList(h))
			}
			for i := r[0]; i < r[1]; i++ {
				got = append(got, i)
			}
			prevEnd = r[1]
		}
		if !slices.Equal(got, want) {
			t.Fatalf("runs cover %v, want %v, of %v", got, want, roleList(h))
		}
		var ids []int
		for _, m := range turnOf(nil, h) {
			id, _ := strconv.Atoi(m.ID)
			ids = append(ids, id)
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("turnOf kept %v, want %v, of %v", ids, want, roleList(h))
		}
	})
}

func roleList(h convo.History) []convo.Role {
	var rs []convo.Role
	for _, m := range h {
		rs = append(rs, m.Role)
	}
	return rs
}
