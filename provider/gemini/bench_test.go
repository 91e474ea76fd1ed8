package gemini

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// realistic builds a Gemini-native history of n messages the way an agent
// accumulates one: user questions, thoughts and signed text from the model,
// parallel function calls (the first signed), JSON and error results, and
// now and then an image.
func realistic(n int) convo.History {
	sig := func(i int) string {
		return base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("signature-%06d-%s", i, strings.Repeat("s", 90))))
	}
	native := func(s string) convo.Native {
		return convo.Native{ProviderID: json.RawMessage(`{"thoughtSignature":"` + s + `"}`)}
	}
	img := convo.Image("image/png", []byte(strings.Repeat("\x89PNG", 600)))
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog, then checks the weather. ", 4)
	h := convo.History{convo.System("You are a helpful travel agent. Use the tools when you need facts.")}
	for i := 0; len(h) < n; i++ {
		user := convo.User(fmt.Sprintf("Question %d: %s", i, prose))
		if i%10 == 0 {
			user.Parts = append(user.Parts, img)
		}
		h = append(h, user)
		if i%2 == 0 {
			call1 := convo.ToolCall(fmt.Sprintf("fc_%d_a", i), "get_weather", json.RawMessage(`{"city":"Paris","units":"metric","days":3}`))
			call1.Native = native(sig(i))
			call2 := convo.ToolCall(fmt.Sprintf("fc_%d_b", i), "get_time", json.RawMessage(`{"zone":"Europe/Paris"}`))
			h = append(h,
				convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
					{Type: convo.TypeReasoning, Text: "I should look up the weather and the time. " + prose, Provider: ProviderID},
					call1, call2,
				}},
				convo.ToolResults(
					convo.ToolResultParts(call1.ID, "get_weather", convo.JSON(json.RawMessage(`{"forecast":[{"day":1,"temp_c":18,"sky":"clear"},{"day":2,"temp_c":16,"sky":"rain"},{"day":3,"temp_c":17,"sky":"cloudy"}]}`))),
					convo.ToolError(call2.ID, "get_time", "time service unavailable"),
				),
			)
		}
		answer := convo.Text(fmt.Sprintf("Answer %d: %s", i, prose))
		answer.Native = native(sig(i + 1))
		h = append(h, convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{answer}})
	}
	return h[:n]
}

// benchHistory is the realistic history as Decode gives it back (with the
// Native notes a real Gemini history carries), and its request body.
func benchHistory(b *testing.B) (convo.History, []byte) {
	b.Helper()
	body, _, err := GenerateContent().Encode(realistic(1000), provider.Options{Repair: true})
	if err != nil {
		b.Fatal(err)
	}
	h, _, err := GenerateContent().Decode(body, provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return h, body
}

// BenchmarkEncode encodes a 1,000-message history for Gemini; compare with
// BenchmarkCanonicalMarshal of the same history.
func BenchmarkEncode(b *testing.B) {
	h, _ := benchHistory(b)
	codectest.BenchEncode(b, GenerateContent(), h)
}

func BenchmarkCanonicalMarshal(b *testing.B) {
	h, _ := benchHistory(b)
	codectest.BenchMarshal(b, h)
}

// BenchmarkDecode decodes the Gemini request body of the 1,000-message
// history; compare with BenchmarkCanonicalUnmarshal of the same history.
func BenchmarkDecode(b *testing.B) {
	_, body := benchHistory(b)
	codectest.BenchDecode(b, GenerateContent(), body)
}

func BenchmarkCanonicalUnmarshal(b *testing.B) {
	h, _ := benchHistory(b)
	codectest.BenchUnmarshal(b, h)
}

// BenchmarkEncodeMapping is BenchmarkEncode without provider.Prepare: what
// the Gemini mapping itself costs, next to the shared rules.
func BenchmarkEncodeMapping(b *testing.B) {
	h, _ := benchHistory(b)
	ph, _, err := provider.Prepare(h, target, provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		e := encoder{buf: make([]byte, 0, 1<<20), content: -1}
		if err := e.request(ph); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepare is the shared conversion rules alone on the same history.
func BenchmarkPrepare(b *testing.B) {
	h, _ := benchHistory(b)
	codectest.BenchPrepare(b, h, target)
}

// deltaEvents is a streamed reply of n text deltas the way Gemini sends
// them: a few thought deltas, then text, each chunk a whole response with
// modelVersion and responseId, the last one with finishReason and usage.
func deltaEvents(n int) []provider.Event {
	evs := make([]provider.Event, 0, n)
	for i := 0; i < n-1; i++ {
		part := `{"text":"token "}`
		if i < n/10 {
			part = `{"text":"think ","thought":true}`
		}
		evs = append(evs, provider.Event{Data: []byte(`{"candidates":[{"content":{"role":"model","parts":[` + part +
			`]},"index":0}],"modelVersion":"gemini-3-flash","responseId":"resp-bench"}`)})
	}
	evs = append(evs, provider.Event{Data: []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"","thoughtSignature":"CiQBsig"}]},"finishReason":"STOP","index":0}],` +
		`"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":9000,"totalTokenCount":9010},"modelVersion":"gemini-3-flash","responseId":"resp-bench"}`)})
	return evs
}

// BenchmarkStream accumulates replies of 10,000 and 100,000 deltas; the
// ns/event and allocs/event of the two should match (linear growth).
func BenchmarkStream(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		evs := deltaEvents(n)
		b.Run(fmt.Sprintf("deltas=%d", n), func(b *testing.B) { codectest.BenchAccumulate(b, GenerateContent(), evs) })
	}
}
