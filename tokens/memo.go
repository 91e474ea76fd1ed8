package tokens

import (
	"hash/maphash"
	"math/bits"
	"sync"
	"unsafe"

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
	k := keyer{seed: c.seed}
	k.fields(string(m.Role), m.Name, bstr(m.Native["openai"])) // the developer role
	k.parts(m.Parts)
	return k.sum
}

// keyer folds the hashes of a message's fields into one key. Each field is
// hashed whole by maphash.String (the runtime's AES hash, no buffering),
// and the running key is rotated and multiplied between fields, so order
// and field boundaries count.
type keyer struct {
	seed maphash.Seed
	sum  uint64
}

func (k *keyer) mix(v uint64) {
	k.sum = (bits.RotateLeft64(k.sum, 23) ^ v) * 0x9e3779b97f4a7c15
}

// fields mixes a bit set of which fields are not empty, then the hash of
// each of those: empty fields, the common case, cost a bit each.
func (k *keyer) fields(fs ...string) {
	var set uint64
	for i, f := range fs {
		if f != "" {
			set |= 1 << i
		}
	}
	k.mix(set)
	for _, f := range fs {
		if f != "" {
			k.mix(maphash.String(k.seed, f))
		}
	}
}

func (k *keyer) parts(ps []convo.Part) {
	k.mix(uint64(len(ps)))
	for i := range ps {
		p := &ps[i]
		k.fields(string(p.Type), p.Text, p.MediaType, p.Data, p.URL, p.FileID, p.Name, p.Detail,
			bstr(p.Value), bstr(p.Args), p.ArgsRaw, bstr(p.Raw),
			bstr(p.Native["openai"])) // original tool-call arguments
		k.mix(uint64(len(p.Summary)))
		for _, s := range p.Summary {
			k.mix(maphash.String(k.seed, s))
		}
		if p.Parts != nil {
			k.parts(p.Parts)
		} else {
			k.mix(1 << 63)
		}
	}
}

// bstr views b as a string without copying; the hash only reads it.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
