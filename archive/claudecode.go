package archive

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// A Claude Code session is a JSON Lines file under ~/.claude/projects/: one
// entry a line. Entries of type "user" and "assistant" carry an Anthropic
// Messages API message; uuid and parentUuid link them into a tree (a rewind
// or an edit starts a branch). One assistant reply is written as several
// entries, one content block each, sharing message.id. Entries with
// isSidechain are the runs of subagents.

type ccEntry struct {
	Type        string  `json:"type"`
	UUID        string  `json:"uuid"`
	ParentUUID  *string `json:"parentUuid"`
	SessionID   string  `json:"sessionId"`
	Timestamp   string  `json:"timestamp"`
	IsSidechain bool    `json:"isSidechain"`
	IsCompact   bool    `json:"isCompactSummary"`
	CWD         string  `json:"cwd"`
	GitBranch   string  `json:"gitBranch"`
	Version     string  `json:"version"`
	Summary     string  `json:"summary"`
	Message     *struct {
		ID         string          `json:"id"`
		Role       string          `json:"role"`
		Model      string          `json:"model"`
		Content    json.RawMessage `json:"content"`
		StopReason string          `json:"stop_reason"`
		Usage      *struct {
			Input      int64 `json:"input_tokens"`
			Output     int64 `json:"output_tokens"`
			CacheRead  int64 `json:"cache_read_input_tokens"`
			CacheWrite int64 `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	} `json:"message"`
	line int
}

// newClaudeCodeReader reads one session: all of r is one conversation.
func newClaudeCodeReader(r io.Reader, opts Options) *Reader {
	s := newRecords(r, "lines", opts)
	s.lines = true
	rd := &Reader{count: func() int64 { return s.cr.n }}
	done := false
	rd.next = func() (*Conversation, error) {
		if done {
			return nil, io.EOF
		}
		done = true
		c := &Conversation{}
		var entries []ccEntry
		total := int64(0)
		for {
			raw, i, err := s.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if total += int64(len(raw)); total > opts.maxBytes() {
				return nil, fmt.Errorf("session larger than %d bytes", opts.maxBytes())
			}
			var e ccEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				c.Warnings = append(c.Warnings, provider.Warnf(s.place(i), "skipped: %v", err))
				continue
			}
			e.line = i
			entries = append(entries, e)
		}
		if len(entries) == 0 {
			return nil, io.EOF
		}
		readClaudeCode(c, entries)
		return c, nil
	}
	return rd
}

func readClaudeCode(c *Conversation, entries []ccEntry) {
	byID := map[string]int{}
	hasChild := map[string]bool{}
	sidechain := 0
	var last string // the last message entry of the main thread: the main line's leaf
	for i, e := range entries {
		switch e.Type {
		case "summary":
			if c.Title == "" {
				c.Title = e.Summary
			}
			continue
		case "user", "assistant":
		default:
			continue // file-history snapshots, system notes, queue operations: not messages
		}
		if e.UUID == "" || e.Message == nil {
			c.Warnings = append(c.Warnings, provider.Warnf(fmt.Sprintf("lines[%d]", e.line), "skipped: a %s entry without uuid or message", e.Type))
			continue
		}
		if e.IsSidechain {
			sidechain++
			continue
		}
		if c.ID == "" {
			c.ID = e.SessionID
			c.Meta = metaObject("source", "claude-code", "cwd", e.CWD, "git_branch", e.GitBranch, "version", e.Version)
		}
		byID[e.UUID] = i
		if e.ParentUUID != nil {
			hasChild[*e.ParentUUID] = true
		}
		last = e.UUID
		if t := parseTime(e.Timestamp); !t.IsZero() {
			if c.Created.IsZero() || t.Before(c.Created) {
				c.Created = t
			}
			if t.After(c.Updated) {
				c.Updated = t
			}
		}
	}
	if sidechain > 0 {
		c.Warnings = append(c.Warnings, provider.Warnf("", "skipped: %d entries of subagent runs (isSidechain)", sidechain))
	}
	path := func(leaf string) []int {
		var idx []int
		seen := map[string]bool{}
		for id := leaf; id != "" && !seen[id]; {
			i, ok := byID[id]
			if !ok {
				break // a parent outside the file (a resumed session's earlier part)
			}
			seen[id] = true
			idx = append(idx, i)
			p := entries[i].ParentUUID
			if p == nil {
				break
			}
			id = *p
		}
		slices.Reverse(idx)
		return idx
	}
	if last == "" {
		return
	}
	c.History = ccHistory(entries, path(last), &c.Warnings)
	var leaves []string
	for id := range byID {
		if !hasChild[id] {
			leaves = append(leaves, id)
		}
	}
	slices.SortFunc(leaves, func(a, b string) int { return byID[a] - byID[b] })
	c.Forks = forksOf(c.History, leaves, last, func(l string) convo.History { return ccHistory(entries, path(l), &c.Warnings) })
	c.Warnings = dedupe(c.Warnings)
}

// ccHistory converts a path of entries; the entries of one streamed reply
// (same message.id, one after another) become one message.
func ccHistory(entries []ccEntry, idx []int, warns *[]provider.Warning) convo.History {
	var h convo.History
	prevID := ""
	for _, i := range idx {
		e := entries[i]
		m := e.Message
		place := fmt.Sprintf("lines[%d].message.content", e.line)
		var blocks []claudeBlock
		var s string
		switch {
		case json.Unmarshal(m.Content, &s) == nil:
			blocks = []claudeBlock{{Type: "text", Text: s}}
		case json.Unmarshal(m.Content, &blocks) == nil:
		default:
			*warns = append(*warns, provider.Warnf(place, "skipped: content is neither text nor blocks"))
			continue
		}
		base := convo.Message{Role: convo.RoleUser, ID: e.UUID, Time: parseTime(e.Timestamp)}
		if e.Type == "assistant" {
			base.Role = convo.RoleAssistant
			base.Origin = &convo.Origin{Provider: "anthropic", Model: m.Model, ResponseID: m.ID}
			base.Finish = anthropicFinish(m.StopReason)
			if u := m.Usage; u != nil {
				// convo's input counts every input token, cached or not (as the
				// Anthropic codec reads usage).
				base.Usage = &convo.Usage{Input: u.Input + u.CacheRead + u.CacheWrite, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
			}
		} else if e.IsCompact {
			// The summary Claude Code wrote when it compacted the session: it
			// stands for the thread's messages before it in the file.
			base.Role = convo.RoleSummary
			for _, p := range entries[:i] {
				if (p.Type == "user" || p.Type == "assistant") && !p.IsSidechain {
					base.Compacted++
				}
			}
			base.Compacted = max(base.Compacted, 1)
		}
		msgs := splitAtResults(base, blocks, place, warns)
		if len(msgs) == 0 {
			continue
		}
		// A further block of the same streamed reply joins the message before.
		if e.Type == "assistant" && m.ID != "" && m.ID == prevID && len(h) > 0 && h[len(h)-1].Role == convo.RoleAssistant {
			prev := &h[len(h)-1]
			prev.Parts = append(slices.Clip(prev.Parts), msgs[0].Parts...)
			if base.Finish != "" {
				prev.Finish = base.Finish
			}
			if base.Usage != nil {
				prev.Usage = base.Usage
			}
			msgs = msgs[1:]
		}
		h = append(h, msgs...)
		prevID = ""
		if e.Type == "assistant" {
			prevID = m.ID
		}
	}
	h, pw := pair(h, func(i int) string { return fmt.Sprintf("messages[%d]", i) })
	*warns = append(*warns, pw...)
	return h
}

// anthropicFinish normalises a Claude Code entry's stop_reason the way the
// Anthropic codec reads a reply's.
func anthropicFinish(r string) convo.Finish {
	switch r {
	case "":
		return ""
	case "end_turn", "stop_sequence":
		return convo.FinishStop
	case "tool_use":
		return convo.FinishToolUse
	case "max_tokens", "model_context_window_exceeded":
		return convo.FinishLength
	case "pause_turn":
		return convo.FinishPause
	case "refusal":
		return convo.FinishRefusal
	}
	return convo.FinishOther
}
