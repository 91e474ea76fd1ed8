package litert

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestContract runs the rules every codec keeps (codectest.Contract).
func TestContract(t *testing.T) {
	codectest.Contract(t, Conversation(), "testdata/replies/*.jsonl", "testdata/requests/*.json")
}
