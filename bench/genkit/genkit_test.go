package genkit

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo/bench/benchkit"
)

var (
	update      = flag.Bool("update", false, "rewrite testdata/fidelity.golden")
	fidelityOut = flag.String("fidelity.out", "", "append the fidelity record (JSON Lines) to this file for the report")
)

// TestFidelity round-trips the benchmark history through genkit's types
// and JSON and compares what came back field by field with the golden list
// of losses.
func TestFidelity(t *testing.T) {
	const n = 1000 // as in the main bench module's fidelity test
	h := benchkit.History(n, benchkit.Options{})
	losses, err := Codec().Fidelity(h)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("genkit:\n")
	for _, l := range losses {
		fmt.Fprintf(&b, "\t%s\n", l)
	}
	path := "testdata/fidelity.golden"
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	} else if want, err := os.ReadFile(path); err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	} else if b.String() != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s--- want\n%s", path, b.String(), want)
	}
	if *fidelityOut != "" {
		if err := benchkit.WriteFidelity(*fidelityOut, []benchkit.FidelityRecord{{Library: "genkit", Messages: n, Losses: losses}}); err != nil {
			t.Fatal(err)
		}
	}
}

func BenchmarkPersist(b *testing.B) {
	benchkit.BenchPersist(b, Codec())
}
