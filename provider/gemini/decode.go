package gemini

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// Decode reads the conversation fields of a generateContent request body —
// systemInstruction (or system_instruction) and contents — into a history;
// other members (tools, generationConfig, safetySettings, …) are ignored.
//
// A "model" content becomes an assistant message; consecutive model contents
// become one assistant message (so the calls of a step split over several
// contents stay together), the first part of each later content noted with
// NewContent. A "user" content becomes a tool message for its
// functionResponse parts and a user message for the rest. Thought parts
// become reasoning parts of provider "gemini" with the thoughtSignature as
// Signature; any other part keeps its thoughtSignature, and every member
// convo has no field for, in Native["gemini"].
//
// Errors name the place in Gemini's terms: contents[2].parts[0].inlineData.
func (generateContent) Decode(body []byte, opts provider.Options) (convo.History, []provider.Warning, error) {
	lim, err := opts.CheckSize(body, "request")
	if err != nil {
		return nil, nil, err
	}
	if err := provider.CheckFormat(body, Name); err != nil {
		return nil, nil, err
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	d := decoder{partReader: partReader{r: jsonx.NewReader(body, lim.MaxDepth)}, prevModel: -1}
	if err := d.request(); err != nil {
		return nil, d.warns, err
	}
	return d.h, d.warns, opts.Check(d.warns)
}

type decoder struct {
	partReader
	h         convo.History // messages from contents (the system message is put in front at the end)
	sys       *convo.Message
	warns     []provider.Warning
	open      []openCall // calls of the current step, for pairing responses
	prevModel int        // index in h of the assistant message the previous content made, or -1
	wp        wirePart   // reused for every part
	parts     []convo.Part
	wireIdx   []int
}

type openCall struct {
	id, name string
	answered bool
}

func (d *decoder) warn(path, format string, args ...any) {
	d.warns = append(d.warns, provider.Warnf(path, format, args...))
}

func (d *decoder) request() error {
	r := d.r
	if k := r.Peek(); k != jsonx.Object {
		return fmt.Errorf("request body: %w", r.Errorf("got %s, want a JSON object", k))
	}
	var seenContents, seenSystem bool
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "contents":
			seenContents = true
			return convo.ErrorAt(d.contents(), "contents")
		case "systemInstruction", "system_instruction":
			if seenSystem {
				return convo.ErrorAt(errors.New("systemInstruction set twice"), string(key))
			}
			seenSystem = true
			return convo.ErrorAt(d.system(), "systemInstruction")
		}
		return r.Skip()
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	if err != nil {
		return err
	}
	if !seenContents {
		return errors.New(`request has no "contents"`)
	}
	if d.sys != nil {
		d.h = append(convo.History{*d.sys}, d.h...)
	}
	if d.h == nil {
		d.h = convo.History{}
	}
	return nil
}

// array reads an array, or a single element where protobuf JSON parsers
// (and the Gemini documentation's own examples) accept one.
func (d *decoder) array(fn func(i int) error) error {
	if d.r.Peek() == jsonx.Object {
		return convo.ErrorAt(fn(0), "[0]")
	}
	return d.r.ReadArray(func(i int) error { return atIndex(fn(i), "", i) })
}

func (d *decoder) system() error {
	r := d.r
	if r.ReadNull() {
		return nil
	}
	m := convo.Message{Role: convo.RoleSystem}
	var native members
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "parts":
			if r.ReadNull() {
				return nil
			}
			return convo.ErrorAt(d.array(func(j int) error {
				if err := d.readPart(&d.wp, false); err != nil {
					return err
				}
				if k := d.wp.kind; k == "functionCall" || k == "functionResponse" {
					return fmt.Errorf("%s in systemInstruction", k)
				}
				m.Parts = append(m.Parts, d.wp.convoPart())
				return nil
			}), "parts")

		}
		// The role of a systemInstruction means nothing to Gemini, but a
		// request that sets it gets it back.
		raw, err := r.ReadRaw()
		native = native.add(bstr(key), raw)
		return atKey(err, key)
	})
	if err != nil {
		return err
	}
	if len(m.Parts) > 0 {
		m.Native = withNative(nil, native.object())
		d.sys = &m
	}
	return nil
}

func (d *decoder) contents() error {
	if d.r.ReadNull() {
		return nil
	}
	return d.array(d.content)
}

// content reads contents[i] and appends the messages it makes.
func (d *decoder) content(i int) error {
	r := d.r
	role := "user" // the API's default
	// The parts go in reused buffers; each message gets its own exact copy.
	parts, wireIdx := d.parts[:0], d.wireIdx[:0]
	defer func() { d.parts, d.wireIdx = parts[:0], wireIdx[:0] }()
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "role":
			s, err := optString(r)
			if err != nil {
				return convo.ErrorAt(err, "role")
			}
			switch s {
			case "", "user":
				role = "user"
			case "model":
				role = "model"
			default:
				return convo.ErrorAt(fmt.Errorf("unknown role %q (want user or model)", s), "role")
			}
			return nil
		case "parts":
			if r.ReadNull() {
				return nil
			}
			return convo.ErrorAt(d.array(func(j int) error {
				if err := d.readPart(&d.wp, false); err != nil {
					return err
				}
				parts = append(parts, convo.Part{})
				p := &parts[len(parts)-1]
				d.wp.fill(p)
				if p.Type == convo.TypeToolCall && !d.wp.hasID && !d.wp.server {
					p.ID = provider.SynthID(i, j, p.Name)
					mark(p, SyntheticID)
				}
				if p.Type == convo.TypeToolResult && !d.wp.hasID && !d.wp.server {
					mark(p, SyntheticID)
				}
				wireIdx = append(wireIdx, j)
				return nil
			}), "parts")

		}
		d.warn(index("contents", i), "member %q of a content ignored: Gemini contents have only role and parts", key)
		return r.Skip()
	})
	if err != nil {
		return err
	}
	if role == "model" {
		return d.modelContent(i, parts)
	}
	return d.userContent(i, parts, wireIdx)
}

func (d *decoder) modelContent(i int, parts []convo.Part) error {
	for j := range parts {
		if parts[j].Type == convo.TypeToolResult && !parts[j].IsServerTool() {
			return convo.ErrorAt(errors.New("functionResponse in a model content (responses go in a user content)"), index("contents", i)+"."+index("parts", j))
		}
	}
	parts = slices.Clone(parts)
	merge := len(parts) > 0 && d.prevModel >= 0
	if !merge {
		d.open = d.open[:0] // a new step
	}
	for j := range parts {
		if p := &parts[j]; p.Type == convo.TypeToolCall && !p.IsServerTool() {
			d.open = append(d.open, openCall{id: p.ID, name: p.Name})
		}
	}
	if merge {
		// The same step continued in another content: keep the parts in
		// one message so its calls pair with the responses that follow.
		mark(&parts[0], NewContent)
		m := &d.h[d.prevModel]
		m.Parts = append(m.Parts, parts...)
		return nil
	}
	d.h = append(d.h, convo.Message{Role: convo.RoleAssistant, Parts: parts})
	d.prevModel = -1
	if len(parts) > 0 {
		d.prevModel = len(d.h) - 1
	}
	return nil
}

func (d *decoder) userContent(i int, parts []convo.Part, wireIdx []int) error {
	d.prevModel = -1
	keepServerOpaque(parts)
	nres := 0
	reordered := false
	for k := range parts {
		p := &parts[k]
		switch p.Type {
		case convo.TypeToolCall:
			return convo.ErrorAt(errors.New("functionCall in a user content (calls come from the model)"), index("contents", i)+"."+index("parts", wireIdx[k]))
		case convo.TypeToolResult:
			if nres < k {
				reordered = true
			}
			nres++
			d.pair(p, i, wireIdx[k])
		}
	}
	// One allocation for both messages: results first, then the rest.
	all := make([]convo.Part, 0, len(parts))
	for k := range parts {
		if parts[k].Type == convo.TypeToolResult {
			all = append(all, parts[k])
		}
	}
	for k := range parts {
		if parts[k].Type != convo.TypeToolResult {
			all = append(all, parts[k])
		}
	}
	results, others := all[:nres:nres], all[nres:]
	if reordered {
		d.warn(index("contents", i), "function responses moved before the other parts of their content: convo keeps tool results in a message of their own")
	}
	// Encode merges a tool message with what follows it into one user
	// content; this content was a separate one.
	if n := len(d.h); n > 0 && d.h[n-1].Role == convo.RoleTool && len(all) > 0 {
		mark(&all[0], NewContent)
	}
	if len(results) > 0 {
		d.h = append(d.h, convo.Message{Role: convo.RoleTool, Parts: results})
	}
	if len(others) > 0 || len(results) == 0 {
		d.h = append(d.h, convo.Message{Role: convo.RoleUser, Parts: others})
	}
	return nil
}

// keepServerOpaque turns code execution parts in a user content, where
// no provider-run tool belongs, back into the opaque parts of what came.
func keepServerOpaque(parts []convo.Part) {
	var r jsonx.Reader
	for k := range parts {
		if kind := serverKind(&parts[k]); kind != "" {
			if b, err := appendServerPart(nil, &parts[k], kind, &r); err == nil {
				parts[k] = provider.OpaquePart(ProviderID, kind, b)
			}
		}
	}
}

// pair gives a functionResponse without an id the id of the call it
// answers: the first unanswered call of the same name in the current step,
// or a synthesised one when no call matches.
func (d *decoder) pair(p *convo.Part, i, j int) {
	if p.ID != "" {
		for k := range d.open {
			if c := &d.open[k]; !c.answered && c.id == p.ID {
				c.answered = true
				return
			}
		}
		return // answers no call: kept as it is, and reported by Prepare
	}
	for k := range d.open {
		if c := &d.open[k]; !c.answered && c.name == p.Name {
			c.answered = true
			p.ID = c.id
			return
		}
	}
	p.ID = provider.SynthID(i, j, p.Name)
}

// mark sets a convo note (SyntheticID, NewContent) in p's Native["gemini"].
// An opaque part has no Native of its own: its Native["gemini"] is the wire
// part, kept in Raw, and the note goes there (Encode takes it out again).
func mark(p *convo.Part, key string) {
	if note(p, key) {
		return
	}
	if block, ok := provider.OpaqueBlock(ProviderID, *p); ok {
		kind := strings.TrimPrefix(string(p.Type), ProviderID+":")
		*p = provider.OpaquePart(ProviderID, kind, addMember(block, key, []byte("true")))
		return
	}
	p.Native = p.Native.With(ProviderID, key, []byte("true"))
}
