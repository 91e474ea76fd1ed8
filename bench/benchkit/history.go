// Package benchkit holds what every benchmark of the convo comparison shares:
// the realistic histories all libraries are measured on, the field-by-field
// fidelity diff, and the persistence harness each peer library plugs into.
//
// It is a module of its own, depending on convo only, so that benchmark
// modules with conflicting dependency graphs (genkit needs an older
// invopop/jsonschema than the Anthropic SDK) can all share it.
package benchkit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/convo-go/convo"
)

// Flavor says which provider the generated history looks as if it came from:
// it decides the shape of reasoning parts and of ids.
type Flavor int

// The flavors.
const (
	// Anthropic reasoning: visible thinking text with a signature;
	// tool call ids "toolu_…".
	Anthropic Flavor = iota
	// OpenAI Responses reasoning: an item id, encrypted content and a
	// summary; tool call ids "call_…".
	OpenAI
)

func (f Flavor) provider() string {
	if f == OpenAI {
		return "openai"
	}
	return "anthropic"
}

// Options shape a generated history.
type Options struct {
	Flavor Flavor
	// NoImages leaves out the inline images (token counting compares text
	// tokenization, which images have no part in).
	NoImages bool
}

// Sizes are the history lengths every persistence benchmark runs.
var Sizes = []int{100, 1000, 10000}

// ImageEvery is how many turns apart the user attaches an image.
const ImageEvery = 25

var (
	imgOnce sync.Once
	imgB64  string
)

// Image returns the base64 of the PNG attached to some user turns: a real
// 160×120 picture (gradient with noise, about 40 KB of base64), generated
// once, deterministically.
func Image() string {
	imgOnce.Do(func() {
		r := rand.New(rand.NewPCG(7, 11))
		m := image.NewNRGBA(image.Rect(0, 0, 160, 120))
		for y := 0; y < 120; y++ {
			for x := 0; x < 160; x++ {
				n := uint8(r.IntN(24))
				m.SetNRGBA(x, y, color.NRGBA{R: uint8(x) + n, G: uint8(y*2) + n, B: 128 + n, A: 255})
			}
		}
		var b bytes.Buffer
		if err := png.Encode(&b, m); err != nil {
			panic(err) // encoding an in-memory image cannot fail
		}
		imgB64 = base64.StdEncoding.EncodeToString(b.Bytes())
	})
	return imgB64
}

var cities = []string{"Oslo", "Lisbon", "Kyoto", "Nairobi", "Quito", "Tromsø", "Zürich", "São Paulo"}

// History returns n messages shaped like a persisted agent session: a
// system prompt, then turns of a user question (every ImageEvery-th with an
// inline PNG), an assistant message with reasoning, a short text and one or
// two tool calls, the tool results (JSON, text, and now and then an error),
// and the assistant's final answer. Every message has an id and a time;
// assistant messages have origin, usage and finish. The same n and options
// always give the same history.
func History(n int, opts Options) convo.History {
	prov := opts.Flavor.provider()
	model := "claude-sonnet-4-5"
	if opts.Flavor == OpenAI {
		model = "gpt-5"
	}
	t0 := time.Date(2026, 3, 14, 9, 26, 53, 589_000_000, time.UTC)
	seq := 0
	stamp := func(m convo.Message) convo.Message {
		m.ID = fmt.Sprintf("msg_%06d", seq)
		m.Time = t0.Add(time.Duration(seq) * 1700 * time.Millisecond)
		seq++
		return m
	}
	h := make(convo.History, 0, n+4)
	h = append(h, stamp(convo.System("You are a travel assistant. Use the tools when they help, cite the forecast you used, and answer in two or three sentences.")))
	for turn := 1; len(h) < n; turn++ {
		city := cities[turn%len(cities)]
		u := convo.User(fmt.Sprintf("Turn %d: I'm flying to %s on Friday. What's the weather going to be like, and should I pack an umbrella? Please explain \"why\" briefly.", turn, city))
		if !opts.NoImages && turn%ImageEvery == 0 {
			u.Parts = append(u.Parts, convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: Image()})
		}
		h = append(h, stamp(u))

		calls := []convo.Part{toolCall(opts.Flavor, turn, 0, "get_forecast",
			fmt.Sprintf(`{"city":%q,"date":"2026-03-%02d","units":"metric","hours":[9,12,15,18]}`, city, 1+turn%28))}
		if turn%3 == 0 {
			calls = append(calls, toolCall(opts.Flavor, turn, 1, "search_notes",
				fmt.Sprintf(`{"query":"packing list %s","limit":3}`, city)))
		}
		a := convo.Message{Role: convo.RoleAssistant, Parts: append([]convo.Part{
			reasoning(opts.Flavor, turn, model, fmt.Sprintf("The user flies to %s on Friday. I need the forecast for that date; rain probability above 40%% means an umbrella. Checking notes too when they asked before.", city)),
			convo.Text("Let me check the forecast."),
		}, calls...)}
		a.Origin = &convo.Origin{Provider: prov, Model: model, ResponseID: fmt.Sprintf("resp_%06d_a", turn)}
		a.Usage = &convo.Usage{Input: int64(1200 + 85*turn), Output: 96, CacheRead: int64(1024 + 85*(turn-1)), CacheWrite: 85, Reasoning: 41, Total: int64(1296 + 85*turn)}
		a.Finish = convo.FinishToolUse
		h = append(h, stamp(a))

		results := []convo.Part{convo.ToolResultParts(calls[0].ID, "get_forecast", convo.JSON(json.RawMessage(fmt.Sprintf(
			`{"city":%q,"rain_probability":0.%d,"temp_c":{"min":%d,"max":%d},"summary":"Cloudy, \"light\" showers after noon"}`,
			city, 10+turn%80, turn%12, 8+turn%15))))}
		if len(calls) > 1 {
			if turn%10 == 0 {
				results = append(results, convo.ToolError(calls[1].ID, "search_notes", "notes service unavailable (HTTP 503); retry later"))
			} else {
				results = append(results, convo.ToolResult(calls[1].ID, "search_notes", "- compact umbrella\n- light rain jacket\n- adapter type C"))
			}
		}
		h = append(h, stamp(convo.ToolResults(results...)))

		f := convo.Assistant(fmt.Sprintf("Friday in %s looks cloudy with light showers after noon (%d%% chance of rain), %d–%d °C. Yes — pack a compact umbrella; the showers are likely when you'd be out.",
			city, 10+turn%80, turn%12, 8+turn%15))
		f.Origin = &convo.Origin{Provider: prov, Model: model, ResponseID: fmt.Sprintf("resp_%06d_b", turn)}
		f.Usage = &convo.Usage{Input: int64(1400 + 85*turn), Output: 64, CacheRead: int64(1200 + 85*turn), Total: int64(1464 + 85*turn)}
		f.Finish = convo.FinishStop
		h = append(h, stamp(f))
	}
	return h[:n]
}

func toolCall(f Flavor, turn, k int, name, args string) convo.Part {
	id := fmt.Sprintf("toolu_01%010d%02d", turn, k)
	if f == OpenAI {
		id = fmt.Sprintf("call_%08dX%02d", turn, k)
	}
	return convo.ToolCall(id, name, json.RawMessage(args))
}

func reasoning(f Flavor, turn int, model, text string) convo.Part {
	if f == OpenAI {
		return convo.Part{Type: convo.TypeReasoning, ID: fmt.Sprintf("rs_%012d", turn),
			Summary:   []string{text},
			Encrypted: "gAAAAABo" + strings.Repeat("Q2lwaGVydGV4dCBvZiBlbmNyeXB0ZWQgcmVhc29uaW5n", 12) + fmt.Sprintf("%08d", turn),
			Provider:  "openai", Model: model}
	}
	return convo.Part{Type: convo.TypeReasoning, Text: text,
		Signature: "EqQBCkYIBxgCKkDx" + strings.Repeat("c2lnbmF0dXJlIGJ5dGVz", 16) + fmt.Sprintf("%08d", turn),
		Provider:  "anthropic", Model: model}
}
