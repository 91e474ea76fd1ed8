package archive

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// The Claude data export (Settings → Privacy → Export data) holds
// conversations.json: a JSON array of conversations, each with its messages
// in order in "chat_messages". A message's "content" is a list of blocks
// (text, thinking, tool_use, tool_result); older exports have only "text".
// Tools Claude ran itself (web search, artifacts) appear as tool_use and
// tool_result blocks inside one assistant message.

type claudeConversation struct {
	UUID      string          `json:"uuid"`
	Name      string          `json:"name"`
	Summary   string          `json:"summary"`
	CreatedAt string          `json:"created_at"`
	UpdatedAt string          `json:"updated_at"`
	Messages  []claudeMessage `json:"chat_messages"`
	// CurrentLeaf is the last message of the branch shown (newer exports).
	CurrentLeaf string `json:"current_leaf_message_uuid"`
	Model       string `json:"model"`
	Project     *struct {
		UUID string `json:"uuid"`
		Name string `json:"name"`
	} `json:"project"`
}

type claudeMessage struct {
	UUID        string        `json:"uuid"`
	Parent      string        `json:"parent_message_uuid"`
	Text        string        `json:"text"`
	Sender      string        `json:"sender"`
	CreatedAt   string        `json:"created_at"`
	Content     []claudeBlock `json:"content"`
	Attachments []struct {
		FileName         string `json:"file_name"`
		FileType         string `json:"file_type"`
		ExtractedContent string `json:"extracted_content"`
	} `json:"attachments"`
	Files []struct {
		FileName string `json:"file_name"`
		FileUUID string `json:"file_uuid"`
	} `json:"files"`
}

type claudeBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
	Summaries []struct {
		Summary string `json:"summary"`
	} `json:"summaries"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Title     string          `json:"title"`
	URL       string          `json:"url"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Source    *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

func newClaudeReader(r io.Reader, opts Options) *Reader {
	return jsonReader(r, "conversations", false, opts, readClaude)
}

func readClaude(raw json.RawMessage, place string) (*Conversation, error) {
	var cc claudeConversation
	if err := json.Unmarshal(raw, &cc); err != nil {
		return nil, err
	}
	if cc.UUID == "" && cc.Messages == nil {
		return nil, fmt.Errorf("no uuid and no chat_messages: not a Claude conversation")
	}
	c := &Conversation{ID: cc.UUID, Title: cc.Name, Created: parseTime(cc.CreatedAt), Updated: parseTime(cc.UpdatedAt)}
	var project string
	if cc.Project != nil {
		project = cc.Project.Name
	}
	c.Meta = metaObject("source", "claude", "summary", cc.Summary, "model", cc.Model, "project", project)

	// Newer exports are trees: every message names its parent (the root a
	// sentinel uuid), edits and regenerations leave the abandoned branches
	// in chat_messages, and current_leaf_message_uuid is the one shown.
	// Older exports are the list, in order.
	byID := map[string]int{}
	tree := false
	for i, m := range cc.Messages {
		byID[m.UUID] = i
		tree = tree || m.Parent != ""
	}
	if !tree {
		all := make([]int, len(cc.Messages))
		for i := range all {
			all[i] = i
		}
		c.History = claudeHistory(&cc, all, place, &c.Warnings)
		return c, nil
	}
	hasChild := map[string]bool{}
	for _, m := range cc.Messages {
		hasChild[m.Parent] = true
	}
	var leaves []string
	latest := ""
	for _, m := range cc.Messages {
		if !hasChild[m.UUID] {
			leaves = append(leaves, m.UUID)
			if latest == "" || m.CreatedAt > cc.Messages[byID[latest]].CreatedAt {
				latest = m.UUID
			}
		}
	}
	leaf := cc.CurrentLeaf
	if _, ok := byID[leaf]; !ok {
		c.Warnings = append(c.Warnings, provider.Warnf(place+".current_leaf_message_uuid", "%q is not a message: the main line ends at the latest leaf %q", leaf, latest))
		leaf = latest
	}
	path := func(leaf string) []int {
		var idx []int
		seen := map[string]bool{}
		for id := leaf; !seen[id]; {
			i, ok := byID[id]
			if !ok {
				break // the root's sentinel parent, or a parent not in the export
			}
			seen[id] = true
			idx = append(idx, i)
			id = cc.Messages[i].Parent
		}
		slices.Reverse(idx)
		return idx
	}
	c.History = claudeHistory(&cc, path(leaf), place, &c.Warnings)
	c.Forks = forksOf(c.History, leaves, leaf, func(l string) convo.History {
		return claudeHistory(&cc, path(l), place, &c.Warnings)
	})
	c.Warnings = dedupe(c.Warnings)
	return c, nil
}

// claudeHistory converts the messages at idx, in that order.
func claudeHistory(cc *claudeConversation, idx []int, place string, warns *[]provider.Warning) convo.History {
	var h convo.History
	for _, i := range idx {
		m := cc.Messages[i]
		path := fmt.Sprintf("%s.chat_messages[%d]", place, i)
		var role convo.Role
		switch m.Sender {
		case "human", "user":
			role = convo.RoleUser
		case "assistant":
			role = convo.RoleAssistant
		default:
			*warns = append(*warns, provider.Warnf(path+".sender", "skipped: unknown sender %q", m.Sender))
			continue
		}
		base := convo.Message{Role: role, ID: m.UUID, Time: parseTime(m.CreatedAt)}
		if role == convo.RoleAssistant && cc.Model != "" {
			base.Origin = &convo.Origin{Provider: "anthropic", Model: cc.Model}
		}
		blocks := m.Content
		if len(blocks) == 0 && m.Text != "" {
			blocks = []claudeBlock{{Type: "text", Text: m.Text}}
		}
		msgs := splitAtResults(base, blocks, path+".content", warns)
		if role == convo.RoleUser {
			var extra []convo.Part
			for k, a := range m.Attachments {
				if a.ExtractedContent == "" {
					*warns = append(*warns, provider.Warnf(fmt.Sprintf("%s.attachments[%d]", path, k), "skipped: %q has no extracted content", a.FileName))
					continue
				}
				mt := a.FileType
				if !strings.Contains(mt, "/") {
					mt = "text/plain"
				}
				extra = append(extra, convo.Part{Type: convo.TypeFile, MediaType: mt, Name: a.FileName, Text: a.ExtractedContent})
			}
			for k, f := range m.Files {
				*warns = append(*warns, provider.Warnf(fmt.Sprintf("%s.files[%d]", path, k), "skipped: the export holds only the name of %q", f.FileName))
			}
			if len(extra) > 0 {
				if len(msgs) == 0 {
					msgs = []convo.Message{base}
				}
				msgs[len(msgs)-1].Parts = append(msgs[len(msgs)-1].Parts, extra...)
			}
		}
		h = append(h, msgs...)
	}
	h, pw := pair(h, func(i int) string { return fmt.Sprintf("%s.messages[%d]", place, i) })
	*warns = append(*warns, pw...)
	return h
}

// splitAtResults converts the content blocks of one message. Tool results
// inside an assistant message (tools Claude ran itself) end the assistant
// message there: the results become a tool message and the rest a new
// assistant message, so every call is answered right after it.
func splitAtResults(base convo.Message, blocks []claudeBlock, path string, warns *[]provider.Warning) []convo.Message {
	var out []convo.Message
	cur := base
	flush := func() {
		if len(cur.Parts) > 0 {
			out = append(out, cur)
		}
		cur = base
		cur.ID = "" // ids stay unique: only the first piece keeps the message's
		if len(out) == 0 {
			cur.ID = base.ID
		}
		cur.Parts = nil
	}
	var results, calls []convo.Part
	flushResults := func() {
		if len(results) > 0 {
			m := convo.Message{Role: convo.RoleTool, Time: base.Time, Parts: results}
			if len(out) == 0 && len(cur.Parts) == 0 {
				m.ID = base.ID
				cur.ID = ""
			}
			out = append(out, m)
			results = nil
		}
	}
	for k, b := range blocks {
		bp := fmt.Sprintf("%s[%d]", path, k)
		if b.Type == "tool_result" {
			flush()
			r := anthropicResult(b, bp, warns)
			if r.ID == "" {
				// Claude's export leaves out ids: a result answers the latest
				// call of its tool.
				for k := len(calls) - 1; k >= 0; k-- {
					if calls[k].Name == r.Name || r.Name == "" {
						r.ID, r.Name = calls[k].ID, calls[k].Name
						calls = slices.Delete(calls, k, k+1)
						break
					}
				}
			}
			results = append(results, r)
			continue
		}
		flushResults()
		p, ok := anthropicBlock(b, bp, warns)
		if !ok {
			continue
		}
		if p.Type == convo.TypeToolCall {
			if p.ID == "" {
				p.ID = fmt.Sprintf("%s-%d", base.ID, k)
			}
			calls = append(calls, p)
		}
		cur.Parts = append(cur.Parts, p)
	}
	flush()
	flushResults()
	return out
}

// anthropicBlock maps a content block in Anthropic's shape (the Messages
// API's, which both Claude exports use).
func anthropicBlock(b claudeBlock, path string, warns *[]provider.Warning) (convo.Part, bool) {
	switch b.Type {
	case "text":
		if b.Text == "" {
			return convo.Part{}, false
		}
		return convo.Text(b.Text), true
	case "thinking":
		p := convo.Part{Type: convo.TypeReasoning, Text: b.Thinking, Signature: b.Signature}
		for _, s := range b.Summaries {
			if s.Summary != "" {
				p.Summary = append(p.Summary, s.Summary)
			}
		}
		if p.Signature != "" {
			p.Provider = "anthropic"
		}
		if p.Text == "" && p.Summary == nil && p.Signature == "" {
			return convo.Part{}, false
		}
		return p, true
	case "redacted_thinking":
		return convo.Part{Type: convo.TypeReasoning, Encrypted: b.Data, Provider: "anthropic"}, b.Data != ""
	case "tool_use", "server_tool_use":
		p := convo.Part{Type: convo.TypeToolCall, ID: b.ID, Name: b.Name, Args: b.Input}
		if len(p.Args) == 0 || string(p.Args) == "null" {
			p.Args = json.RawMessage(`{}`)
		}
		return p, true
	case "image", "document":
		return anthropicMedia(b, path, warns)
	case "knowledge":
		// A web search hit in a Claude export: its title, address and text.
		return convo.Text(textOf(b.Title, b.URL, b.Text)), true
	}
	*warns = append(*warns, provider.Warnf(path, "skipped: unknown block type %q", b.Type))
	return convo.Part{}, false
}

func anthropicMedia(b claudeBlock, path string, warns *[]provider.Warning) (convo.Part, bool) {
	t := convo.TypeImage
	if b.Type == "document" {
		t = convo.TypeFile
	}
	s := b.Source
	switch {
	case s == nil:
	case s.Type == "base64" && s.Data != "" && convo.CheckBase64(s.Data) == nil && s.MediaType != "":
		return convo.Part{Type: t, MediaType: s.MediaType, Data: s.Data}, true
	case s.Type == "url" && s.URL != "":
		return convo.Part{Type: t, MediaType: s.MediaType, URL: s.URL}, true
	case s.Type == "text" && s.Data != "":
		return convo.Part{Type: convo.TypeFile, MediaType: "text/plain", Text: s.Data}, true
	}
	*warns = append(*warns, provider.Warnf(path, "skipped: %s without a usable source", b.Type))
	return convo.Part{}, false
}

// anthropicResult maps a tool_result block: its content is a string or a
// list of blocks.
func anthropicResult(b claudeBlock, path string, warns *[]provider.Warning) convo.Part {
	p := convo.Part{Type: convo.TypeToolResult, ID: b.ToolUseID, Name: b.Name, Error: b.IsError}
	if p.ID == "" {
		p.ID = b.ID
	}
	var s string
	var blocks []claudeBlock
	switch {
	case len(b.Content) == 0 || string(b.Content) == "null":
	case json.Unmarshal(b.Content, &s) == nil:
		if s != "" {
			p.Parts = []convo.Part{convo.Text(s)}
		}
	case json.Unmarshal(b.Content, &blocks) == nil:
		for k, c := range blocks {
			if q, ok := anthropicBlock(c, fmt.Sprintf("%s.content[%d]", path, k), warns); ok && q.Type != convo.TypeReasoning && q.Type != convo.TypeToolCall {
				p.Parts = append(p.Parts, q)
			}
		}
	default:
		p.Parts = []convo.Part{convo.JSON(b.Content)}
	}
	return p
}
