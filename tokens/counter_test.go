package tokens

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/openai"
)

func mustCounter(t testing.TB, model string, opts Options) *Counter {
	t.Helper()
	c, err := NewCounter(model, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func loadHistory(t testing.TB, name string) convo.History {
	t.Helper()
	h, err := convo.Unmarshal(readFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestCookbookReference checks the published reference: OpenAI's "How to
// count tokens with tiktoken" example conversation is 124 prompt tokens for
// gpt-4o and gpt-4o-mini and 129 for gpt-4 and gpt-3.5-turbo, as counted by
// the API.
func TestCookbookReference(t *testing.T) {
	h := loadHistory(t, "testdata/cookbook.json")
	for model, want := range map[string]int{
		"gpt-4o": 124, "gpt-4o-mini": 124, "gpt-4o-2024-08-06": 124, "gpt-4o-mini-2024-07-18": 124,
		"gpt-4": 129, "gpt-4-0613": 129, "gpt-3.5-turbo": 129, "gpt-3.5-turbo-0125": 129,
	} {
		r := mustCounter(t, model, Options{}).Count(h)
		if r.Tokens != want || !r.Exact || r.Basis != "tokenizer" || r.Bound != 0 {
			t.Errorf("%s: %d tokens (exact %v, basis %s), want %d exact", model, r.Tokens, r.Exact, r.Basis, want)
		}
	}
}

// TestPublishedStrings checks single strings against the counts the same
// cookbook publishes for each vocabulary.
func TestPublishedStrings(t *testing.T) {
	tests := []struct {
		model, text string
		want        int
	}{
		{"gpt-4o", "tiktoken is great!", 6},
		{"gpt-4o", "antidisestablishmentarianism", 6},
		{"gpt-4", "antidisestablishmentarianism", 6},
		{"gpt-4o", "2 + 2 = 4", 7},
		{"gpt-4", "2 + 2 = 4", 7},
		{"gpt-4o", "お誕生日おめでとう", 8},
		{"gpt-4", "お誕生日おめでとう", 9},
	}
	for _, tt := range tests {
		if got := mustCounter(t, tt.model, Options{}).Text(tt.text); got != tt.want {
			t.Errorf("%s: Text(%q) = %d, want %d", tt.model, tt.text, got, tt.want)
		}
	}
}

// TestObservedChatCounts checks gpt-3.5-turbo prompt counts reported by the
// API for small requests (the test data of hmarr/openai-chat-tokens, checked
// there against the API), including assistant function calls, which convo
// counts as tool calls: name and arguments plus 3 tokens. The requests are
// read with convo's own OpenAI codec, so the count is of what it would send
// back, arguments spelled as the model produced them.
func TestObservedChatCounts(t *testing.T) {
	tests := []struct {
		name, messages string
		want           int
	}{
		{"hello", `[{"role":"user","content":"hello"}]`, 8},
		{"hello world", `[{"role":"user","content":"hello world"}]`, 9},
		{"system", `[{"role":"system","content":"hello"}]`, 8},
		{"system colon", `[{"role":"system","content":"hello:"}]`, 9},
		{"three", `[{"role":"system","content":"# Important: you're the best robot"},{"role":"user","content":"hello robot"},{"role":"assistant","content":"hello world"}]`, 27},
		{"function call", `[{"role":"assistant","content":"","function_call":{"name":"do_stuff","arguments":"{\"foo\": \"bar\", \"baz\": 1.5}"}}]`, 26},
		{"function call newlines", `[{"role":"assistant","content":"","function_call":{"name":"do_stuff","arguments":"{\"foo\":\"bar\", \"baz\":\n\n 1.5}"}}]`, 25},
		{"tool call", `[{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"do_stuff","arguments":"{\"foo\": \"bar\", \"baz\": 1.5}"}}]}]`, 26},
	}
	c := mustCounter(t, "gpt-3.5-turbo", Options{})
	for _, tt := range tests {
		h, _, err := openai.Chat().Decode([]byte(`{"messages":`+tt.messages+`}`), provider.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := c.Count(h).Tokens; got != tt.want {
			t.Errorf("%s: %d tokens, want %d", tt.name, got, tt.want)
		}
	}
	// Built in Go, arguments are sent compacted.
	h := convo.History{convo.Assistant("", convo.ToolCall("call_1", "do_stuff", json.RawMessage(`{"foo": "bar", "baz": 1.5}`)))}
	if got, want := c.Count(h).Tokens, 3+3+1+3+c.Text("do_stuff")+c.Text(`{"foo":"bar","baz":1.5}`); got != want {
		t.Errorf("compacted arguments: %d tokens, want %d", got, want)
	}
}

func corpusLines(t testing.TB) []string {
	b := readFile(t, "testdata/multilingual.txt")
	var out []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// TestCorpusAgainstLibrary checks every line of the multilingual corpus, in
// every place text can sit in a history, against the tokenizer library
// called directly plus the published framing.
func TestCorpusAgainstLibrary(t *testing.T) {
	for _, tt := range []struct {
		model string
		enc   tokenizer.Encoding
	}{{"gpt-4o", tokenizer.O200kBase}, {"gpt-5", tokenizer.O200kBase}, {"o3", tokenizer.O200kBase}, {"gpt-4", tokenizer.Cl100kBase}} {
		lib, err := tokenizer.Get(tt.enc)
		if err != nil {
			t.Fatal(err)
		}
		n := func(s string) int {
			k, err := lib.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			return k
		}
		c := mustCounter(t, tt.model, Options{})
		var h convo.History
		want := 3 // reply priming
		for i, line := range corpusLines(t) {
			args, _ := json.Marshal(map[string]string{"q": line})
			msgs := []struct {
				m    convo.Message
				want int
			}{
				{convo.User(line), 3 + n("user") + n(line)},
				{convo.Message{Role: convo.RoleUser, Name: "alice", Parts: []convo.Part{convo.Text(line)}}, 3 + n("user") + n(line) + 1 + n("alice")},
				{convo.System(line), 3 + n("system") + n(line)},
				{convo.Summary(line, 3), 3 + n("user") + n(line)},
				{convo.Assistant(line, convo.ToolCall("c"+string(rune('a'+i%26)), "lookup", args)), 3 + n("assistant") + n(line) + 3 + n("lookup") + n(string(args))},
				{convo.ToolResults(convo.ToolResult("c"+string(rune('a'+i%26)), "lookup", line)), 3 + n("tool") + n(line)},
			}
			for j, x := range msgs {
				mc := c.Message(x.m)
				if mc.Tokens != x.want || !mc.Exact {
					t.Fatalf("%s: line %d, message %d (%s): %d tokens (exact %v), want %d: %q", tt.model, i+1, j, x.m.Role, mc.Tokens, mc.Exact, x.want, line)
				}
				h = append(h, x.m)
				want += x.want
			}
		}
		if r := c.Count(h); r.Tokens != want || !r.Exact {
			t.Errorf("%s: history of the corpus: %d tokens (exact %v), want %d", tt.model, r.Tokens, r.Exact, want)
		}
	}
}

func TestCountRules(t *testing.T) {
	c := mustCounter(t, "gpt-4o", Options{})
	text := c.Text("Paris")
	msg := func(m convo.Message) int { return c.Message(m).Tokens }
	tests := []struct {
		name string
		m    convo.Message
		want int
		sent bool
	}{
		{"reasoning is not sent to OpenAI", convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Reasoning("long thoughts"), convo.Text("Paris")}}, msg(convo.Assistant("Paris")), true},
		{"refusal counts as text", convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Refusal("Paris")}}, msg(convo.Assistant("Paris")), true},
		{"json part", convo.Message{Role: convo.RoleUser, Parts: []convo.Part{convo.JSON(json.RawMessage(`"Paris"`))}}, 3 + 1 + c.Text(`"Paris"`), true},
		{"developer role", convo.Message{Role: convo.RoleSystem, Native: convo.Native{"openai": json.RawMessage(`{"role":"developer"}`)}, Parts: []convo.Part{convo.Text("Paris")}}, 3 + c.Text("developer") + text, true},
		{"args_raw", convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{{Type: convo.TypeToolCall, ID: "c", Name: "f", ArgsRaw: "{oops"}}}, 3 + 1 + 3 + c.Text("f") + c.Text("{oops"), true},
		{"two results are two messages", convo.ToolResults(convo.ToolResult("a", "f", "Paris"), convo.ToolError("b", "f", "Paris")), 2 * (3 + 1 + text), true},
		{"empty user message", convo.Message{Role: convo.RoleUser}, 0, false},
		{"unknown part only", convo.Message{Role: convo.RoleUser, Parts: []convo.Part{{Type: "x-custom", Raw: json.RawMessage(`{"type":"x-custom"}`)}}}, 0, false},
		{"empty assistant", convo.Message{Role: convo.RoleAssistant}, 3 + 1, true},
		{"error message", convo.ErrorMessage("Paris"), 0, false},
	}
	for _, tt := range tests {
		mc := c.Message(tt.m)
		if mc.Tokens != tt.want || mc.Sent != tt.sent {
			t.Errorf("%s: %d tokens (sent %v), want %d (sent %v)", tt.name, mc.Tokens, mc.Sent, tt.want, tt.sent)
		}
	}
}

func TestCountSkipsWhatIsNotSent(t *testing.T) {
	c := mustCounter(t, "gpt-4o", Options{})
	h := convo.History{
		convo.System("Be brief."),
		convo.User("Hi"),
		convo.TurnSystem("Answer in French."),
		convo.Assistant("Salut"), // a final answer: the turn-scoped message expired
		convo.ErrorMessage("upstream timeout"),
		convo.User("Again"),
	}
	r := c.Count(h)
	want := c.Count(convo.History{h[0], h[1], h[3], h[5]}).Tokens
	if r.Tokens != want {
		t.Errorf("%d tokens, want %d (without the expired and error messages)", r.Tokens, want)
	}
	for _, i := range []int{2, 4} {
		if mc := r.Messages[i]; mc.Sent || mc.Tokens != 0 || mc.Note == "" {
			t.Errorf("messages[%d]: %+v, want not sent with a note", i, mc)
		}
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestImagesInHistory(t *testing.T) {
	png1024 := convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: b64(pngHeader(1024, 1024))}
	low := png1024
	low.Detail = "low"
	jpeg := convo.Part{Type: convo.TypeImage, MediaType: "image/jpeg", Data: b64(jpegHeader(2048, 4096, 60000, 20000))}
	byURL := convo.ImageURL("image/png", "https://example.com/a.png")
	corrupt := convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: b64([]byte("\x89PNG\r\n\x1a\n garbage that is no header"))}
	notB64 := convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: "%%%%"}
	tests := []struct {
		model     string
		part      convo.Part
		media     int
		exact     bool
		warnsWith string
	}{
		{"gpt-4o", png1024, 765, true, ""},
		{"gpt-4o", low, 85, true, ""},
		{"gpt-4o", jpeg, 1105, true, ""},
		{"gpt-4o-mini", png1024, 25501, true, ""},
		{"gpt-5", png1024, 70 + 4*140, true, ""},
		{"gpt-4.1-mini", png1024, 1659, false, ""},
		{"gpt-4o", byURL, 1445, false, "URL"},
		{"gpt-4o", corrupt, 1445, false, "unreadable"},
		{"gpt-4o", notB64, 1445, false, "base64"},
		{"claude-sonnet-4", png1024, 1399, false, ""},
		{"gemini-2.5-flash", png1024, 1032, false, ""},
		{"gemini-2.0-flash", jpeg, 258 * 3 * 6, false, ""},
		{"gemma3", png1024, 256, false, ""},
	}
	for _, tt := range tests {
		c := mustCounter(t, tt.model, Options{})
		m := convo.User("", tt.part)
		mc := c.Count(convo.History{m}).Messages[0]
		if mc.Media != tt.media || mc.Exact != tt.exact {
			t.Errorf("%s %s: media %d (exact %v), want %d (exact %v)", tt.model, tt.part.Detail, mc.Media, mc.Exact, tt.media, tt.exact)
		}
		if tt.warnsWith == "" && len(mc.Warnings) > 0 {
			t.Errorf("%s: unexpected warnings %v", tt.model, mc.Warnings)
		}
		if tt.warnsWith != "" && (len(mc.Warnings) != 1 || !strings.Contains(mc.Warnings[0].String(), tt.warnsWith) || mc.Warnings[0].Path != "messages[0].parts[0]") {
			t.Errorf("%s: warnings %v, want one at messages[0].parts[0] mentioning %q", tt.model, mc.Warnings, tt.warnsWith)
		}
	}
	// An image inside a tool result counts too.
	c := mustCounter(t, "gpt-4o", Options{})
	res := convo.ToolResults(convo.ToolResultParts("c1", "shot", png1024))
	if mc := c.Message(res); mc.Media != 765 || mc.Tokens != 765+3+1 {
		t.Errorf("image in a tool result: %+v", mc)
	}
}

func TestOtherMedia(t *testing.T) {
	c := mustCounter(t, "gpt-4o", Options{})
	audio := convo.Audio("audio/wav", []byte("RIFF...."))
	doc := convo.Part{Type: convo.TypeFile, MediaType: "text/plain", Name: "notes.txt", Text: "Paris is the capital."}
	r := c.Count(convo.History{convo.User("listen", audio), convo.User("", doc)})
	if r.Exact || len(r.Warnings) != 2 {
		t.Fatalf("exact %v, warnings %v; want an estimate with 2 warnings", r.Exact, r.Warnings)
	}
	if got := r.Messages[0].Media; got != c.Family().Media {
		t.Errorf("audio counted %d, want the family's %d", got, c.Family().Media)
	}
	if got, want := r.Messages[1].Tokens, 3+1+c.Text(doc.Text); got != want {
		t.Errorf("inline text file: %d tokens, want %d", got, want)
	}
}

func TestEstimates(t *testing.T) {
	h := loadHistory(t, "testdata/cookbook.json")
	base := mustCounter(t, "gpt-4o", Options{})
	for _, model := range []string{"claude-sonnet-4-5", "gemini-2.5-pro", "us.anthropic.claude-3-7-sonnet-20250219-v1:0", "llama3.1:8b", "qwen3:8b"} {
		c := mustCounter(t, model, Options{})
		r := c.Count(h)
		f := c.Family()
		if r.Exact || r.Basis != "estimate" || r.Bound != f.Bound || r.Bound <= 0 {
			t.Errorf("%s: exact %v basis %s bound %v; an estimate must say so with its bound", model, r.Exact, r.Basis, r.Bound)
		}
		// The estimate is the base vocabulary's text count scaled by the
		// family factor, plus the family's framing.
		want := f.PerRequest
		for _, m := range h {
			k := 0
			for _, p := range m.Parts {
				k += c.bpe(p.Text)
			}
			if m.Name != "" {
				k += c.bpe(m.Name)
			}
			want += int(math.Ceil(float64(k)*f.Factor)) + f.PerMessage + f.PerName*boolInt(m.Name != "")
		}
		if r.Tokens != want {
			t.Errorf("%s: %d tokens, want %d", model, r.Tokens, want)
		}
		if r.Max() != int(math.Ceil(float64(r.Tokens)*(1+f.Bound))) {
			t.Errorf("%s: Max %d", model, r.Max())
		}
		up := mustCounter(t, model, Options{Upper: true})
		if got := up.MessageTokens(h[0]); got != c.Upper(c.MessageTokens(h[0])) || got <= c.MessageTokens(h[0]) {
			t.Errorf("%s: Upper MessageTokens %d, plain %d", model, got, c.MessageTokens(h[0]))
		}
	}
	if base.Upper(100) != 100 {
		t.Error("an exact counter's upper bound is the count itself")
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestReasoningFamilies(t *testing.T) {
	m := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		convo.Reasoning("Let me think about the weather in Paris for a while."),
		{Type: convo.TypeReasoning, Summary: []string{"Weather", "Paris"}, Provider: "openai"},
		convo.Text("18 °C."),
	}}
	plain := m.WithoutReasoning()
	for model, counted := range map[string]bool{"claude-sonnet-4": true, "gpt-4o": false, "gemini-2.5-pro": false} {
		c := mustCounter(t, model, Options{})
		with, without := c.MessageTokens(m), c.MessageTokens(plain)
		if (with > without) != counted {
			t.Errorf("%s: with reasoning %d, without %d; reasoning counted should be %v", model, with, without, counted)
		}
	}
}

func TestCheap(t *testing.T) {
	c := mustCounter(t, "gpt-4o", Options{})
	h := convo.History{
		convo.System("Be brief."),
		convo.User("What is the capital of France?"),
		{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Text("Paris.")}, Usage: &convo.Usage{Input: 1000, Output: 50}},
		convo.User("And of Italy?"),
		{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Text("Rome.")}, Usage: &convo.Usage{Input: 1100, Output: 20, Reasoning: 5}},
		convo.User("And of Spain?"),
	}
	r := c.Cheap(h)
	want := 1120 + c.MessageTokens(h[5]) + c.RequestTokens()
	if r.Tokens != want || r.Exact || r.Basis != "usage" || r.BaselineAt != 4 || r.Baseline != 1120 {
		t.Fatalf("Cheap = %d tokens (exact %v, basis %s, baseline %d at %d), want %d from messages[4]", r.Tokens, r.Exact, r.Basis, r.Baseline, r.BaselineAt, want)
	}
	if len(r.Messages) != len(h) || r.Messages[2].Sent || !strings.Contains(r.Messages[2].Note, "baseline") || !r.Messages[5].Sent {
		t.Errorf("per-message results: %+v", r.Messages)
	}
	// Without usage, Cheap is Count.
	noUsage := convo.History{h[0], h[1], convo.Assistant("Paris."), h[3]}
	if got, full := c.Cheap(noUsage), c.Count(noUsage); got.Tokens != full.Tokens || got.Basis != "tokenizer" || got.BaselineAt != -1 {
		t.Errorf("Cheap without usage = %+v, want Count's %d", got, full.Tokens)
	}
}

func TestCache(t *testing.T) {
	h := loadHistory(t, "testdata/cookbook.json")
	for _, l := range corpusLines(t) {
		h = append(h, convo.User(l), convo.Assistant(l, convo.ToolCall("c", "f", json.RawMessage(`{"q":1}`))), convo.ToolResults(convo.ToolResult("c", "f", l)))
	}
	plain := mustCounter(t, "gpt-4o", Options{})
	cached := mustCounter(t, "gpt-4o", Options{Cache: true})
	want := plain.Count(h)
	for range 2 { // cold, then from the cache
		if got := cached.Count(h); got.Tokens != want.Tokens {
			t.Fatalf("cached count %d, want %d", got.Tokens, want.Tokens)
		}
	}
	// A changed message is counted afresh, not served from the cache.
	h2 := append(convo.History(nil), h...)
	h2[1] = convo.Message{Role: h[1].Role, Name: "someone_else", Parts: h[1].Parts}
	if got, want := cached.Count(h2).Tokens, plain.Count(h2).Tokens; got != want {
		t.Errorf("after a change: cached %d, want %d", got, want)
	}
	// Concurrent use (run with -race).
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := cached.Count(h); got.Tokens != want.Tokens {
				t.Errorf("concurrent count %d, want %d", got.Tokens, want.Tokens)
			}
		})
	}
	wg.Wait()
}

// FuzzCount checks that counting never panics on a history decoded from
// any input, and that the total is the sum of its parts.
func FuzzCount(f *testing.F) {
	f.Add(readFile(f, "testdata/cookbook.json"))
	f.Add([]byte(`[{"role":"user","parts":[{"type":"image","media_type":"image/png","data":"iVBORw0KGgo="}]},{"role":"tool","parts":[{"type":"tool_result","id":"x","parts":[{"type":"json","value":{"a":1}}]}]}]`))
	f.Add([]byte(`{"role":"assistant","usage":{"input":10,"output":2},"parts":[{"type":"tool_call","id":"a","name":"f","args_raw":"{"}]}`))
	counters := []*Counter{mustCounter(f, "gpt-4o", Options{}), mustCounter(f, "claude-sonnet-4", Options{Cache: true})}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := convo.Unmarshal(b)
		if err != nil {
			return
		}
		for _, c := range counters {
			r := c.Count(h)
			sum := r.Request
			for _, m := range r.Messages {
				if m.Tokens < 0 || m.Media < 0 || m.Media > m.Tokens {
					t.Fatalf("bad message count %+v", m)
				}
				sum += m.Tokens
			}
			if sum != r.Tokens {
				t.Fatalf("total %d, sum of parts %d", r.Tokens, sum)
			}
			c.Cheap(h)
		}
	})
}

func TestCorpusFileIsMultilingual(t *testing.T) {
	// The corpus must keep exercising more than ASCII.
	b := readFile(t, "testdata/multilingual.txt")
	ascii := 0
	for _, c := range b {
		if c < 0x80 {
			ascii++
		}
	}
	if len(b) < 4000 || float64(ascii)/float64(len(b)) > 0.7 {
		t.Errorf("corpus: %d bytes, %d ASCII", len(b), ascii)
	}
	if _, err := os.Stat("testdata/multilingual.txt"); err != nil {
		t.Fatal(err)
	}
}

// TestCountsWhatTheCodecSends checks that a history counts the same as what
// convo's OpenAI Chat codec sends for it, read back: the count is of the
// request, not of convo's record.
func TestCountsWhatTheCodecSends(t *testing.T) {
	h := loadHistory(t, "testdata/cookbook.json")
	for i, l := range corpusLines(t) {
		id := "call_" + strings.Repeat("x", i%5)
		q, _ := json.Marshal(l)
		h = append(h,
			convo.User(l),
			convo.Assistant("", convo.ToolCall(id, "search", json.RawMessage(`{"q": `+string(q)+`, "n": 3}`))),
			convo.ToolResults(convo.ToolResultParts(id, "search", convo.JSON(json.RawMessage(`{"hits": [ 1, 2 ]}`)))),
			convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Reasoning("hmm"), convo.Text(l)}},
		)
	}
	body, _, err := openai.Chat().Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sent, _, err := openai.Chat().Decode(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"gpt-4o", "gpt-4"} {
		c := mustCounter(t, model, Options{})
		if got, want := c.Count(h).Tokens, c.Count(sent).Tokens; got != want {
			t.Errorf("%s: history counts %d, the request the codec sends counts %d", model, got, want)
		}
	}
}

func TestServerToolsOfAnotherProvider(t *testing.T) {
	// An Anthropic web search kept in the history: a request to OpenAI
	// leaves it out (server-tool-dropped), so it must not be counted.
	h := convo.History{
		convo.User("Go release notes?"),
		convo.Assistant("",
			convo.ServerToolCall(convo.ServerWebSearch, "anthropic", "srvtoolu_1", "web_search", json.RawMessage(`{"query":"Go release notes"}`)),
			convo.ServerToolResult(convo.ServerWebSearch, "anthropic", "srvtoolu_1", "web_search",
				convo.JSON(json.RawMessage(`[{"type":"web_search_result","title":"Go 1.26 Release Notes","url":"https://go.dev/doc/go1.26"}]`))),
			convo.Text("Go 1.26 is out."),
		),
	}
	body, _, err := openai.Chat().Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sent, _, err := openai.Chat().Decode(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := mustCounter(t, "gpt-4o", Options{})
	if got, want := c.Count(h).Tokens, c.Count(sent).Tokens; got != want {
		t.Errorf("history counts %d, the request the codec sends counts %d", got, want)
	}
	own := mustCounter(t, "claude-sonnet-4-5", Options{})
	if with, without := own.Count(h).Tokens, own.Count(sent).Tokens; with <= without {
		t.Errorf("for Anthropic, its own web search counts %d tokens with it and %d without: want more with it", with, without)
	}
}
