package provider

import (
	"encoding/hex"
	"hash/fnv"
	"strconv"
)

// SynthID returns a tool-call id for a call that has none, from its place and
// name, so decoding the same request twice gives the same ids and parallel
// calls of one tool get different ones.
func SynthID(msg, part int, name string) string {
	h := fnv.New64a()
	h.Write([]byte(strconv.Itoa(msg) + "/" + strconv.Itoa(part) + "/" + name))
	return "call_" + hex.EncodeToString(h.Sum(nil))
}

// SanitizeID maps id onto the characters [A-Za-z0-9_-] and at most max bytes
// (0: no limit), as targets that restrict tool-call ids need. An id that
// already fits is returned unchanged; any other gets a hash of the original
// appended, so distinct ids stay distinct and the same id always maps to the
// same result — calls and their results keep matching.
func SanitizeID(id string, max int) string {
	ok := id != "" && (max == 0 || len(id) <= max)
	for i := 0; ok && i < len(id); i++ {
		ok = idChar(id[i])
	}
	if ok {
		return id
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	suffix := "_" + hex.EncodeToString(h.Sum(nil))
	b := make([]byte, 0, len(id)+len(suffix))
	for i := 0; i < len(id); i++ {
		if idChar(id[i]) {
			b = append(b, id[i])
		} else {
			b = append(b, '_')
		}
	}
	if max > 0 && len(b)+len(suffix) > max {
		keep := max - len(suffix)
		if keep < 1 {
			// Too short for a readable part: the hash alone still tells ids apart.
			return suffix[1:min(len(suffix), max+1)]
		}
		b = b[:keep]
	}
	return string(append(b, suffix...))
}

func idChar(c byte) bool {
	return c == '_' || c == '-' || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}
