package gemini

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

var request = &wire.Format{
	Provider:     ProviderID,
	Name:         Name,
	AllowedTools: true,
	Conv:         []string{"contents", "systemInstruction", "system_instruction"},
	Append:       appendConv,
	Decode:       generateContent{}.Decode,
	// The model and streaming are in the URL (models/M:generateContent,
	// :streamGenerateContent); streams always carry usage.
	Carried: wire.FModel | wire.FStream | wire.FStreamUsage,
	Settings: []wire.Setting{
		{Key: "tools", Fields: wire.FTools, Enc: toolsEnc, Dec: toolsDec},
		{Key: "toolConfig", Fields: wire.FToolChoice, Enc: toolConfigEnc, Dec: toolConfigDec},
		{Key: "generationConfig", Fields: wire.FOutput | wire.FMaxTokens | wire.FTemperature | wire.FTopP |
			wire.FTopK | wire.FPresence | wire.FFrequency | wire.FSeed | wire.FStop | wire.FReasoning | wire.FCandidates,
			Enc: genConfigEnc, Dec: genConfigDec},
	},
}

// EncodeRequest returns the whole generateContent request body for r:
// systemInstruction and contents, tools (function declarations with their
// JSON Schema as parametersJsonSchema, and Gemini's own tools kept in
// Native), toolConfig, generationConfig with thinkingConfig, and r's native
// "gemini" members (safetySettings, cachedContent, labels, …). The model
// and streaming are not in the body: they choose the URL. See
// docs/providers.md for the table of settings.
func (generateContent) EncodeRequest(r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return request.EncodeRequest(r, opts)
}

// AppendRequest appends the body EncodeRequest returns to dst (see
// provider.RequestAppender); on an error it returns dst as it was.
func (generateContent) AppendRequest(dst []byte, r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return request.AppendRequest(dst, r, opts)
}

// DecodeRequest reads a whole generateContent request body. Members with
// no Request field are kept in Native["gemini"]; tools other than function
// declarations (googleSearch, codeExecution, …) are kept whole as tools of
// type "gemini:<member>".
func (generateContent) DecodeRequest(body []byte, opts provider.Options) (*provider.Request, []provider.Warning, error) {
	r, warns, err := request.DecodeRequest(body, opts)
	if err == nil && bytes.Contains(body, []byte(`"VALIDATED"`)) && validated(body) {
		// VALIDATED keeps every call to its function's schema: the
		// function tools are strict.
		for i := range r.Tools {
			if r.Tools[i].Type == "" {
				r.Tools[i].Strict = true
			}
		}
	}
	return r, warns, err
}

// validated reports whether a request body's function calling mode is
// VALIDATED.
func validated(body []byte) bool {
	found := false
	_, _ = wire.Top(body, convo.DefaultLimits, func(k string, v []byte) (bool, error) {
		if k != "toolConfig" && k != "tool_config" {
			return true, nil
		}
		_, _ = wire.Fields(v, func(_ string, v []byte) (bool, error) {
			_, _ = wire.Fields(v, func(k string, v []byte) (bool, error) {
				found = found || (k == "mode" && string(v) == `"VALIDATED"`)
				return true, nil
			})
			return true, nil
		})
		return true, nil
	})
	return found
}

func toolsEnc(e *wire.ReqEnc) error {
	if len(e.R.Tools) == 0 {
		return nil
	}
	e.O.Key("tools")
	b := append(e.O.Buf, '[')
	n := 0
	decls := -1 // function declarations go in one tools entry, where the first was
	for i := range e.R.Tools {
		t := &e.R.Tools[i]
		if t.Type != "" {
			def, ok := wire.OwnTool(t, ProviderID)
			if !ok {
				e.Warns = append(e.Warns, wire.ForeignTool(i, t, Name))
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			b = append(b, def...)
			n++
			continue
		}
		if decls >= 0 {
			continue
		}
		decls = i
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = append(b, `{"functionDeclarations":[`...)
		m := 0
		for j := i; j < len(e.R.Tools); j++ {
			t := &e.R.Tools[j]
			if t.Type != "" {
				continue
			}
			if m > 0 {
				b = append(b, ',')
			}
			m++
			o := wire.NewObj(b)
			o.Str("name", t.Name)
			if t.Description != "" {
				o.Str("description", t.Description)
			}
			if t.Parameters != nil {
				// Full JSON Schema: Gemini takes it as parametersJsonSchema,
				// where parameters takes only its OpenAPI subset.
				o.Raw("parametersJsonSchema", t.Parameters)
			}
			switch strict := strictTools(e.R); {
			case t.Strict && !strict:
				e.Warn(provider.CodeSettingDropped, index("tools", j)+".strict", "%s takes no strict tools: left out", e.R.Target.Name)
			case t.Strict && strict && e.R.ToolChoice.Mode != "" && e.R.ToolChoice.Mode != provider.ToolChoiceAuto:
				// Only VALIDATED (auto) says it in the request.
				e.Warn(provider.CodeSettingMapped, index("tools", j)+".strict", "gemini has no strict member: mode %s sent, which keeps calls to their schemas unless none are made", e.R.ToolChoice.Mode)
			case !t.Strict && strict && e.R.ToolChoice.Mode != provider.ToolChoiceNone:
				e.Warn(provider.CodeSettingMapped, index("tools", j)+".strict", "gemini keeps every call to its schema (mode VALIDATED or ANY) when one tool is strict: this one too")
			}
			if t.Cache != nil {
				e.Warn(provider.CodeSettingDropped, index("tools", j)+".cache", "gemini has no cache breakpoints on tools: left out")
			}
			if err := wire.ToolNative(e, o, t, j); err != nil {
				return err
			}
			b = o.Close()
		}
		b = append(b, "]}"...)
	}
	e.O.Buf = append(b, ']')
	return nil
}

func toolsDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return wire.Array(v, func(i int, item []byte) error {
		var decls []byte
		rest, err := wire.Fields(item, func(k string, v []byte) (bool, error) {
			if k == "functionDeclarations" || k == "function_declarations" {
				decls = v
				return true, nil
			}
			return false, nil
		})
		if err != nil {
			return err
		}
		if decls == nil {
			typ := ""
			if len(rest) > 0 {
				typ = rest[0].Key
			}
			r.Tools = append(r.Tools, wire.NativeTool(ProviderID, typ, item))
			return nil
		}
		if len(rest) > 0 {
			d.Lost = true // other tools in the same entry: the member is kept as it was
		}
		return wire.At("functionDeclarations", wire.Array(decls, func(j int, v []byte) error {
			var t provider.Tool
			rest, err := wire.Fields(v, func(k string, v []byte) (bool, error) {
				var err error
				switch k {
				case "name":
					t.Name, err = wire.Str(v)
				case "description":
					t.Description, err = wire.Str(v)
				case "parametersJsonSchema", "parameters_json_schema":
					t.Parameters = v
				case "parameters":
					t.Parameters, err = FromOpenAPI(v)
				default:
					return false, nil
				}
				return true, err
			})
			if err != nil {
				return err
			}
			t.Native = rest.Native(ProviderID)
			r.Tools = append(r.Tools, t)
			return nil
		}))
	})
}

// strictTools reports whether r asks for arguments that keep to the tools'
// schemas (a strict function tool) and the target is not known to refuse
// it: Gemini's VALIDATED and ANY modes give that.
func strictTools(r *provider.Request) bool {
	if r.Target.Known() && !r.Target.StrictTools {
		return false
	}
	for i := range r.Tools {
		if r.Tools[i].Type == "" && r.Tools[i].Strict {
			return true
		}
	}
	return false
}

func toolConfigEnc(e *wire.ReqEnc) error {
	c := e.R.ToolChoice
	strict := strictTools(e.R)
	var mode string
	names := c.Allowed
	switch c.Mode {
	case "":
		if !strict {
			return nil
		}
		mode = "VALIDATED"
	case provider.ToolChoiceAuto:
		mode = "AUTO"
		if strict || len(names) > 0 {
			// Calls or text, and the calls only of the allowed tools
			// (allowedFunctionNames goes with ANY or VALIDATED only).
			mode = "VALIDATED"
		}
	case provider.ToolChoiceNone:
		mode = "NONE"
	case provider.ToolChoiceRequired:
		mode = "ANY"
	case provider.ToolChoiceTool:
		mode, names = "ANY", []string{c.Name}
	default:
		return fmt.Errorf("unknown tool choice %q", c.Mode)
	}
	e.O.Key("toolConfig")
	e.O.Buf = append(e.O.Buf, `{"functionCallingConfig":{"mode":`...)
	e.O.Buf = jsonx.AppendString(e.O.Buf, mode)
	if len(names) > 0 {
		e.O.Buf = append(e.O.Buf, `,"allowedFunctionNames":`...)
		e.O.Buf = wire.AppendStrings(e.O.Buf, names)
	}
	e.O.Buf = append(e.O.Buf, "}}"...)
	return nil
}

func toolConfigDec(d *wire.ReqDec, v []byte) error {
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		if k != "functionCallingConfig" && k != "function_calling_config" {
			return false, nil
		}
		var mode string
		var names []string
		err := d.Fields(v, func(k string, v []byte) (bool, error) {
			var err error
			switch k {
			case "mode":
				mode, err = wire.Str(v)
			case "allowedFunctionNames", "allowed_function_names":
				names, err = wire.Strings(v)
			default:
				return false, nil
			}
			return true, err
		})
		c := &d.R.ToolChoice
		switch {
		case mode == "AUTO" && names == nil:
			c.Mode = provider.ToolChoiceAuto
		case mode == "NONE" && names == nil:
			c.Mode = provider.ToolChoiceNone
		case mode == "ANY" && names == nil:
			c.Mode = provider.ToolChoiceRequired
		case mode == "ANY" && len(names) == 1:
			*c = provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: names[0]}
		case mode == "ANY" && len(names) > 1:
			*c = provider.ToolChoice{Mode: provider.ToolChoiceRequired, Allowed: names}
		case mode == "VALIDATED":
			// Calls or text, the calls keeping to their schemas: auto with
			// strict tools (DecodeRequest marks them).
			*c = provider.ToolChoice{Mode: provider.ToolChoiceAuto, Allowed: names}
		default:
			d.Lost = true // VALIDATED, several allowed names: kept as it was
		}
		return true, err
	})
}

// gemini2 reports whether model is a Gemini 2.x model, which takes a
// thinking budget rather than a level.
func gemini2(model string) bool {
	m := strings.TrimPrefix(model, "models/")
	return strings.HasPrefix(m, "gemini-2") || strings.HasPrefix(m, "gemini-1")
}

func genConfigEnc(e *wire.ReqEnc) error {
	r := e.R
	o := wire.NewObj(nil)
	if r.Temperature != nil {
		o.Float("temperature", *r.Temperature)
	}
	if r.TopP != nil {
		o.Float("topP", *r.TopP)
	}
	if r.TopK != nil {
		o.Int("topK", *r.TopK)
	}
	if r.MaxTokens != 0 {
		o.Int("maxOutputTokens", r.MaxTokens)
	}
	if len(r.Stop) > 0 {
		o.Strings("stopSequences", r.Stop)
	}
	if r.PresencePenalty != nil {
		o.Float("presencePenalty", *r.PresencePenalty)
	}
	if r.FrequencyPenalty != nil {
		o.Float("frequencyPenalty", *r.FrequencyPenalty)
	}
	if r.Seed != nil {
		o.Int("seed", *r.Seed)
	}
	if r.Candidates != 0 {
		o.Int("candidateCount", r.Candidates)
	}
	switch r.Output.Type {
	case "":
	case provider.OutputText:
		o.Str("responseMimeType", "text/plain")
	case provider.OutputJSON:
		o.Str("responseMimeType", "application/json")
	case provider.OutputJSONSchema:
		o.Str("responseMimeType", "application/json")
		if r.Output.Schema != nil {
			o.Raw("responseJsonSchema", r.Output.Schema)
		}
		if r.Output.Name != "" || r.Output.Description != "" {
			e.Warn(provider.CodeSettingDropped, "output.name", "gemini takes no schema name or description: left out")
		}
	default:
		return fmt.Errorf("unknown output type %q", r.Output.Type)
	}
	if rs := r.Reasoning; rs != nil {
		if err := thinkingEnc(e, o, rs); err != nil {
			return err
		}
	}
	if len(o.Buf) == 1 {
		return nil
	}
	e.O.Raw("generationConfig", o.Close())
	return nil
}

// thinksByLevel reports whether r's target takes a thinking level
// (Gemini 3) rather than a budget (Gemini 2.5): as Request.Target says,
// else by the model's name.
func thinksByLevel(r *provider.Request) (level, known bool) {
	switch r.Target.Thinking {
	case provider.ThinkingLevel, provider.ThinkingEffort, provider.ThinkingAdaptive:
		return true, true
	case provider.ThinkingBudget:
		return false, true
	}
	return !gemini2(r.Model), false
}

func thinkingEnc(e *wire.ReqEnc, o *wire.Obj, rs *provider.Reasoning) error {
	t := wire.NewObj(nil)
	var err error
	if level, known := thinksByLevel(e.R); known && level {
		levelEnc(e, t, rs)
	} else {
		err = budgetEnc(e, t, rs, known)
	}
	if err != nil {
		return err
	}
	switch rs.Summary {
	case "":
	case "none":
		t.Bool("includeThoughts", false)
	default:
		t.Bool("includeThoughts", true)
	}
	if len(t.Buf) > 1 {
		o.Raw("thinkingConfig", t.Close())
	}
	return nil
}

// budgetEnc writes a thinkingBudget (Gemini 2.5), or, for a model not
// known to take one, a level for an effort when its name is not Gemini
// 2's, as convo did before it knew models.
func budgetEnc(e *wire.ReqEnc, t *wire.Obj, rs *provider.Reasoning, known bool) error {
	tg := &e.R.Target
	var b int64
	switch {
	case rs.Budget != 0:
		b = rs.Budget
		if rs.Effort != "" {
			e.Warn(provider.CodeSettingDropped, "reasoning.effort", "gemini takes a budget or a level: the budget is sent, effort %q left out", rs.Effort)
		}
	case rs.Effort == provider.EffortNone:
		b = 0
	case rs.Effort != "" && (known || gemini2(e.R.Model)):
		b = provider.BudgetFor(rs.Effort)
		if b < 0 {
			return fmt.Errorf("reasoning effort %q has no budget in the reasoning table", rs.Effort)
		}
		e.Warn(provider.CodeSettingMapped, "reasoning.effort", "%s takes a thinking budget: effort %q sent as %d tokens", e.R.Model, rs.Effort, b)
	case rs.Effort != "":
		t.Str("thinkingLevel", string(rs.Effort))
		return nil
	default:
		return nil
	}
	if c, changed := tg.Budget(b); changed {
		e.Warn(provider.CodeSettingMapped, "reasoning.budget", "%s takes %d to %d thinking tokens: %d sent as %d", tg.Name, tg.MinBudget, tg.MaxBudget, b, c)
		b = c
	} else if b == 0 && tg.MinBudget > 0 {
		// Gemini 2.5 Pro cannot stop thinking: its least is sent.
		e.Warn(provider.CodeSettingMapped, "reasoning", "%s cannot turn thinking off: its least budget, %d, sent", tg.Name, tg.MinBudget)
		b = int64(tg.MinBudget)
	}
	t.Int("thinkingBudget", b)
	return nil
}

// levelEnc writes a thinkingLevel (Gemini 3): the effort the model takes
// nearest the request's, a budget as the level the reasoning table gives
// it; a budget of -1 (let the model decide) is the model's default, no
// level.
func levelEnc(e *wire.ReqEnc, t *wire.Obj, rs *provider.Reasoning) {
	tg := &e.R.Target
	eff := rs.Effort
	switch {
	case rs.Budget > 0 && eff == "":
		eff = provider.EffortFor(rs.Budget)
		e.Warn(provider.CodeSettingMapped, "reasoning.budget", "%s takes a thinking level: %d tokens sent as %q", tg.Name, rs.Budget, eff)
	case rs.Budget == 0 && eff == "", rs.Budget == -1 && eff == "":
		return
	case rs.Budget != 0:
		e.Warn(provider.CodeSettingDropped, "reasoning.budget", "%s takes a thinking level, not a budget as well: %d tokens left out", tg.Name, rs.Budget)
	}
	if l, changed := tg.Effort(eff); changed {
		e.Warn(provider.CodeSettingMapped, "reasoning.effort", "%s takes no thinking level %q: %q sent", tg.Name, eff, l)
		eff = l
	} else if eff == provider.EffortNone {
		// Gemini 3 has no level "none": the least is minimal.
		e.Warn(provider.CodeSettingMapped, "reasoning.effort", "%s cannot turn thinking off: level %q sent", tg.Name, provider.EffortMinimal)
		eff = provider.EffortMinimal
	}
	t.Str("thinkingLevel", string(eff))
}

func genConfigDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "temperature":
			r.Temperature, err = wire.Float(v)
		case "topP", "top_p":
			r.TopP, err = wire.Float(v)
		case "topK", "top_k":
			r.TopK, err = wire.Int(v)
		case "maxOutputTokens", "max_output_tokens":
			var n *int64
			if n, err = wire.Int(v); n != nil {
				r.MaxTokens = *n
			}
		case "stopSequences", "stop_sequences":
			r.Stop, err = wire.Strings(v)
		case "presencePenalty", "presence_penalty":
			r.PresencePenalty, err = wire.Float(v)
		case "frequencyPenalty", "frequency_penalty":
			r.FrequencyPenalty, err = wire.Float(v)
		case "seed":
			r.Seed, err = wire.Int(v)
		case "candidateCount", "candidate_count":
			var n *int64
			if n, err = wire.Int(v); n != nil {
				r.Candidates = *n
			}
		case "responseMimeType", "response_mime_type":
			var s string
			s, err = wire.Str(v)
			switch s {
			case "application/json":
				if r.Output.Type == "" {
					r.Output.Type = provider.OutputJSON
				}
			case "text/plain":
				r.Output.Type = provider.OutputText
			default:
				return false, err
			}
		case "responseJsonSchema", "response_json_schema":
			r.Output.Type, r.Output.Schema = provider.OutputJSONSchema, v
		case "responseSchema", "response_schema":
			r.Output.Type = provider.OutputJSONSchema
			r.Output.Schema, err = FromOpenAPI(v)
		case "thinkingConfig", "thinking_config":
			err = thinkingDec(d, v)
		default:
			return false, nil
		}
		return true, err
	})
}

func thinkingDec(d *wire.ReqDec, v []byte) error {
	rs := &provider.Reasoning{}
	d.R.Reasoning = rs
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "thinkingBudget", "thinking_budget":
			var n *int64
			if n, err = wire.Int(v); n != nil {
				if rs.Budget = *n; *n == 0 {
					rs.Effort = provider.EffortNone
				}
			}
		case "thinkingLevel", "thinking_level":
			var s string
			s, err = wire.Str(v)
			rs.Effort = provider.Effort(strings.ToLower(s))
		case "includeThoughts", "include_thoughts":
			var b bool
			b, err = wire.Bool(v)
			rs.Summary = "none"
			if b {
				rs.Summary = "auto"
			}
		default:
			return false, nil
		}
		return true, err
	})
}
