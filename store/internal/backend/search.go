package backend

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// SearchText is the text of m that search indexes (see store.Hit): what a
// reader sees of it, in order, one part a line, at most
// store.MaxSearchTextBytes bytes (cut at a character boundary). NUL, which
// PostgreSQL text cannot hold, becomes a space.
func SearchText(m convo.Message) string {
	var b strings.Builder
	add := func(s string) {
		if s == "" || b.Len() >= store.MaxSearchTextBytes {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		// Past the bound only its first byte tells where to cut below: a
		// 40 MB reply is not copied to keep 128 KB of it.
		b.WriteString(s[:min(len(s), store.MaxSearchTextBytes+1-b.Len())])
	}
	var parts func(ps []convo.Part)
	parts = func(ps []convo.Part) {
		for _, p := range ps {
			switch p.Type {
			case convo.TypeText, convo.TypeRefusal:
				add(p.Text)
			case convo.TypeReasoning:
				add(p.Text)
				for _, s := range p.Summary {
					add(s)
				}
			case convo.TypeToolCall:
				add(p.Name)
				if len(p.Args) > 0 {
					add(string(p.Args))
				} else {
					add(p.ArgsRaw)
				}
			case convo.TypeToolResult:
				add(p.Name)
				parts(p.Parts)
			case convo.TypeJSON:
				add(string(p.Value))
			case convo.TypeFile, convo.TypeImage, convo.TypeAudio, convo.TypeVideo:
				add(p.Name)
			}
		}
	}
	parts(m.Parts)
	s := b.String()
	if len(s) > store.MaxSearchTextBytes {
		cut := store.MaxSearchTextBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return strings.ReplaceAll(s, "\x00", " ")
}

// isWordRune says which characters make words: letters and digits, as the
// SQLite unicode61 tokenizer and PostgreSQL's parser on normalized text
// both see them.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }

// wordSpans returns the byte ranges of the words of s.
func wordSpans(s string) [][2]int {
	var out [][2]int
	start := -1
	for i, r := range s {
		switch {
		case isWordRune(r) && start < 0:
			start = i
		case !isWordRune(r) && start >= 0:
			out = append(out, [2]int{start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

// Words returns the words of s, lower-cased, in order.
func Words(s string) []string {
	spans := wordSpans(s)
	out := make([]string, len(spans))
	for i, sp := range spans {
		out[i] = strings.ToLower(s[sp[0]:sp[1]])
	}
	return out
}

// Limits of a search query.
const (
	maxQueryBytes = 1024
	maxQueryWords = 32
)

// QueryWords returns the distinct words of a search query, refusing a
// query without any or with too many (ErrInvalid).
func QueryWords(q string) ([]string, error) {
	if len(q) > maxQueryBytes {
		return nil, invalidf("search query is %d bytes, more than %d", len(q), maxQueryBytes)
	}
	if !Findable(q) {
		return nil, invalidf("search query is not valid UTF-8 text")
	}
	var out []string
	seen := map[string]bool{}
	for _, w := range Words(q) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	switch {
	case len(out) == 0:
		return nil, invalidf("search query %q has no word to search for", q)
	case len(out) > maxQueryWords:
		return nil, invalidf("search query has %d words, more than %d", len(out), maxQueryWords)
	}
	return out, nil
}

// Snippet context, in bytes of the message text.
const (
	snippetBefore = 60
	snippetLength = 200
)

// Snippet returns the stretch of text around the first word that is one
// of words (lower-cased), white space collapsed, with "…" where it was cut,
// and the byte ranges of the snippet that match words.
func Snippet(text string, words []string) (string, [][2]int) {
	spans := wordSpans(text)
	want := make(map[string]bool, len(words))
	for _, w := range words {
		want[w] = true
	}
	match := make([]bool, len(spans))
	first := -1
	for i, sp := range spans {
		if want[strings.ToLower(text[sp[0]:sp[1]])] {
			match[i] = true
			if first < 0 {
				first = i
			}
		}
	}
	// The window: whole words from about snippetBefore bytes before the
	// first match to about snippetLength bytes after the window's start.
	lo, hi := 0, 0 // indexes into spans
	if first > 0 {
		lo = first
		for lo > 0 && spans[first][0]-spans[lo-1][0] <= snippetBefore {
			lo--
		}
	}
	if len(spans) == 0 {
		return "", nil
	}
	start := spans[lo][0]
	hi = lo
	for hi < len(spans) && spans[hi][1]-start <= snippetLength {
		hi++
	}
	if hi == lo { // one word longer than a snippet
		hi = lo + 1
	}
	end := spans[hi-1][1]
	if hi == len(spans) {
		end = len(text)
	}
	var b strings.Builder
	var marks [][2]int
	if lo > 0 {
		b.WriteString("… ")
	}
	pos := start
	for i := lo; i < hi; i++ {
		sp := spans[i]
		writeCollapsed(&b, text[pos:sp[0]])
		from := b.Len()
		b.WriteString(text[sp[0]:sp[1]])
		if match[i] {
			marks = append(marks, [2]int{from, b.Len()})
		}
		pos = sp[1]
	}
	writeCollapsed(&b, strings.TrimRightFunc(text[pos:end], unicode.IsSpace))
	if hi < len(spans) {
		b.WriteString(" …")
	}
	return b.String(), marks
}

// writeCollapsed writes s with every run of white space as one space.
func writeCollapsed(b *strings.Builder, s string) {
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	if space {
		b.WriteByte(' ')
	}
}

// SearchCursor is a position in search results: the row key (a backend's
// conversation key and message position) of the last hit of a page.
type SearchCursor struct {
	Conv, Pos int64
}

// String encodes the cursor for store.SearchOptions.After.
func (c SearchCursor) String() string {
	s := "s1." + strconv.FormatInt(c.Conv, 10) + "." + strconv.FormatInt(c.Pos, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

var errSearchCursor = errors.New("not a search cursor")

// ParseSearchCursor decodes a cursor; "" is the first page (ok false).
func ParseSearchCursor(s string) (c SearchCursor, ok bool, err error) {
	if s == "" {
		return c, false, nil
	}
	bad := fmt.Errorf("%w: %w", store.ErrInvalid, errSearchCursor)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, false, bad
	}
	version, rest, ok1 := strings.Cut(string(b), ".")
	conv, pos, ok2 := strings.Cut(rest, ".")
	c.Conv, err = strconv.ParseInt(conv, 10, 64)
	if err != nil || !ok1 || !ok2 || version != "s1" || c.Conv < 0 {
		return SearchCursor{}, false, bad
	}
	if c.Pos, err = strconv.ParseInt(pos, 10, 64); err != nil || c.Pos < 0 {
		return SearchCursor{}, false, bad
	}
	return c, true, nil
}

// SearchLimit is the page size of a search: n within bounds, or the
// default for 0.
func SearchLimit(n int) (int, error) {
	switch {
	case n < 0:
		return 0, invalidf("search limit %d is negative", n)
	case n == 0:
		return store.DefaultSearchLimit, nil
	case n > store.MaxSearchLimit:
		return store.MaxSearchLimit, nil
	}
	return n, nil
}

// Search is a checked search request.
type Search struct {
	Words []string      // the distinct query words, lower-cased
	Limit int           // the page size
	After *SearchCursor // where the page starts; nil for the first
}

// ParseSearch checks the arguments of store.Store.Search. ok is false when
// nothing can match (a tenant no store could hold), with no error.
func ParseSearch(tenant, query string, opts store.SearchOptions) (s Search, ok bool, err error) {
	if s.Words, err = QueryWords(query); err != nil {
		return s, false, err
	}
	if s.Limit, err = SearchLimit(opts.Limit); err != nil {
		return s, false, err
	}
	cur, after, err := ParseSearchCursor(opts.After)
	if err != nil {
		return s, false, err
	}
	if after {
		s.After = &cur
	}
	return s, Findable(tenant), nil
}

// Hit is the result for message id at index, with the snippet of its text
// around the query words.
func (s Search) Hit(c store.Conversation, id string, index int, role, text string) store.Hit {
	h := store.Hit{Conversation: c, MessageID: id, Index: index, Role: convo.Role(role)}
	h.Snippet, h.Highlights = Snippet(text, s.Words)
	return h
}
