package bedrock

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

var request = &wire.Format{
	Provider: ProviderID,
	Name:     Name,
	Conv:     []string{"system", "messages"},
	Append:   appendConv,
	Decode:   converse{}.Decode,
	// The model and streaming are in the URL (/model/M/converse,
	// /converse-stream); streams always end with usage (metadata).
	Carried: wire.FModel | wire.FStream | wire.FStreamUsage,
	Settings: []wire.Setting{
		{Key: "inferenceConfig", Fields: wire.FMaxTokens | wire.FTemperature | wire.FTopP | wire.FStop,
			Enc: inferenceEnc, Dec: inferenceDec},
		{Key: "toolConfig", Fields: wire.FTools | wire.FToolChoice, Enc: toolConfigEnc, Dec: toolConfigDec},
		{Key: "additionalModelRequestFields", Fields: wire.FReasoning | wire.FTopK, Enc: additionalEnc, Dec: additionalDec},
		{Key: "outputConfig", Fields: wire.FOutput | wire.FReasoning, Enc: outputConfigEnc, Dec: outputConfigDec},
		{Key: "requestMetadata", Fields: wire.FMetadata, Enc: func(e *wire.ReqEnc) error {
			if len(e.R.Metadata) > 0 {
				e.O.StrMap("requestMetadata", e.R.Metadata)
			}
			return nil
		}, Dec: func(d *wire.ReqDec, v []byte) error {
			var err error
			d.R.Metadata, err = wire.StrMap(v)
			return err
		}},
	},
}

// EncodeRequest returns the whole Converse request body for r: system,
// messages, inferenceConfig, toolConfig (with cachePoint blocks after
// tools that have Cache), additionalModelRequestFields for what only the
// model family takes (Anthropic's thinking and top_k, OpenAI's
// reasoning_effort, chosen by r.Model), requestMetadata, and r's native
// "bedrock" members (guardrailConfig, performanceConfig, …). The model and
// streaming are not in the body: they choose the URL.
func (converse) EncodeRequest(r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return request.EncodeRequest(r, opts)
}

// AppendRequest appends the body EncodeRequest returns to dst (see
// provider.RequestAppender); on an error it returns dst as it was.
func (converse) AppendRequest(dst []byte, r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return request.AppendRequest(dst, r, opts)
}

// DecodeRequest reads a whole Converse request body. Members with no
// Request field are kept in Native["bedrock"].
func (converse) DecodeRequest(body []byte, opts provider.Options) (*provider.Request, []provider.Warning, error) {
	return request.DecodeRequest(body, opts)
}

func inferenceEnc(e *wire.ReqEnc) error {
	r := e.R
	o := wire.NewObj(nil)
	if r.MaxTokens != 0 {
		o.Int("maxTokens", r.MaxTokens)
	}
	if r.Temperature != nil {
		o.Float("temperature", *r.Temperature)
	}
	if r.TopP != nil {
		o.Float("topP", *r.TopP)
	}
	if len(r.Stop) > 0 {
		o.Strings("stopSequences", r.Stop)
	}
	if len(o.Buf) > 1 {
		e.O.Raw("inferenceConfig", o.Close())
	}
	return nil
}

func inferenceDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "maxTokens":
			var n *int64
			if n, err = wire.Int(v); n != nil {
				r.MaxTokens = *n
			}
		case "temperature":
			r.Temperature, err = wire.Float(v)
		case "topP":
			r.TopP, err = wire.Float(v)
		case "stopSequences":
			r.Stop, err = wire.Strings(v)
		default:
			return false, nil
		}
		return true, err
	})
}

func toolConfigEnc(e *wire.ReqEnc) error {
	if len(e.R.Tools) == 0 && e.R.ToolChoice.Mode == "" && !outputTool(e.R) {
		return nil
	}
	e.O.Key("toolConfig")
	o := wire.NewObj(e.O.Buf)
	o.Key("tools")
	var err error
	o.Buf, err = e.AppendTools(o.Buf, nil, func(b []byte, t *provider.Tool, i int) ([]byte, error) {
		b = append(b, `{"toolSpec":`...)
		s := wire.NewObj(b)
		s.Str("name", t.Name)
		if t.Description != "" {
			s.Str("description", t.Description)
		}
		schema := t.Parameters
		if schema == nil {
			schema = []byte(`{"type":"object","properties":{}}`)
		}
		s.Key("inputSchema")
		s.Buf = append(append(append(s.Buf, `{"json":`...), schema...), '}')
		if t.Strict {
			if tg := &e.R.Target; tg.Known() && !tg.StrictTools {
				e.Warn(provider.CodeSettingDropped, fmt.Sprintf("tools[%d].strict", i), "%s takes no strict tools: left out", tg.Name)
			} else {
				s.Bool("strict", true)
			}
		}
		if err := wire.ToolNative(e, s, t, i); err != nil {
			return nil, err
		}
		b = append(s.Close(), '}')
		if t.Cache != nil {
			// A cache point is an entry of its own after the tool.
			b = append(b, `,{"cachePoint":{"type":"default"}}`...)
			if t.Cache.TTL != "" {
				e.Warn(provider.CodeSettingDropped, fmt.Sprintf("tools[%d].cache.ttl", i), "bedrock cache points have no TTL: left out")
			}
		}
		return b, nil
	})
	if err != nil {
		return err
	}
	if outputTool(e.R) {
		if o.Buf, err = appendOutputTool(e, o.Buf); err != nil {
			return err
		}
		outputChoice(e, o)
		e.O.Buf = o.Close()
		return nil
	}
	switch c := e.R.ToolChoice; c.Mode {
	case "":
	case provider.ToolChoiceAuto:
		o.Raw("toolChoice", []byte(`{"auto":{}}`))
	case provider.ToolChoiceRequired:
		o.Raw("toolChoice", []byte(`{"any":{}}`))
	case provider.ToolChoiceTool:
		o.Key("toolChoice")
		o.Buf = append(o.Buf, `{"tool":{"name":`...)
		o.Buf = append(jsonx.AppendString(o.Buf, c.Name), "}}"...)
	case provider.ToolChoiceNone:
		e.Warn(provider.CodeSettingDropped, "tool_choice", "bedrock has no tool choice none: left out (send no tools instead)")
	default:
		return fmt.Errorf("unknown tool choice %q", c.Mode)
	}
	e.O.Buf = o.Close()
	return nil
}

func toolConfigDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		switch k {
		case "tools":
			return true, wire.Array(v, func(i int, item []byte) error {
				var spec []byte
				rest, err := wire.Fields(item, func(k string, v []byte) (bool, error) {
					if k == "toolSpec" {
						spec = v
						return true, nil
					}
					return false, nil
				})
				if err != nil {
					return err
				}
				if spec == nil {
					if len(rest) == 1 && rest[0].Key == "cachePoint" && i > 0 && len(r.Tools) > 0 &&
						r.Tools[len(r.Tools)-1].Type == "" && r.Tools[len(r.Tools)-1].Cache == nil &&
						string(rest[0].Val) == `{"type":"default"}` {
						r.Tools[len(r.Tools)-1].Cache = &convo.Cache{}
						return nil
					}
					typ := ""
					if len(rest) > 0 {
						typ = rest[0].Key
					}
					r.Tools = append(r.Tools, wire.NativeTool(ProviderID, typ, item))
					return nil
				}
				t, err := toolSpecDec(spec)
				r.Tools = append(r.Tools, t)
				return wire.At("toolSpec", err)
			})
		case "toolChoice":
			return true, d.Fields(v, func(k string, v []byte) (bool, error) {
				switch k {
				case "auto":
					r.ToolChoice.Mode = provider.ToolChoiceAuto
				case "any":
					r.ToolChoice.Mode = provider.ToolChoiceRequired
				case "tool":
					var name string
					_, err := wire.Fields(v, func(k string, v []byte) (bool, error) {
						var err error
						if k == "name" {
							name, err = wire.Str(v)
						}
						return true, err
					})
					r.ToolChoice = provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: name}
					return true, err
				default:
					return false, nil
				}
				if string(v) != "{}" {
					d.Lost = true
				}
				return true, nil
			})
		}
		return false, nil
	})
}

func toolSpecDec(v []byte) (provider.Tool, error) {
	var t provider.Tool
	rest, err := wire.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "name":
			t.Name, err = wire.Str(v)
		case "description":
			t.Description, err = wire.Str(v)
		case "strict":
			t.Strict, err = wire.Bool(v)
		case "inputSchema":
			rest, err := wire.Fields(v, func(k string, v []byte) (bool, error) {
				if k == "json" {
					t.Parameters = v
					return true, nil
				}
				return false, nil
			})
			return len(rest) == 0, err
		default:
			return false, nil
		}
		return true, err
	})
	t.Native = rest.Native(ProviderID)
	return t, err
}

// family returns the model family of a Bedrock model id
// ("us.anthropic.claude-…" is "anthropic"), which decides the members of
// additionalModelRequestFields.
func family(model string) string {
	switch {
	case strings.Contains(model, "anthropic.") || strings.HasPrefix(model, "claude-"):
		return "anthropic"
	case strings.Contains(model, "openai.") || strings.HasPrefix(model, "gpt-oss"):
		return "openai"
	case strings.Contains(model, "amazon.nova") || strings.HasPrefix(model, "nova-"):
		return "nova"
	}
	return ""
}

func additionalEnc(e *wire.ReqEnc) error {
	r := e.R
	fam := family(r.Model)
	o := wire.NewObj(nil)
	if r.TopK != nil {
		if fam == "anthropic" {
			o.Int("top_k", *r.TopK)
		} else {
			e.Warn(provider.CodeSettingDropped, "top_k", "bedrock takes top_k only for Anthropic models: left out for %q", r.Model)
		}
	}
	if rs := r.Reasoning; rs != nil && (rs.Effort != "" || rs.Budget != 0) {
		switch fam {
		case "anthropic":
			anthropicThinking(e, o, rs)
		case "nova":
			if !strings.Contains(r.Model, "nova-2") && r.Target.Thinking != provider.ThinkingEffort {
				// Nova 1 models have no reasoningConfig.
				e.Warn(provider.CodeSettingDropped, "reasoning", "bedrock model %q does not reason: left out", r.Model)
				break
			}
			novaReasoning(e, o, rs)
		case "openai":
			eff := rs.Effort
			if eff == "" {
				eff = provider.EffortFor(rs.Budget)
				e.Warn(provider.CodeSettingMapped, "reasoning.budget", "OpenAI models take an effort: %d tokens sent as %q", rs.Budget, eff)
			}
			o.Str("reasoning_effort", string(eff))
		default:
			e.Warn(provider.CodeSettingDropped, "reasoning", "convo knows no reasoning setting of bedrock model %q: left out (set it in native.bedrock.additionalModelRequestFields)", r.Model)
		}
	}
	if len(o.Buf) > 1 {
		e.O.Raw("additionalModelRequestFields", o.Close())
	}
	return nil
}

// anthropicThinking writes Anthropic's thinking member: adaptive for a
// model that thinks adaptively (its effort goes in outputConfig), a budget
// otherwise, within the model's bounds.
func anthropicThinking(e *wire.ReqEnc, o *wire.Obj, rs *provider.Reasoning) {
	t := &e.R.Target
	switch {
	case rs.Effort == provider.EffortNone:
		if t.Thinking != provider.ThinkingAdaptive {
			// Adaptive models think only when asked; the newest refuse
			// "disabled".
			o.Raw("thinking", []byte(`{"type":"disabled"}`))
		}
		return
	case t.Thinking == provider.ThinkingAdaptive:
		o.Raw("thinking", []byte(`{"type":"adaptive"}`))
		adaptiveEffort(e.R, e.Warn)
		return
	}
	b := rs.Budget
	if b <= 0 {
		b = provider.BudgetFor(rs.Effort)
		if rs.Effort == "" || b < 0 {
			b = provider.BudgetFor(provider.EffortMedium)
		}
		e.Warn(provider.CodeSettingMapped, "reasoning", "Anthropic models take a thinking budget: effort %q sent as %d tokens", rs.Effort, max(b, 1024))
	}
	if c, changed := t.Budget(b); changed {
		e.Warn(provider.CodeSettingMapped, "reasoning.budget", "%s takes %d to %d thinking tokens: %d sent as %d", t.Name, t.MinBudget, t.MaxBudget, b, c)
		b = c
	}
	o.Key("thinking")
	o.Buf = append(o.Buf, `{"type":"enabled","budget_tokens":`...)
	o.Buf = append(jsonx.AppendInt(o.Buf, max(b, 1024)), '}')
}

// anthropicEfforts are the efforts Anthropic's adaptive thinking takes,
// for a target that lists none.
var anthropicEfforts = provider.Model{Efforts: []string{"low", "medium", "high", "xhigh", "max"}}

// adaptiveEffort returns the effort for an Anthropic model that thinks
// adaptively (outputConfig.effort), "" when the request leaves it to the
// model or r's target is not such a model. warn, when not nil, receives
// what was mapped.
func adaptiveEffort(r *provider.Request, warn func(code provider.Code, path, format string, args ...any)) provider.Effort {
	t := &r.Target
	if t.Thinking != provider.ThinkingAdaptive || family(r.Model) != "anthropic" || !r.Thinks() {
		return ""
	}
	if warn == nil {
		warn = func(provider.Code, string, string, ...any) {}
	}
	rs := r.Reasoning
	eff := rs.Effort
	if eff == "" && rs.Budget > 0 {
		eff = provider.EffortFor(rs.Budget)
		warn(provider.CodeSettingMapped, "reasoning.budget", "%s thinks adaptively with an effort: %d tokens sent as effort %q", t.Name, rs.Budget, eff)
	}
	if eff == "" {
		return ""
	}
	efforts := t
	if len(t.Efforts) == 0 {
		efforts = &anthropicEfforts
	}
	if m, changed := efforts.Effort(eff); changed {
		warn(provider.CodeSettingMapped, "reasoning.effort", "%s takes no effort %q: %q sent", t.Name, eff, m)
		eff = m
	}
	return eff
}

// novaEfforts are the efforts Amazon Nova's reasoningConfig takes.
var novaEfforts = provider.Model{Efforts: []string{"low", "medium", "high"}}

// novaReasoning writes Amazon Nova's reasoningConfig: off, or on with a
// maximum effort.
func novaReasoning(e *wire.ReqEnc, o *wire.Obj, rs *provider.Reasoning) {
	if rs.Effort == provider.EffortNone {
		o.Raw("reasoningConfig", []byte(`{"type":"disabled"}`))
		return
	}
	eff := rs.Effort
	if eff == "" {
		eff = provider.EffortFor(rs.Budget)
		e.Warn(provider.CodeSettingMapped, "reasoning.budget", "Amazon Nova takes an effort: %d tokens sent as %q", rs.Budget, eff)
	}
	efforts := &e.R.Target
	if len(efforts.Efforts) == 0 {
		efforts = &novaEfforts
	}
	if m, changed := efforts.Effort(eff); changed {
		e.Warn(provider.CodeSettingMapped, "reasoning.effort", "Amazon Nova takes no effort %q: %q sent", eff, m)
		eff = m
	}
	o.Key("reasoningConfig")
	o.Buf = append(o.Buf, `{"type":"enabled","maxReasoningEffort":`...)
	o.Buf = append(jsonx.AppendString(o.Buf, string(eff)), '}')
}

func additionalDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "top_k":
			r.TopK, err = wire.Int(v)
		case "reasoning_effort":
			var s string
			s, err = wire.Str(v)
			r.Reasoning = &provider.Reasoning{Effort: provider.Effort(s)}
		case "thinking":
			return thinkingDec(r, v)
		case "reasoningConfig":
			return novaDec(r, v)
		default:
			return false, nil
		}
		return true, err
	})
}

// thinkingDec reads Anthropic's thinking member; it reports false for a
// shape convo does not know, which is then kept as it was.
func thinkingDec(r *provider.Request, v []byte) (bool, error) {
	var typ string
	var budget int64
	_, err := wire.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "type":
			typ, err = wire.Str(v)
		case "budget_tokens":
			var n *int64
			if n, err = wire.Int(v); n != nil {
				budget = *n
			}
		}
		return true, err
	})
	switch typ {
	case "enabled":
		r.Reasoning = &provider.Reasoning{Budget: budget}
	case "adaptive":
		r.Reasoning = &provider.Reasoning{Budget: -1} // the model decides
	case "disabled":
		r.Reasoning = &provider.Reasoning{Effort: provider.EffortNone}
	default:
		return false, err
	}
	return true, err
}

// novaDec reads Amazon Nova's reasoningConfig.
func novaDec(r *provider.Request, v []byte) (bool, error) {
	var typ, eff string
	rest, err := wire.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "type":
			typ, err = wire.Str(v)
		case "maxReasoningEffort":
			eff, err = wire.Str(v)
		default:
			return false, nil
		}
		return true, err
	})
	switch {
	case len(rest) > 0:
		return false, err
	case typ == "disabled":
		r.Reasoning = &provider.Reasoning{Effort: provider.EffortNone}
	case typ == "enabled" && eff != "":
		r.Reasoning = &provider.Reasoning{Effort: provider.Effort(eff)}
	default:
		return false, err
	}
	return true, err
}

// nativeOutput reports whether r's JSON Schema output goes as Converse's
// own structured output (outputConfig.textFormat): for every model not
// known to lack it.
func nativeOutput(r *provider.Request) bool {
	return !r.Target.Known() || r.Target.StructuredOutput
}

// outputTool reports whether r's JSON Schema output goes as the tool
// provider.OutputTool: to a model known to lack structured output.
func outputTool(r *provider.Request) bool {
	return r.Output.Type == provider.OutputJSONSchema && !nativeOutput(r)
}

// outputConfigEnc writes outputConfig: the effort of an Anthropic model's
// adaptive thinking, and the reply's JSON Schema as textFormat. Converse
// takes the schema as a string holding the JSON document.
func outputConfigEnc(e *wire.ReqEnc) error {
	r := e.R
	o := wire.NewObj(nil)
	if eff := adaptiveEffort(r, nil); eff != "" {
		o.Str("effort", string(eff))
	}
	switch out := r.Output; out.Type {
	case "", provider.OutputText:
	case provider.OutputJSON:
		e.Warn(provider.CodeSettingDropped, "output", "bedrock has no JSON mode without a schema: left out")
	case provider.OutputJSONSchema:
		if !nativeOutput(r) {
			break // the output tool (toolConfigEnc)
		}
		schema := out.Schema
		if schema == nil {
			schema = []byte(`{"type":"object"}`)
		}
		o.Key("textFormat")
		o.Buf = append(o.Buf, `{"type":"json_schema","structure":{"jsonSchema":`...)
		j := wire.NewObj(o.Buf)
		j.Str("schema", string(schema))
		if out.Name != "" {
			j.Str("name", out.Name)
		}
		if out.Description != "" {
			j.Str("description", out.Description)
		}
		o.Buf = append(j.Close(), "}}"...)
	default:
		return fmt.Errorf("unknown output type %q", out.Type)
	}
	if len(o.Buf) > 1 {
		e.O.Raw("outputConfig", o.Close())
	}
	return nil
}

// outputConfigDec reads outputConfig's textFormat. An effort is kept as
// it was read (it bounds the whole reply, thinking or not).
func outputConfigDec(d *wire.ReqDec, v []byte) error {
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		if k != "textFormat" {
			return false, nil
		}
		var typ string
		var js []byte
		err := d.Fields(v, func(k string, v []byte) (bool, error) {
			var err error
			switch k {
			case "type":
				typ, err = wire.Str(v)
			case "structure":
				err = d.Fields(v, func(k string, v []byte) (bool, error) {
					js = v
					return k == "jsonSchema", nil
				})
			default:
				return false, nil
			}
			return true, err
		})
		if err != nil || typ != "json_schema" || js == nil {
			d.Lost = true
			return true, err
		}
		return true, schemaDec(d, js)
	})
}

// schemaDec reads a jsonSchema definition: the schema (a string holding
// JSON), its name and description.
func schemaDec(d *wire.ReqDec, v []byte) error {
	o := &d.R.Output
	o.Type, o.Strict = provider.OutputJSONSchema, true
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "schema":
			var s string
			if s, err = wire.Str(v); err == nil {
				if !json.Valid([]byte(s)) {
					return true, fmt.Errorf("jsonSchema.schema: not a JSON document")
				}
				o.Schema = json.RawMessage(s)
			}
		case "name":
			o.Name, err = wire.Str(v)
		case "description":
			o.Description, err = wire.Str(v)
		default:
			return false, nil
		}
		return true, err
	})
}

// appendOutputTool adds provider.OutputTool, the output schema as its
// input schema, to the tools array that ends b. The reply readers read its
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
	desc := out.Description
	if desc == "" {
		desc = "Give your final answer by calling this tool once, with the answer as its input."
	}
	schema := out.Schema
	if schema == nil {
		schema = []byte(`{"type":"object"}`)
	}
	b = append(b, `{"toolSpec":`...)
	s := wire.NewObj(b)
	s.Str("name", provider.OutputTool)
	s.Str("description", desc)
	s.Key("inputSchema")
	s.Buf = append(append(append(s.Buf, `{"json":`...), schema...), '}')
	e.Warn(provider.CodeSettingMapped, "output", "%s has no native structured output: the schema is sent as the tool %q, whose call is read back as the reply's text",
		e.R.Target.Name, provider.OutputTool)
	return append(s.Close(), "}]"...), nil
}

// outputChoice writes the toolChoice that makes the model answer with
// provider.OutputTool: that tool, when the request has no tools of its own
// to call first; any tool, when it has; the model's choice while an
// Anthropic model thinks, which takes no other.
func outputChoice(e *wire.ReqEnc, o *wire.Obj) {
	r := e.R
	own := false
	for i := range r.Tools {
		own = own || r.Tools[i].Type == ""
	}
	switch {
	case r.Thinks() && family(r.Model) == "anthropic":
		o.Raw("toolChoice", []byte(`{"auto":{}}`))
		e.Warn(provider.CodeSettingMapped, "output", "Anthropic models force no tool while thinking: the model is asked, not made, to answer with %q", provider.OutputTool)
	case !own || r.ToolChoice.Mode == provider.ToolChoiceNone:
		o.Raw("toolChoice", []byte(`{"tool":{"name":"`+provider.OutputTool+`"}}`))
	case r.ToolChoice.Mode == provider.ToolChoiceTool:
		o.Key("toolChoice")
		o.Buf = append(o.Buf, `{"tool":{"name":`...)
		o.Buf = append(jsonx.AppendString(o.Buf, r.ToolChoice.Name), "}}"...)
	default:
		o.Raw("toolChoice", []byte(`{"any":{}}`))
	}
}
