package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/store"
)

// CodeToolsInferred: the conversation's record keeps no tool declarations
// (no RequestKey metadata), so the tools its history calls were declared
// by name, with any arguments.
const CodeToolsInferred provider.Code = "replay-tools-inferred"

// maxRequestMeta bounds the recorded request a replay reads.
const maxRequestMeta = store.MaxMetaBytes

// rebuild makes the request a replay sends: the recorded settings (or the
// tools the conversation h calls), the overrides, the target model and
// the first p messages of h — without the error messages, which are the
// record's, never a provider's.
func (r *Replayer) rebuild(c store.Conversation, h convo.History, p int, q Request, protocol string) (*provider.Request, []provider.Warning, error) {
	req, warns, err := Recorded(c, h)
	if err != nil {
		return nil, nil, err
	}
	if req, err = Apply(req, q.Set); err != nil {
		return nil, nil, invalidf("replay: %v", err)
	}
	req.Model, req.Stream, req.StreamUsage, req.Candidates = q.Model, false, false, 0
	req.History = make(convo.History, 0, p)
	for _, m := range h[:p] {
		if m.Role != convo.RoleError {
			req.History = append(req.History, m)
		}
	}
	models := r.opts.Models
	if models == nil {
		models = catalog.Default()
	}
	m, match := models.Lookup(q.Model)
	if match.Warning != "" {
		warns = append(warns, provider.WarnCode(provider.CodeModelUnknown, "model", "%s", match.Warning))
	}
	req.Target = provider.TargetOf(q.Model, m, match)
	if req.MaxTokens == 0 && req.Target.MaxOutput == 0 && protocol == "anthropic" {
		req.MaxTokens = DefaultMaxTokens // required by Anthropic, optional elsewhere
	}
	return req, warns, nil
}

// Recorded returns the settings a conversation's requests were made with,
// as its metadata keeps them under RequestKey, without messages or model.
// Without them, the tools the conversation h calls anywhere are declared by name, each
// taking any object, with a warning (CodeToolsInferred): a provider
// refuses tool calls in a history whose tools the request does not
// declare.
func Recorded(c store.Conversation, h convo.History) (*provider.Request, []provider.Warning, error) {
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(c.Meta, &meta) // a store keeps an object or nothing
	req := &provider.Request{}
	if raw := meta[RequestKey]; raw != nil && !bytes.Equal(raw, []byte("null")) {
		if len(raw) > maxRequestMeta {
			return nil, nil, fmt.Errorf("replay: meta.%s: larger than %d bytes", RequestKey, maxRequestMeta)
		}
		if err := json.Unmarshal(raw, req); err != nil {
			return nil, nil, fmt.Errorf("replay: meta.%s: %w", RequestKey, err)
		}
		req.History, req.Model = nil, ""
		return req, nil, nil
	}
	seen := map[string]bool{}
	for _, m := range h {
		for _, p := range m.ToolCalls() {
			if p.Name == "" || seen[p.Name] {
				continue
			}
			seen[p.Name] = true
			req.Tools = append(req.Tools, provider.Tool{Name: p.Name, Parameters: json.RawMessage(`{"type":"object"}`)})
		}
	}
	var warns []provider.Warning
	if len(req.Tools) > 0 {
		names := make([]string, len(req.Tools))
		for i, t := range req.Tools {
			names[i] = t.Name
		}
		warns = append(warns, provider.Warning{Path: "tools", Code: CodeToolsInferred,
			Msg: fmt.Sprintf("the record keeps no tool declarations (meta.%s): declared from the calls in the conversation, by name only: %s", RequestKey, strings.Join(names, ", "))})
	}
	return req, warns, nil
}

// Apply returns req with the settings set, in order: each Name is a
// member of the request's JSON form, and a null Value removes it. A name
// the request has no member for is an error naming it.
func Apply(req *provider.Request, set []Setting) (*provider.Request, error) {
	if len(set) == 0 {
		return req, nil
	}
	h := req.History
	base := *req
	base.History = nil
	raw, err := json.Marshal(&base)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	for i, s := range set {
		switch s.Name {
		case "messages", "model", "":
			return nil, fmt.Errorf("set[%d]: %q cannot be set", i, s.Name)
		}
		if !json.Valid(s.Value) {
			return nil, fmt.Errorf("set[%d]: %s: the value is not JSON", i, s.Name)
		}
		if bytes.Equal(bytes.TrimSpace(s.Value), []byte("null")) {
			delete(m, s.Name)
			continue
		}
		m[s.Name] = s.Value
	}
	raw, _ = json.Marshal(m) // values valid: cannot fail
	out := &provider.Request{}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	out.History = h
	return out, nil
}
