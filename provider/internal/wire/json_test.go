package wire

import (
	"testing"

	"github.com/convo-go/convo/internal/jsonx"
)

func TestAppendValue(t *testing.T) {
	var r jsonx.Reader
	out, err := AppendValue(&r, []byte("x="), []byte(" { \"a\" : [1, 2] } "))
	if err != nil || string(out) != `x={"a":[1,2]}` {
		t.Errorf("got %s, %v", out, err)
	}
	for _, bad := range []string{``, `{"a":`, `1 2`, `{"a":1,"a":2}`} {
		out, err := AppendValue(&r, []byte("x="), []byte(bad))
		if err == nil || string(out) != "x=" {
			t.Errorf("%q: got %s, %v; want dst unchanged and an error", bad, out, err)
		}
	}
}

func TestAppendEscaped(t *testing.T) {
	out, ok := AppendEscaped([]byte(`"a\n`), "b\"c\n\u00e9")
	if !ok || string(out) != `"a\nb\"c\n`+"\u00e9" {
		t.Errorf("got %s, %v", out, ok)
	}
	if _, ok := AppendEscaped(nil, "bad \xff"); ok {
		t.Error("invalid UTF-8 must not be ok")
	}
}

func TestJoinArray(t *testing.T) {
	for _, tt := range []struct {
		vs   [][]byte
		want string
	}{
		{nil, `[]`},
		{[][]byte{[]byte(`1`)}, `[1]`},
		{[][]byte{[]byte(`{"a":1}`), []byte(`"x"`), []byte(`[]`)}, `[{"a":1},"x",[]]`},
	} {
		if got := string(JoinArray(tt.vs)); got != tt.want {
			t.Errorf("JoinArray(%q) = %s, want %s", tt.vs, got, tt.want)
		}
	}
}
