package persist

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

var (
	update      = flag.Bool("update", false, "rewrite testdata/fidelity.golden")
	fidelityOut = flag.String("fidelity.out", "", "append the fidelity records (JSON Lines) to this file for the report")
)

// fidelityN is the history the fidelity table is computed on: long enough
// to hold every kind of message the generator makes, images included.
const fidelityN = 1000

type fidelityFunc func(convo.History) ([]benchkit.Loss, error)

func libraries() []struct {
	name     string
	fidelity fidelityFunc
} {
	return []struct {
		name     string
		fidelity fidelityFunc
	}{
		{"convo", benchkit.Convo().Fidelity},
		{"eino", Eino().Fidelity},
		{"langchaingo", LangChainGo().Fidelity},
		{"fantasy", Fantasy().Fidelity},
	}
}

// TestFidelity round-trips the benchmark history through every library
// and compares what came back field by field with the golden list of
// losses: convo must lose nothing, and a peer release that changes what it
// keeps shows up here.
func TestFidelity(t *testing.T) {
	h := benchkit.History(fidelityN, benchkit.Options{})
	var b strings.Builder
	var recs []benchkit.FidelityRecord
	for _, lib := range libraries() {
		losses, err := lib.fidelity(h)
		if err != nil {
			t.Fatalf("%s: %v", lib.name, err)
		}
		if lib.name == "convo" && len(losses) > 0 {
			t.Errorf("convo lost fields in its own round trip: %v", losses)
		}
		recs = append(recs, benchkit.FidelityRecord{Library: lib.name, Messages: fidelityN, Losses: losses})
		fmt.Fprintf(&b, "%s:", lib.name)
		if len(losses) == 0 {
			b.WriteString(" nothing lost")
		}
		b.WriteString("\n")
		for _, l := range losses {
			fmt.Fprintf(&b, "\t%s\n", l)
		}
	}
	checkGolden(t, "testdata/fidelity.golden", b.String())
	if *fidelityOut != "" {
		if err := benchkit.WriteFidelity(*fidelityOut, recs); err != nil {
			t.Fatal(err)
		}
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

func BenchmarkPersist(b *testing.B) {
	benchkit.BenchPersist(b, benchkit.Convo())
	benchkit.BenchPersist(b, Eino())
	benchkit.BenchPersist(b, LangChainGo())
	benchkit.BenchPersist(b, Fantasy())
}
