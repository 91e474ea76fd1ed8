package backend

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sort"
)

// MinMedia is the length of inline base64 Data from which a part's media is
// kept in the blob table instead of in its message's body: below it a
// reference costs about as much as the bytes. A variable only so that the
// benchmarks can measure a store without deduplication.
var MinMedia = 1024

// mediaHole is what a stored body holds where a blob's base64 was: valid
// base64, so the body still decodes (for the open-call scan, the search
// text, expiry) without its blobs.
const mediaHole = "AAAA"

// A Blob is media kept once: Hash is the hex SHA-256 of Data, the decoded
// bytes of a part's base64.
type Blob struct {
	Hash string
	Data []byte
}

// A MediaRef says that a stored body holds blob Hash at byte Off, where
// mediaHole stands in for its base64.
type MediaRef struct {
	Off  int
	Hash string
}

// StripMedia takes the inline media of at least MinMedia base64 bytes out
// of body, a message's canonical JSON, and returns the body with holes,
// where each blob goes, and the blobs (each once). It finds media as
// members "data" whose string value is base64: a quote inside a JSON
// string is escaped, so `"data":"` is always a member. Data whose base64
// would not come back byte for byte from its decoded bytes (non-canonical
// padding bits) stays in the body: every body restores to exactly the bytes
// that came in.
func StripMedia(body []byte) ([]byte, []MediaRef, []Blob) {
	const key = `"data":"`
	var out []byte
	var refs []MediaRef
	var blobs []Blob
	seen := map[string]bool{}
	last, cursor := 0, 0
	for {
		i := bytes.Index(body[cursor:], []byte(key))
		if i < 0 {
			break
		}
		start := cursor + i + len(key)
		n := bytes.IndexByte(body[start:], '"')
		if n < 0 {
			break
		}
		cursor = start + n
		if n < MinMedia {
			continue
		}
		d := body[start : start+n]
		raw := make([]byte, base64.StdEncoding.DecodedLen(n))
		k, err := base64.StdEncoding.Decode(raw, d)
		if err != nil || base64.StdEncoding.EncodedLen(k) != n || !bytes.Equal(base64.StdEncoding.AppendEncode(nil, raw[:k]), d) {
			continue
		}
		raw = raw[:k]
		sum := sha256.Sum256(raw)
		h := hex.EncodeToString(sum[:])
		out = append(out, body[last:start]...)
		refs = append(refs, MediaRef{Off: len(out), Hash: h})
		out = append(out, mediaHole...)
		last = cursor
		if !seen[h] {
			seen[h] = true
			blobs = append(blobs, Blob{Hash: h, Data: raw})
		}
	}
	if refs == nil {
		return body, nil, nil
	}
	return append(out, body[last:]...), refs, blobs
}

// Media holds the blobs of some of a conversation's messages, read to
// restore their bodies.
type Media struct {
	Refs map[int64][]MediaRef // by message position
	Data map[string][]byte    // by hash
}

// Restore returns the body of the message at pos with its media put back.
func (m *Media) Restore(body []byte, conv string, pos int64) ([]byte, error) {
	refs := m.Refs[pos]
	if len(refs) == 0 {
		return body, nil
	}
	b, err := RestoreMedia(body, refs, m.Data)
	if err != nil {
		return nil, corrupt(conv, pos, err)
	}
	return b, nil
}

// RestoreMedia puts the base64 of each blob back into a stored body; data
// maps a hash to the blob's bytes. refs are as StripMedia returned them.
func RestoreMedia(body []byte, refs []MediaRef, data map[string][]byte) ([]byte, error) {
	if len(refs) == 0 {
		return body, nil
	}
	refs = append([]MediaRef(nil), refs...)
	sort.Slice(refs, func(i, j int) bool { return refs[i].Off < refs[j].Off })
	n := len(body)
	for _, r := range refs {
		n += base64.StdEncoding.EncodedLen(len(data[r.Hash]))
	}
	out := make([]byte, 0, n)
	last := 0
	for _, r := range refs {
		if r.Off < last || r.Off+len(mediaHole) > len(body) || string(body[r.Off:r.Off+len(mediaHole)]) != mediaHole {
			return nil, fmt.Errorf("media reference at byte %d does not point at a hole", r.Off)
		}
		b, ok := data[r.Hash]
		if !ok {
			return nil, fmt.Errorf("media blob %s is missing", r.Hash)
		}
		out = append(out, body[last:r.Off]...)
		out = base64.StdEncoding.AppendEncode(out, b)
		last = r.Off + len(mediaHole)
	}
	return append(out, body[last:]...), nil
}
