package tokens

import (
	"encoding/binary"
	"hash/maphash"
	"sync"

	"github.com/convo-go/convo"
)

// memoLimit bounds a memo: past it the memo starts afresh rather than grow
// without end in a long-lived process.
const memoLimit = 1 << 17

// memo remembers message counts by a hash of everything that decides them.
// Hashing reads each byte once at memory speed, far cheaper than
// tokenizing; a 64-bit collision between two different messages of one
// process is too unlikely to matter.
type memo struct {
	seed maphash.Seed
	mu   sync.RWMutex
	m    map[uint64]count
}

func newMemo() *memo { return &memo{seed: maphash.MakeSeed(), m: map[uint64]count{}} }

func (c *memo) get(k uint64) (count, bool) {
	c.mu.RLock()
	v, ok := c.m[k]
	c.mu.RUnlock()
	return v, ok
}

func (c *memo) put(k uint64, v count) {
	c.mu.Lock()
	if len(c.m) >= memoLimit {
		clear(c.m)
	}
	c.m[k] = v
	c.mu.Unlock()
}

func (c *memo) key(m convo.Message) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	str(&h, string(m.Role))
	str(&h, m.Name)
	raw(&h, m.Native["openai"]) // the developer role
	hashParts(&h, m.Parts)
	return h.Sum64()
}

// str writes s with its length, so that ("ab","c") and ("a","bc") differ.
func str(h *maphash.Hash, s string) {
	length(h, len(s))
	h.WriteString(s)
}

func raw(h *maphash.Hash, b []byte) {
	length(h, len(b))
	h.Write(b)
}

func length(h *maphash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}

func hashParts(h *maphash.Hash, ps []convo.Part) {
	length(h, len(ps))
	for i := range ps {
		p := &ps[i]
		str(h, string(p.Type))
		str(h, p.Text)
		str(h, p.MediaType)
		str(h, p.Data)
		str(h, p.URL)
		str(h, p.FileID)
		str(h, p.Name)
		str(h, p.Detail)
		raw(h, p.Value)
		raw(h, p.Args)
		str(h, p.ArgsRaw)
		raw(h, p.Raw)
		raw(h, p.Native["openai"]) // original tool-call arguments
		length(h, len(p.Summary))
		for _, s := range p.Summary {
			str(h, s)
		}
		hashParts(h, p.Parts)
	}
}
