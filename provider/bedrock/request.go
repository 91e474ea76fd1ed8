package bedrock

import (
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
	if len(e.R.Tools) == 0 && e.R.ToolChoice.Mode == "" {
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
			e.Warn(provider.CodeSettingDropped, fmt.Sprintf("tools[%d].strict", i), "bedrock has no strict tools: left out")
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
			switch {
			case rs.Effort == provider.EffortNone:
				o.Raw("thinking", []byte(`{"type":"disabled"}`))
			default:
				b := rs.Budget
				if b <= 0 {
					b = provider.BudgetFor(rs.Effort)
					if rs.Effort == "" || b < 0 {
						b = provider.BudgetFor(provider.EffortMedium)
					}
					e.Warn(provider.CodeSettingMapped, "reasoning", "Anthropic models take a thinking budget: effort %q sent as %d tokens", rs.Effort, max(b, 1024))
				}
				o.Key("thinking")
				o.Buf = append(o.Buf, `{"type":"enabled","budget_tokens":`...)
				o.Buf = append(jsonx.AppendInt(o.Buf, max(b, 1024)), '}')
			}
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
			var typ string
			var budget int64
			_, err = wire.Fields(v, func(k string, v []byte) (bool, error) {
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
			case "disabled":
				r.Reasoning = &provider.Reasoning{Effort: provider.EffortNone}
			default:
				return false, err
			}
		default:
			return false, nil
		}
		return true, err
	})
}
