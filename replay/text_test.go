package replay_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/convo-go/convo/replay"
)

func TestSimilarity(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"a b c", "a b c", 1},
		{"a  b\nc", "a b c", 1},
		{"a b c", "", 0},
		{"a b c", "d e f", 0},
		{"a b c d", "a x c d", 0.75},
		{"the cat sat", "The cat sat", 2.0 / 3},
		{"a b", "b a", 0.5},
	} {
		if got := replay.Similarity(tc.a, tc.b); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Similarity(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	// Past the table's bound: bags of words, never less than the
	// subsequence.
	long := strings.Repeat("w ", 2500)
	if got := replay.Similarity(long+"x", "x "+long); got != 1 {
		t.Errorf("long texts: %v", got)
	}
}

func TestDiff(t *testing.T) {
	for _, tc := range []struct {
		a, b, want string
	}{
		{"", "", ""},
		{"a b", "", "-[a b]"},
		{"", "a b", "+[a b]"},
		{"a b c d", "a x c d", "=[a] -[b] +[x] =[c d]"},
		{"Paris is the capital.", "Paris is the capital of France.", "=[Paris is the] -[capital.] +[capital of France.]"},
	} {
		var parts []string
		for _, s := range replay.Diff(tc.a, tc.b) {
			parts = append(parts, string(s.Op)+"["+s.Text+"]")
		}
		if got := strings.Join(parts, " "); got != tc.want {
			t.Errorf("Diff(%q, %q) = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
}

// Diff's spans rebuild both texts' words, and Similarity is symmetric,
// within 0…1, and 1 for a text and itself.
func TestDiffProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		word := rapid.SampledFrom([]string{"a", "b", "c", "d", "é", "a."})
		a := strings.Join(rapid.SliceOf(word).Draw(t, "a"), " ")
		b := strings.Join(rapid.SliceOf(word).Draw(t, "b"), " ")
		var ra, rb []string
		for _, s := range replay.Diff(a, b) {
			if s.Op != replay.Insert {
				ra = append(ra, s.Text)
			}
			if s.Op != replay.Delete {
				rb = append(rb, s.Text)
			}
		}
		if strings.Join(ra, " ") != a || strings.Join(rb, " ") != b {
			t.Fatalf("Diff(%q, %q) rebuilds %q, %q", a, b, ra, rb)
		}
		s := replay.Similarity(a, b)
		if s < 0 || s > 1 || s != replay.Similarity(b, a) || replay.Similarity(a, a) != 1 {
			t.Fatalf("Similarity(%q, %q) = %v", a, b, s)
		}
	})
}

func TestParseSetting(t *testing.T) {
	for _, tc := range []struct{ in, name, value, err string }{
		{"temperature=0.2", "temperature", "0.2", ""},
		{"stop=END", "stop", `"END"`, ""},
		{`stop=["a","b"]`, "stop", `["a","b"]`, ""},
		{`reasoning={"effort":"low"}`, "reasoning", `{"effort":"low"}`, ""},
		{"user=", "user", `""`, ""},
		{"temperature", "", "", "want NAME=VALUE"},
		{"=1", "", "", "want NAME=VALUE"},
	} {
		s, err := replay.ParseSetting(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v", tc.in, err)
			}
			continue
		}
		if err != nil || s.Name != tc.name || string(s.Value) != tc.value {
			t.Errorf("%q: %q %s %v", tc.in, s.Name, s.Value, err)
		}
	}
	// Keys: the same overrides however spelt, others not.
	k := func(v string) string {
		return replay.Key("", "c", 2, "m", []replay.Setting{{Name: "temperature", Value: json.RawMessage(v)}})
	}
	if k("0.2") != k(" 0.20") || k("0.2") == k("0.3") {
		t.Error("keys")
	}
}
