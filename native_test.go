package convo_test

import (
	"encoding/json"
	"testing"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
)

func TestNativeWith(t *testing.T) {
	tests := []struct {
		old, key, value, want string
	}{
		{"", "error", `"timeout"`, `{"error":"timeout"}`},
		{`{}`, "error", `"timeout"`, `{"error":"timeout"}`},
		{` { } `, "a", `1`, `{"a":1}`},
		{`{"redacted":{"email":2}}`, "error", `"x"`, `{"redacted":{"email":2},"error":"x"}`},
		{`{"b":1,"error":"old","c":[1]}`, "error", `"new"`, `{"b":1,"error":"new","c":[1]}`},
		{`{"b":1, "error" : "old" ,"c":2}`, "error", `{"n":1}`, `{"b":1, "error" : {"n":1} ,"c":2}`},
		{`[1,2]`, "a", `true`, `{"a":true}`},
		{`{"a":`, "a", `true`, `{"a":true}`},
		{`{"k\"q":1}`, `k"q`, `2`, `{"k\"q":2}`},
	}
	for _, tt := range tests {
		n := convo.Native{"openai": json.RawMessage(`{"x":1}`)}
		if tt.old != "" {
			n["convo"] = json.RawMessage(tt.old)
		}
		got := n.With("convo", tt.key, json.RawMessage(tt.value))
		if string(got["convo"]) != tt.want {
			t.Errorf("%s with %s=%s: %s, want %s", tt.old, tt.key, tt.value, got["convo"], tt.want)
		}
		if string(got["openai"]) != `{"x":1}` || string(n["convo"]) != tt.old && tt.old != "" {
			t.Errorf("%s: other providers or the original changed: %v, %v", tt.old, got, n)
		}
	}
}

func TestNativeWithProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		obj := rapid.MapOf(rapid.StringMatching(`[a-z"\\é]{0,4}`), rapid.Int()).Draw(t, "obj")
		key := rapid.StringMatching(`[a-z"\\é]{0,4}`).Draw(t, "key")
		value := rapid.Int().Draw(t, "value")
		raw, _ := json.Marshal(obj)
		v, _ := json.Marshal(value)
		got := convo.Native{"p": raw}.With("p", key, v)
		var back map[string]int
		if err := json.Unmarshal(got["p"], &back); err != nil {
			t.Fatalf("%s: %v", got["p"], err)
		}
		obj[key] = value
		if len(back) != len(obj) {
			t.Fatalf("%s: %d members, want %d", got["p"], len(back), len(obj))
		}
		for k, want := range obj {
			if back[k] != want {
				t.Fatalf("%s: %q is %d, want %d", got["p"], k, back[k], want)
			}
		}
	})
}
