package litert

import (
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

func BenchmarkEncode(b *testing.B) {
	h := codectest.AgentHistory(1000, ProviderID)
	b.Run("litert", func(b *testing.B) { codectest.BenchEncode(b, Conversation(), h) })
	// The mapping alone, without the shared rules of provider.Prepare.
	b.Run("litert-mapping", func(b *testing.B) {
		ph, from, _, err := provider.PrepareIndexed(h, target, provider.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodePrepared(nil, ph, from); err != nil {
				b.Fatal(err)
			}
			warnings(h, provider.Options{})
		}
	})
	b.Run("canonical", func(b *testing.B) { codectest.BenchMarshal(b, h) })
}

func BenchmarkDecode(b *testing.B) {
	h := codectest.AgentHistory(1000, ProviderID)
	wire, _, err := Conversation().Encode(h, provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("litert", func(b *testing.B) { codectest.BenchDecode(b, Conversation(), wire) })
	b.Run("canonical", func(b *testing.B) { codectest.BenchUnmarshal(b, h) })
}

// BenchmarkPrepare measures the shared conversion rules alone, the part of
// Encode this package does not control.
func BenchmarkPrepare(b *testing.B) {
	h := codectest.AgentHistory(1000, ProviderID)
	codectest.BenchPrepare(b, h, target)
}
