package convo

import (
	"unsafe"

	"github.com/convo-go/convo/internal/jsonx"
)

// A decoder reading a document keeps what it decodes in a few large chunks
// rather than in one heap object per string, parts slice, origin and usage:
// a message then costs the allocator and the garbage collector a fraction of
// an object instead of about seven, and what it keeps sits together in
// memory. A string or slice cut from a chunk keeps the whole chunk alive, so
// chunks are small (32 KiB of bytes, 64 parts): keeping one message of a big
// document keeps at most a few chunks, never the document.
const (
	slabBytes = 32 << 10 // bytes of strings and raw JSON values per chunk
	slabAlone = 4 << 10  // a string this long gets its own allocation
	slabParts = 64       // parts per chunk
	slabSmall = 64       // origins or usages per chunk
)

// carve returns n zero elements cut from *chunk (capacity n, so appending
// to them copies instead of overwriting a neighbour), starting a new chunk
// of size elements, or n if more, when the current one has no room.
func carve[T any](chunk *[]T, n, size int) []T {
	c := *chunk
	if cap(c)-len(c) < n {
		c = make([]T, 0, max(n, size))
	}
	l := len(c)
	*chunk = c[:l+n]
	return c[l : l+n : l+n]
}

// remaining is how many bytes of the document are left to read: no chunk
// needs to be larger than what the rest of the document can fill, so short
// documents and single messages get chunks their size.
func (d *decoder) remaining() int { return len(d.r.Bytes()) - d.r.Offset() }

// keep copies b (a string's bytes or a raw JSON value, which may alias the
// document or the reader's scratch buffer) into the decoder's byte chunk.
func (d *decoder) keep(b []byte) []byte {
	if len(b) == 0 {
		return []byte{}
	}
	var out []byte
	if cap(d.slab)-len(d.slab) < len(b) && len(b) >= slabAlone {
		// Long values (inline media) would leave much of a chunk unused.
		out = make([]byte, len(b))
	} else {
		out = carve(&d.slab, len(b), min(slabBytes, d.remaining()))
	}
	copy(out, b)
	return out
}

// keepString is keep for a string: chunks are never written again once
// cut, so the string's bytes stay as they are.
func (d *decoder) keepString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	k := d.keep(b)
	return unsafe.String(unsafe.SliceData(k), len(k))
}

// str reads a string value and keeps it.
func (d *decoder) str() (string, error) {
	if d.lend {
		b, lent, err := d.r.ReadStringLent(slabAlone)
		if err != nil || !lent {
			return d.keepString(b), err
		}
		return unsafe.String(unsafe.SliceData(b), len(b)), nil
	}
	b, err := d.r.ReadStringScratch()
	if err != nil {
		return "", err
	}
	return d.keepString(b), nil
}

// raw reads any JSON value and keeps it compacted.
func (d *decoder) raw() ([]byte, error) {
	span, compact, err := d.r.RawSpan()
	if err != nil {
		return nil, err
	}
	if !compact {
		// Hand-written JSON: already validated, compacted into a buffer of
		// its own (the depth was checked by RawSpan).
		return jsonx.Compact(span, 1<<30)
	}
	if d.lend && len(span) >= slabAlone {
		return span[:len(span):len(span)], nil
	}
	return d.keep(span), nil
}

// newParts returns n zero parts for one parts array.
func (d *decoder) newParts(n int) []Part {
	if d.single || n >= slabParts/4 {
		return make([]Part, n)
	}
	d.partsCut += n
	return carve(&d.partSlab, n, d.ahead(d.partsCut, slabParts))
}

// newOrigin returns a zero Origin for one message.
func (d *decoder) newOrigin() *Origin {
	if d.single {
		return &Origin{}
	}
	d.originsCut++
	return &carve(&d.originSlab, 1, d.ahead(d.originsCut, slabSmall))[0]
}

// newUsage returns a zero Usage for one message.
func (d *decoder) newUsage() *Usage {
	if d.single {
		return &Usage{}
	}
	d.usagesCut++
	return &carve(&d.usageSlab, 1, d.ahead(d.usagesCut, slabSmall))[0]
}

// ahead is the size of a new chunk of values of which cut have been cut so
// far: at most limit, and no more than the rest of the document likely
// needs, with a quarter to spare. Bounding it only by the fewest bytes a
// value can take made the last chunk of every document a whole one, mostly
// unused: with 472-byte parts, a tenth of what a 100-message history
// allocated. The rest is judged by the density so far, in bytes and, where
// the lines tell how many messages there are (one a line, as writers put
// them), in messages; the smaller guess counts, so that a long string
// ahead (inline media) does not count as room for many small values. A
// guess too low costs one more, smaller chunk.
func (d *decoder) ahead(cut, limit int) int {
	read := d.r.Offset()
	if read <= 0 {
		return limit
	}
	rest := int(int64(d.remaining()) * int64(cut) / int64(read))
	if d.begun > 0 && d.expected > d.begun {
		rest = min(rest, (d.expected-d.begun)*cut/d.begun)
	}
	return min(limit, rest+rest/4+1)
}
