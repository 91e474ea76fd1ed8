package replay

import "strings"

// maxCells bounds the word-by-word table of Similarity and Diff: two texts
// of 2,000 words each. Longer ones are compared as bags of words.
const maxCells = 4_000_000

// Similarity measures how alike two texts are, from 0 (no word in common)
// to 1 (the same words in the same order). Words are runs of characters
// between white space, compared exactly (case and punctuation count). The
// measure is 2·L / (A + B), where A and B are the texts' word counts and L
// the length of their longest common subsequence of words — the ratio of
// Python's difflib over words. Two empty texts are alike (1). Past
// 4,000,000 word pairs (two texts of 2,000 words), L is the number of
// words the two have in common regardless of order (the Dice coefficient
// of their bags of words), which is never less.
func Similarity(a, b string) float64 {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa)+len(wb) == 0 {
		return 1
	}
	var l int
	if len(wa)*len(wb) > maxCells {
		l = common(wa, wb)
	} else {
		l = lcs(wa, wb)
	}
	return 2 * float64(l) / float64(len(wa)+len(wb))
}

// common counts the words a and b have in common, as bags.
func common(a, b []string) int {
	bag := map[string]int{}
	for _, w := range a {
		bag[w]++
	}
	n := 0
	for _, w := range b {
		if bag[w] > 0 {
			bag[w]--
			n++
		}
	}
	return n
}

// lcs is the length of the longest common subsequence of a and b.
func lcs(a, b []string) int {
	prev, cur := make([]int32, len(b)+1), make([]int32, len(b)+1)
	for i := range a {
		for j := range b {
			switch {
			case a[i] == b[j]:
				cur[j+1] = prev[j] + 1
			case prev[j+1] >= cur[j]:
				cur[j+1] = prev[j+1]
			default:
				cur[j+1] = cur[j]
			}
		}
		prev, cur = cur, prev
	}
	return int(prev[len(b)])
}

// Op is what a Span of a Diff is: the same in both texts, only in the
// first (deleted) or only in the second (inserted).
type Op byte

// The ops of a diff.
const (
	Same   Op = '='
	Delete Op = '-'
	Insert Op = '+'
)

// Span is a run of words of a Diff, joined by single spaces.
type Span struct {
	Op   Op
	Text string
}

// Diff returns the word-level difference between a and b: the spans of
// words both have (a longest common subsequence, as Similarity finds),
// and those only one has, in order. Texts too long for the table
// (Similarity) are one deletion and one insertion.
func Diff(a, b string) []Span {
	wa, wb := strings.Fields(a), strings.Fields(b)
	if len(wa)*len(wb) > maxCells || len(wa) == 0 || len(wb) == 0 {
		var out []Span
		if len(wa) > 0 {
			out = append(out, Span{Delete, strings.Join(wa, " ")})
		}
		if len(wb) > 0 {
			out = append(out, Span{Insert, strings.Join(wb, " ")})
		}
		return out
	}
	// t[i][j] is the LCS of wa[i:] and wb[j:], so the walk goes forwards.
	n := len(wb) + 1
	t := make([]int32, (len(wa)+1)*n)
	for i := len(wa) - 1; i >= 0; i-- {
		for j := len(wb) - 1; j >= 0; j-- {
			switch {
			case wa[i] == wb[j]:
				t[i*n+j] = t[(i+1)*n+j+1] + 1
			default:
				t[i*n+j] = max(t[(i+1)*n+j], t[i*n+j+1])
			}
		}
	}
	var out []Span
	add := func(op Op, w string) {
		if k := len(out) - 1; k >= 0 && out[k].Op == op {
			out[k].Text += " " + w
			return
		}
		out = append(out, Span{op, w})
	}
	i, j := 0, 0
	for i < len(wa) && j < len(wb) {
		switch {
		case wa[i] == wb[j]:
			add(Same, wa[i])
			i, j = i+1, j+1
		case t[(i+1)*n+j] >= t[i*n+j+1]:
			add(Delete, wa[i])
			i++
		default:
			add(Insert, wb[j])
			j++
		}
	}
	for ; i < len(wa); i++ {
		add(Delete, wa[i])
	}
	for ; j < len(wb); j++ {
		add(Insert, wb[j])
	}
	return out
}
