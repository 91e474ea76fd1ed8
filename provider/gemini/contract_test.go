package gemini

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestContract runs the rules every codec keeps (codectest.Contract).
func TestContract(t *testing.T) {
	codectest.Contract(t, GenerateContent(), "testdata/replies/*.sse", "testdata/roundtrip/*.json")
}
