package wire

import (
	"crypto/rand"
	"encoding/hex"
)

// AppendSSE appends one Server-Sent Event: an "event:" line when name is
// set, the data line, and the blank line that ends the event. data must be
// one line (compact JSON is).
func AppendSSE(dst []byte, name string, data []byte) []byte {
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// NewID returns prefix followed by 24 random hex digits, for the ids a
// stream encoder must invent (a response or an output item the upstream
// did not name).
func NewID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
