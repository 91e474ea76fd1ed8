package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPlaceOrder checks that every round runs every mode once and that
// over as many rounds as modes every mode runs in every place once.
func TestPlaceOrder(t *testing.T) {
	for n := 1; n <= 7; n++ {
		at := make([][]int, n) // at[mode][place]: how often
		for i := range at {
			at[i] = make([]int, n)
		}
		for r := range n {
			o := placeOrder(r, n)
			seen := map[int]bool{}
			for place, i := range o {
				if i < 0 || i >= n || seen[i] {
					t.Fatalf("n=%d round %d: order %v is not a permutation", n, r, o)
				}
				seen[i] = true
				at[i][place]++
			}
		}
		for i := range at {
			for place, k := range at[i] {
				if k != 1 {
					t.Errorf("n=%d: mode %d ran %d times in place %d over %d rounds, want 1", n, i, k, place, n)
				}
			}
		}
	}
}

// TestUnrecordedAsksForNoRecording checks that the unrecorded mode's
// client, and only it, sends Convo-Record: off.
func TestUnrecordedAsksForNoRecording(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got <- r.Header.Get("Convo-Record")
		_, _ = io.WriteString(w, "event: ping\ndata: {}\n\n")
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for name, want := range map[string]string{
		"passthrough" + unrecordedLabel: "off",
		"passthrough":                   "",
		"reverse (control)":             "",
	} {
		tg, done := newTarget(&proc{name: name, addr: addr}, 1)
		tg.exchange(make([]byte, 1024))
		done()
		if h := <-got; h != want {
			t.Errorf("%s: Convo-Record %q, want %q", name, h, want)
		}
		if len(tg.res.total) != 1 {
			t.Errorf("%s: %d exchanges measured, want 1", name, len(tg.res.total))
		}
	}
}
