package openai

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestContract runs the rules every codec keeps (codectest.Contract).
func TestContract(t *testing.T) {
	codectest.Contract(t, Chat(), "testdata/replies/chat/*.sse", "testdata/chat/*.json")
	codectest.Contract(t, Responses(), "testdata/replies/responses/*.sse", "testdata/responses/*.json")
}
