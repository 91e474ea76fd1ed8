package bedrock

import (
	"errors"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// DecodeReply decodes a Converse response body into one assistant message:
// output.message's content blocks become parts as Decode reads them,
// stopReason becomes Finish, usage becomes Usage (Input counts the cached
// input too: inputTokens + cacheReadInputTokens + cacheWriteInputTokens),
// Origin is {bedrock, opts.Model} (the response names neither model nor
// id). Native keeps stopReason as sent, metrics, and every other member
// convo has no field for (additionalModelResponseFields, trace,
// performanceConfig, serviceTier, usage.cacheDetails).
func (converse) DecodeReply(body []byte, opts provider.Options) (convo.Message, []provider.Warning, error) {
	if err := provider.CheckReply(body, Name); err != nil {
		return convo.Message{}, nil, err
	}
	lim, err := opts.CheckSize(body, "bedrock response")
	if err != nil {
		return convo.Message{}, nil, err
	}
	d := decoder{r: jsonx.NewReader(body, lim.MaxDepth)}
	var r reply
	found := false
	err = d.r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "output":
			found = true
			return convo.ErrorAt(d.output(), "output")
		case "stopReason":
			return convo.ErrorAt(r.stopReason(d.r), "stopReason")
		case "usage":
			return convo.ErrorAt(r.usage(d.r), "usage")
		}
		return convo.ErrorAt(r.keep(d.r, key), string(key))
	})
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err == nil && !found {
		err = errors.New(`response body has no "output"`)
	}
	if err != nil {
		return convo.Message{}, d.warns, oneLine(err)
	}
	m := d.h[0]
	r.finish(&m, opts)
	return m, d.warns, opts.Check(d.warns)
}

// output reads the output union: a message from the assistant.
func (d *decoder) output() error {
	n := 0
	err := d.r.ReadObject(func(key []byte) error {
		n++
		if n > 1 || string(key) != "message" {
			return fmt.Errorf("unknown output member %q (want message)", key)
		}
		return convo.ErrorAt(d.replyMessage(), "message")
	})
	if err == nil && n == 0 {
		err = errors.New(`no "message"`)
	}
	return err
}

func (d *decoder) replyMessage() error {
	var role string
	var parts []convo.Part
	var extra wire.Members
	contentSet := false
	d.spans = d.spans[:0]
	err := d.r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "role":
			s, err := d.r.ReadString()
			role = s
			return convo.ErrorAt(err, "role")
		case "content":
			contentSet = true
			var err error
			parts, err = d.content()
			return convo.ErrorAt(err, "content")
		}
		v, err := d.r.ReadRaw()
		extra = append(extra, wire.Member{Key: string(key), Val: v})
		return convo.ErrorAt(err, string(key))
	})
	if err != nil {
		return err
	}
	if role != "assistant" {
		return convo.ErrorAt(fmt.Errorf("role %q, want assistant", role), "role")
	}
	if !contentSet {
		return errors.New(`message has no "content"`)
	}
	return d.assistant(parts, messageNative(extra))
}

// reply gathers the members of a reply outside its content, from a
// response body or from a stream's messageStop and metadata events.
type reply struct {
	stop     string
	hasStop  bool
	use      *convo.Usage
	native   wire.Members
	useExtra wire.Members // usage members convo has no field for
}

func (r *reply) stopReason(rd *jsonx.Reader) error {
	s, err := rd.ReadString()
	if err != nil {
		return err
	}
	r.stop, r.hasStop = s, true
	r.native = append(r.native, wire.Member{Key: "stopReason", Val: jsonx.AppendString(nil, s)})
	return nil
}

// keep records a member convo has no field for; AWS's "p" padding, which
// pads stream events to hide their length, is not kept.
func (r *reply) keep(rd *jsonx.Reader, key []byte) error {
	if string(key) == "p" {
		return rd.Skip()
	}
	v, err := rd.ReadRaw()
	if err != nil {
		return err
	}
	// A later event's value replaces an earlier one.
	r.native = r.native.Set(string(key), v)
	return nil
}

func (r *reply) usage(rd *jsonx.Reader) error {
	u := &convo.Usage{}
	var in int64
	r.useExtra = r.useExtra[:0]
	err := rd.ReadObject(func(key []byte) error {
		var dst *int64
		switch string(key) {
		case "inputTokens":
			dst = &in
		case "outputTokens":
			dst = &u.Output
		case "totalTokens":
			dst = &u.Total
		case "cacheReadInputTokens":
			dst = &u.CacheRead
		case "cacheWriteInputTokens":
			dst = &u.CacheWrite
		default:
			v, err := rd.ReadRaw()
			r.useExtra = append(r.useExtra, wire.Member{Key: string(key), Val: v})
			return convo.ErrorAt(err, string(key))
		}
		if rd.ReadNull() {
			return nil
		}
		n, err := rd.ReadInt()
		*dst = n
		return convo.ErrorAt(err, string(key))
	})
	if err != nil {
		return err
	}
	// Bedrock's inputTokens leaves out the cached input; convo's Input is
	// all of it, as for every provider.
	u.Input = in + u.CacheRead + u.CacheWrite
	r.use = u
	return nil
}

// finish puts what r gathered on m.
func (r *reply) finish(m *convo.Message, opts provider.Options) {
	m.Role = convo.RoleAssistant
	m.Origin = &convo.Origin{Provider: ProviderID, Model: opts.Model}
	m.Usage = r.use
	if r.hasStop {
		m.Finish = finishOf(r.stop)
	}
	// A structured answer from a model without structured output came as
	// a call of the output tool convo added to the request.
	provider.OutputCallsAsText(m)
	native := r.native
	if len(r.useExtra) > 0 {
		native = append(native[:len(native):len(native)], wire.Member{Key: "usage", Val: r.useExtra.Object()})
	}
	if obj := native.Object(); obj != nil {
		if old := m.Native[ProviderID]; old != nil {
			// The members of output.message convo did not map, under
			// "message", come first.
			obj = append(append(old[:len(old)-1:len(old)-1], ','), obj[1:]...)
		}
		m.Native = withNative(m.Native, obj)
	}
	if opts.Model != "" {
		for i := range m.Parts {
			if m.Parts[i].Type == convo.TypeReasoning {
				m.Parts[i].Model = opts.Model
			}
		}
	}
}

// finishOf normalises a Bedrock stopReason.
func finishOf(stop string) convo.Finish {
	switch stop {
	case "end_turn", "stop_sequence":
		return convo.FinishStop
	case "max_tokens", "model_context_window_exceeded":
		return convo.FinishLength
	case "tool_use":
		return convo.FinishToolUse
	case "guardrail_intervened", "content_filtered":
		return convo.FinishContentFilter
	}
	return convo.FinishOther // malformed_model_output, malformed_tool_use, reasons added later
}
