package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// figureRE matches a performance figure as the README and the report write
// it: a ratio or a range of ratios ("2.9×", "2.1–2.4×") or a speed
// ("330 MB/s").
var figureRE = regexp.MustCompile(`\d+(?:\.\d+)?(?:–\d+(?:\.\d+)?)?×|\d[\d,]*(?:\.\d+)? MB/s`)

// section returns the text of the Markdown section that starts with the
// heading line head, up to the next heading of the same level.
func section(doc, head string) string {
	i := strings.Index(doc, "\n"+head+"\n")
	if i < 0 {
		return ""
	}
	rest := doc[i+len(head)+2:]
	level := head[:strings.IndexByte(head, ' ')+1]
	if j := strings.Index(rest, "\n"+level); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// unfigured lists the figures of claims that docs states nowhere.
func unfigured(claims, docs string) []string {
	var missing []string
	for _, f := range figureRE.FindAllString(claims, -1) {
		if !statesFigure(docs, f) {
			missing = append(missing, f)
		}
	}
	return missing
}

// statesFigure reports whether docs holds figure f as a whole figure: "2.2×"
// is not stated by "12.2×" nor by "1.5–2.2×".
func statesFigure(docs, f string) bool {
	for i := 0; ; {
		j := strings.Index(docs[i:], f)
		if j < 0 {
			return false
		}
		j += i
		if prev, _ := utf8.DecodeLastRuneInString(docs[:j]); !strings.ContainsRune("0123456789.,–", prev) {
			return true
		}
		i = j + 1
	}
}

// TestReadme checks that every figure of the README's performance section
// is stated in docs/benchmarks.md (its "In short" section is written from
// the measurements in the figures' form), so the README cannot claim what
// the last run did not measure.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	bench, err := os.ReadFile("../../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	perf := section(string(readme), "## Performance")
	if len(figureRE.FindAllString(perf, -1)) == 0 {
		t.Fatal("README.md has no figures in a \"## Performance\" section")
	}
	for _, f := range unfigured(perf, string(bench)) {
		t.Errorf("README.md's performance section says %q, which docs/benchmarks.md does not state: rerun bench/run.sh or update the README from its \"In short\" section", f)
	}
}

func TestUnfigured(t *testing.T) {
	docs := "- convo is 2.1–2.4× as fast as eino, 12.9× fantasy; decodes at 330 MB/s\n"
	claims := "decodes at 330 MB/s, 2.1–2.4× eino, 2.9× encoding/json, 2.4×, 12–13.5× fantasy, 1,200 MB/s, 30 MB/s"
	got := strings.Join(unfigured(claims, docs), " ")
	if got != "2.9× 2.4× 12–13.5× 1,200 MB/s 30 MB/s" {
		t.Errorf("unfigured = %q", got)
	}
	s := section("# T\n\n## Performance\n\nfast: 2×\n\n### sub\n\n3×\n\n## Layout\n\n4×\n", "## Performance")
	if !strings.Contains(s, "2×") || !strings.Contains(s, "3×") || strings.Contains(s, "4×") {
		t.Errorf("section = %q", s)
	}
}
