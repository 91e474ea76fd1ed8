package gateway

import (
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

// TestReplies: the reply a write ended with is kept for one taker, none is
// kept for a write that ended otherwise, and the bytes stay bounded.
func TestReplies(t *testing.T) {
	var r replies
	reply := convo.Assistant("sunny")
	r.put("t", "c", "fp1", []convo.Message{convo.User("weather?"), reply})
	if m, fp, ok := r.take("t", "c"); !ok || fp != "fp1" || m.Text() != "sunny" {
		t.Fatalf("take: %v %q %v", m, fp, ok)
	}
	if _, _, ok := r.take("t", "c"); ok {
		t.Error("a reply was taken twice")
	}
	r.put("t", "c", "fp1", []convo.Message{reply})
	r.put("t", "c", "fp2", []convo.Message{reply, convo.ErrorMessage("upstream failed")})
	if _, _, ok := r.take("t", "c"); ok {
		t.Error("a write that ended with a failure left a reply to restore")
	}
	if _, _, ok := r.take("other tenant", "c"); ok {
		t.Error("a reply was given to another tenant")
	}
	big := convo.Assistant(strings.Repeat("x", maxReplyEntry/2))
	for i := range 2 * maxReplyCache / maxReplyEntry {
		r.put("t", strings.Repeat("c", i+1), "fp", []convo.Message{big})
		if r.bytes > maxReplyCache {
			t.Fatalf("%d bytes kept, more than %d", r.bytes, maxReplyCache)
		}
	}
	r.put("t", "huge", "fp", []convo.Message{convo.Assistant(strings.Repeat("x", maxReplyEntry+1))})
	if _, _, ok := r.take("t", "huge"); ok {
		t.Error("a reply larger than an entry may be was kept")
	}
}
