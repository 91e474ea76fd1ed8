package benchkit

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/convo-go/convo"
)

// Codec is one library's way to persist a history: its own message type T,
// filled from a convo history as faithfully as T allows, and written and read
// with the library's own JSON support. From and To are the adapter a program
// moving its history into that library would write; they are not timed.
type Codec[T any] struct {
	Name   string
	From   func(convo.History) (T, error)
	To     func(T) (convo.History, error)
	Encode func(T) ([]byte, error)
	Decode func([]byte) (T, error)
}

// Convo is convo's own codec: the history is already the stored type, and
// the canonical format is its JSON.
func Convo() Codec[convo.History] {
	return Codec[convo.History]{
		Name:   "convo",
		From:   func(h convo.History) (convo.History, error) { return h, nil },
		To:     func(h convo.History) (convo.History, error) { return h, nil },
		Encode: convo.Marshal,
		Decode: convo.Unmarshal,
	}
}

// JSON returns Encode and Decode functions that use encoding/json, for
// libraries whose JSON support is their types' struct tags and methods.
func JSON[T any]() (func(T) ([]byte, error), func([]byte) (T, error)) {
	return func(v T) ([]byte, error) { return json.Marshal(v) },
		func(b []byte) (T, error) {
			var v T
			err := json.Unmarshal(b, &v)
			return v, err
		}
}

// RoundTrip converts h into the library's type, encodes, decodes, and
// converts back. It returns the history that came back and the encoded
// document.
func (c Codec[T]) RoundTrip(h convo.History) (convo.History, []byte, error) {
	v, err := c.From(h)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: from convo: %w", c.Name, err)
	}
	doc, err := c.Encode(v)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: encode: %w", c.Name, err)
	}
	back, err := c.Decode(doc)
	if err != nil {
		return nil, doc, fmt.Errorf("%s: decode: %w", c.Name, err)
	}
	got, err := c.To(back)
	if err != nil {
		return nil, doc, fmt.Errorf("%s: to convo: %w", c.Name, err)
	}
	return got, doc, nil
}

// Fidelity round-trips h and returns what did not survive.
func (c Codec[T]) Fidelity(h convo.History) ([]Loss, error) {
	got, _, err := c.RoundTrip(h)
	if err != nil {
		return nil, err
	}
	return Diff(h, got), nil
}

// BenchPersist runs the persistence benchmarks of c on every size in
// Sizes: roundtrip (encode and decode), encode and decode, named
// "<lib>/n=<size>/<op>". Bytes per second are of the library's own
// document; the document's size is reported as the docB metric.
func BenchPersist[T any](b *testing.B, c Codec[T]) {
	b.Run(c.Name, func(b *testing.B) {
		for _, n := range Sizes {
			h := History(n, Options{})
			v, err := c.From(h)
			if err != nil {
				b.Fatal(err)
			}
			doc, err := c.Encode(v)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Decode(doc); err != nil {
				b.Fatal(err)
			}
			b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
				run := func(name string, f func() error) {
					b.Run(name, func(b *testing.B) {
						b.SetBytes(int64(len(doc)))
						b.ReportAllocs()
						for b.Loop() {
							if err := f(); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(float64(len(doc)), "docB")
					})
				}
				run("roundtrip", func() error {
					d, err := c.Encode(v)
					if err != nil {
						return err
					}
					_, err = c.Decode(d)
					return err
				})
				run("encode", func() error { _, err := c.Encode(v); return err })
				run("decode", func() error { _, err := c.Decode(doc); return err })
			})
		}
	})
}

// FidelityRecord is what a module's fidelity test writes for the report:
// the losses of one library on the benchmark history.
type FidelityRecord struct {
	Library  string `json:"library"`
	Messages int    `json:"messages"`
	Losses   []Loss `json:"losses"`
}

// WriteFidelity appends records as JSON Lines to path (the report reads
// every module's records from one file).
func WriteFidelity(path string, recs []FidelityRecord) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}
