package backend

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// TestEncodeLong: a message estimated past longFrom, with no inline media,
// that surely reads back as itself is left for the store to write
// (Row.Msg), its search text and usage as Encode gives them, and WriteLong
// writes the body Encode would have; the others are encoded as before.
func TestEncodeLong(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	long := convo.Assistant(strings.Repeat("Drizzle all morning — ☂ — \"clearing\".\n", 40))
	long.ID, long.Usage = "m1", &convo.Usage{Input: 10, Output: 400, Total: 410}
	image := convo.Message{ID: "m2", Role: convo.RoleUser, Parts: []convo.Part{convo.Text(strings.Repeat("x", 2000)),
		{Type: convo.TypeImage, MediaType: "image/png", Data: "iVBORw0KGgo="}}}
	meta := long
	meta.ID, meta.Meta = "m3", []byte(`{"k":1}`) // not proved to read back as itself
	short := convo.User("short")
	short.ID = "m4"
	msgs := []convo.Message{long, image, meta, short}
	h, rows, err := encode(msgs, now, true, 1000)
	if err != nil {
		t.Fatal(err)
	}
	eh, erows, err := encode(msgs, now, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if (r.Msg != nil) != (i == 0) || (r.Msg == nil) != (r.Body != nil) {
			t.Fatalf("rows[%d]: Msg %v, Body %d bytes", i, r.Msg != nil, len(r.Body))
		}
		if r.Text != erows[i].Text || (r.Msg == nil && !bytes.Equal(r.Body, erows[i].Body)) || (r.Usage == nil) != (erows[i].Usage == nil) ||
			(r.Usage != nil && *r.Usage != *erows[i].Usage) || r.ID != erows[i].ID || r.Role != erows[i].Role {
			t.Fatalf("rows[%d] differs from Encode's", i)
		}
	}
	if len(h) != len(eh) || h[0].Text() != eh[0].Text() {
		t.Fatalf("history %v, Encode's %v", h, eh)
	}
	var b bytes.Buffer
	if err := WriteLong(&b, 0, rows[0].Msg); err != nil || !bytes.Equal(b.Bytes(), erows[0].Body) {
		t.Fatalf("WriteLong wrote %d bytes, Encode's body is %d (%v)", b.Len(), len(erows[0].Body), err)
	}
	// Past the bound, or not valid, it fails as Encode would have.
	b.Reset()
	if err := writeLong(&b, 3, rows[0].Msg, 100); !errors.Is(err, store.ErrInvalid) || !strings.Contains(err.Error(), "messages[3]: more than the 100 bytes") {
		t.Errorf("past the bound: %v", err)
	}
	bad := *rows[0].Msg
	bad.Parts = []convo.Part{convo.Text("fine\xff" + strings.Repeat("y", 2000))}
	_, _, eerr := encode([]convo.Message{bad}, now, true, 0)
	if err := WriteLong(&b, 0, &bad); !errors.Is(err, store.ErrInvalid) || eerr == nil || err.Error() != eerr.Error() {
		t.Errorf("invalid UTF-8: %v, Encode's %v", err, eerr)
	}
}
