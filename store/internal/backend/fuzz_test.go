package backend

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// FuzzCursor: any string parses or is ErrInvalid, and what parses prints
// back to a cursor that parses the same.
func FuzzCursor(f *testing.F) {
	f.Add("")
	f.Add(Cursor{ID: "conv_1"}.String())
	f.Add("MS4xLmE")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, s string) {
		c, ok, err := ParseCursor(s)
		if err != nil {
			if !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		if !ok {
			if s != "" {
				t.Fatalf("%q: no cursor and no error", s)
			}
			return
		}
		back, ok, err := ParseCursor(c.String())
		if err != nil || !ok || back.ID != c.ID || !back.Created.Equal(c.Created) {
			t.Fatalf("%q: round trip %+v → %+v %v", s, c, back, err)
		}
	})
}

// FuzzFilter: metadata that is accepted matches itself as a filter, and
// matching never panics on any stored bytes.
func FuzzFilter(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[true,null,"x"],"c":{"d":1.5e3}}`), []byte(`{"a":1.0}`))
	f.Add([]byte(`{}`), []byte(`[]`))
	f.Add([]byte(`{"\u0000":1}`), []byte(`{"a":"\\u0000"}`))
	f.Fuzz(func(t *testing.T, meta, other []byte) {
		f, err := ParseFilter(json.RawMessage(meta))
		if err != nil {
			if !errors.Is(err, store.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		stored, _, err := Meta(json.RawMessage(meta))
		if err != nil {
			t.Fatalf("ParseFilter accepted what Meta refuses: %v", err)
		}
		if f != nil && !f.Match(stored) {
			t.Fatalf("%s does not match itself", meta)
		}
		if f.Match(other) != (len(f) == 0 || f.match(other)) {
			t.Fatalf("%s on %s: the quick refusal disagrees with decoding", meta, other)
		}
		if n := f.Needle(); n != "" && f.Match(other) && !bytes.Contains(other, []byte(n)) && !bytes.Contains(other, []byte(`\`)) {
			t.Fatalf("%s matches %s, which lacks its needle %s", meta, other, n)
		}
	})
}

// FuzzCheck: a history that passes Validate is accepted whole, and Check
// never panics on any decodable history, with or without open calls.
func FuzzCheck(f *testing.F) {
	f.Add([]byte(`[{"role":"user","parts":[{"type":"text","text":"hi"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","args":{}}]}]`), "c")
	f.Add([]byte(`[{"role":"tool","parts":[{"type":"tool_result","id":"c","parts":[]}]},{"role":"user"}]`), "c")
	f.Add([]byte(`{"role":"robot"}`), "")
	f.Fuzz(func(t *testing.T, doc []byte, openID string) {
		h, err := convo.Unmarshal(doc)
		if err != nil {
			return
		}
		if h.Validate() == nil {
			if _, err := Check(nil, h); err != nil {
				t.Fatalf("a valid history is refused: %v", err)
			}
		}
		var open []Call
		if openID != "" {
			open = []Call{{ID: openID, Name: "f"}}
		}
		after, err := Check(open, h)
		if err == nil && len(h) > 0 && h[len(h)-1].Role != convo.RoleTool {
			want := OpenCalls(h)
			if len(after) != len(want) {
				t.Fatalf("open after %v, want %v", after, want)
			}
		}
	})
}
