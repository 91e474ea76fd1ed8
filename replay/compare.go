package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// Result is a replay and its comparison with the original answer.
type Result struct {
	// Conversation is the origin; Fork the conversation holding the
	// replay, forked from it at At messages. AtMessage is the id of the
	// original answer's first message ("" when the origin had none).
	Conversation string `json:"conversation"`
	Fork         string `json:"fork"`
	At           int    `json:"at"`
	AtMessage    string `json:"at_message,omitempty"`
	// Skipped: the replay had been made already; Fork is that one.
	Skipped  bool       `json:"skipped,omitempty"`
	Original Side       `json:"original"`
	Replay   Side       `json:"replay"`
	Compare  Comparison `json:"compare"`
	// Warnings are what converting the request for the target dropped or
	// changed, and what the record lacked.
	Warnings []string `json:"warnings,omitempty"`
	// Set are the overrides the replay was made with.
	Set []Setting `json:"set,omitempty"`
}

// Side is one answer: the original, or the replay.
type Side struct {
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
	// MessageID is the answer's first message.
	MessageID string `json:"message_id,omitempty"`
	// Text is the answer's visible text (its messages' text parts).
	Text      string `json:"text"`
	ToolCalls []Call `json:"tool_calls,omitempty"`
	Finish    string `json:"finish,omitempty"`
	// Error is the failure recorded for the answer, if any.
	Error string `json:"error,omitempty"`
	Usage *Usage `json:"usage,omitempty"`
	// LatencyMS is how long the answer took, where it is known (a replay's
	// is; a recording does not keep its exchange's).
	LatencyMS *int64 `json:"latency_ms,omitempty"`
	// CostUSD is the answer's cost, where Options.Price knows it.
	CostUSD *convo.Money `json:"cost_usd,omitempty"`
	// Messages are the answer's messages, for a side-by-side view.
	Messages []convo.Message `json:"-"`
}

// Usage is an answer's token usage, added up over its messages.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	Reasoning  int64 `json:"reasoning,omitempty"`
	CacheRead  int64 `json:"cache_read,omitempty"`
	CacheWrite int64 `json:"cache_write,omitempty"`
}

// Call is a tool call, by name and arguments (ids differ between runs
// and are not compared).
type Call struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Comparison says how the two answers differ.
type Comparison struct {
	// SameToolCalls: both answers call the same tools with the same
	// arguments (compared as JSON values), in any order.
	SameToolCalls bool `json:"same_tool_calls"`
	// ToolCalls pairs the calls: equal ones first, then by name; a call
	// without a counterpart has one side empty.
	ToolCalls []CallPair `json:"tool_calls,omitempty"`
	// SameFinish: both ended for the same reason.
	SameFinish bool `json:"same_finish"`
	// TextSimilarity is Similarity of the two texts, 0 to 1.
	TextSimilarity float64 `json:"text_similarity"`
}

// CallPair is a call of the original and the replay's counterpart.
type CallPair struct {
	Original *Call `json:"original,omitempty"`
	Replay   *Call `json:"replay,omitempty"`
	Same     bool  `json:"same"`
}

// Compare returns the comparison of a replay's fork with its origin, from
// what the store holds. A conversation that is not a replay's fork is
// store.ErrInvalid.
func (r *Replayer) Compare(ctx context.Context, tenant, fork string) (*Result, error) {
	h, c, err := r.opts.Store.Load(ctx, tenant, fork, 0)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	info, ok := ForkInfo(c)
	if !ok || info.At > len(h) {
		return nil, fmt.Errorf("replay: conversation %q is not a replay: %w", fork, store.ErrInvalid)
	}
	res := &Result{Conversation: info.Origin, Fork: fork, At: info.At, AtMessage: info.AtMessage, Set: info.Set}
	res.Replay = r.side(h[info.At:], info.Model)
	res.Replay.LatencyMS = &info.LatencyMS
	if res.Replay.Error == "" {
		res.Replay.Error = info.Error
	}
	orig, _, err := r.opts.Store.Load(ctx, tenant, info.Origin, info.At)
	switch {
	case errors.Is(err, store.ErrNotFound):
		res.Original.Error = "the original conversation was deleted"
	case err != nil:
		return nil, fmt.Errorf("replay: %w", err)
	default:
		res.Original = r.side(orig, "")
	}
	res.Compare = compare(res.Original, res.Replay)
	return res, nil
}

// ForkInfo returns what a replay's fork records of itself.
func ForkInfo(c store.Conversation) (Info, bool) {
	var meta map[string]json.RawMessage
	var info Info
	if json.Unmarshal(c.Meta, &meta) != nil || meta[InfoMeta] == nil || json.Unmarshal(meta[InfoMeta], &info) != nil {
		return info, false
	}
	return info, info.Origin != ""
}

// side describes the answer at the start of msgs: its assistant messages
// and the error recorded after them.
func (r *Replayer) side(msgs []convo.Message, model string) Side {
	s := Side{Model: model}
	var texts []string
	for _, m := range msgs {
		if !answer(m) {
			break
		}
		s.Messages = append(s.Messages, m)
		if s.MessageID == "" {
			s.MessageID = m.ID
		}
		if m.Role == convo.RoleError {
			s.Error = m.Text()
			continue
		}
		if m.Origin != nil {
			s.Provider = m.Origin.Provider
			if s.Model == "" {
				s.Model = m.Origin.Model
			}
		}
		if t := m.Text(); t != "" {
			texts = append(texts, t)
		}
		for _, p := range m.ToolCalls() {
			s.ToolCalls = append(s.ToolCalls, Call{Name: p.Name, Args: p.Args})
		}
		s.Finish = string(m.Finish)
		if m.Usage != nil {
			if s.Usage == nil {
				s.Usage = &Usage{}
			}
			u := m.Usage
			s.Usage.Input += u.Input
			s.Usage.Output += u.Output
			s.Usage.Reasoning += u.Reasoning
			s.Usage.CacheRead += u.CacheRead
			s.Usage.CacheWrite += u.CacheWrite
		}
	}
	s.Text = strings.Join(texts, "\n")
	if s.Usage != nil && r.opts.Price != nil {
		u := convo.Usage{Input: s.Usage.Input, Output: s.Usage.Output, Reasoning: s.Usage.Reasoning,
			CacheRead: s.Usage.CacheRead, CacheWrite: s.Usage.CacheWrite}
		if usd, ok := r.opts.Price(s.Provider, s.Model, u); ok {
			s.CostUSD = &usd
		}
	}
	return s
}

// compare compares two answers.
func compare(a, b Side) Comparison {
	c := Comparison{SameFinish: a.Finish == b.Finish, TextSimilarity: Similarity(a.Text, b.Text)}
	c.ToolCalls, c.SameToolCalls = pairCalls(a.ToolCalls, b.ToolCalls)
	return c
}

// pairCalls pairs two answers' calls: each of a with the first unpaired
// equal call of b, then the rest by name, in order; what is left has no
// counterpart. same reports that every call found an equal one.
func pairCalls(a, b []Call) ([]CallPair, bool) {
	used := make([]bool, len(b))
	pairs := make([]CallPair, len(a))
	same := len(a) == len(b)
	for i := range a {
		pairs[i].Original = &a[i]
		for j := range b {
			if !used[j] && a[i].Name == b[j].Name && sameJSON(a[i].Args, b[j].Args) {
				used[j], pairs[i].Replay, pairs[i].Same = true, &b[j], true
				break
			}
		}
	}
	for i := range pairs {
		if pairs[i].Same {
			continue
		}
		same = false
		for j := range b {
			if !used[j] && a[i].Name == b[j].Name {
				used[j], pairs[i].Replay = true, &b[j]
				break
			}
		}
	}
	for j := range b {
		if !used[j] {
			same = false
			pairs = append(pairs, CallPair{Replay: &b[j]})
		}
	}
	return pairs, same
}

// sameJSON compares two JSON values as values: objects regardless of
// member order and white space. Absent and {} are the same (no
// arguments).
func sameJSON(a, b json.RawMessage) bool {
	norm := func(v json.RawMessage) string {
		if len(bytes.TrimSpace(v)) == 0 {
			return "{}"
		}
		return compactJSON(v)
	}
	return norm(a) == norm(b)
}
