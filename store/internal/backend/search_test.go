package backend

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

func TestSearchText(t *testing.T) {
	m := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		{Type: convo.TypeReasoning, Text: "think", Summary: []string{"sum"}, Signature: "SIG", Encrypted: "ENC"},
		convo.Text("hello\x00world"),
		convo.ToolCall("c1", "get_weather", json.RawMessage(`{"city":"Paris"}`)),
		{Type: convo.TypeToolCall, ID: "c2", Name: "broken", ArgsRaw: "{oops"},
		convo.ToolResultParts("c1", "get_weather", convo.Text("sunny"), convo.JSON(json.RawMessage(`{"t":1}`))),
		convo.Image("image/png", []byte("PNGDATA")),
		convo.File("text/plain", "notes.txt", []byte("x")),
		convo.Refusal("no"),
	}}
	want := "think\nsum\nhello world\nget_weather\n{\"city\":\"Paris\"}\nbroken\n{oops\nget_weather\nsunny\n{\"t\":1}\nnotes.txt\nno"
	if got := SearchText(m); got != want {
		t.Fatalf("SearchText:\ngot  %q\nwant %q", got, want)
	}
	long := convo.User(strings.Repeat("é", store.MaxSearchTextBytes))
	if got := SearchText(long); len(got) > store.MaxSearchTextBytes || !utf8.ValidString(got) || len(got) < store.MaxSearchTextBytes-1 {
		t.Fatalf("long text cut to %d bytes (valid %v)", len(got), utf8.ValidString(got))
	}
}

func TestQueryWords(t *testing.T) {
	for q, want := range map[string]string{
		"Paris":                "paris",
		"  paris PARIS rome ":  "paris rome",
		`"a" OR b* -c NEAR(d)`: "a or b c near d",
		"get_weather café":     "get weather café",
		"x1 2.5":               "x1 2 5",
	} {
		got, err := QueryWords(q)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("QueryWords(%q) = %q, %v; want %q", q, got, err, want)
		}
	}
	for _, q := range []string{"", "?!", "\xff", strings.Repeat("a", 1025)} {
		if _, err := QueryWords(q); err == nil {
			t.Errorf("QueryWords(%.20q) accepted", q)
		}
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 30)
	for _, tc := range []struct {
		text, words, want string
	}{
		{"Weather in Paris?", "paris", "Weather in [Paris]?"},
		{"a  b\n\n c PARIS d", "paris", "a b c [PARIS] d"},
		{"nothing here", "paris", "nothing here"},
		{"", "paris", ""},
		{long + "needle " + long, "needle",
			"… lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum [needle] lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum …"},
		{"paris rome paris", "paris rome", "[paris] [rome] [paris]"},
	} {
		s, marks := Snippet(tc.text, strings.Fields(tc.words))
		var b strings.Builder
		at := 0
		for _, m := range marks {
			b.WriteString(s[at:m[0]] + "[" + s[m[0]:m[1]] + "]")
			at = m[1]
		}
		b.WriteString(s[at:])
		if b.String() != tc.want {
			t.Errorf("Snippet(%.30q):\ngot  %q\nwant %q", tc.text, b.String(), tc.want)
		}
	}
}

func FuzzSnippet(f *testing.F) {
	f.Add("Weather in Paris?", "paris")
	f.Add(strings.Repeat("ab ", 200)+"x", "x ab")
	f.Fuzz(func(t *testing.T, text, query string) {
		if !utf8.ValidString(text) {
			return
		}
		words, err := QueryWords(query)
		if err != nil {
			return
		}
		s, marks := Snippet(text, words)
		if !utf8.ValidString(s) || len(s) > len(text)+8 && len(s) > 4*snippetLength {
			t.Fatalf("snippet %q of %q", s, text)
		}
		prev := 0
		for _, m := range marks {
			if m[0] < prev || m[1] <= m[0] || m[1] > len(s) || !utf8.ValidString(s[m[0]:m[1]]) {
				t.Fatalf("highlight %v of %q", m, s)
			}
			prev = m[1]
		}
	})
}

func FuzzSearchCursor(f *testing.F) {
	f.Add(SearchCursor{Conv: 12, Pos: 3}.String())
	f.Add("czEuMS4y")
	f.Fuzz(func(t *testing.T, s string) {
		c, ok, err := ParseSearchCursor(s)
		if err != nil || !ok {
			return
		}
		if back, _, err := ParseSearchCursor(c.String()); err != nil || back != c {
			t.Fatalf("cursor %q: %+v does not round-trip: %+v %v", s, c, back, err)
		}
	})
}
