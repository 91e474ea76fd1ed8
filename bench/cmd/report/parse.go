package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Result is every sample of one benchmark, by unit ("ns/op", "B/op",
// "allocs/op", "MB/s", custom metrics).
type Result struct {
	Name    string
	Samples map[string][]float64
}

// Set is the benchmarks of one or more runs, and the header lines go test
// printed (cpu, goos, goarch).
type Set struct {
	byName map[string]*Result
	Header map[string]string
}

// procSuffix is the -GOMAXPROCS suffix go test puts on benchmark names.
var procSuffix = regexp.MustCompile(`-\d+$`)

// Parse reads go test -bench output, in the format of the Go benchmark
// data format (golang.org/design/14313-benchmark-format), adding to s.
func (s *Set) Parse(r io.Reader) error {
	if s.byName == nil {
		s.byName = map[string]*Result{}
		s.Header = map[string]string{}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if k, v, ok := strings.Cut(text, ": "); ok && !strings.HasPrefix(text, "Benchmark") && !strings.Contains(k, " ") {
			s.Header[k] = strings.TrimSpace(v)
			continue
		}
		if !strings.HasPrefix(text, "Benchmark") {
			continue
		}
		f := strings.Fields(text)
		if len(f) < 4 || len(f)%2 != 0 {
			continue // a benchmark's name printed before its own log lines
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			return fmt.Errorf("line %d: iterations %q: %w", line, f[1], err)
		}
		name := procSuffix.ReplaceAllString(f[0], "")
		res := s.byName[name]
		if res == nil {
			res = &Result{Name: name, Samples: map[string][]float64{}}
			s.byName[name] = res
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return fmt.Errorf("line %d: value %q: %w", line, f[i], err)
			}
			res.Samples[f[i+1]] = append(res.Samples[f[i+1]], v)
		}
	}
	return sc.Err()
}

// Get returns the benchmark called name, or nil.
func (s *Set) Get(name string) *Result { return s.byName[name] }

// Names returns every benchmark name, sorted.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Stat is the median of a benchmark's samples of one unit and their
// spread: half the interquartile range (with five runs, of the second to
// the fourth), relative to the median. On a shared machine one run can be
// several times slower than the rest; the quartiles leave it out, as the
// median does.
type Stat struct {
	Median, Spread float64
	N              int
}

// samples returns the samples of unit, none for a nil Result.
func (r *Result) samples(unit string) []float64 {
	if r == nil {
		return nil
	}
	return r.Samples[unit]
}

// Stat summarises the samples of unit; ok is false when there are none.
func (r *Result) Stat(unit string) (Stat, bool) {
	if r == nil {
		return Stat{}, false
	}
	xs := append([]float64(nil), r.Samples[unit]...)
	if len(xs) == 0 {
		return Stat{}, false
	}
	sort.Float64s(xs)
	m := xs[len(xs)/2]
	if len(xs)%2 == 0 {
		m = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	st := Stat{Median: m, N: len(xs)}
	if m != 0 {
		k := (len(xs) - 1) / 4
		st.Spread = (xs[len(xs)-1-k] - xs[k]) / 2 / m
	}
	return st, true
}
