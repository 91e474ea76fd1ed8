package openai

import (
	"fmt"
	"strconv"

	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// chatRequest describes a whole Chat Completions request body.
var chatRequest = &wire.Format{
	Provider: ProviderID,
	Name:     "openai-chat",
	Conv:     []string{"messages"},
	Append:   appendChat,
	Decode:   chat{}.Decode,
	Prefix:   []string{"model"},
	API:      "chat",
	Shared:   sharedMembers,
	// tool_choice {"type":"allowed_tools",…}
	AllowedTools: true,
	Settings: []wire.Setting{
		modelSetting,
		floatSetting("temperature", wire.FTemperature, func(r *provider.Request) **float64 { return &r.Temperature }),
		floatSetting("top_p", wire.FTopP, func(r *provider.Request) **float64 { return &r.TopP }),
		floatSetting("presence_penalty", wire.FPresence, func(r *provider.Request) **float64 { return &r.PresencePenalty }),
		floatSetting("frequency_penalty", wire.FFrequency, func(r *provider.Request) **float64 { return &r.FrequencyPenalty }),
		intSetting("seed", wire.FSeed, func(r *provider.Request) **int64 { return &r.Seed }),
		wire.CountSetting("n", wire.FCandidates, func(r *provider.Request) *int64 { return &r.Candidates }),
		maxTokensSetting("max_completion_tokens", "max_tokens"),
		maxTokensSetting("max_tokens", "max_tokens"),
		wire.StopSetting("stop"),
		{Key: "tools", Fields: wire.FTools, Enc: chatToolsEnc, Dec: chatToolsDec},
		{Key: "tool_choice", Fields: wire.FToolChoice, Enc: chatToolChoiceEnc, Dec: chatToolChoiceDec},
		parallelSetting,
		{Key: "response_format", Fields: wire.FOutput, Enc: chatFormatEnc, Dec: chatFormatDec},
		{Key: "reasoning_effort", Fields: wire.FReasoning, Enc: chatEffortEnc, Dec: chatEffortDec},
		cacheKeySetting,
		wire.BoolSetting("stream", wire.FStream, func(r *provider.Request) *bool { return &r.Stream }),
		{Key: "stream_options", Fields: wire.FStreamUsage, Enc: streamOptionsEnc, Dec: streamOptionsDec},
		wire.StringSetting("user", wire.FUser, func(r *provider.Request) *string { return &r.User }),
		wire.MetadataSetting("metadata"),
	},
}

// EncodeRequest returns the whole Chat Completions request body for r:
// model, messages, tools, tool_choice, response_format, sampling settings,
// reasoning_effort, streaming, and r's native "openai" members. See
// docs/providers.md for the table of settings.
func (chat) EncodeRequest(r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return chatRequest.EncodeRequest(r, opts)
}

// AppendRequest appends the body EncodeRequest returns to dst (see
// provider.RequestAppender); on an error it returns dst as it was.
func (chat) AppendRequest(dst []byte, r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return chatRequest.AppendRequest(dst, r, opts)
}

// DecodeRequest reads a whole Chat Completions request body. Members with
// no Request field (service_tier, store, logit_bias, …) are kept in
// Native["openai"].
func (chat) DecodeRequest(body []byte, opts provider.Options) (*provider.Request, []provider.Warning, error) {
	return chatRequest.DecodeRequest(body, opts)
}

// sharedMembers are the members of Chat and Responses requests that mean
// the same in both and have no Request field.
var sharedMembers = []string{"store", "service_tier", "safety_identifier", "prompt_cache_retention", "top_logprobs"}

var modelSetting = wire.StringSetting("model", wire.FModel, func(r *provider.Request) *string { return &r.Model })

var cacheKeySetting = wire.StringSetting("prompt_cache_key", wire.FCacheKey, func(r *provider.Request) *string { return &r.CacheKey })

var parallelSetting = wire.Setting{Key: "parallel_tool_calls", Fields: wire.FParallel,
	Enc: func(e *wire.ReqEnc) error {
		if e.R.ParallelToolCalls != nil {
			e.O.Bool("parallel_tool_calls", *e.R.ParallelToolCalls)
		}
		return nil
	},
	Dec: func(d *wire.ReqDec, v []byte) error {
		r := d.R
		b, err := wire.Bool(v)
		r.ParallelToolCalls = &b
		return err
	}}

func floatSetting(key string, f wire.Field, field func(*provider.Request) **float64) wire.Setting {
	return wire.FloatSetting(key, f, field)
}

func intSetting(key string, f wire.Field, field func(*provider.Request) **int64) wire.Setting {
	return wire.IntSetting(key, f, field)
}

// maxTokensSetting is one of the spellings of the output limit: key is
// written when the request was read with it, or when it is the spelling
// the format writes by default (the first setting of the pair).
func maxTokensSetting(key, legacy string) wire.Setting {
	return wire.Setting{Key: key, Fields: wire.FMaxTokens,
		Enc: func(e *wire.ReqEnc) error {
			if e.R.MaxTokens == 0 {
				return nil
			}
			old := e.Spelled(legacy)
			if (key == legacy) == old {
				e.O.Int(key, e.R.MaxTokens)
			}
			return nil
		},
		Dec: func(d *wire.ReqDec, v []byte) error {
			r := d.R
			n, err := wire.Int(v)
			if err == nil {
				r.MaxTokens = *n
			}
			return err
		}}
}

// chatToolsEnc writes the function tools, and custom ones kept as read.
func chatToolsEnc(e *wire.ReqEnc) error {
	if len(e.R.Tools) == 0 {
		return nil
	}
	e.O.Key("tools")
	var err error
	e.O.Buf, err = e.AppendTools(e.O.Buf, chatToolType, func(b []byte, t *provider.Tool, i int) ([]byte, error) {
		b = append(b, `{"type":"function","function":`...)
		fn, err := functionEnc(e, wire.NewObj(b), t, i)
		if err != nil {
			return nil, err
		}
		return append(fn.Close(), '}'), nil
	})
	return err
}

// functionEnc writes a function definition's members (name, description,
// parameters, strict, and the tool's native members) into fn.
func functionEnc(e *wire.ReqEnc, fn *wire.Obj, t *provider.Tool, i int) (*wire.Obj, error) {
	fn.Str("name", t.Name)
	if t.Description != "" {
		fn.Str("description", t.Description)
	}
	strict := t.Strict
	if tg := &e.R.Target; strict && tg.Known() && !tg.StrictTools {
		e.Warn(provider.CodeSettingDropped, toolPath(i)+".strict", "%s takes no strict tools: left out", tg.Name)
		strict = false
	}
	if t.Parameters != nil {
		schema, err := strictSchema(e, t.Parameters, strict, toolPath(i)+".parameters")
		if err != nil {
			return nil, err
		}
		fn.Raw("parameters", schema)
	}
	if strict {
		fn.Bool("strict", true)
	}
	if t.Cache != nil {
		e.Warn(provider.CodeSettingDropped, toolPath(i)+".cache", "%s has no cache breakpoints on tools: left out", e.Target)
	}
	return fn, wire.ToolNative(e, fn, t, i)
}

func chatToolType(t string) bool {
	return len(t) > len(ProviderID)+6 && t[len(ProviderID)+1:][:5] == "chat."
}

func toolPath(i int) string { return "tools[" + strconv.Itoa(i) + "]" }

func chatToolsDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return wire.Array(v, func(i int, item []byte) error {
		var t provider.Tool
		var typ []byte
		var fn []byte
		rest, err := wire.Fields(item, func(k string, v []byte) (bool, error) {
			switch k {
			case "type":
				typ = v
				return true, nil
			case "function":
				fn = v
				return true, nil
			}
			return false, nil
		})
		if err != nil {
			return err
		}
		if string(typ) != `"function"` || fn == nil || len(rest) > 0 {
			// A custom tool, or a shape convo does not know: kept whole.
			s, _ := wire.Str(typ)
			r.Tools = append(r.Tools, wire.NativeTool(ProviderID, "chat."+s, item))
			return nil
		}
		if err := functionDec(&t, fn); err != nil {
			return wire.At("function", err)
		}
		r.Tools = append(r.Tools, t)
		return nil
	})
}

// functionDec reads a function definition's members (name, description,
// parameters, strict) into t, keeping the others in t.Native.
func functionDec(t *provider.Tool, v []byte) error {
	rest, err := wire.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "name":
			t.Name, err = wire.Str(v)
		case "description":
			t.Description, err = wire.Str(v)
		case "parameters":
			t.Parameters = v
		case "strict":
			if string(v) != "null" {
				t.Strict, err = wire.Bool(v)
			}
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return err
	}
	t.Native = rest.Native(ProviderID)
	return nil
}

func chatToolChoiceEnc(e *wire.ReqEnc) error {
	c := e.R.ToolChoice
	if len(c.Allowed) > 0 && (c.Mode == provider.ToolChoiceAuto || c.Mode == provider.ToolChoiceRequired) {
		e.O.Key("tool_choice")
		e.O.Buf = append(e.O.Buf, `{"type":"allowed_tools","allowed_tools":{"mode":`...)
		e.O.Buf = append(jsonx.AppendString(e.O.Buf, string(c.Mode)), `,"tools":[`...)
		for i, n := range c.Allowed {
			if i > 0 {
				e.O.Buf = append(e.O.Buf, ',')
			}
			e.O.Buf = append(e.O.Buf, `{"type":"function","function":{"name":`...)
			e.O.Buf = append(jsonx.AppendString(e.O.Buf, n), "}}"...)
		}
		e.O.Buf = append(e.O.Buf, "]}}"...)
		return nil
	}
	switch c.Mode {
	case "":
	case provider.ToolChoiceTool:
		e.O.Key("tool_choice")
		e.O.Buf = append(e.O.Buf, `{"type":"function","function":{"name":`...)
		e.O.Buf = append(jsonx.AppendString(e.O.Buf, c.Name), "}}"...)
	case provider.ToolChoiceAuto, provider.ToolChoiceNone, provider.ToolChoiceRequired:
		e.O.Str("tool_choice", string(c.Mode))
	default:
		return fmt.Errorf("unknown tool choice %q", c.Mode)
	}
	return nil
}

func chatToolChoiceDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	if s, err := wire.Str(v); err == nil {
		switch provider.ToolChoiceMode(s) {
		case provider.ToolChoiceAuto, provider.ToolChoiceNone, provider.ToolChoiceRequired:
			r.ToolChoice.Mode = provider.ToolChoiceMode(s)
		default:
			d.Lost = true
		}
		return nil
	}
	if allowedChoice(d, v, chatAllowedName) {
		return nil
	}
	var name string
	err := d.Fields(v, func(k string, v []byte) (bool, error) {
		switch k {
		case "type":
			return string(v) == `"function"`, nil
		case "function":
			return true, d.Fields(v, func(k string, v []byte) (bool, error) {
				if k != "name" {
					return false, nil
				}
				var err error
				name, err = wire.Str(v)
				return true, err
			})
		}
		return false, nil
	})
	if name == "" {
		d.Lost = true
		return err
	}
	r.ToolChoice = provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: name}
	return err
}

// allowedChoice reads an allowed_tools tool choice into d.R.ToolChoice
// (mode and allowed names), whether Chat's ({"type":"allowed_tools",
// "allowed_tools":{"mode","tools"}}) or Responses' ({"type":
// "allowed_tools","mode","tools"}); name returns the function name of
// one entry of tools, or false for another kind of tool, which keeps the
// member as it was read. It reports false when v is no allowed_tools
// choice.
func allowedChoice(d *wire.ReqDec, v []byte, name func(item []byte) (string, bool)) bool {
	var typ, mode string
	var tools []byte
	var read func(k string, v []byte) (bool, error)
	read = func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "type":
			typ, err = wire.Str(v)
		case "mode":
			mode, err = wire.Str(v)
		case "tools":
			tools = v
		case "allowed_tools":
			_, err = wire.Fields(v, read)
		default:
			return false, nil
		}
		return true, err
	}
	rest, err := wire.Fields(v, read)
	if err != nil || typ != "allowed_tools" {
		return false
	}
	c := provider.ToolChoice{Mode: provider.ToolChoiceMode(mode)}
	ok := len(rest) == 0 && (c.Mode == provider.ToolChoiceAuto || c.Mode == provider.ToolChoiceRequired)
	if ok && wire.Array(tools, func(_ int, item []byte) error {
		n, isFn := name(item)
		ok = ok && isFn && n != ""
		c.Allowed = append(c.Allowed, n)
		return nil
	}) != nil {
		ok = false
	}
	if !ok || len(c.Allowed) == 0 {
		d.Lost = true
		return true
	}
	d.R.ToolChoice = c
	return true
}

// chatAllowedName reads {"type":"function","function":{"name":…}}.
func chatAllowedName(item []byte) (string, bool) {
	var name string
	fn := false
	rest, err := wire.Fields(item, func(k string, v []byte) (bool, error) {
		switch k {
		case "type":
			fn = string(v) == `"function"`
		case "function":
			r, err := wire.Fields(v, func(k string, v []byte) (bool, error) {
				var err error
				if k == "name" {
					name, err = wire.Str(v)
				}
				return k == "name", err
			})
			return len(r) == 0, err
		default:
			return false, nil
		}
		return true, nil
	})
	return name, fn && err == nil && len(rest) == 0
}

func chatFormatEnc(e *wire.ReqEnc) error {
	o := e.R.Output
	switch o.Type {
	case "":
	case provider.OutputText:
		e.O.Raw("response_format", []byte(`{"type":"text"}`))
	case provider.OutputJSON:
		e.O.Raw("response_format", []byte(`{"type":"json_object"}`))
	case provider.OutputJSONSchema:
		e.O.Key("response_format")
		e.O.Buf = append(e.O.Buf, `{"type":"json_schema","json_schema":`...)
		js := wire.NewObj(e.O.Buf)
		name := o.Name
		if name == "" {
			name = "response"
			e.Warn(provider.CodeSettingMapped, "output.name", "openai-chat needs a schema name: %q sent", name)
		}
		js.Str("name", name)
		if o.Description != "" {
			js.Str("description", o.Description)
		}
		if o.Schema != nil {
			schema, err := strictSchema(e, o.Schema, o.Strict, "output.schema")
			if err != nil {
				return err
			}
			js.Raw("schema", schema)
		}
		if o.Strict {
			js.Bool("strict", true)
		}
		e.O.Buf = append(js.Close(), '}')
	default:
		return fmt.Errorf("unknown output type %q", o.Type)
	}
	return nil
}

func chatFormatDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	var typ string
	var js []byte
	err := d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "type":
			typ, err = wire.Str(v)
		case "json_schema":
			js = v
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return err
	}
	switch typ {
	case "text":
		r.Output.Type = provider.OutputText
	case "json_object":
		r.Output.Type = provider.OutputJSON
	case "json_schema":
		r.Output.Type = provider.OutputJSONSchema
		return schemaFormatDec(d, &r.Output, js)
	default:
		d.Lost = true
	}
	return nil
}

// schemaFormatDec reads the members of a JSON Schema output format (name,
// description, schema, strict).
func schemaFormatDec(d *wire.ReqDec, o *provider.Output, v []byte) error {
	if v == nil {
		return nil
	}
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "name":
			o.Name, err = wire.Str(v)
		case "description":
			o.Description, err = wire.Str(v)
		case "schema":
			o.Schema = v
		case "strict":
			o.Strict, err = wire.Bool(v)
		default:
			return false, nil
		}
		return true, err
	})
}

// effortFor returns the effort to send for r's reasoning, mapping a
// budget by the reasoning table with a warning.
func effortFor(e *wire.ReqEnc, rs *provider.Reasoning) provider.Effort {
	eff := rs.Effort
	if eff == "" && rs.Budget != 0 {
		eff = provider.EffortFor(rs.Budget)
		e.Warn(provider.CodeSettingMapped, "reasoning.budget",
			"%s takes an effort, not a budget: %d tokens sent as %q", e.Target, rs.Budget, eff)
	}
	if tg := &e.R.Target; eff != "" {
		// gpt-5 takes minimal but not none, gpt-5.1 the other way round.
		if m, changed := tg.Effort(eff); changed {
			e.Warn(provider.CodeSettingMapped, "reasoning.effort", "%s takes no effort %q: %q sent", tg.Name, eff, m)
			eff = m
		}
	}
	return eff
}

func chatEffortEnc(e *wire.ReqEnc) error {
	rs := e.R.Reasoning
	if rs == nil {
		return nil
	}
	if eff := effortFor(e, rs); eff != "" {
		e.O.Str("reasoning_effort", string(eff))
	}
	if rs.Summary != "" {
		e.Warn(provider.CodeSettingDropped, "reasoning.summary", "openai-chat returns no reasoning summaries: left out")
	}
	if rs.Encrypted {
		e.Warn(provider.CodeSettingDropped, "reasoning.encrypted", "openai-chat returns no encrypted reasoning: left out")
	}
	return nil
}

func chatEffortDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	s, err := wire.Str(v)
	if err != nil {
		return err
	}
	r.Reasoning = &provider.Reasoning{Effort: provider.Effort(s)}
	return nil
}

func streamOptionsEnc(e *wire.ReqEnc) error {
	if e.R.StreamUsage {
		e.O.Raw("stream_options", []byte(`{"include_usage":true}`))
	}
	return nil
}

func streamOptionsDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		if k == "include_usage" {
			b, err := wire.Bool(v)
			r.StreamUsage = b
			return true, err
		}
		return false, nil
	})
}

// strictSchema returns schema in OpenAI's strict dialect when strict is
// set (see provider.TranslateSchema), and as it is otherwise.
func strictSchema(e *wire.ReqEnc, schema []byte, strict bool, path string) ([]byte, error) {
	if !strict {
		return schema, nil
	}
	out, warns, err := provider.TranslateSchema(schema, provider.DialectOpenAIStrict, path)
	e.Warns = append(e.Warns, warns...)
	return out, err
}
