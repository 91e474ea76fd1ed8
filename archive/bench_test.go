package archive

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkReadChatGPT reads a generated ChatGPT export (conversations of
// 40 messages with a fork each) from memory: the reader's own cost,
// without a store.
func BenchmarkReadChatGPT(b *testing.B) {
	var buf bytes.Buffer
	if _, err := writeChatGPTExport(&buf, 8<<20); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(data), ChatGPT, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWrite writes the same conversations in each writable format.
func BenchmarkWrite(b *testing.B) {
	var buf bytes.Buffer
	if _, err := writeChatGPTExport(&buf, 2<<20); err != nil {
		b.Fatal(err)
	}
	r, err := NewReader(&buf, ChatGPT, Options{})
	if err != nil {
		b.Fatal(err)
	}
	cs, err := ReadAll(r)
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range Writable() {
		b.Run(string(f), func(b *testing.B) {
			var out bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				if _, err := Write(&out, f, cs, WriteOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(out.Len()))
		})
	}
}
