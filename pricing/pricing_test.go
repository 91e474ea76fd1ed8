package pricing_test

import (
	"math"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/pricing"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/bedrock"
	"github.com/convo-go/convo/provider/gemini"
	"github.com/convo-go/convo/provider/openai"
)

func rate(s string) *pricing.Rate {
	r, err := convo.ParseMoney(s)
	if err != nil {
		panic(err)
	}
	return &r
}

// sonnet is USD 3 in, 15 out, 0.30 cache read, 3.75 cache write per million.
var sonnet = pricing.Price{Input: *rate("3"), Output: *rate("15"), CacheRead: rate("0.30"), CacheWrite: rate("3.75")}

func fixed(p pricing.Price) pricing.Lookup {
	return func(string) (pricing.Price, bool) { return p, true }
}

// TestProviderConventions decodes each provider's reply, whose usage
// counts cached and reasoning tokens its own way, and prices it: the same
// tokens cost the same whoever reported them.
func TestProviderConventions(t *testing.T) {
	tests := []struct {
		name   string
		format provider.Format
		body   string
		usage  convo.Usage
		want   string // USD
	}{{
		// prompt_tokens includes the cached ones; completion_tokens the reasoning.
		"openai chat", openai.Chat(),
		`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],
		  "usage":{"prompt_tokens":1000,"completion_tokens":200,"total_tokens":1200,"prompt_tokens_details":{"cached_tokens":800},"completion_tokens_details":{"reasoning_tokens":50}}}`,
		convo.Usage{Input: 1000, Output: 200, CacheRead: 800, Reasoning: 50, Total: 1200},
		"0.00384", // 200×3 + 800×0.3 + 200×15, per million
	}, {
		"openai responses", openai.Responses(),
		`{"id":"r","object":"response","created_at":1,"status":"completed","model":"m","output":[{"type":"message","id":"m1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"hi","annotations":[]}]}],
		  "usage":{"input_tokens":1000,"input_tokens_details":{"cached_tokens":800},"output_tokens":200,"output_tokens_details":{"reasoning_tokens":50},"total_tokens":1200}}`,
		convo.Usage{Input: 1000, Output: 200, CacheRead: 800, Reasoning: 50, Total: 1200},
		"0.00384",
	}, {
		// input_tokens excludes cache reads and writes.
		"anthropic", anthropic.Messages(),
		`{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn",
		  "usage":{"input_tokens":200,"cache_read_input_tokens":800,"cache_creation_input_tokens":100,"output_tokens":200}}`,
		convo.Usage{Input: 1100, Output: 200, CacheRead: 800, CacheWrite: 100},
		"0.004215", // 200×3 + 800×0.3 + 100×3.75 + 200×15
	}, {
		// promptTokenCount includes the cached content; thoughts are apart from candidates.
		"gemini", gemini.GenerateContent(),
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"hi"}]},"finishReason":"STOP"}],"modelVersion":"m",
		  "usageMetadata":{"promptTokenCount":1000,"cachedContentTokenCount":800,"candidatesTokenCount":150,"thoughtsTokenCount":50,"totalTokenCount":1200}}`,
		convo.Usage{Input: 1000, Output: 200, CacheRead: 800, Reasoning: 50, Total: 1200},
		"0.00384",
	}, {
		// inputTokens excludes cache reads and writes.
		"bedrock", bedrock.Converse(),
		`{"output":{"message":{"role":"assistant","content":[{"text":"hi"}]}},"stopReason":"end_turn",
		  "usage":{"inputTokens":200,"cacheReadInputTokens":800,"cacheWriteInputTokens":100,"outputTokens":200,"totalTokens":1300}}`,
		convo.Usage{Input: 1100, Output: 200, CacheRead: 800, CacheWrite: 100, Total: 1300},
		"0.004215",
	}}
	p := pricing.New(fixed(sonnet))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, err := tt.format.DecodeReply([]byte(tt.body), provider.Options{Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			if m.Usage == nil || *m.Usage != tt.usage {
				t.Fatalf("usage %+v, want %+v", m.Usage, tt.usage)
			}
			if m.Origin == nil {
				m.Origin = &convo.Origin{Model: "m"}
			}
			c, ok := p.Cost(m)
			if !ok || c.USD.String() != tt.want {
				t.Errorf("cost %s (%v), want %s", c.USD, ok, tt.want)
			}
		})
	}
}

func TestPriceOf(t *testing.T) {
	withReasoning := sonnet
	withReasoning.Reasoning = rate("60")
	noCache := pricing.Price{Input: *rate("3"), Output: *rate("15")}
	tests := []struct {
		name  string
		price pricing.Price
		usage convo.Usage
		want  string
		err   bool
	}{
		{"plain", sonnet, convo.Usage{Input: 1_000_000, Output: 1_000_000}, "18", false},
		{"nothing used", sonnet, convo.Usage{}, "0", false},
		{"reasoning priced apart", withReasoning, convo.Usage{Input: 0, Output: 100, Reasoning: 40}, "0.0033", false}, // 60×15 + 40×60
		{"cache prices absent: input price", noCache, convo.Usage{Input: 1000, CacheRead: 800, CacheWrite: 100}, "0.003", false},
		{"cached counted apart (hand-built)", sonnet, convo.Usage{Input: 200, CacheRead: 800, CacheWrite: 100, Output: 200}, "0.004215", false},
		{"reasoning counted apart", sonnet, convo.Usage{Output: 10, Reasoning: 20}, "0.00045", false},
		{"half a nano-dollar rounds up", pricing.Price{Input: 500_000}, convo.Usage{Input: 1}, "0.000000001", false},
		{"under half rounds down", pricing.Price{Input: 499_999}, convo.Usage{Input: 1}, "0", false},
		{"sub-nano rates add up exactly", pricing.Price{Input: 1}, convo.Usage{Input: 3_000_000}, "0.000000003", false},
		{"free model", pricing.Price{}, convo.Usage{Input: 5, Output: 5}, "0", false},
		{"overflow", pricing.Price{Input: math.MaxInt64}, convo.Usage{Input: math.MaxInt64}, "", true},
	}
	for _, tt := range tests {
		got, err := tt.price.Of(tt.usage)
		if tt.err {
			if err == nil {
				t.Errorf("%s: %s, want an error", tt.name, got)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("%s: %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}

func TestCostUnknown(t *testing.T) {
	known := func(model string) (pricing.Price, bool) { return sonnet, model == "known" }
	p := pricing.New(nil, known)
	used := &convo.Usage{Input: 10, Output: 10}
	tests := []struct {
		name string
		m    convo.Message
		ok   bool
	}{
		{"priced", convo.Message{Role: convo.RoleAssistant, Origin: &convo.Origin{Model: "known"}, Usage: used}, true},
		{"unknown model", convo.Message{Role: convo.RoleAssistant, Origin: &convo.Origin{Model: "other"}, Usage: used}, false},
		{"no model", convo.Message{Role: convo.RoleAssistant, Usage: used}, false},
		{"no usage", convo.Message{Role: convo.RoleAssistant, Origin: &convo.Origin{Model: "known"}}, false},
		{"not assistant", convo.Message{Role: convo.RoleUser, Origin: &convo.Origin{Model: "known"}, Usage: used}, false},
	}
	for _, tt := range tests {
		if _, ok := p.Cost(tt.m); ok != tt.ok {
			t.Errorf("%s: ok %v, want %v", tt.name, ok, tt.ok)
		}
	}
	var none *pricing.Pricer
	if _, ok := none.Cost(tests[0].m); ok {
		t.Error("a nil Pricer priced a message")
	}
}

func TestFill(t *testing.T) {
	p := pricing.New(fixed(sonnet))
	kept := &convo.Cost{USD: 7}
	h := convo.History{
		convo.User("hi"),
		{Role: convo.RoleAssistant, Origin: &convo.Origin{Model: "m"}, Usage: &convo.Usage{Input: 1000}},
		{Role: convo.RoleAssistant, Origin: &convo.Origin{Model: "m"}, Usage: &convo.Usage{Input: 1000}, Cost: kept},
	}
	out := p.Fill(h)
	if h[1].Cost != nil {
		t.Fatal("Fill modified its input")
	}
	if out[1].Cost == nil || out[1].Cost.USD.String() != "0.003" {
		t.Errorf("filled cost %+v", out[1].Cost)
	}
	if out[2].Cost != kept {
		t.Errorf("a recorded cost was repriced: %+v", out[2].Cost)
	}
	if out[0].Cost != nil {
		t.Error("a user message was priced")
	}
}
