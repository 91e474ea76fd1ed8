package anthropic

import (
	"fmt"
	"strconv"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// DefaultMaxTokens is the max_tokens EncodeRequest sends when the request
// sets none: the Messages API requires the member, other formats do not.
const DefaultMaxTokens = 4096

// minBudget is the smallest thinking budget the API accepts.
const minBudget = 1024

var request = &wire.Format{
	Provider: ProviderID,
	Name:     Name,
	Conv:     []string{"system", "messages"},
	Append:   appendConv,
	Decode:   messages{}.Decode,
	Prefix:   []string{"model", "max_tokens"},
	// Streams always end with usage.
	Carried: wire.FStreamUsage,
	Settings: []wire.Setting{
		wire.StringSetting("model", wire.FModel, func(r *provider.Request) *string { return &r.Model }),
		{Key: "max_tokens", Fields: wire.FMaxTokens, Enc: maxTokensEnc, Dec: maxTokensDec},
		wire.FloatSetting("temperature", wire.FTemperature, func(r *provider.Request) **float64 { return &r.Temperature }),
		wire.FloatSetting("top_p", wire.FTopP, func(r *provider.Request) **float64 { return &r.TopP }),
		wire.IntSetting("top_k", wire.FTopK, func(r *provider.Request) **int64 { return &r.TopK }),
		wire.StopSetting("stop_sequences"),
		{Key: "tools", Fields: wire.FTools, Enc: toolsEnc, Dec: toolsDec},
		{Key: "tool_choice", Fields: wire.FToolChoice | wire.FParallel, Enc: toolChoiceEnc, Dec: toolChoiceDec},
		{Key: "thinking", Fields: wire.FReasoning, Enc: thinkingEnc, Dec: thinkingDec},
		{Key: "output_config", Fields: wire.FOutput | wire.FReasoning, Enc: outputConfigEnc, Dec: outputConfigDec},
		{Key: "output_format", Fields: wire.FOutput, Enc: outputFormatEnc, Dec: outputDec},
		wire.BoolSetting("stream", wire.FStream, func(r *provider.Request) *bool { return &r.Stream }),
		{Key: "metadata", Fields: wire.FUser | wire.FMetadata, Enc: metadataEnc, Dec: metadataDec},
	},
}

// EncodeRequest returns the whole Messages request body for r: model,
// max_tokens (DefaultMaxTokens when r sets none, with a warning), system,
// messages, tools, tool_choice, thinking, output_format, sampling
// settings, and r's native "anthropic" members (service_tier, container,
// mcp_servers, …). See docs/providers.md for the table of settings.
func (messages) EncodeRequest(r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return request.EncodeRequest(r, opts)
}

// AppendRequest appends the body EncodeRequest returns to dst (see
// provider.RequestAppender); on an error it returns dst as it was.
func (messages) AppendRequest(dst []byte, r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return request.AppendRequest(dst, r, opts)
}

// DecodeRequest reads a whole Messages request body. Members with no
// Request field are kept in Native["anthropic"]; server tools (web search,
// code execution, …) are kept whole as tools of type "anthropic:<type>".
func (messages) DecodeRequest(body []byte, opts provider.Options) (*provider.Request, []provider.Warning, error) {
	return request.DecodeRequest(body, opts)
}

func maxTokensEnc(e *wire.ReqEnc) error {
	pl := planThinking(e.R, nil)
	n, budget := pl.maxTokens(e.R)
	switch {
	case e.R.MaxTokens != 0:
	// The two warnings of most translated requests (they set no
	// max_tokens) are made without fmt.
	case n == DefaultMaxTokens:
		e.WarnMsg(provider.CodeSettingMapped, "max_tokens", "anthropic requires max_tokens: "+strconv.FormatInt(n, 10)+" sent")
	case int(n) == e.R.Target.MaxOutput:
		e.WarnMsg(provider.CodeSettingMapped, "max_tokens", "anthropic requires max_tokens: the maximum output of "+e.R.Target.Name+", "+strconv.FormatInt(n, 10)+", sent")
	default:
		e.Warn(provider.CodeSettingMapped, "max_tokens", "anthropic requires max_tokens above the thinking budget (%d): %d sent", budget, n)
	}
	e.O.Int("max_tokens", n)
	return nil
}

func maxTokensDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	n, err := wire.Int(v)
	if err == nil {
		r.MaxTokens = *n
	}
	return err
}

func toolsEnc(e *wire.ReqEnc) error {
	if len(e.R.Tools) == 0 && !outputTool(e.R) {
		return nil
	}
	e.O.Key("tools")
	var err error
	e.O.Buf, err = e.AppendTools(e.O.Buf, nil, func(b []byte, t *provider.Tool, i int) ([]byte, error) {
		o := wire.NewObj(b)
		o.Str("name", t.Name)
		if t.Description != "" {
			o.Str("description", t.Description)
		}
		schema := t.Parameters
		if schema == nil {
			schema = []byte(`{"type":"object","properties":{}}`)
		}
		o.Raw("input_schema", schema)
		if t.Strict {
			o.Bool("strict", true)
		}
		if t.Cache != nil {
			o.Key("cache_control")
			o.Buf = appendCacheControl(o.Buf, t.Cache)
		}
		if err := wire.ToolNative(e, o, t, i); err != nil {
			return nil, err
		}
		return o.Close(), nil
	})
	if err != nil || !outputTool(e.R) {
		return err
	}
	e.O.Buf, err = appendOutputTool(e, e.O.Buf)
	return err
}

// outputTool reports whether r's JSON Schema output goes as the tool
// provider.OutputTool: to a model known to lack structured output.
func outputTool(r *provider.Request) bool {
	return r.Output.Type == provider.OutputJSONSchema && !nativeOutput(r)
}

// appendOutputTool adds provider.OutputTool to the tools array that ends
// b: the output schema as its input_schema. The reply readers read its
// call back as the reply's text.
func appendOutputTool(e *wire.ReqEnc, b []byte) ([]byte, error) {
	out := e.R.Output
	for i := range e.R.Tools {
		if e.R.Tools[i].Name == provider.OutputTool {
			return nil, fmt.Errorf("tools[%d]: the name %q is taken by the structured output of a model without it", i, provider.OutputTool)
		}
	}
	b = b[:len(b)-1] // the array's ']'
	if b[len(b)-1] != '[' {
		b = append(b, ',')
	}
	o := wire.NewObj(b)
	o.Str("name", provider.OutputTool)
	desc := out.Description
	if desc == "" {
		desc = "Give your final answer by calling this tool once, with the answer as its input."
	}
	o.Str("description", desc)
	schema := out.Schema
	if schema == nil {
		schema = []byte(`{"type":"object"}`)
	}
	o.Raw("input_schema", schema)
	e.Warn(provider.CodeSettingMapped, "output", "%s has no native structured output: the schema is sent as the tool %q, whose call is read back as the reply's text",
		e.R.Target.Name, provider.OutputTool)
	return append(o.Close(), ']'), nil
}

func appendCacheControl(b []byte, c *convo.Cache) []byte {
	b = append(b, `{"type":"ephemeral"`...)
	if c.TTL != "" {
		b = append(b, `,"ttl":`...)
		b = jsonx.AppendString(b, c.TTL)
	}
	return append(b, '}')
}

func toolsDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return wire.Array(v, func(i int, item []byte) error {
		var t provider.Tool
		var typ string
		rest, err := wire.Fields(item, func(k string, v []byte) (bool, error) {
			var err error
			switch k {
			case "type":
				typ, err = wire.Str(v)
				return typ == "custom", err
			case "name":
				t.Name, err = wire.Str(v)
			case "description":
				t.Description, err = wire.Str(v)
			case "input_schema":
				t.Parameters = v
			case "strict":
				if string(v) != "null" {
					t.Strict, err = wire.Bool(v)
				}
			case "cache_control":
				c, ok := readCacheControl(v)
				if !ok {
					return false, nil
				}
				t.Cache = c
			default:
				return false, nil
			}
			return true, err
		})
		if err != nil {
			return err
		}
		if typ != "" && typ != "custom" {
			r.Tools = append(r.Tools, wire.NativeTool(ProviderID, typ, item))
			return nil
		}
		t.Native = rest.Native(ProviderID)
		r.Tools = append(r.Tools, t)
		return nil
	})
}

// readCacheControl reads {"type":"ephemeral"[,"ttl":…]}; anything else is
// not a cache breakpoint convo knows.
func readCacheControl(v []byte) (*convo.Cache, bool) {
	var c convo.Cache
	ok := true
	_, err := wire.Fields(v, func(k string, v []byte) (bool, error) {
		switch k {
		case "type":
			ok = ok && string(v) == `"ephemeral"`
		case "ttl":
			s, err := wire.Str(v)
			c.TTL = s
			ok = ok && err == nil
		default:
			ok = false
		}
		return true, nil
	})
	return &c, ok && err == nil
}

func toolChoiceEnc(e *wire.ReqEnc) error {
	c, par := e.R.ToolChoice, e.R.ParallelToolCalls
	if c.Mode == "" && par == nil && !outputTool(e.R) {
		return nil
	}
	e.O.Key("tool_choice")
	o := wire.NewObj(e.O.Buf)
	if outputTool(e.R) {
		outputChoice(e, o)
		if par != nil {
			o.Bool("disable_parallel_tool_use", !*par)
		}
		e.O.Buf = o.Close()
		return nil
	}
	switch c.Mode {
	case "", provider.ToolChoiceAuto:
		o.Str("type", "auto")
	case provider.ToolChoiceNone:
		o.Str("type", "none")
	case provider.ToolChoiceRequired:
		o.Str("type", "any")
	case provider.ToolChoiceTool:
		o.Str("type", "tool")
		o.Str("name", c.Name)
	default:
		return fmt.Errorf("unknown tool choice %q", c.Mode)
	}
	if par != nil {
		o.Bool("disable_parallel_tool_use", !*par)
	}
	e.O.Buf = o.Close()
	return nil
}

// outputChoice writes the tool choice that makes the model answer with
// provider.OutputTool: that tool, when the request has no tools of its own
// to call first (or forbids them); any tool, when it has; the model's
// choice while it thinks, which the API takes with no other.
func outputChoice(e *wire.ReqEnc, o *wire.Obj) {
	r := e.R
	own := false
	for i := range r.Tools {
		own = own || r.Tools[i].Type == ""
	}
	switch pl := planThinking(r, nil); {
	case pl.typ == "enabled" || pl.typ == "adaptive":
		o.Str("type", "auto")
		e.Warn(provider.CodeSettingMapped, "output", "anthropic forces no tool while thinking: the model is asked, not made, to answer with %q", provider.OutputTool)
	case !own || r.ToolChoice.Mode == provider.ToolChoiceNone:
		o.Str("type", "tool")
		o.Str("name", provider.OutputTool)
	case r.ToolChoice.Mode == provider.ToolChoiceTool:
		o.Str("type", "tool")
		o.Str("name", r.ToolChoice.Name)
	default:
		o.Str("type", "any")
	}
}

func toolChoiceDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	var typ, name string
	err := d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "type":
			typ, err = wire.Str(v)
		case "name":
			name, err = wire.Str(v)
		case "disable_parallel_tool_use":
			var b bool
			b, err = wire.Bool(v)
			r.ParallelToolCalls = provider.Bool(!b)
		default:
			return false, nil
		}
		return true, err
	})
	switch typ {
	case "auto":
		r.ToolChoice.Mode = provider.ToolChoiceAuto
	case "none":
		r.ToolChoice.Mode = provider.ToolChoiceNone
	case "any":
		r.ToolChoice.Mode = provider.ToolChoiceRequired
	case "tool":
		r.ToolChoice = provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: name}
	default:
		d.Lost = true
	}
	return err
}

// thinkPlan is how a request's reasoning is sent: the thinking member's
// type ("" for none, "enabled", "disabled", "adaptive"), the budget for
// "enabled" and the effort (output_config.effort) for "adaptive".
type thinkPlan struct {
	typ    string
	budget int64
	effort provider.Effort
	mapped bool // the budget stands for an effort: convo chose it
}

// anthropicEfforts are the efforts output_config.effort takes, lowest
// first, for a target that lists none.
var anthropicEfforts = provider.Model{Efforts: []string{"low", "medium", "high", "xhigh", "max"}}

// warnFn adds a warning; planThinking's callers pass nil for the parts
// of the plan whose warnings another member gives.
type warnFn func(code provider.Code, path, format string, args ...any)

// planThinking decides how r's reasoning is sent to r.Target: adaptive
// thinking with an effort where the model has it, a budget otherwise (by
// the reasoning table, within the model's bounds). warn, when not nil,
// receives what was mapped or left out.
func planThinking(r *provider.Request, warn warnFn) thinkPlan {
	if warn == nil {
		warn = func(provider.Code, string, string, ...any) {}
	}
	rs, t := r.Reasoning, &r.Target
	if rs == nil {
		return thinkPlan{}
	}
	switch s := rs.Summary; s {
	case "", "auto":
	default:
		warn(provider.CodeSettingDropped, "reasoning.summary", "anthropic has no choice of reasoning summary %q: left out", s)
	}
	if !r.Thinks() {
		if rs.Effort == provider.EffortNone && t.Thinking != provider.ThinkingAdaptive {
			// Adaptive models think only when asked: no member is "off"
			// (and the newest refuse "disabled").
			return thinkPlan{typ: "disabled"}
		}
		return thinkPlan{}
	}
	if t.Thinking == provider.ThinkingAdaptive {
		return adaptivePlan(rs, t, warn)
	}
	budget, mapped := rs.Budget, false
	switch {
	case budget == 0 || budget == -1:
		mapped = true
		eff := rs.Effort
		if eff == "" {
			eff = provider.EffortMedium
		}
		budget = provider.BudgetFor(eff)
		if budget < 0 {
			budget = provider.BudgetFor(provider.EffortMedium)
		}
		warn(provider.CodeSettingMapped, "reasoning", "anthropic takes a thinking budget: effort %q sent as %d tokens", eff, max(budget, minBudget))
	case rs.Effort != "":
		warn(provider.CodeSettingDropped, "reasoning.effort", "anthropic takes the budget, not an effort as well: %q left out", rs.Effort)
	}
	if b, changed := t.Budget(budget); changed {
		warn(provider.CodeSettingMapped, "reasoning.budget", "%s takes %d to %d thinking tokens: %d sent as %d", t.Name, t.MinBudget, t.MaxBudget, budget, b)
		budget = b
	}
	if budget < minBudget {
		warn(provider.CodeSettingMapped, "reasoning.budget", "anthropic takes at least %d thinking tokens: %d raised", minBudget, budget)
		budget = minBudget
	}
	return thinkPlan{typ: "enabled", budget: budget, mapped: mapped}
}

// adaptivePlan is the plan for a model with adaptive thinking: the effort
// as it is when the model takes it, the nearest it takes otherwise, and a
// budget as the effort the reasoning table gives it.
func adaptivePlan(rs *provider.Reasoning, t *provider.Model, warn warnFn) thinkPlan {
	eff := rs.Effort
	if eff == "" && rs.Budget > 0 {
		eff = provider.EffortFor(rs.Budget)
		warn(provider.CodeSettingMapped, "reasoning.budget", "%s thinks adaptively with an effort: %d tokens sent as effort %q", t.Name, rs.Budget, eff)
	} else if rs.Budget > 0 {
		warn(provider.CodeSettingDropped, "reasoning.budget", "%s thinks adaptively with an effort, not a budget: %d tokens left out", t.Name, rs.Budget)
	}
	if eff == "" {
		return thinkPlan{typ: "adaptive"} // the model's default effort
	}
	efforts := t
	if len(efforts.Efforts) == 0 {
		efforts = &anthropicEfforts
	}
	if e, changed := efforts.Effort(eff); changed {
		warn(provider.CodeSettingMapped, "reasoning.effort", "%s takes no effort %q: %q sent", t.Name, eff, e)
		eff = e
	}
	return thinkPlan{typ: "adaptive", effort: eff}
}

// maxTokens returns the max_tokens to send and the thinking budget to send
// with it: the request's own, else the model's maximum output, else
// DefaultMaxTokens; raised above a thinking budget the request did not
// bound (the API refuses a budget_tokens not below max_tokens), or a
// budget convo chose for an effort lowered below a max_tokens the request
// set. A budget the request set itself is the caller's (interleaved
// thinking takes one above max_tokens).
func (pl thinkPlan) maxTokens(r *provider.Request) (n, budget int64) {
	n, budget = r.MaxTokens, pl.budget
	if n == 0 {
		n = int64(r.Target.MaxOutput)
		if n == 0 {
			n = DefaultMaxTokens
		}
		if pl.typ == "enabled" && budget >= n {
			n = budget + DefaultMaxTokens
			if r.Target.MaxOutput > 0 {
				n = min(n, int64(r.Target.MaxOutput))
			}
		}
	}
	if pl.typ == "enabled" && pl.mapped && budget >= n && n-1 >= minBudget {
		budget = n - 1
	}
	return n, budget
}

func thinkingEnc(e *wire.ReqEnc) error {
	if e.R.Reasoning == nil || readEffortOnly(e) {
		return nil
	}
	pl := planThinking(e.R, e.Warn)
	switch pl.typ {
	case "disabled":
		e.O.Raw("thinking", []byte(`{"type":"disabled"}`))
	case "adaptive":
		e.O.Raw("thinking", []byte(`{"type":"adaptive"}`))
	case "enabled":
		_, budget := pl.maxTokens(e.R)
		if budget != pl.budget {
			e.Warn(provider.CodeSettingMapped, "reasoning.budget", "anthropic takes a thinking budget below max_tokens: %d lowered to %d", pl.budget, budget)
		}
		e.O.Key("thinking")
		e.O.Buf = append(e.O.Buf, `{"type":"enabled","budget_tokens":`...)
		e.O.Buf = append(strconv.AppendInt(e.O.Buf, budget, 10), '}')
	}
	return nil
}

// readEffortOnly reports whether the request was read from Anthropic with
// an output_config effort and no thinking member: an effort on the whole
// reply (Claude Opus 4.5), which turns no thinking on.
func readEffortOnly(e *wire.ReqEnc) bool {
	rs := e.R.Reasoning
	return rs.Budget == 0 && rs.Effort != "" && e.Spelled("output_config") && !e.Spelled("thinking")
}

func thinkingDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	var typ string
	var budget int64
	err := d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "type":
			typ, err = wire.Str(v)
		case "budget_tokens":
			var n *int64
			n, err = wire.Int(v)
			if n != nil {
				budget = *n
			}
		default:
			return false, nil
		}
		return true, err
	})
	// output_config.effort may have been read already: the reasoning is
	// completed, not replaced.
	switch typ {
	case "enabled":
		reasoningOf(r).Budget = budget
	case "adaptive":
		reasoningOf(r).Budget = -1 // the model decides
	case "disabled":
		r.Reasoning = &provider.Reasoning{Effort: provider.EffortNone}
	default:
		d.Lost = true
	}
	return err
}

func reasoningOf(r *provider.Request) *provider.Reasoning {
	if r.Reasoning == nil {
		r.Reasoning = &provider.Reasoning{}
	}
	return r.Reasoning
}

// nativeOutput reports whether r's JSON Schema output goes as Anthropic's
// own structured output: for every model not known to lack it.
func nativeOutput(r *provider.Request) bool {
	return !r.Target.Known() || r.Target.StructuredOutput
}

// outputConfigEnc writes output_config: the effort of adaptive thinking
// and the reply's JSON Schema (format), unless the request was read with
// the older output_format member, which is then written instead.
func outputConfigEnc(e *wire.ReqEnc) error {
	r := e.R
	o := wire.NewObj(nil)
	if r.Reasoning != nil {
		pl := planThinking(r, nil)
		switch {
		case pl.effort != "":
			o.Str("effort", string(pl.effort))
		case readEffortOnly(e):
			o.Str("effort", string(r.Reasoning.Effort))
		}
	}
	if !e.Spelled("output_format") {
		if err := formatEnc(e, o, "format"); err != nil {
			return err
		}
	}
	if len(o.Buf) > 1 {
		e.O.Raw("output_config", o.Close())
	}
	return nil
}

// outputFormatEnc writes the older output_format member, for a request
// read with it.
func outputFormatEnc(e *wire.ReqEnc) error {
	if !e.Spelled("output_format") {
		return nil
	}
	return formatEnc(e, e.O, "output_format")
}

func outputConfigDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		switch k {
		case "effort":
			s, err := wire.Str(v)
			reasoningOf(r).Effort = provider.Effort(s)
			return true, err
		case "format":
			return true, outputDec(d, v)
		}
		return false, nil
	})
}

// formatEnc writes the reply's form as the member key of o: a JSON
// Schema natively, or nothing where outputTool sends it as a tool.
func formatEnc(e *wire.ReqEnc, o *wire.Obj, key string) error {
	out := e.R.Output
	switch out.Type {
	case "", provider.OutputText:
	case provider.OutputJSONSchema:
		if !nativeOutput(e.R) {
			return nil // sent as the output tool (toolsEnc)
		}
		o.Key(key)
		f := wire.NewObj(o.Buf)
		f.Str("type", "json_schema")
		if out.Schema != nil {
			f.Raw("schema", out.Schema)
		}
		o.Buf = f.Close()
		if out.Name != "" || out.Description != "" {
			e.Warn(provider.CodeSettingDropped, "output.name", "anthropic takes no schema name or description: left out")
		}
	case provider.OutputJSON:
		e.Warn(provider.CodeSettingDropped, "output", "anthropic has no JSON mode without a schema: left out")
	default:
		return fmt.Errorf("unknown output type %q", out.Type)
	}
	return nil
}

func outputDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	var typ string
	err := d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "type":
			typ, err = wire.Str(v)
		case "schema":
			r.Output.Schema = v
		default:
			return false, nil
		}
		return true, err
	})
	if typ == "json_schema" {
		r.Output.Type = provider.OutputJSONSchema
		r.Output.Strict = true
	} else {
		d.Lost = true
	}
	return err
}

func metadataEnc(e *wire.ReqEnc) error {
	if e.R.User != "" {
		e.O.Key("metadata")
		e.O.Buf = append(e.O.Buf, `{"user_id":`...)
		e.O.Buf = append(jsonx.AppendString(e.O.Buf, e.R.User), '}')
	}
	if len(e.R.Metadata) > 0 {
		e.Warn(provider.CodeSettingDropped, "metadata", "anthropic takes only a user id as metadata: left out")
	}
	return nil
}

func metadataDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		if k != "user_id" {
			return false, nil
		}
		var err error
		r.User, err = wire.Str(v)
		return true, err
	})
}
