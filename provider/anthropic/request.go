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
		{Key: "output_format", Fields: wire.FOutput, Enc: outputEnc, Dec: outputDec},
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
	n := e.R.MaxTokens
	if n == 0 {
		n = DefaultMaxTokens
		e.Warn(provider.CodeSettingMapped, "max_tokens", "anthropic requires max_tokens: %d sent", n)
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
	if len(e.R.Tools) == 0 {
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
	return err
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
	if c.Mode == "" && par == nil {
		return nil
	}
	e.O.Key("tool_choice")
	o := wire.NewObj(e.O.Buf)
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

func thinkingEnc(e *wire.ReqEnc) error {
	rs := e.R.Reasoning
	if rs == nil {
		return nil
	}
	switch s := rs.Summary; s {
	case "", "auto":
	default:
		e.Warn(provider.CodeSettingDropped, "reasoning.summary", "anthropic has no choice of reasoning summary %q: left out", s)
	}
	if rs.Effort == provider.EffortNone || (rs.Effort == "" && rs.Budget == 0) {
		if rs.Effort == provider.EffortNone {
			e.O.Raw("thinking", []byte(`{"type":"disabled"}`))
		}
		return nil
	}
	budget := rs.Budget
	switch {
	case budget == 0 || budget == -1:
		eff := rs.Effort
		if eff == "" {
			eff = provider.EffortMedium
		}
		budget = provider.BudgetFor(eff)
		if budget < 0 {
			return fmt.Errorf("reasoning effort %q has no budget in the reasoning table", rs.Effort)
		}
		e.Warn(provider.CodeSettingMapped, "reasoning", "anthropic takes a thinking budget: effort %q sent as %d tokens", eff, max(budget, minBudget))
	case rs.Effort != "":
		e.Warn(provider.CodeSettingDropped, "reasoning.effort", "anthropic takes the budget, not an effort as well: %q left out", rs.Effort)
	}
	if budget < minBudget {
		e.Warn(provider.CodeSettingMapped, "reasoning.budget", "anthropic takes at least %d thinking tokens: %d raised", minBudget, budget)
		budget = minBudget
	}
	e.O.Key("thinking")
	e.O.Buf = append(e.O.Buf, `{"type":"enabled","budget_tokens":`...)
	e.O.Buf = append(strconv.AppendInt(e.O.Buf, budget, 10), '}')
	return nil
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
	switch typ {
	case "enabled":
		r.Reasoning = &provider.Reasoning{Budget: budget}
	case "disabled":
		r.Reasoning = &provider.Reasoning{Effort: provider.EffortNone}
	default:
		d.Lost = true
	}
	return err
}

func outputEnc(e *wire.ReqEnc) error {
	o := e.R.Output
	switch o.Type {
	case "", provider.OutputText:
	case provider.OutputJSONSchema:
		e.O.Key("output_format")
		f := wire.NewObj(e.O.Buf)
		f.Str("type", "json_schema")
		if o.Schema != nil {
			f.Raw("schema", o.Schema)
		}
		e.O.Buf = f.Close()
		if o.Name != "" || o.Description != "" {
			e.Warn(provider.CodeSettingDropped, "output.name", "anthropic takes no schema name or description: left out")
		}
	case provider.OutputJSON:
		e.Warn(provider.CodeSettingDropped, "output", "anthropic has no JSON mode without a schema: left out")
	default:
		return fmt.Errorf("unknown output type %q", o.Type)
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
