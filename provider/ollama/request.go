package ollama

import (
	"fmt"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

var request = &wire.Format{
	Provider: ProviderID,
	Name:     Name,
	Conv:     []string{"messages"},
	Append:   appendConv,
	Decode:   chat{}.Decode,
	Prefix:   []string{"model"},
	// The final chunk of a stream always has the token counts.
	Carried: wire.FStreamUsage,
	Settings: []wire.Setting{
		wire.StringSetting("model", wire.FModel, func(r *provider.Request) *string { return &r.Model }),
		{Key: "tools", Fields: wire.FTools, Enc: toolsEnc, Dec: toolsDec},
		{Key: "format", Fields: wire.FOutput, Enc: formatEnc, Dec: formatDec},
		{Key: "options", Fields: wire.FMaxTokens | wire.FTemperature | wire.FTopP | wire.FTopK |
			wire.FPresence | wire.FFrequency | wire.FSeed | wire.FStop, Enc: optionsEnc, Dec: optionsDec},
		{Key: "think", Fields: wire.FReasoning, Enc: thinkEnc, Dec: thinkDec},
		{Key: "stream", Fields: wire.FStream, Enc: func(e *wire.ReqEnc) error {
			// Ollama streams unless told not to: always say which.
			e.O.Bool("stream", e.R.Stream)
			return nil
		}, Dec: func(d *wire.ReqDec, v []byte) error {
			var err error
			d.R.Stream, err = wire.Bool(v)
			return err
		}},
	},
}

// EncodeRequest returns the whole /api/chat request body for r: model,
// messages, tools, format, options (num_predict, temperature, top_p,
// top_k, seed, stop, penalties), think, stream (always written, since
// Ollama streams by default), and r's native "ollama" members (keep_alive,
// other options). See docs/providers.md for the table of settings.
func (chat) EncodeRequest(r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return request.EncodeRequest(r, opts)
}

// AppendRequest appends the body EncodeRequest returns to dst (see
// provider.RequestAppender); on an error it returns dst as it was.
func (chat) AppendRequest(dst []byte, r *provider.Request, opts provider.Options) ([]byte, []provider.Warning, error) {
	return request.AppendRequest(dst, r, opts)
}

// DecodeRequest reads a whole /api/chat request body. A body without
// "stream" streams, as Ollama does, and encodes back with "stream":true.
func (chat) DecodeRequest(body []byte, opts provider.Options) (*provider.Request, []provider.Warning, error) {
	r, warns, err := request.DecodeRequest(body, opts)
	if err == nil && !hasMember(body, "stream") {
		r.Stream = true
	}
	return r, warns, err
}

func hasMember(body []byte, key string) bool {
	found := false
	_, _ = wire.Fields(body, func(k string, _ []byte) (bool, error) {
		found = found || k == key
		return true, nil
	})
	return found
}

func toolsEnc(e *wire.ReqEnc) error {
	if len(e.R.Tools) == 0 {
		return nil
	}
	e.O.Key("tools")
	var err error
	// Ollama has no tools of its own: every typed tool is another's.
	e.O.Buf, err = e.AppendTools(e.O.Buf, func(string) bool { return false }, func(b []byte, t *provider.Tool, i int) ([]byte, error) {
		b = append(b, `{"type":"function","function":`...)
		fn := wire.NewObj(b)
		fn.Str("name", t.Name)
		if t.Description != "" {
			fn.Str("description", t.Description)
		}
		if t.Parameters != nil {
			schema, warns, err := provider.TranslateSchema(t.Parameters, provider.DialectOllama, fmt.Sprintf("tools[%d].parameters", i))
			e.Warns = append(e.Warns, warns...)
			if err != nil {
				return nil, err
			}
			fn.Raw("parameters", schema)
		}
		if t.Strict {
			e.Warn(provider.CodeSettingDropped, fmt.Sprintf("tools[%d].strict", i), "ollama has no strict tools: left out")
		}
		if t.Cache != nil {
			e.Warn(provider.CodeSettingDropped, fmt.Sprintf("tools[%d].cache", i), "ollama has no cache breakpoints: left out")
		}
		if err := wire.ToolNative(e, fn, t, i); err != nil {
			return nil, err
		}
		return append(fn.Close(), '}'), nil
	})
	return err
}

func toolsDec(d *wire.ReqDec, v []byte) error {
	return wire.Array(v, func(i int, item []byte) error {
		var fn []byte
		rest, err := wire.Fields(item, func(k string, v []byte) (bool, error) {
			switch k {
			case "type":
				return string(v) == `"function"`, nil
			case "function":
				fn = v
				return true, nil
			}
			return false, nil
		})
		if err != nil {
			return err
		}
		if fn == nil || len(rest) > 0 {
			d.Lost = true
			return nil
		}
		var t provider.Tool
		rest, err = wire.Fields(fn, func(k string, v []byte) (bool, error) {
			var err error
			switch k {
			case "name":
				t.Name, err = wire.Str(v)
			case "description":
				t.Description, err = wire.Str(v)
			case "parameters":
				t.Parameters = v
			default:
				return false, nil
			}
			return true, err
		})
		t.Native = rest.Native(ProviderID)
		d.R.Tools = append(d.R.Tools, t)
		return wire.At("function", err)
	})
}

func formatEnc(e *wire.ReqEnc) error {
	switch o := e.R.Output; o.Type {
	case "", provider.OutputText:
	case provider.OutputJSON:
		e.O.Str("format", "json")
	case provider.OutputJSONSchema:
		if o.Schema == nil {
			e.O.Str("format", "json")
			break
		}
		e.O.Raw("format", o.Schema)
		if o.Name != "" || o.Description != "" {
			e.Warn(provider.CodeSettingDropped, "output.name", "ollama takes no schema name or description: left out")
		}
	default:
		return fmt.Errorf("unknown output type %q", o.Type)
	}
	return nil
}

func formatDec(d *wire.ReqDec, v []byte) error {
	switch {
	case string(v) == `"json"`:
		d.R.Output.Type = provider.OutputJSON
	case wire.IsObject(v):
		d.R.Output = provider.Output{Type: provider.OutputJSONSchema, Schema: v}
	case string(v) == `""` || string(v) == "null":
	default:
		d.Lost = true
	}
	return nil
}

func optionsEnc(e *wire.ReqEnc) error {
	r := e.R
	o := wire.NewObj(nil)
	if r.MaxTokens != 0 {
		o.Int("num_predict", r.MaxTokens)
	}
	if r.Temperature != nil {
		o.Float("temperature", *r.Temperature)
	}
	if r.TopP != nil {
		o.Float("top_p", *r.TopP)
	}
	if r.TopK != nil {
		o.Int("top_k", *r.TopK)
	}
	if r.Seed != nil {
		o.Int("seed", *r.Seed)
	}
	if len(r.Stop) > 0 {
		o.Strings("stop", r.Stop)
	}
	if r.PresencePenalty != nil {
		o.Float("presence_penalty", *r.PresencePenalty)
	}
	if r.FrequencyPenalty != nil {
		o.Float("frequency_penalty", *r.FrequencyPenalty)
	}
	if len(o.Buf) > 1 {
		e.O.Raw("options", o.Close())
	}
	return nil
}

func optionsDec(d *wire.ReqDec, v []byte) error {
	r := d.R
	return d.Fields(v, func(k string, v []byte) (bool, error) {
		var err error
		switch k {
		case "num_predict":
			var n *int64
			if n, err = wire.Int(v); n != nil {
				r.MaxTokens = *n
			}
		case "temperature":
			r.Temperature, err = wire.Float(v)
		case "top_p":
			r.TopP, err = wire.Float(v)
		case "top_k":
			r.TopK, err = wire.Int(v)
		case "seed":
			r.Seed, err = wire.Int(v)
		case "stop":
			r.Stop, err = wire.Strings(v)
		case "presence_penalty":
			r.PresencePenalty, err = wire.Float(v)
		case "frequency_penalty":
			r.FrequencyPenalty, err = wire.Float(v)
		default:
			return false, nil // num_ctx, repeat_penalty, …: kept as they were
		}
		return true, err
	})
}

// thinkEnc writes think: false for EffortNone, a level for low, medium
// and high (the levels gpt-oss takes), true otherwise.
func thinkEnc(e *wire.ReqEnc) error {
	rs := e.R.Reasoning
	if rs == nil || (rs.Effort == "" && rs.Budget == 0) {
		return nil
	}
	eff := rs.Effort
	if eff == "" && rs.Budget > 0 {
		eff = provider.EffortFor(rs.Budget)
		e.Warn(provider.CodeSettingMapped, "reasoning.budget", "ollama takes a level, not a budget: %d tokens sent as %q", rs.Budget, eff)
	}
	t := &e.R.Target
	levels := t.Thinking == provider.ThinkingEffort || t.Thinking == provider.ThinkingLevel
	if levels {
		// gpt-oss takes only levels, and ignores true and false.
		if m, changed := t.Effort(eff); changed || eff == provider.EffortNone {
			if eff == provider.EffortNone && !changed {
				m = provider.EffortLow
			}
			e.Warn(provider.CodeSettingMapped, "reasoning.effort", "%s takes no thinking level %q: %q sent", t.Name, eff, m)
			eff = m
		}
	}
	switch {
	case eff == provider.EffortNone:
		e.O.Bool("think", false)
	case t.Known() && !levels:
		// A model that thinks or not (qwen3, deepseek-r1): no levels.
		e.O.Bool("think", true)
		if eff != "" && eff != provider.EffortMedium {
			e.Warn(provider.CodeSettingMapped, "reasoning.effort", "%s takes thinking on or off, not a level: %q sent as on", t.Name, eff)
		}
	case eff == provider.EffortLow, eff == provider.EffortMedium, eff == provider.EffortHigh:
		e.O.Str("think", string(eff))
	default:
		e.O.Bool("think", true)
		e.Warn(provider.CodeSettingMapped, "reasoning", "ollama takes thinking on or off, or low, medium or high: %q sent as on", eff)
	}
	return nil
}

func thinkDec(d *wire.ReqDec, v []byte) error {
	switch string(v) {
	case "true":
		d.R.Reasoning = &provider.Reasoning{Effort: provider.EffortMedium}
	case "false":
		d.R.Reasoning = &provider.Reasoning{Effort: provider.EffortNone}
	default:
		s, err := wire.Str(v)
		if err != nil {
			return err
		}
		d.R.Reasoning = &provider.Reasoning{Effort: provider.Effort(s)}
	}
	return nil
}
