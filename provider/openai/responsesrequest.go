package openai

import (
	"fmt"

	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// encryptedInclude is the include entry that asks for reasoning back in
// encrypted form.
const encryptedInclude = "reasoning.encrypted_content"

// responsesRequest describes a whole Responses request body.
var responsesRequest = &wire.Format{
	Provider: ProviderID,
	Name:     "openai-responses",
	Conv:     []string{"input", "instructions"},
	Append:   appendResponses,
	Decode:   responses{}.Decode,
	Prefix:   []string{"model"},
	API:      "responses",
	Shared:   sharedMembers,
	// tool_choice {"type":"allowed_tools",…}
	AllowedTools: true,
	// Streams always end with usage (response.completed).
	Carried: wire.FStreamUsage,
	Settings: []wire.Setting{
		modelSetting,
		floatSetting("temperature", wire.FTemperature, func(r *provider.Request) **float64 { return &r.Temperature }),
		floatSetting("top_p", wire.FTopP, func(r *provider.Request) **float64 { return &r.TopP }),
		maxTokensSetting("max_output_tokens", ""),
		{Key: "tools", Fields: wire.FTools, Enc: respToolsEnc, Dec: respToolsDec},
		{Key: "tool_choice", Fields: wire.FToolChoice, Enc: respToolChoiceEnc, Dec: respToolChoiceDec},
		parallelSetting,
		{Key: "text", Fields: wire.FOutput, Enc: respTextEnc, Dec: respTextDec},
		{Key: "reasoning", Fields: wire.FReasoning, Enc: respReasoningEnc, Dec: respReasoningDec},
		{Key: "include", Fields: wire.FReasoning, Enc: includeEnc, Dec: includeDec},
		cacheKeySetting,
		wire.BoolSetting("stream", wire.FStream, func(r *provider.Request) *bool { return &r.Stream }),
		wire.StringSetting("user", wire.FUser, func(r *provider.Request) *string { return &r.User }),
		wire.MetadataSetting("metadata"),
	},
}

// EncodeRequest returns the whole Responses request body for r: model,
// instructions and input, tools, tool_choice, text.format, reasoning,
// include, sampling settings, streaming, and r's native "openai" members
// (store, previous_response_id, service_tier, truncation, …). See
// docs/providers.md for the table of settings.
func (responses) EncodeRequest(r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return responsesRequest.EncodeRequest(r, opts)
}

// AppendRequest appends the body EncodeRequest returns to dst (see
// provider.RequestAppender); on an error it returns dst as it was.
func (responses) AppendRequest(dst []byte, r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return responsesRequest.AppendRequest(dst, r, opts)
}

// DecodeRequest reads a whole Responses request body. Members with no
// Request field are kept in Native["openai"]; hosted tools (web_search,
// file_search, mcp, …) are kept whole as tools of type "openai:<type>".
func (responses) DecodeRequest(body []byte, opts provider.Options) (*provider.Request, []provider.Warning, error) {
	return responsesRequest.DecodeRequest(body, opts)
}

func respToolsEnc(e *wire.ReqEnc) error {
	if len(e.R.Tools) == 0 {
		return nil
	}
	e.O.Key("tools")
	var err error
	e.O.Buf, err = e.AppendTools(e.O.Buf, func(typ string) bool { return !chatToolType(typ) },
		func(b []byte, t *provider.Tool, i int) ([]byte, error) {
			fn := wire.NewObj(b)
			fn.Str("type", "function")
			fn, err := functionEnc(e, fn, t, i)
			if err != nil {
				return nil, err
			}
			return fn.Close(), nil
		})
	return err
}

func respToolsDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return wire.Array(v, func(i int, item []byte) error {
		var typ string
		_, err := wire.Fields(item, func(k string, v []byte) (bool, error) {
			if k == "type" {
				var err error
				typ, err = wire.Str(v)
				return true, err
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		if typ != "function" {
			r.Tools = append(r.Tools, wire.NativeTool(ProviderID, typ, item))
			return nil
		}
		var t provider.Tool
		if err := functionDec(&t, item); err != nil {
			return err
		}
		// functionDec kept "type" among the members it does not know.
		if ms, _ := wire.ReadMembers(t.Native[ProviderID], ProviderID, &jsonx.Reader{}); len(ms) == 1 {
			t.Native = nil
		} else {
			t.Native = dropMember(ms, "type").Native(ProviderID)
		}
		r.Tools = append(r.Tools, t)
		return nil
	})
}

func dropMember(ms wire.Members, key string) wire.Members {
	out := ms[:0:0]
	for _, m := range ms {
		if m.Key != key {
			out = append(out, m)
		}
	}
	return out
}

func respToolChoiceEnc(e *wire.ReqEnc) error {
	c := e.R.ToolChoice
	if len(c.Allowed) > 0 && (c.Mode == provider.ToolChoiceAuto || c.Mode == provider.ToolChoiceRequired) {
		// Responses' own shape: mode and tools beside the type, each tool
		// named without a "function" object.
		e.O.Key("tool_choice")
		e.O.Buf = append(e.O.Buf, `{"type":"allowed_tools","mode":`...)
		e.O.Buf = append(jsonx.AppendString(e.O.Buf, string(c.Mode)), `,"tools":[`...)
		for i, n := range c.Allowed {
			if i > 0 {
				e.O.Buf = append(e.O.Buf, ',')
			}
			e.O.Buf = append(e.O.Buf, `{"type":"function","name":`...)
			e.O.Buf = append(jsonx.AppendString(e.O.Buf, n), '}')
		}
		e.O.Buf = append(e.O.Buf, "]}"...)
		return nil
	}
	switch c.Mode {
	case "":
	case provider.ToolChoiceTool:
		e.O.Key("tool_choice")
		e.O.Buf = append(e.O.Buf, `{"type":"function","name":`...)
		e.O.Buf = append(jsonx.AppendString(e.O.Buf, c.Name), '}')
	case provider.ToolChoiceAuto, provider.ToolChoiceNone, provider.ToolChoiceRequired:
		e.O.Str("tool_choice", string(c.Mode))
	default:
		return fmt.Errorf("unknown tool choice %q", c.Mode)
	}
	return nil
}

func respToolChoiceDec(d *wire.ReqDec, v []byte) error {
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
	if allowedChoice(d, v, respAllowedName) {
		return nil
	}
	var name string
	function := false
	err := d.Fields(v, func(k string, v []byte) (bool, error) {
		switch k {
		case "type":
			function = string(v) == `"function"`
			return function, nil
		case "name":
			var err error
			name, err = wire.Str(v)
			return true, err
		}
		return false, nil
	})
	if !function || name == "" {
		d.Lost = true
		return err
	}
	r.ToolChoice = provider.ToolChoice{Mode: provider.ToolChoiceTool, Name: name}
	return err
}

// respAllowedName reads {"type":"function","name":…}; a hosted tool
// (mcp, image_generation, …) is not a function.
func respAllowedName(item []byte) (string, bool) {
	var name string
	fn := false
	rest, err := wire.Fields(item, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "type":
			fn = string(v) == `"function"`
		case "name":
			name, err = wire.Str(v)
		default:
			return false, nil
		}
		return true, err
	})
	return name, fn && err == nil && len(rest) == 0
}

func respTextEnc(e *wire.ReqEnc) error {
	o := e.R.Output
	if o.Type == "" {
		return nil
	}
	e.O.Key("text")
	e.O.Buf = append(e.O.Buf, `{"format":`...)
	f := wire.NewObj(e.O.Buf)
	switch o.Type {
	case provider.OutputText:
		f.Str("type", "text")
	case provider.OutputJSON:
		f.Str("type", "json_object")
	case provider.OutputJSONSchema:
		f.Str("type", "json_schema")
		name := o.Name
		if name == "" {
			name = "response"
			e.Warn(provider.CodeSettingMapped, "output.name", "openai-responses needs a schema name: %q sent", name)
		}
		f.Str("name", name)
		if o.Description != "" {
			f.Str("description", o.Description)
		}
		if o.Schema != nil {
			schema, err := strictSchema(e, o.Schema, o.Strict, "output.schema")
			if err != nil {
				return err
			}
			f.Raw("schema", schema)
		}
		if o.Strict {
			f.Bool("strict", true)
		}
	default:
		return fmt.Errorf("unknown output type %q", o.Type)
	}
	e.O.Buf = append(f.Close(), '}')
	return nil
}

func respTextDec(d *wire.ReqDec, v []byte) error {
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		if k != "format" {
			return false, nil // verbosity: kept as it was
		}
		var typ string
		err := d.Fields(v, func(k string, v []byte) (bool, error) {
			var err error
			if k == "type" {
				typ, err = wire.Str(v)
				return true, err
			}
			return true, nil
		})
		if err != nil {
			return true, err
		}
		switch typ {
		case "text":
			d.R.Output.Type = provider.OutputText
		case "json_object":
			d.R.Output.Type = provider.OutputJSON
		case "json_schema":
			d.R.Output.Type = provider.OutputJSONSchema
			return true, schemaFormatDec(d, &d.R.Output, dropTypeMember(v))
		default:
			d.Lost = true
		}
		return true, nil
	})
}

// dropTypeMember returns the object v without its "type" member.
func dropTypeMember(v []byte) []byte {
	ms, err := wire.ReadMembers(v, ProviderID, &jsonx.Reader{})
	if err != nil {
		return v
	}
	return dropMember(ms, "type").Object()
}

func reasoningOf(r *provider.Request) *provider.Reasoning {
	if r.Reasoning == nil {
		r.Reasoning = &provider.Reasoning{}
	}
	return r.Reasoning
}

func respReasoningEnc(e *wire.ReqEnc) error {
	rs := e.R.Reasoning
	if rs == nil {
		return nil
	}
	eff := effortFor(e, rs)
	if eff == "" && rs.Summary == "" {
		return nil
	}
	e.O.Key("reasoning")
	o := wire.NewObj(e.O.Buf)
	if eff != "" {
		o.Str("effort", string(eff))
	}
	switch rs.Summary {
	case "", "none":
	default:
		o.Str("summary", rs.Summary)
	}
	e.O.Buf = o.Close()
	return nil
}

func respReasoningDec(d *wire.ReqDec, v []byte) error {
	rs := reasoningOf(d.R)
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		var s string
		var err error
		switch k {
		case "effort":
			s, err = wire.Str(v)
			rs.Effort = provider.Effort(s)
		case "summary":
			s, err = wire.Str(v)
			rs.Summary = s
		default:
			return false, nil
		}
		return true, err
	})
}

func includeEnc(e *wire.ReqEnc) error {
	if e.R.Reasoning != nil && e.R.Reasoning.Encrypted {
		e.O.Strings("include", []string{encryptedInclude})
	}
	return nil
}

func includeDec(d *wire.ReqDec, v []byte) error {
	list, err := wire.Strings(v)
	if err != nil {
		return err
	}
	for _, s := range list {
		if s == encryptedInclude {
			reasoningOf(d.R).Encrypted = true
		} else {
			d.Lost = true // other includes: the member is kept as it was
		}
	}
	return nil
}
