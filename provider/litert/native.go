package litert

import (
	"strconv"
	"strings"
)

// Members convo has no field for are kept in Native["litert"] as
// wire.Members; a member recorded as wire.Null was absent on the wire
// (convo filled the field in) and is left out again.

// Markers are Native members that record the wire form rather than hold a
// wire member. They start with "@"; a wire member whose name starts with
// "@" is kept with one more "@" in front, so the two never mix.
const (
	markContent   = "@content"    // "string" or "object": the form of "content"
	markSingle    = "@single"     // true: the message is itself the tool call
	markInContent = "@in_content" // true: the tool call was a content part
	markForm      = "@form"       // "plain": the result was plain content parts
	markAfter     = "@after"      // n: the result's last n parts followed its response part
)

// extraKey returns the Native key of a wire member convo has no field for.
func extraKey(k []byte) string {
	if len(k) > 0 && k[0] == '@' {
		return "@" + string(k)
	}
	return string(k)
}

// wireKey returns the wire name of a Native member, and false for a marker.
func wireKey(k string) (string, bool) {
	switch {
	case strings.HasPrefix(k, "@@"):
		return k[1:], true
	case strings.HasPrefix(k, "@"):
		return "", false
	}
	return k, true
}

func index(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

func msgPath(i int) string { return index("messages", i) }

func partPath(i, j int) string { return msgPath(i) + "." + index("parts", j) }
