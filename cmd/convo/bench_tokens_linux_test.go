package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"

	"github.com/convo-go/convo"
)

// threadCPU is the CPU time of the calling OS thread: a busy shared
// machine stays out of the figures.
func threadCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTokensThroughput compares convo tokens with its two parts on
// the same JSON Lines history: validate's reading (decoding every message)
// and the tokenizer alone on every text. It reports tokens' CPU time over
// the sum of the two as over-parts-x, the figure the "within 2×" goal is
// about, each timed on one locked thread. The history has -tokens.n
// messages: 100,000, or 2,000 with -short.
func BenchmarkTokensThroughput(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := 100000
	if testing.Short() {
		n = 2000
	}
	path := writeHistoryFile(b, n)
	doc, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	lib, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	read := func() []string {
		d := convo.NewDecoder(bytes.NewReader(doc))
		var texts []string
		for {
			m, err := d.Next()
			if errors.Is(err, io.EOF) {
				return texts
			}
			if err != nil {
				b.Fatal(err)
			}
			texts = append(texts, m.Text())
		}
	}
	texts := read()
	var tRead, tLib, tTokens time.Duration
	e := &env{stdin: bytes.NewReader(nil), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		t0 := threadCPU(b)
		read()
		t1 := threadCPU(b)
		for _, s := range texts {
			lib.Count(s)
		}
		t2 := threadCPU(b)
		if code := run(e, []string{"tokens", "--model", "gpt-4o", path}); code != 0 {
			b.Fatalf("exit %d", code)
		}
		t3 := threadCPU(b)
		tRead, tLib, tTokens = tRead+t1-t0, tLib+t2-t1, tTokens+t3-t2
	}
	b.ReportMetric(float64(tTokens)/float64(tRead+tLib), "over-parts-x")
	b.ReportMetric(tRead.Seconds()/float64(b.N), "read-s/op")
	b.ReportMetric(tLib.Seconds()/float64(b.N), "tokenizer-s/op")
	b.ReportMetric(tTokens.Seconds()/float64(b.N), "tokens-s/op")
}

// writeHistoryFile writes n user/assistant messages as JSON Lines, as
// writeBigHistory does for a test.
func writeHistoryFile(b *testing.B, n int) string {
	dir := b.TempDir()
	f, err := os.Create(dir + "/h.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		buf.WriteString(`{"role":"` + role + `","parts":[{"type":"text","text":"message ` + strconv.Itoa(i) + `: what is the weather like in Paris today? mild"}]}` + "\n")
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		b.Fatal(err)
	}
	return f.Name()
}
