package gateway

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// canonicalJSON keeps the arguments that are canonical already as they
// are: exactly those the round trip through json.Unmarshal and
// json.Marshal gives back unchanged, or a subset of them.
func TestCanonical(t *testing.T) {
	for _, tt := range []struct {
		args string
		want bool
	}{
		{`{"city":"Paris"}`, true},
		{`{"a":1,"b":[true,false,null,"x",{}],"c":{"d":-12}}`, true},
		{`{"city":"Zürich"}`, true},
		{`[]`, true},
		{`"s"`, true},
		{`{"b":1,"a":2}`, false},          // keys out of order
		{`{"a":1,"a":2}`, false},          // repeated key
		{`{"a": 1}`, false},               // white space
		{`{"a":1.5}`, false},              // a fraction: left to the round trip
		{`{"a":1e3}`, false},              // an exponent
		{`{"a":1234567890123456}`, false}, // 16 digits
		{`{"a":-0}`, false},
		{`{"a":"<b>"}`, false}, // Marshal escapes <, >, &
		{`{"a":"\n"}`, false},  // an escape
		{`{"a":"x"`, false},
		{`{"a":"x"}x`, false},
		{`{"a":1,}`, false},
		{``, false},
	} {
		if got := canonical([]byte(tt.args)); got != tt.want {
			t.Errorf("canonical(%s) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

// FuzzCanonical: whatever canonical accepts, the round trip gives back
// unchanged.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"city":"Paris"}`, `{"a":[1,-2,{"b":"é"}],"c":null}`, `[true,false]`, `{"a":1.5}`, `"\u2028"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !canonical(b) {
			return
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%q: canonical, but not JSON: %v", b, err)
		}
		out, _ := json.Marshal(v)
		if string(out) != string(b) {
			t.Fatalf("%q: canonical, but the round trip gives %q", b, out)
		}
	})
}

// TestFingerprintLooseIDs: a loose fingerprint is the same whether the
// tool calls have their provider's ids or ones convo made up (a client
// that dropped them); a strict one tells them apart. Both still see the
// calls' content.
func TestFingerprintLooseIDs(t *testing.T) {
	h := func(id, city string) convo.History {
		return convo.History{
			convo.User("Weather in Paris?"),
			{Role: convo.RoleAssistant, Parts: []convo.Part{convo.ToolCall(id, "get_weather", []byte(`{"city":"`+city+`"}`))}},
			convo.ToolResults(convo.ToolResult(id, "get_weather", `{"temp_c":18}`)),
		}
	}
	given, made := h("call_Xa81bQ2", "Paris"), h(provider.SynthID(1, 0, "get_weather"), "Paris")
	if fingerprint(given, false) == fingerprint(made, false) {
		t.Error("strict: the provider's ids and made-up ones give one fingerprint")
	}
	if fingerprint(given, true) != fingerprint(made, true) {
		t.Error("loose: the ids changed the fingerprint")
	}
	if fingerprint(given, true) == fingerprint(h("call_Xa81bQ2", "Oslo"), true) {
		t.Error("loose: other arguments gave the same fingerprint")
	}
}

// TestFingerprintLongText checks that a long text, which the fingerprinter
// holds and hashes piece by piece instead of copying, fingerprints as the
// same text in short parts (copied and joined) does, and that sum leaves
// the pending text as it was.
func TestFingerprintLongText(t *testing.T) {
	long := strings.Repeat("the quick brown fox é€ ", 1000) // 25 KB
	var short []convo.Part
	for s := long; s != ""; {
		n := min(len(s), 1000)
		short = append(short, convo.Text(s[:n]))
		s = s[n:]
	}
	user := convo.User("a question")
	for _, c := range []struct {
		name string
		h    convo.History
	}{
		{"one long part", convo.History{user, {Role: convo.RoleAssistant, Parts: []convo.Part{convo.Text(long)}}}},
		{"short, long, short", convo.History{user, {Role: convo.RoleAssistant, Parts: []convo.Part{convo.Text("a"), convo.Text(long), convo.Text("b")}}}},
	} {
		want := convo.History{user, {Role: convo.RoleAssistant, Parts: short}}
		if c.name != "one long part" {
			want[1].Parts = append(append([]convo.Part{convo.Text("a")}, short...), convo.Text("b"))
		}
		if got, w := Fingerprint(c.h), Fingerprint(want); got != w {
			t.Errorf("%s: %s, want %s as in short parts", c.name, got, w)
		}
		f := fingerprinter{}
		for i := range c.h {
			f.add(&c.h[i])
		}
		if s1, s2 := f.sum(), f.sum(); s1 != s2 {
			t.Errorf("%s: sum changed the pending text: %s, then %s", c.name, s1, s2)
		}
		f.add(&user)
		g := fingerprinter{}
		for _, m := range append(slices.Clone(want), user) {
			g.add(&m)
		}
		if f.sum() != g.sum() {
			t.Errorf("%s: after a flush: %s, want %s", c.name, f.sum(), g.sum())
		}
	}
}

// TestFingerprintSummedOnTheWay: a fingerprinter asked for its sum after
// every message, and again after a part of one (as the gateway sums the
// request in the handler and goes on with the reply in the writer), ends
// with the same sums, chain and count of items as one never asked, and
// each sum is that of the history so far. The sum's hash of the pending
// text is kept for the flush, which must not take it once the text or the
// chain has moved on. The sums are stored (in each recorded
// conversation's metadata): summedGolden holds them as the gateway made
// them before it kept that hash (at 4f1b0de).
func TestFingerprintSummedOnTheWay(t *testing.T) {
	long := strings.Repeat("a long reply ", 400) // past copyBelow
	h := convo.History{
		convo.User("ping"),
		convo.Assistant("pong"), // as long as the text before it
		convo.User("Weather in Paris?"),
		convo.Assistant("Let me check.", convo.ToolCall("toolu_1", "get_weather", json.RawMessage(`{"city":"Paris"}`))),
		convo.ToolResults(convo.ToolResult("toolu_1", "get_weather", "sunny")),
		convo.Assistant(long),
		convo.Assistant("more"),
		convo.User("thanks", convo.Image("image/png", []byte("png"))),
		convo.User("and"),
		{Role: convo.RoleUser, Parts: []convo.Part{convo.Text(long), convo.Text("x")}},
		convo.Assistant("done"),
	}
	var asked, never fingerprinter
	for i := range h {
		asked.add(&h[i])
		never.add(&h[i])
		if got, want := asked.sum(), summedGolden[i]; got != want || Fingerprint(h[:i+1]) != want {
			t.Fatalf("after message %d: %s (%s alone), want %s", i, got, Fingerprint(h[:i+1]), want)
		}
		// The same text with a part more: the kept sum is not the one.
		if len(h[i].Parts) > 0 && h[i].Parts[0].Type == convo.TypeText {
			more := convo.Message{Role: h[i].Role, Parts: h[i].Parts[:1]}
			a, n := asked.clone(), never.clone()
			a.add(&more)
			n.add(&more)
			if a.sum() != n.sum() {
				t.Fatalf("after message %d and a part: %s, want %s", i, a.sum(), n.sum())
			}
		}
	}
	end := convo.Assistant("end")
	asked.add(&end)
	never.add(&end)
	asked.flush()
	never.flush()
	if asked.h != never.h || asked.items != never.items || asked.sum() != never.sum() {
		t.Fatalf("summed on the way: %x (%d items), never: %x (%d items)", asked.h, asked.items, never.h, never.items)
	}
}

// summedGolden are the fingerprints of TestFingerprintSummedOnTheWay's
// history's prefixes.
var summedGolden = []string{
	"c1f9e33788525009f1273bfcfeb9ad97",
	"5542f7438c88109ee3eb355850547bb4",
	"d076872ccfc2113c50272243b86c1212",
	"c30ffb110064c37628c2211dab79a43a",
	"072a5d869be84b72e207d0db29a94e25",
	"092b8b95f0285c8790f9124945223683",
	"87882addb186676c3d623a3dff0c2182",
	"36fd4b38b051b18ce614d50c4046fd74",
	"2391070bb1616f52101ed6bd94c7a695",
	"f1a177f631edf967a3337c0d4f9fc714",
	"0e3d88fd54f655502d4b6f4e9a9d4bed",
}
