package request

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

// chatHistory is the OpenAI history without its reasoning, which Chat
// Completions cannot carry: a Chat conversation has none.
func chatHistory(n int) convo.History {
	h := benchkit.History(n, benchkit.Options{Flavor: benchkit.OpenAI})
	for i := range h {
		h[i] = h[i].WithoutReasoning()
	}
	return h
}

type api struct {
	name    string
	history func(n int) convo.History
	convo   func(convo.History) ([]byte, error)
	params  func(convo.History) (any, error)
	reuse   func([]byte, convo.History) ([]byte, error)
}

func apis() []api {
	return []api{
		{"anthropic", func(n int) convo.History { return benchkit.History(n, benchkit.Options{}) }, AnthropicConvo,
			func(h convo.History) (any, error) { return AnthropicParams(h) }, AnthropicAppend},
		{"openai-chat", chatHistory, OpenAIChatConvo,
			func(h convo.History) (any, error) { return OpenAIChatParams(h) }, OpenAIChatAppend},
		{"openai-responses", func(n int) convo.History { return benchkit.History(n, benchkit.Options{Flavor: benchkit.OpenAI}) }, OpenAIResponsesConvo,
			func(h convo.History) (any, error) { return OpenAIResponsesParams(h) }, OpenAIResponsesAppend},
	}
}

// TestSameRequest checks that convo and the SDK build the same request,
// compared as JSON values, so the benchmark compares equal work.
func TestSameRequest(t *testing.T) {
	for _, a := range apis() {
		t.Run(a.name, func(t *testing.T) {
			h := a.history(200)
			got, err := a.convo(h)
			if err != nil {
				t.Fatal(err)
			}
			p, err := a.params(h)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			var g, w map[string]any
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatalf("convo: %v", err)
			}
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatalf("sdk: %v", err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("requests differ:\n%s", firstDiff("", g, w))
			}
		})
	}
}

// firstDiff names the first place two JSON values differ.
func firstDiff(path string, a, b any) string {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return path + ": object vs " + short(b)
		}
		for k, v := range x {
			if w, ok := y[k]; !ok {
				return path + "." + k + ": only in convo: " + short(v)
			} else if !reflect.DeepEqual(v, w) {
				return firstDiff(path+"."+k, v, w)
			}
		}
		for k, w := range y {
			if _, ok := x[k]; !ok {
				return path + "." + k + ": only in sdk: " + short(w)
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path + ": arrays of different length or kind: " + short(a) + " vs " + short(b)
		}
		for i := range x {
			if !reflect.DeepEqual(x[i], y[i]) {
				return firstDiff(path+"["+strconv.Itoa(i)+"]", x[i], y[i])
			}
		}
	}
	return path + ": convo " + short(a) + " vs sdk " + short(b)
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 {
		b = append(b[:300], "…"...)
	}
	return string(b)
}

// BenchmarkRequest builds each API's request from the same history: with
// convo ("convo"), with the SDK's params filled from the history and
// marshalled ("sdk"), and marshalling params built beforehand
// ("sdk-marshal"), the per-request cost for a program that keeps its
// conversation in SDK params all along.
func BenchmarkRequest(b *testing.B) {
	for _, a := range apis() {
		b.Run(a.name, func(b *testing.B) {
			for _, n := range benchkit.Sizes {
				h := a.history(n)
				body, err := a.convo(h)
				if err != nil {
					b.Fatal(err)
				}
				p, err := a.params(h)
				if err != nil {
					b.Fatal(err)
				}
				run := func(lib string, f func() error) {
					b.Run(lib+"/n="+strconv.Itoa(n), func(b *testing.B) {
						b.SetBytes(int64(len(body)))
						b.ReportAllocs()
						for b.Loop() {
							if err := f(); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
				run("convo", func() error { _, err := a.convo(h); return err })
				run("sdk", func() error {
					p, err := a.params(h)
					if err != nil {
						return err
					}
					_, err = Marshal(p)
					return err
				})
				run("sdk-marshal", func() error { _, err := Marshal(p); return err })
			}
		})
	}
}

// BenchmarkRequestReuse builds convo's request of BenchmarkRequest into a
// buffer handed back from one request to the next (AppendRequest), as a
// program sending a long conversation again and again can: no new body to
// clear each time. TestReuseSameBytes checks it is the same request.
func BenchmarkRequestReuse(b *testing.B) {
	for _, a := range apis() {
		b.Run(a.name, func(b *testing.B) {
			for _, n := range benchkit.Sizes {
				h := a.history(n)
				var buf []byte
				b.Run("convo/n="+strconv.Itoa(n), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						var err error
						if buf, err = a.reuse(buf[:0], h); err != nil {
							b.Fatal(err)
						}
					}
					b.SetBytes(int64(len(buf)))
				})
			}
		})
	}
}

// TestReuseSameBytes: a request appended into a buffer handed back is the
// one built anew.
func TestReuseSameBytes(t *testing.T) {
	for _, a := range apis() {
		h := a.history(50)
		want, err := a.convo(h)
		if err != nil {
			t.Fatal(err)
		}
		buf := []byte("old request")
		for range 2 {
			if buf, err = a.reuse(buf[:0], h); err != nil || !bytes.Equal(buf, want) {
				t.Fatalf("%s: %v, same bytes %v", a.name, err, bytes.Equal(buf, want))
			}
		}
	}
}
