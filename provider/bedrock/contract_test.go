package bedrock

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestContract runs the rules every codec keeps (codectest.Contract).
func TestContract(t *testing.T) {
	codectest.Contract(t, Converse(), "testdata/replies/*.bin", "testdata/requests/*.json")
	codectest.Contract(t, Converse(), "testdata/replies/*.jsonl", "testdata/requests/*.json")
}
