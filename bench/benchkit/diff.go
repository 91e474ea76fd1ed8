package benchkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/convo-go/convo"
)

// Loss is one field of the original history that did not come back the
// same after a round trip.
type Loss struct {
	// Field names what was lost in the canonical format's terms:
	// "message.time", "reasoning.signature", "tool_result.error",
	// "tool_result.parts.json (whole part)".
	Field string
	// Count is how many times it was lost in the history.
	Count int
	// First is the first place it was lost, e.g. "messages[2].parts[0]".
	First string
}

func (l Loss) String() string { return fmt.Sprintf("%s ×%d (first at %s)", l.Field, l.Count, l.First) }

type messageField struct {
	goName, label string
	eq            func(a, b *convo.Message) bool
}

type partField struct {
	goName, member string
	eq             func(a, b *convo.Part) bool
}

func origin(m *convo.Message) convo.Origin {
	if m.Origin == nil {
		return convo.Origin{}
	}
	return *m.Origin
}

func usage(m *convo.Message) convo.Usage {
	if m.Usage == nil {
		return convo.Usage{}
	}
	return *m.Usage
}

// messageFields lists every field of convo.Message but Parts, which Diff
// walks itself. A field convo adds later fails TestDiffCoversEveryField.
var messageFields = []messageField{
	{"Role", "message.role", func(a, b *convo.Message) bool { return a.Role == b.Role }},
	{"ID", "message.id", func(a, b *convo.Message) bool { return a.ID == b.ID }},
	{"Name", "message.name", func(a, b *convo.Message) bool { return a.Name == b.Name }},
	{"Time", "message.time", func(a, b *convo.Message) bool { return a.Time.Equal(b.Time) }},
	{"Phase", "message.phase", func(a, b *convo.Message) bool { return a.Phase == b.Phase }},
	{"Effort", "message.effort", func(a, b *convo.Message) bool { return a.Effort == b.Effort }},
	{"Scope", "message.scope", func(a, b *convo.Message) bool { return a.Scope == b.Scope }},
	{"Compacted", "message.compacted", func(a, b *convo.Message) bool { return a.Compacted == b.Compacted }},
	{"Origin", "message.origin.provider", func(a, b *convo.Message) bool { return origin(a).Provider == origin(b).Provider }},
	{"Origin", "message.origin.model", func(a, b *convo.Message) bool { return origin(a).Model == origin(b).Model }},
	{"Origin", "message.origin.response_id", func(a, b *convo.Message) bool { return origin(a).ResponseID == origin(b).ResponseID }},
	{"Usage", "message.usage.input", func(a, b *convo.Message) bool { return usage(a).Input == usage(b).Input }},
	{"Usage", "message.usage.output", func(a, b *convo.Message) bool { return usage(a).Output == usage(b).Output }},
	{"Usage", "message.usage.cache_read", func(a, b *convo.Message) bool { return usage(a).CacheRead == usage(b).CacheRead }},
	{"Usage", "message.usage.cache_write", func(a, b *convo.Message) bool { return usage(a).CacheWrite == usage(b).CacheWrite }},
	{"Usage", "message.usage.reasoning", func(a, b *convo.Message) bool { return usage(a).Reasoning == usage(b).Reasoning }},
	{"Usage", "message.usage.total", func(a, b *convo.Message) bool { return usage(a).Total == usage(b).Total }},
	{"Cost", "message.cost", func(a, b *convo.Message) bool { return reflect.DeepEqual(a.Cost, b.Cost) }},
	{"Finish", "message.finish", func(a, b *convo.Message) bool { return a.Finish == b.Finish }},
	{"Meta", "message.meta", func(a, b *convo.Message) bool { return jsonEq(a.Meta, b.Meta) }},
	{"Native", "message.native", func(a, b *convo.Message) bool { return nativeEq(a.Native, b.Native) }},
	{"Extra", "message.extra", func(a, b *convo.Message) bool { return fieldsEq(a.Extra, b.Extra) }},
}

// partFields lists every field of convo.Part but Type (which pairs parts up)
// and Parts (which Diff walks itself).
var partFields = []partField{
	{"Text", "text", func(a, b *convo.Part) bool { return a.Text == b.Text }},
	{"MediaType", "media_type", func(a, b *convo.Part) bool { return a.MediaType == b.MediaType }},
	{"Data", "data", func(a, b *convo.Part) bool { return a.Data == b.Data }},
	{"URL", "url", func(a, b *convo.Part) bool { return a.URL == b.URL }},
	{"FileID", "file_id", func(a, b *convo.Part) bool { return a.FileID == b.FileID }},
	{"Name", "name", func(a, b *convo.Part) bool { return a.Name == b.Name }},
	{"Detail", "detail", func(a, b *convo.Part) bool { return a.Detail == b.Detail }},
	{"Cache", "cache", func(a, b *convo.Part) bool { return reflect.DeepEqual(a.Cache, b.Cache) }},
	{"Citations", "citations", func(a, b *convo.Part) bool { return slices.EqualFunc(a.Citations, b.Citations, convo.Citation.Equal) }},
	{"Value", "value", func(a, b *convo.Part) bool { return jsonEq(a.Value, b.Value) }},
	{"ID", "id", func(a, b *convo.Part) bool { return a.ID == b.ID }},
	{"Args", "args", func(a, b *convo.Part) bool { return jsonEq(a.Args, b.Args) }},
	{"ArgsRaw", "args_raw", func(a, b *convo.Part) bool { return a.ArgsRaw == b.ArgsRaw }},
	{"Error", "error", func(a, b *convo.Part) bool { return a.Error == b.Error }},
	{"CallID", "call_id", func(a, b *convo.Part) bool { return a.CallID == b.CallID }},
	{"Approved", "approved", func(a, b *convo.Part) bool { return a.Approved == b.Approved }},
	{"Server", "server", func(a, b *convo.Part) bool { return a.Server == b.Server }},
	{"Reason", "reason", func(a, b *convo.Part) bool { return a.Reason == b.Reason }},
	{"Summary", "summary", func(a, b *convo.Part) bool { return slices.Equal(a.Summary, b.Summary) }},
	{"Signature", "signature", func(a, b *convo.Part) bool { return a.Signature == b.Signature }},
	{"Encrypted", "encrypted", func(a, b *convo.Part) bool { return a.Encrypted == b.Encrypted }},
	{"Provider", "provider", func(a, b *convo.Part) bool { return a.Provider == b.Provider }},
	{"Model", "model", func(a, b *convo.Part) bool { return a.Model == b.Model }},
	{"Native", "native", func(a, b *convo.Part) bool { return nativeEq(a.Native, b.Native) }},
	{"Extra", "extra", func(a, b *convo.Part) bool { return fieldsEq(a.Extra, b.Extra) }},
	{"Raw", "raw", func(a, b *convo.Part) bool { return jsonEq(a.Raw, b.Raw) }},
}

// CoveredFields returns the Go names of the convo.Message and convo.Part
// fields Diff compares, for the test that it compares all of them.
func CoveredFields() (message, part []string) {
	message = []string{"Parts"}
	for _, f := range messageFields {
		message = append(message, f.goName)
	}
	part = []string{"Type", "Parts"}
	for _, f := range partFields {
		part = append(part, f.goName)
	}
	return message, part
}

type tally struct {
	count map[string]int
	first map[string]string
}

func (t *tally) add(field, where string) {
	if t.count[field] == 0 {
		t.first[field] = where
	}
	t.count[field]++
}

// Diff compares got, a history that went through some library's types and
// JSON and was converted back, with want, field by field, and returns what
// did not survive, sorted by field. Parts are paired by type and order of
// appearance within their message, so a dropped part shows as "(whole
// part)" rather than shifting every part after it. JSON values are compared
// by meaning: key order, white space and number spelling do not count.
func Diff(want, got convo.History) []Loss {
	t := &tally{count: map[string]int{}, first: map[string]string{}}
	if len(want) != len(got) {
		t.add(fmt.Sprintf("messages (%d came back as %d)", len(want), len(got)), "messages")
	}
	for i := range min(len(want), len(got)) {
		a, b := &want[i], &got[i]
		where := fmt.Sprintf("messages[%d]", i)
		for _, f := range messageFields {
			if !f.eq(a, b) {
				t.add(f.label, where)
			}
		}
		diffParts(t, "", where, a.Parts, b.Parts)
	}
	out := make([]Loss, 0, len(t.count))
	for f, n := range t.count {
		out = append(out, Loss{Field: f, Count: n, First: t.first[f]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

func diffParts(t *tally, prefix, where string, want, got []convo.Part) {
	byType := func(ps []convo.Part) (map[convo.PartType][]int, []convo.PartType) {
		m := map[convo.PartType][]int{}
		var order []convo.PartType
		for i, p := range ps {
			if m[p.Type] == nil {
				order = append(order, p.Type)
			}
			m[p.Type] = append(m[p.Type], i)
		}
		return m, order
	}
	wm, worder := byType(want)
	gm, gorder := byType(got)
	matched := true
	for _, typ := range worder {
		wi, gi := wm[typ], gm[typ]
		for k, i := range wi {
			pw := fmt.Sprintf("%s.parts[%d]", where, i)
			if k >= len(gi) {
				t.add(prefix+string(typ)+" (whole part)", pw)
				matched = false
				continue
			}
			a, b := &want[i], &got[gi[k]]
			for _, f := range partFields {
				if !f.eq(a, b) {
					t.add(prefix+string(typ)+"."+f.member, pw)
				}
			}
			diffParts(t, prefix+string(typ)+".parts.", pw, a.Parts, b.Parts)
		}
	}
	for _, typ := range gorder {
		if extra := len(gm[typ]) - len(wm[typ]); extra > 0 {
			t.add(prefix+string(typ)+" (part added)", fmt.Sprintf("%s.parts[%d]", where, gm[typ][len(wm[typ])]))
			matched = false
		}
	}
	if matched && len(want) == len(got) {
		for i := range want {
			if want[i].Type != got[i].Type {
				t.add(prefix+"parts (order)", where)
				break
			}
		}
	}
}

// jsonEq reports whether a and b hold the same JSON value; nil (absent)
// equals only nil.
func jsonEq(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

func nativeEq(a, b convo.Native) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !jsonEq(v, w) {
			return false
		}
	}
	return true
}

func fieldsEq(a, b convo.Fields) bool {
	return slices.EqualFunc(a, b, func(x, y convo.Field) bool { return x.Key == y.Key && jsonEq(x.Value, y.Value) })
}

// Summary renders losses for a table cell: "—" when nothing was lost,
// else the fields joined by ", ".
func Summary(ls []Loss) string {
	if len(ls) == 0 {
		return "—"
	}
	s := make([]string, len(ls))
	for i, l := range ls {
		s[i] = l.Field
	}
	return strings.Join(s, ", ")
}
