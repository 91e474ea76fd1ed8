package backend

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

func call(id string) convo.Part { return convo.ToolCall(id, "f", json.RawMessage(`{}`)) }
func result(id string) convo.Part {
	return convo.ToolResult(id, "f", "ok")
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		open  []Call
		msgs  convo.History
		after []string // open calls afterwards
		err   string   // the first problem, "" for none
	}{
		{"plain", nil, convo.History{convo.User("a"), convo.Assistant("b")}, nil, ""},
		{"nothing", []Call{{"c1", "f"}}, nil, []string{"c1"}, ""},
		{"calls left open", nil, convo.History{convo.User("a"), convo.Assistant("", call("c1"), call("c2"))}, []string{"c1", "c2"}, ""},
		{"calls partly answered", nil, convo.History{convo.Assistant("", call("c1"), call("c2")), convo.ToolResults(result("c2"))}, []string{"c1"}, ""},
		{"stored calls answered", []Call{{"c1", "f"}, {"c2", "g"}}, convo.History{convo.ToolResults(result("c2"), result("c1")), convo.User("x")}, nil, ""},
		{"stored calls answered one by one", []Call{{"c1", "f"}, {"c2", "g"}}, convo.History{convo.ToolResults(result("c2")), convo.ToolResults(result("c1"))}, nil, ""},
		{"stored call still open", []Call{{"c1", "f"}, {"c2", "g"}}, convo.History{convo.ToolResults(result("c2"))}, []string{"c1"}, ""},
		{"stored call unanswered", []Call{{"c1", "f"}}, convo.History{convo.User("x")},
			nil, `messages[0]: tool call "c1" (f) of the conversation has no result before this message`},
		{"stored call unanswered after results", []Call{{"c1", "f"}, {"c2", "g"}}, convo.History{convo.ToolResults(result("c1")), convo.Assistant("x")},
			nil, `messages[1]: tool call "c2" (g) of the conversation has no result before this message`},
		{"result of nothing", nil, convo.History{convo.ToolResults(result("c1"))},
			nil, `messages[0].parts[0]: tool result "c1" answers no call of the preceding assistant message`},
		{"result of an unknown call", []Call{{"c1", "f"}}, convo.History{convo.ToolResults(result("c1"), result("c9"))},
			nil, `messages[0].parts[1]: tool result "c9" answers no open call`},
		{"result twice", []Call{{"c1", "f"}}, convo.History{convo.ToolResults(result("c1")), convo.ToolResults(result("c1"))},
			nil, `messages[1].parts[0]: tool result "c1" answers no open call`},
		{"problem shifted past the opener", []Call{{"c1", "f"}}, convo.History{convo.ToolResults(result("c1")), {Role: "robot"}},
			nil, `messages[1]: unknown role "robot"`},
		{"call inside the batch unanswered", nil, convo.History{convo.Assistant("", call("c1")), convo.User("x")},
			nil, `messages[0].parts[0]: tool call "c1" (f) has no result before messages[1]`},
		{"duplicate ids", nil, convo.History{{Role: convo.RoleUser, ID: "m", Parts: []convo.Part{convo.Text("a")}}, {Role: convo.RoleUser, ID: "m", Parts: []convo.Part{convo.Text("b")}}},
			nil, `messages[1]: id "m" is already used by messages[0]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			after, err := Check(tc.open, tc.msgs)
			if tc.err != "" {
				var ve *convo.ValidationError
				if !errors.Is(err, store.ErrInvalid) || !errors.As(err, &ve) {
					t.Fatalf("Check: %v, want ErrInvalid with a *convo.ValidationError", err)
				}
				if got := ve.Problems[0].String(); got != tc.err {
					t.Fatalf("first problem:\ngot  %s\nwant %s", got, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			var ids []string
			for _, c := range after {
				ids = append(ids, c.ID)
			}
			if !slices.Equal(ids, tc.after) {
				t.Fatalf("open after: %v, want %v", ids, tc.after)
			}
		})
	}
}

func TestOpenCalls(t *testing.T) {
	h := convo.History{
		convo.User("q"),
		convo.Assistant("", call("a"), call("b"), call("a")),
		convo.ToolResults(result("a")),
		convo.ToolResults(result("x")),
	}
	got := OpenCalls(h)
	if len(got) != 2 || got[0].ID != "b" || got[1].ID != "a" {
		t.Fatalf("OpenCalls = %v, want [b a]", got)
	}
	if OpenCalls(append(h, convo.User("next"))) != nil {
		t.Fatal("a user message closes nothing, but it ends the tail")
	}
	if OpenCalls(convo.History{convo.ToolResults(result("a"))}) != nil || OpenCalls(nil) != nil {
		t.Fatal("no assistant message, no open calls")
	}
	b := MarshalCalls(got)
	back, err := UnmarshalCalls(b)
	if err != nil || !slices.Equal(back, got) {
		t.Fatalf("calls round trip: %v %v", back, err)
	}
	if MarshalCalls(nil) != nil {
		t.Fatal("no calls must be stored as NULL")
	}
	if _, err := UnmarshalCalls([]byte("{")); err == nil {
		t.Fatal("corrupt calls decoded")
	}
}

func TestEncode(t *testing.T) {
	u := convo.User("hi")
	named := convo.Assistant("yo")
	named.ID = "a1"
	h, rows, err := Encode([]convo.Message{u, named})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h[0].ID, "msg_") || rows[0].ID != h[0].ID || h[1].ID != "a1" || rows[1].Role != convo.RoleAssistant {
		t.Fatalf("ids %q %q, rows %+v", h[0].ID, h[1].ID, rows)
	}
	if want, _ := convo.AppendMessage(nil, h[1]); string(rows[1].Body) != string(want) {
		t.Fatalf("body %s, want %s", rows[1].Body, want)
	}
	if u.ID != "" {
		t.Fatal("Encode changed its argument")
	}

	// Args nested deep enough that the encoder accepts them but the
	// decoder, which counts the levels of the message around them, does not.
	deep := convo.Assistant("", convo.ToolCall("c", "f", json.RawMessage(strings.Repeat("[", 63)+strings.Repeat("]", 63))))
	if _, err := convo.AppendMessage(nil, deep); err != nil {
		t.Fatalf("the encoder refuses the deep message (%v): the test no longer tests the read-back", err)
	}
	bad := []struct {
		name string
		m    convo.Message
		want string
	}{
		{"deep", deep, "would not read back"},
		{"utf8", convo.User("\xff"), "invalid UTF-8"},
		{"nul id", convo.Message{Role: convo.RoleUser, ID: "a\x00"}, "messages[0].id contains NUL"},
		{"long id", convo.Message{Role: convo.RoleUser, ID: strings.Repeat("i", store.MaxMessageIDBytes+1)}, "more than"},
	}
	for _, tc := range bad {
		_, _, err := Encode([]convo.Message{tc.m})
		if !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Encode error %v, want ErrInvalid mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		filter, meta string
		want         bool
	}{
		{`{"a":1}`, `{"a":1,"b":2}`, true},
		{`{"a":1}`, `{"a":1.0}`, true},
		{`{"a":100}`, `{"a":1e2}`, true},
		{`{"a":1}`, `{"a":"1"}`, false},
		{`{"a":1}`, `{"b":1}`, false},
		{`{"a":null}`, `{"a":null}`, true},
		{`{"a":null}`, `{}`, false},
		{`{"a":{"x":1,"y":[1,2]}}`, `{"a":{"y":[1,2],"x":1}}`, true},
		{`{"a":{"x":1}}`, `{"a":{"x":1,"y":2}}`, false},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{`{"a":[1,2]}`, `{"a":[1,2,3]}`, false},
		{`{"a":true}`, `{"a":true}`, true},
		{`{"a":"é"}`, `{"a":"\u00e9"}`, true},
		{`{"a":"abc"}`, `{"a":"\u0061bc"}`, true},
		{`{"a":"abc"}`, `{"a":"abcd","b":"x"}`, false},
		{`{"a":"abc"}`, `{"b":"abc","a":"x"}`, false},
		{`{"a":"abc","b":1}`, `{"a":"abc","b":1.0}`, true},
		{`{"a":"<&>"}`, `{"a":"<&>"}`, true},
		{`{"a":"<&>"}`, `{"a":"\u003c\u0026\u003e"}`, true},
		{`{"a":1}`, ``, false},
		{`{"a":1}`, `[1]`, false},
		{`{}`, ``, true},
	}
	for _, tc := range tests {
		f, err := ParseFilter(json.RawMessage(tc.filter))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Match([]byte(tc.meta)); got != tc.want {
			t.Errorf("filter %s on %s: %v, want %v", tc.filter, tc.meta, got, tc.want)
		}
	}
	for _, bad := range []string{`[1]`, `"a"`, `{"a":}`, `{"a":1,"a":2}`} {
		if _, err := ParseFilter(json.RawMessage(bad)); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ParseFilter(%s): %v, want ErrInvalid", bad, err)
		}
	}
}

func TestMeta(t *testing.T) {
	m, clear, err := Meta(json.RawMessage(" { \"a\" : [ 1 , 2 ] } "))
	if err != nil || clear || string(m) != `{"a":[1,2]}` {
		t.Fatalf("Meta: %s %v %v", m, clear, err)
	}
	if m, clear, err := Meta(json.RawMessage(" null ")); err != nil || !clear || m != nil {
		t.Fatalf("Meta(null): %s %v %v", m, clear, err)
	}
	if m, clear, err := Meta(nil); err != nil || clear || m != nil {
		t.Fatalf("Meta(nil): %s %v %v", m, clear, err)
	}
	if _, _, err := Meta(json.RawMessage(`{"a":["\u0000"]}`)); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Meta with NUL: %v", err)
	}
	if m, _, err := Meta(json.RawMessage(`{"a":"\\u0000"}`)); err != nil || string(m) != `{"a":"\\u0000"}` {
		t.Fatalf("Meta with an escaped backslash before u0000: %s %v", m, err)
	}
	big := json.RawMessage(`{"a":"` + strings.Repeat("x", store.MaxMetaBytes) + `"}`)
	if _, _, err := Meta(big); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("Meta(too big): %v", err)
	}
}

func TestCursor(t *testing.T) {
	c := Cursor{Created: time.Date(2026, 1, 2, 3, 4, 5, 678000, time.UTC), ID: "conv_1.2"}
	got, ok, err := ParseCursor(c.String())
	if err != nil || !ok || !got.Created.Equal(c.Created) || got.ID != c.ID {
		t.Fatalf("cursor round trip: %+v %v %v", got, ok, err)
	}
	if _, ok, err := ParseCursor(""); ok || err != nil {
		t.Fatal("the empty cursor is the start")
	}
	for _, bad := range []string{"!!", "MQ", "Mi4xLmE", "MS54LmE", "MS4xLg"} {
		if _, _, err := ParseCursor(bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ParseCursor(%q): %v, want ErrInvalid", bad, err)
		}
	}
}

func TestCheckID(t *testing.T) {
	for _, ok := range []string{"a", "conv_0123", "2026-01-02T03:04:05Z", "ü@x.y+z=~"} {
		if err := CheckID(ok); err != nil {
			t.Errorf("CheckID(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "a/b", "a?b", "a#b", "a%b", `a\b`, "a\tb", "a\x00", "\xff", "a\u200bb", strings.Repeat("x", store.MaxIDBytes+1)} {
		if err := CheckID(bad); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("CheckID(%q): %v, want ErrInvalid", bad, err)
		}
	}
}

func TestMigrations(t *testing.T) {
	fsys := fstest.MapFS{
		"m/0002_more.sql": {Data: []byte("two")},
		"m/0001_init.sql": {Data: []byte("one")},
		"m/README":        {Data: []byte("ignored")},
	}
	all, err := Migrations(fsys, "m")
	if err != nil || len(all) != 2 || all[0].Version != 1 || all[0].Name != "init" || all[1].SQL != "two" {
		t.Fatalf("Migrations: %+v %v", all, err)
	}
	p, err := Pending(all, 1)
	if err != nil || len(p) != 1 || p[0].Version != 2 {
		t.Fatalf("Pending(1): %+v %v", p, err)
	}
	if _, err := Pending(all, 3); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("Pending of a newer database: %v", err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"gap":    {"m/0001_a.sql": {}, "m/0003_c.sql": {}},
		"repeat": {"m/0001_a.sql": {}, "m/0001_b.sql": {}},
		"name":   {"m/first.sql": {}},
	} {
		if _, err := Migrations(fsys, "m"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestNewID(t *testing.T) {
	a, b := store.NewID("conv"), store.NewID("conv")
	if a == b || len(a) != len("conv_")+32 || !strings.HasPrefix(a, "conv_") {
		t.Fatalf("NewID: %q %q", a, b)
	}
	time.Sleep(2 * time.Millisecond)
	if c := store.NewID("conv"); c <= a {
		t.Fatalf("a later id %q sorts before %q", c, a)
	}
}

func TestLoader(t *testing.T) {
	// Enough messages for several chunks.
	var want convo.History
	big := strings.Repeat("x", 4000)
	for i := range 700 {
		m := convo.User(fmt.Sprintf("%d %s", i, big))
		m.ID = fmt.Sprint("m", i)
		want = append(want, m)
	}
	l := NewLoader("c", len(want))
	for i, m := range want {
		body, err := convo.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Add(body, int64(i*2)); err != nil {
			t.Fatal(err)
		}
		clear(body) // the loader must have copied it
	}
	got, err := l.History()
	if err != nil || !got.Equal(want) {
		t.Fatalf("History: %d messages, %v", len(got), err)
	}
	empty, err := NewLoader("c", 0).History()
	if err != nil || len(empty) != 0 {
		t.Fatalf("empty loader: %v %v", empty, err)
	}

	good, _ := convo.AppendMessage(nil, convo.User("ok"))
	for _, tc := range []struct {
		name string
		body string
		want string
	}{
		{"not an object", `[1]`, "stored message 10 "},
		{"empty", ``, "stored message 10 "},
		{"bad member", `{"role":"user","parts":7}`, "stored message 10 "},
		{"two objects", `{"role":"user"} {"role":"user"}`, "3 rows held 4 messages"},
	} {
		l := NewLoader("c", 3)
		for i, b := range [][]byte{good, good, []byte(tc.body)} {
			if err = l.Add(b, int64(i*5)); err != nil {
				break
			}
		}
		if err == nil {
			_, err = l.History()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `conversation "c" is corrupt`) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}

// TestNeedle: the needle is the first plain string value of a filter by
// key, quoted, and every metadata the filter matches without a backslash
// has it.
func TestNeedle(t *testing.T) {
	for _, tc := range []struct{ filter, want string }{
		{`{"b":"x","a":"y"}`, `"y"`},
		{`{"a":1,"b":"x"}`, `"x"`},
		{`{"a":"q\"uote","b":"x"}`, `"x"`},
		{`{"a":"tab\t"}`, ``},
		{`{"a":1,"b":[1]}`, ``},
		{`{"a":"é<&>"}`, `"é<&>"`},
	} {
		f, err := ParseFilter(json.RawMessage(tc.filter))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Needle(); got != tc.want {
			t.Errorf("%s: needle %q, want %q", tc.filter, got, tc.want)
		}
	}
	var none Filter
	if none.Needle() != "" {
		t.Error("no filter has a needle")
	}
}

// TestPrepareWriteMeta: a write that creates its conversation takes the
// metadata NewConversation checked, which must be what Meta gives it, as
// for a write that continues one.
func TestPrepareWriteMeta(t *testing.T) {
	for _, raw := range []string{"", "null", " null ", "{}", ` { "a" : [1, 2] , "b":"\u003c" } `, `{"convo_gateway_fingerprint":"x"}`, "[1]", "{", `{"a":"\u0000"}`} {
		var meta json.RawMessage
		if raw != "" {
			meta = json.RawMessage(raw)
		}
		want, clear, werr := Meta(meta)
		for _, create := range []bool{true, false} {
			w, err := PrepareWrite(0, store.Write{Tenant: "t", ID: "c1", Create: create, Meta: meta}, 0, nil)
			if (err != nil) != (werr != nil) {
				t.Errorf("%q, create %v: error %v, Meta's %v", raw, create, err, werr)
				continue
			}
			if err == nil && (string(w.Meta) != string(want) || (w.Meta == nil) != (want == nil) || w.ClearMeta != clear) {
				t.Errorf("%q, create %v: meta %q clear %v, want %q %v", raw, create, w.Meta, w.ClearMeta, want, clear)
			}
		}
	}
}
