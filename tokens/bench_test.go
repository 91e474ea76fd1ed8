package tokens

import (
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/convo-go/convo"
)

// benchCorpus is the multilingual corpus repeated into a conversation of
// alternating user and assistant messages, one line each.
func benchCorpus(b *testing.B) (convo.History, []string, int64) {
	lines := corpusLines(b)
	var h convo.History
	var texts []string
	var size int64
	for rep := range 4 {
		for i, l := range lines {
			l = strings.Repeat(l, 1+rep)
			texts = append(texts, l)
			size += int64(len(l))
			if i%2 == 0 {
				h = append(h, convo.User(l))
			} else {
				h = append(h, convo.Assistant(l))
			}
		}
	}
	return h, texts, size
}

// BenchmarkCount compares convo's exact count of a conversation with calling
// the tokenizer library directly on the same texts: the difference is
// convo's own overhead (framing, history walk).
func BenchmarkCount(b *testing.B) {
	for _, tt := range []struct {
		model string
		enc   tokenizer.Encoding
	}{{"gpt-4o", tokenizer.O200kBase}, {"gpt-4", tokenizer.Cl100kBase}} {
		h, texts, size := benchCorpus(b)
		b.Run("library/"+string(tt.enc), func(b *testing.B) {
			lib, err := tokenizer.Get(tt.enc)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, s := range texts {
					k, _ := lib.Count(s)
					n += k
				}
				_ = n
			}
		})
		b.Run("convo/"+tt.model, func(b *testing.B) {
			c := mustCounter(b, tt.model, Options{})
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				c.Count(h)
			}
		})
	}
	h, _, size := benchCorpus(b)
	b.Run("convo/claude-sonnet-4(estimate)", func(b *testing.B) {
		c := mustCounter(b, "claude-sonnet-4", Options{})
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			c.Count(h)
		}
	})
	b.Run("convo/gpt-4o(cached)", func(b *testing.B) {
		c := mustCounter(b, "gpt-4o", Options{Cache: true})
		c.Count(h)
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			c.Count(h)
		}
	})
}

func BenchmarkImageSize(b *testing.B) {
	data := b64(jpegHeader(2048, 4096, 60000, 20000))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := imageSizeBase64(data); err != nil {
			b.Fatal(err)
		}
	}
}
