package backend

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/store"
)

// Now is the time stores record, in the precision both backends keep.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Later is the time of a change to something last changed at prev: now,
// or prev if the clock went back, so Updated never decreases.
func Later(prev time.Time) time.Time {
	if now := Now(); now.After(prev) {
		return now
	}
	return prev
}

// checkString refuses strings a database cannot hold faithfully (invalid
// UTF-8, NUL, which PostgreSQL text refuses) or that are out of bounds.
func checkString(s, name string, minLen, maxLen int) error {
	switch {
	case len(s) < minLen:
		return fmt.Errorf("%s is empty", name)
	case len(s) > maxLen:
		return fmt.Errorf("%s is %d bytes, more than %d", name, len(s), maxLen)
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8", name)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s contains NUL", name)
	}
	return nil
}

// Findable reports whether every string could be stored (valid UTF-8, no
// NUL). Lookups by a string that could not be stored find nothing, without
// asking the database, which might refuse the string with an error.
func Findable(strs ...string) bool {
	for _, s := range strs {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return false
		}
	}
	return true
}

// CheckTenant checks a tenant name.
func CheckTenant(tenant string) error {
	if err := checkString(tenant, "tenant", 0, store.MaxTenantBytes); err != nil {
		return fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	return nil
}

// CheckID checks a conversation id given by a caller (see
// store.Conversation.ID for the rules).
func CheckID(id string) error {
	if err := checkString(id, "conversation id", 1, store.MaxIDBytes); err != nil {
		return fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	for _, r := range id {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) || strings.ContainsRune(`/?#%\`, r) {
			return fmt.Errorf("%w: conversation id %q contains %q", store.ErrInvalid, id, r)
		}
	}
	return nil
}

// CheckTitle checks a title.
func CheckTitle(title string) error {
	if err := checkString(title, "title", 0, store.MaxTitleBytes); err != nil {
		return fmt.Errorf("%w: %v", store.ErrInvalid, err)
	}
	return nil
}

// NewConversation checks the caller's fields of c for Create, Fork or
// Import and fills in the id; meta comes back compacted.
func NewConversation(c store.Conversation) (store.Conversation, error) {
	if err := CheckTenant(c.Tenant); err != nil {
		return c, err
	}
	if c.ID == "" {
		c.ID = store.NewID("conv")
	} else if err := CheckID(c.ID); err != nil {
		return c, err
	}
	if err := CheckTitle(c.Title); err != nil {
		return c, err
	}
	meta, _, err := Meta(c.Meta)
	if err != nil {
		return c, err
	}
	c.Meta = meta
	return c, nil
}

// Meta checks conversation metadata and returns it compacted. A JSON null
// is no metadata: nil, with clear set (Update removes the stored metadata).
func Meta(raw json.RawMessage) (meta json.RawMessage, clear bool, err error) {
	if raw == nil {
		return nil, false, nil
	}
	if len(raw) > store.MaxMetaBytes {
		return nil, false, fmt.Errorf("%w: metadata is %d bytes, more than %d", store.ErrInvalid, len(raw), store.MaxMetaBytes)
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, true, nil
	}
	out, err := jsonx.Compact(raw, convo.DefaultLimits.MaxDepth)
	if err != nil {
		return nil, false, fmt.Errorf("%w: metadata: %v", store.ErrInvalid, err)
	}
	if len(out) == 0 || out[0] != '{' {
		return nil, false, fmt.Errorf("%w: metadata is not a JSON object", store.ErrInvalid)
	}
	// PostgreSQL's jsonb, which List's metadata filter compares with,
	// cannot hold NUL; refuse it in every backend alike.
	if bytes.Contains(out, []byte(`\u0000`)) {
		v, err := decodeJSON(out)
		if err != nil || hasNUL(v) {
			return nil, false, fmt.Errorf("%w: metadata contains \\u0000", store.ErrInvalid)
		}
	}
	return out, false, nil
}

func hasNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.IndexByte(v, 0) >= 0
	case map[string]any:
		for k, x := range v {
			if strings.IndexByte(k, 0) >= 0 || hasNUL(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hasNUL(x) {
				return true
			}
		}
	}
	return false
}

// Filter is a checked ListOptions.Meta: the members a conversation's
// metadata must have.
type Filter map[string]any

// ParseFilter checks a metadata filter (nil: none).
func ParseFilter(raw json.RawMessage) (Filter, error) {
	if raw == nil {
		return nil, nil
	}
	meta, clear, err := Meta(raw)
	if err != nil {
		return nil, err
	}
	if clear || meta == nil {
		return nil, nil
	}
	v, err := decodeJSON(meta)
	if err != nil {
		return nil, fmt.Errorf("%w: metadata filter: %v", store.ErrInvalid, err)
	}
	f := Filter(v.(map[string]any))
	if len(f) == 0 {
		return nil, nil
	}
	return f, nil
}

// Match reports whether the stored metadata meta has every member of f
// with an equal value. Metadata that is not a JSON object matches nothing.
//
// A List whose filter has no member the index of metadata holds (see
// Indexed) reads every conversation of the tenant through Match, so most
// metadata is turned down before it is decoded: a string the metadata has
// as a value is in its text as it is, quoted, unless the text escapes
// something.
func (f Filter) Match(meta []byte) bool {
	if len(f) == 0 {
		return true
	}
	if bytes.IndexByte(meta, '\\') < 0 {
		for _, want := range f {
			if q, ok := quoted(want); ok && !bytes.Contains(meta, []byte(q)) {
				return false
			}
		}
	}
	return f.match(meta)
}

// Needle is a text that metadata matching f has, unless it has a
// backslash: the first (by key) of f's string values that JSON writes as
// they are, quoted; "" when f has none. A store can turn down rows whose
// metadata lacks it (and has no backslash) before it decodes any.
func (f Filter) Needle() string {
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if q, ok := quoted(f[k]); ok {
			return q
		}
	}
	return ""
}

// MaxIndexed is the longest key and the longest string value, in bytes,
// of the metadata members a store indexes (the meta_values table of its
// migrations): longer ones are found by reading every conversation.
const MaxIndexed = 256

// Indexed is a member of f that a store's index of metadata holds for
// every conversation having it: the first (by key) whose value is a string
// and whose key and value are at most MaxIndexed bytes. ok is false when f
// has none.
func (f Filter) Indexed() (key, value string, ok bool) {
	for _, k := range slices.Sorted(maps.Keys(f)) {
		if v, isString := f[k].(string); isString && len(k) <= MaxIndexed && len(v) <= MaxIndexed {
			return k, v, true
		}
	}
	return "", "", false
}

// ListQueries are a backend's list queries: from the start or after a
// cursor, reading every conversation of the tenant or only those the index
// of metadata names (see Indexed).
type ListQueries struct {
	First, After, FirstIndexed, AfterIndexed string
}

// Pick returns the query for a List with or without an indexed filter
// member and a cursor.
func (q ListQueries) Pick(indexed, after bool) string {
	switch {
	case indexed && after:
		return q.AfterIndexed
	case indexed:
		return q.FirstIndexed
	case after:
		return q.After
	}
	return q.First
}

// quoted returns v quoted, as JSON writes it, when v is a string that
// JSON writes as it is between its quotes.
func quoted(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	for _, r := range s {
		if r < 0x20 || r == '"' || r == '\\' || r == utf8.RuneError {
			return "", false
		}
	}
	return `"` + s + `"`, true
}

// match is Match, decoding the metadata.
func (f Filter) match(meta []byte) bool {
	if len(meta) == 0 {
		return false
	}
	v, err := decodeJSON(meta)
	if err != nil {
		return false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, want := range f {
		got, ok := obj[k]
		if !ok || !equalJSON(got, want) {
			return false
		}
	}
	return true
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// equalJSON compares decoded JSON values the way PostgreSQL compares jsonb:
// numbers by value, objects as sets of members, arrays in order.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		x, okx := new(big.Rat).SetString(string(a))
		y, oky := new(big.Rat).SetString(string(b))
		return okx && oky && x.Cmp(y) == 0
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, av := range a {
			bv, ok := b[k]
			if !ok || !equalJSON(av, bv) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], b[i]) {
				return false
			}
		}
		return true
	default: // string, bool, nil
		return a == b
	}
}

// Limit turns ListOptions.Limit into a page size.
func Limit(n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("%w: negative list limit %d", store.ErrInvalid, n)
	case n == 0:
		return store.DefaultListLimit, nil
	case n > store.MaxListLimit:
		return store.MaxListLimit, nil
	}
	return n, nil
}

// Cursor is a position in a tenant's list of conversations, newest first:
// the creation time and id of the last conversation of a page.
type Cursor struct {
	Created time.Time
	ID      string
}

// String encodes the cursor for ListOptions.After.
func (c Cursor) String() string {
	s := "1." + strconv.FormatInt(c.Created.UnixMicro(), 10) + "." + c.ID
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

var errCursor = errors.New("not a list cursor")

// ParseCursor decodes a cursor; "" is the start of the list (ok false).
func ParseCursor(s string) (c Cursor, ok bool, err error) {
	if s == "" {
		return c, false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, false, fmt.Errorf("%w: %w", store.ErrInvalid, errCursor)
	}
	version, rest, ok1 := strings.Cut(string(b), ".")
	micros, id, ok2 := strings.Cut(rest, ".")
	us, err := strconv.ParseInt(micros, 10, 64)
	if !ok1 || !ok2 || version != "1" || err != nil || CheckID(id) != nil {
		return c, false, fmt.Errorf("%w: %w", store.ErrInvalid, errCursor)
	}
	return Cursor{Created: time.UnixMicro(us).UTC(), ID: id}, true, nil
}
