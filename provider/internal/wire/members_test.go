package wire

import (
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

func TestMembers(t *testing.T) {
	ms := Members{{Key: "id", Val: Null}, {Key: "a\"b", Val: []byte(`{"x":[1]}`)}}
	if got := string(ms.Object()); got != `{"id":null,"a\"b":{"x":[1]}}` {
		t.Errorf("Object = %s", got)
	}
	if Members(nil).Object() != nil || Members(nil).Native("p") != nil {
		t.Error("no members must give no object and no Native")
	}
	if n := ms.Native("p"); len(n) != 1 || string(n["p"]) != string(ms.Object()) {
		t.Errorf("Native = %v", n)
	}
	if v, ok := ms.Get("a\"b"); !ok || string(v) != `{"x":[1]}` {
		t.Errorf("Get = %s, %v", v, ok)
	}
	if _, ok := ms.Get("nope"); ok || ms.Value("nope") != nil {
		t.Error("Get of a missing key")
	}
	if !ms.Absent("id") || ms.Absent("a\"b") || ms.Absent("nope") {
		t.Error("Absent: only a member recorded as null is absent")
	}
	ms = ms.Set("id", []byte(`"c1"`)).Set("new", []byte(`true`))
	if got := string(ms.Object()); got != `{"id":"c1","a\"b":{"x":[1]},"new":true}` {
		t.Errorf("after Set: %s", got)
	}
}

func TestReadNative(t *testing.T) {
	var r jsonx.Reader
	n := convo.Native{"p": []byte(` {"id" : null, "f":{"index":0}} `), "q": []byte(`{"x":1}`)}
	ms, err := ReadNative(n, "p", &r)
	if err != nil || len(ms) != 2 || ms[0].Key != "id" || !ms.Absent("id") || string(ms.Value("f")) != `{"index":0}` {
		t.Fatalf("ReadNative = %v, %v", ms, err)
	}
	if ms, err := ReadNative(n, "none", &r); ms != nil || err != nil {
		t.Errorf("another provider's Native: %v, %v", ms, err)
	}
	for _, bad := range []string{`[1]`, `{"a":1} x`, `{"a":}`, `{"a":1,"a":2}`} {
		_, err := ReadNative(convo.Native{"p": []byte(bad)}, "p", &r)
		if err == nil || !strings.HasPrefix(err.Error(), "native.p: ") {
			t.Errorf("%s: got %v, want an error under native.p", bad, err)
		}
	}
}
