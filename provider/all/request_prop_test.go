package all

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

const propSchema = `{"type":"object","properties":{"x":{"type":"string"}},"required":["x"],"additionalProperties":false}`

func genRequest(t *rapid.T) *provider.Request {
	opt := func(label string) bool { return rapid.Bool().Draw(t, label) }
	float := func(label string) *float64 {
		if !opt(label + "?") {
			return nil
		}
		return provider.Float(float64(rapid.IntRange(0, 200).Draw(t, label)) / 100)
	}
	r := &provider.Request{History: convo.History{convo.System("s"), convo.User("u")}}
	if opt("model?") {
		r.Model = rapid.StringMatching(`[a-z][a-z0-9.-]{0,12}`).Draw(t, "model")
	}
	names := rapid.SliceOfNDistinct(rapid.StringMatching(`[a-z]{1,8}`), 0, 3, rapid.ID[string]).Draw(t, "tools")
	for _, n := range names {
		r.Tools = append(r.Tools, provider.Tool{Name: n, Description: rapid.StringMatching(`[a-z ]{0,10}`).Draw(t, "desc"),
			Parameters: json.RawMessage(propSchema), Strict: opt("strict")})
	}
	modes := []provider.ToolChoiceMode{"", provider.ToolChoiceAuto, provider.ToolChoiceNone, provider.ToolChoiceRequired}
	if len(names) > 0 {
		modes = append(modes, provider.ToolChoiceTool)
	}
	r.ToolChoice.Mode = rapid.SampledFrom(modes).Draw(t, "choice")
	if r.ToolChoice.Mode == provider.ToolChoiceTool {
		r.ToolChoice.Name = names[0]
	}
	if opt("parallel?") {
		r.ParallelToolCalls = provider.Bool(opt("parallel"))
	}
	switch rapid.IntRange(0, 3).Draw(t, "output") {
	case 1:
		r.Output.Type = provider.OutputText
	case 2:
		r.Output.Type = provider.OutputJSON
	case 3:
		r.Output = provider.Output{Type: provider.OutputJSONSchema, Name: "answer", Schema: json.RawMessage(propSchema), Strict: true}
	}
	if opt("max?") {
		r.MaxTokens = int64(rapid.IntRange(1, 100000).Draw(t, "max"))
	}
	r.Temperature, r.TopP = float("temperature"), float("top_p")
	r.PresencePenalty, r.FrequencyPenalty = float("presence"), float("frequency")
	if opt("top_k?") {
		r.TopK = provider.Int(int64(rapid.IntRange(1, 100).Draw(t, "top_k")))
	}
	if opt("seed?") {
		r.Seed = provider.Int(int64(rapid.IntRange(0, 1<<30).Draw(t, "seed")))
	}
	if opt("candidates?") {
		r.Candidates = int64(rapid.IntRange(1, 8).Draw(t, "candidates"))
	}
	r.Stop = rapid.SliceOfN(rapid.StringMatching(`[A-Z]{1,4}`), 0, 2).Draw(t, "stop")
	if len(r.Stop) == 0 {
		r.Stop = nil
	}
	if opt("reasoning?") {
		r.Reasoning = &provider.Reasoning{
			Effort: rapid.SampledFrom([]provider.Effort{"", provider.EffortNone, provider.EffortLow, provider.EffortMedium, provider.EffortHigh}).Draw(t, "effort"),
		}
		if r.Reasoning.Effort == "" {
			r.Reasoning.Budget = int64(rapid.IntRange(1024, 30000).Draw(t, "budget"))
		}
	}
	if opt("cache_key?") {
		r.CacheKey = "k"
	}
	r.Stream = opt("stream")
	r.StreamUsage = r.Stream && opt("usage")
	if opt("user?") {
		r.User = "u-1"
	}
	if opt("metadata?") {
		r.Metadata = map[string]string{"a": "b"}
	}
	return r
}

// TestRequestNothingSilentlyLost: every setting of a random request either
// comes back from the same format (encode then decode) or is named by a
// warning of the encoding.
func TestRequestNothingSilentlyLost(t *testing.T) {
	for _, f := range Formats() {
		carried := map[string]bool{} // set outside the body
		switch f.Name() {
		case "gemini", "bedrock":
			carried["model"], carried["stream"] = true, true
		}
		t.Run(f.Name(), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				r := genRequest(t)
				body, warns, err := f.EncodeRequest(r, provider.Options{})
				if err != nil {
					t.Fatalf("encode: %v", err)
				}
				back, _, err := f.DecodeRequest(body, provider.Options{})
				if err != nil {
					t.Fatalf("decode %s: %v", body, err)
				}
				warned := func(path string) bool {
					for _, w := range warns {
						if w.Path == path || strings.HasPrefix(w.Path, path+".") || strings.HasPrefix(w.Path, path+"[") {
							return true
						}
					}
					return false
				}
				check := func(path string, a, b any) {
					if !reflect.DeepEqual(a, b) && !warned(path) && !carried[path] {
						t.Fatalf("%s: sent %#v, read back %#v, no warning\n%s\nwarnings: %v", path, a, b, body, warns)
					}
				}
				check("model", r.Model, back.Model)
				if len(r.Tools) != len(back.Tools) {
					check("tools", len(r.Tools), len(back.Tools))
				} else {
					for i := range r.Tools {
						a, b := r.Tools[i], back.Tools[i]
						p := "tools[" + strconv.Itoa(i) + "]"
						check(p+".name", a.Name, b.Name)
						check(p+".description", a.Description, b.Description)
						check(p+".strict", a.Strict, b.Strict)
						var pa, pb any
						_ = json.Unmarshal(a.Parameters, &pa)
						_ = json.Unmarshal(b.Parameters, &pb)
						check(p+".parameters", pa, pb)
					}
				}
				if f.Name() == "anthropic" && r.ToolChoice.Mode == "" && r.ParallelToolCalls != nil && back.ToolChoice.Mode == provider.ToolChoiceAuto {
					back.ToolChoice.Mode = "" // disable_parallel_tool_use goes in a tool_choice of Anthropic's default type, auto
				}
				if f.Name() == "gemini" && r.ToolChoice.Mode == "" && back.ToolChoice.Mode == provider.ToolChoiceAuto && slices.ContainsFunc(r.Tools, func(t provider.Tool) bool { return t.Strict }) {
					back.ToolChoice.Mode = "" // strict tools go as mode VALIDATED, which is auto with schemas kept
				}
				check("tool_choice", r.ToolChoice, back.ToolChoice)
				check("parallel_tool_calls", r.ParallelToolCalls, back.ParallelToolCalls)
				out, bout := r.Output, back.Output
				if out.Type == provider.OutputText && bout.Type == "" {
					bout.Type = out.Type // text is every format's default: leaving it out loses nothing
				}
				if f.Name() == "anthropic" && out.Type == provider.OutputJSONSchema {
					bout.Name = out.Name // warned as output.name
				}
				var sa, sb any
				_ = json.Unmarshal(out.Schema, &sa)
				_ = json.Unmarshal(bout.Schema, &sb)
				out.Schema, bout.Schema = nil, nil
				check("output", out, bout)
				check("output", sa, sb)
				check("max_tokens", r.MaxTokens, back.MaxTokens)
				check("temperature", r.Temperature, back.Temperature)
				check("top_p", r.TopP, back.TopP)
				check("top_k", r.TopK, back.TopK)
				check("presence_penalty", r.PresencePenalty, back.PresencePenalty)
				check("frequency_penalty", r.FrequencyPenalty, back.FrequencyPenalty)
				check("seed", r.Seed, back.Seed)
				check("stop", r.Stop, back.Stop)
				cand, bcand := r.Candidates, back.Candidates
				if cand == 1 && bcand == 0 {
					bcand = cand // one reply is every format's default: leaving it out loses nothing
				}
				check("candidates", cand, bcand)
				check("reasoning", r.Reasoning, back.Reasoning)
				check("cache_key", r.CacheKey, back.CacheKey)
				check("stream", r.Stream, back.Stream)
				check("user", r.User, back.User)
				check("metadata", r.Metadata, back.Metadata)
			})
		})
	}
}
