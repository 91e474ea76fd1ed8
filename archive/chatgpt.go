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

// The ChatGPT data export (Settings → Data controls → Export) holds
// conversations.json, or in newer exports the shards conversations-000.json,
// conversations-001.json, …: each a JSON array of conversations. A
// conversation is a tree of nodes in "mapping" (id → {message, parent,
// children}); "current_node" is the leaf the user last saw.

type gptConversation struct {
	ID             string             `json:"id"`
	ConversationID string             `json:"conversation_id"`
	Title          *string            `json:"title"`
	CreateTime     *float64           `json:"create_time"`
	UpdateTime     *float64           `json:"update_time"`
	Mapping        map[string]gptNode `json:"mapping"`
	CurrentNode    string             `json:"current_node"`
	Model          string             `json:"default_model_slug"`
	GizmoID        string             `json:"gizmo_id"`
	Archived       bool               `json:"is_archived"`
}

type gptNode struct {
	ID       string      `json:"id"`
	Message  *gptMessage `json:"message"`
	Parent   *string     `json:"parent"`
	Children []string    `json:"children"`
}

type gptMessage struct {
	ID     string `json:"id"`
	Author struct {
		Role string  `json:"role"`
		Name *string `json:"name"`
	} `json:"author"`
	CreateTime *float64        `json:"create_time"`
	Content    json.RawMessage `json:"content"`
	Status     string          `json:"status"`
	Recipient  string          `json:"recipient"`
	Metadata   struct {
		ModelSlug     string `json:"model_slug"`
		FinishDetails *struct {
			Type string `json:"type"`
		} `json:"finish_details"`
		Hidden bool `json:"is_visually_hidden_from_conversation"`
	} `json:"metadata"`
}

// gptContent is the union of the content types; which fields matter
// depends on ContentType.
type gptContent struct {
	ContentType string            `json:"content_type"`
	Parts       []json.RawMessage `json:"parts"`
	Text        string            `json:"text"`
	Result      string            `json:"result"`
	Summary     string            `json:"summary"`
	URL         string            `json:"url"`
	Title       string            `json:"title"`
	Content     string            `json:"content"`
	Name        string            `json:"name"`
	Thoughts    []struct {
		Summary string `json:"summary"`
		Content string `json:"content"`
	} `json:"thoughts"`
	UserProfile      string `json:"user_profile"`
	UserInstructions string `json:"user_instructions"`
	ModelContext     string `json:"model_set_context"`
}

type gptAsset struct {
	ContentType  string          `json:"content_type"`
	AssetPointer string          `json:"asset_pointer"`
	Text         string          `json:"text"`
	Width        int             `json:"width"`
	Height       int             `json:"height"`
	Metadata     json.RawMessage `json:"metadata"`
}

func newChatGPTReader(r io.Reader, opts Options) *Reader {
	return jsonReader(r, "conversations", false, opts, readChatGPT)
}

func readChatGPT(raw json.RawMessage, place string) (*Conversation, error) {
	var g gptConversation
	if err := json.Unmarshal(raw, &g); err != nil {
		return nil, err
	}
	if g.Mapping == nil {
		return nil, fmt.Errorf("no mapping: not a ChatGPT conversation")
	}
	c := &Conversation{ID: g.ConversationID, Created: unixTime(g.CreateTime), Updated: unixTime(g.UpdateTime)}
	if c.ID == "" {
		c.ID = g.ID
	}
	if g.Title != nil {
		c.Title = *g.Title
	}
	var archived any
	if g.Archived {
		archived = true
	}
	c.Meta = metaObject("source", "chatgpt", "model", g.Model, "gizmo_id", g.GizmoID, "archived", archived)
	t := gptTree{g: &g, place: place, c: c}

	leaf := g.CurrentNode
	if _, ok := g.Mapping[leaf]; !ok {
		leaf = t.latestLeaf()
		if g.CurrentNode == "" {
			c.Warnings = append(c.Warnings, provider.Warnf(place+".current_node", "missing: the main line ends at the latest leaf %q", leaf))
		} else {
			c.Warnings = append(c.Warnings, provider.Warnf(place+".current_node", "%q is not in mapping: the main line ends at the latest leaf %q", g.CurrentNode, leaf))
		}
	}
	main := t.path(leaf)
	c.History = t.convert(main)
	mainLeaf := ""
	if len(main) > 0 {
		mainLeaf = main[len(main)-1]
	}
	c.Forks = forksOf(c.History, t.leaves(), mainLeaf, func(l string) convo.History { return t.convert(t.path(l)) })
	c.Warnings = dedupe(c.Warnings)
	return c, nil
}

type gptTree struct {
	g     *gptConversation
	place string
	c     *Conversation
}

func (t *gptTree) node(id string) string { return fmt.Sprintf("%s.mapping[%q]", t.place, id) }

func (t *gptTree) warn(path, format string, args ...any) {
	t.c.Warnings = append(t.c.Warnings, provider.Warnf(path, format, args...))
}

// sortedIDs are the mapping's ids in a deterministic order.
func (t *gptTree) sortedIDs() []string {
	ids := make([]string, 0, len(t.g.Mapping))
	for id := range t.g.Mapping {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// leaves are the nodes no node names as its parent, in id order. Paths
// are followed by parent links, so leaves are found by them too: a node
// whose children all point elsewhere is still reached.
func (t *gptTree) leaves() []string {
	parents := map[string]bool{}
	for id, n := range t.g.Mapping {
		if n.Parent != nil && *n.Parent != id {
			parents[*n.Parent] = true
		}
	}
	var out []string
	for _, id := range t.sortedIDs() {
		if !parents[id] {
			out = append(out, id)
		}
	}
	return out
}

// latestLeaf is the leaf whose message is newest: the best guess at the
// main line when current_node is missing.
func (t *gptTree) latestLeaf() string {
	best, bestTime := "", -1.0
	for _, id := range t.leaves() {
		var ts float64
		if m := t.g.Mapping[id].Message; m != nil && m.CreateTime != nil {
			ts = *m.CreateTime
		}
		if ts > bestTime {
			best, bestTime = id, ts
		}
	}
	return best
}

// path returns the node ids from the root to leaf, stopping at a broken
// parent link or a cycle.
func (t *gptTree) path(leaf string) []string {
	var ids []string
	seen := map[string]bool{}
	for id := leaf; id != ""; {
		n, ok := t.g.Mapping[id]
		if !ok {
			t.warn(t.node(ids[len(ids)-1])+".parent", "%q is not in mapping: the branch starts after it", id)
			break
		}
		if seen[id] {
			t.warn(t.node(id), "the parent links form a cycle: the branch starts here")
			break
		}
		seen[id] = true
		ids = append(ids, id)
		if n.Parent == nil {
			break
		}
		id = *n.Parent
	}
	slices.Reverse(ids)
	return ids
}

// convert turns a path of nodes into a history.
func (t *gptTree) convert(ids []string) convo.History {
	var h convo.History
	var open []convo.Part // tool calls waiting for their output
	for _, id := range ids {
		m := t.g.Mapping[id].Message
		if m == nil {
			continue
		}
		path := t.node(id) + ".message"
		var c gptContent
		if len(m.Content) > 0 && string(m.Content) != "null" {
			if err := json.Unmarshal(m.Content, &c); err != nil {
				t.warn(path+".content", "skipped: %v", err)
				continue
			}
		}
		msg := convo.Message{ID: m.ID, Time: unixTime(m.CreateTime)}
		if m.Author.Name != nil {
			msg.Name = *m.Author.Name
		}
		switch m.Author.Role {
		case "system":
			msg.Role = convo.RoleSystem
		case "user":
			msg.Role = convo.RoleUser
		case "assistant":
			msg.Role = convo.RoleAssistant
			assistantMeta(&msg, m)
		case "tool":
			msg.Role = convo.RoleTool
		default:
			t.warn(path+".author.role", "skipped: unknown role %q", m.Author.Role)
			continue
		}
		parts, kind := t.parts(&c, path)
		if kind == "error" && msg.Role != convo.RoleTool {
			msg.Role = convo.RoleError // a tool's error stays its (failed) result
		}
		if kind == "context" {
			msg.Role = convo.RoleSystem
		}
		if len(parts) == 0 {
			continue // empty messages (the hidden root system message, say) hold nothing
		}

		switch {
		case msg.Role == convo.RoleAssistant && m.Recipient != "" && m.Recipient != "all":
			call := toolCall(m, parts)
			msg.Parts = []convo.Part{call}
			msg.Finish = convo.FinishToolUse
			open = append(open, call)
		case msg.Role == convo.RoleTool:
			name := msg.Name
			msg.Name = ""
			res := convo.Part{Type: convo.TypeToolResult, ID: m.ID, Name: name, Parts: parts}
			// Output goes to the latest open call of the same tool.
			for k := len(open) - 1; k >= 0; k-- {
				if open[k].Name == name || name == "" {
					res.ID, res.Name = open[k].ID, open[k].Name
					open = slices.Delete(open, k, k+1)
					break
				}
			}
			if m.Status == "finished_with_error" || c.ContentType == "system_error" {
				res.Error = true
			}
			msg.Parts = []convo.Part{res}
		default:
			msg.Parts = parts
		}
		if msg.Role != convo.RoleTool && msg.Role != convo.RoleAssistant {
			open = nil
		}
		h = append(h, msg)
	}
	h, warns := pair(h, func(i int) string { return fmt.Sprintf("%s.messages[%d]", t.place, i) })
	t.c.Warnings = append(t.c.Warnings, warns...)
	return h
}

// assistantMeta sets an assistant message's origin and finish from m's
// metadata.
func assistantMeta(msg *convo.Message, m *gptMessage) {
	if m.Metadata.ModelSlug != "" {
		msg.Origin = &convo.Origin{Provider: "openai", Model: m.Metadata.ModelSlug}
	}
	if fd := m.Metadata.FinishDetails; fd != nil {
		switch fd.Type {
		case "stop":
			msg.Finish = convo.FinishStop
		case "max_tokens":
			msg.Finish = convo.FinishLength
		case "":
		default:
			msg.Finish = convo.FinishOther
		}
	}
}

// toolCall is the call an assistant message to a tool makes: its content
// is the input.
func toolCall(m *gptMessage, parts []convo.Part) convo.Part {
	call := convo.Part{Type: convo.TypeToolCall, ID: m.ID, Name: m.Recipient}
	in := strings.TrimSpace(joinText(parts))
	if json.Valid([]byte(in)) && strings.HasPrefix(in, "{") {
		call.Args = json.RawMessage(in)
	} else {
		call.ArgsRaw = in
	}
	return call
}

func joinText(parts []convo.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == convo.TypeText {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// parts converts a message's content. kind is "error" for a system error,
// "context" for custom instructions and memory, else "".
func (t *gptTree) parts(c *gptContent, path string) (parts []convo.Part, kind string) {
	text := func(s string) {
		if s != "" {
			parts = append(parts, convo.Text(s))
		}
	}
	switch c.ContentType {
	case "":
		return nil, ""
	case "text":
		for i, raw := range c.Parts {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				t.warn(fmt.Sprintf("%s.content.parts[%d]", path, i), "skipped: not a string")
				continue
			}
			text(s)
		}
	case "multimodal_text":
		for i, raw := range c.Parts {
			pp := fmt.Sprintf("%s.content.parts[%d]", path, i)
			var s string
			if json.Unmarshal(raw, &s) == nil {
				text(s)
				continue
			}
			var a gptAsset
			if err := json.Unmarshal(raw, &a); err != nil {
				t.warn(pp, "skipped: %v", err)
				continue
			}
			if p, ok := gptAssetPart(a); ok {
				parts = append(parts, p)
				continue
			}
			if a.Text != "" { // audio transcriptions
				text(a.Text)
				continue
			}
			t.warn(pp, "skipped: unknown part type %q", a.ContentType)
		}
	case "code", "execution_output", "computer_output":
		// Code is the input of a call when the message goes to a tool.
		text(c.Text)
	case "tether_browsing_display":
		text(textOf(c.Summary, c.Result))
	case "tether_quote":
		text(textOf(c.Title, c.URL, c.Text))
	case "thoughts":
		for _, th := range c.Thoughts {
			p := convo.Reasoning(th.Content)
			if th.Summary != "" {
				p.Summary = []string{th.Summary}
			}
			if p.Text != "" || p.Summary != nil {
				parts = append(parts, p)
			}
		}
	case "reasoning_recap":
		// "Thought for 12 seconds": the UI's note on the thoughts before it.
		if c.Content != "" {
			t.warn(path+".content", "skipped: reasoning recap %q", c.Content)
		}
	case "system_error":
		text(textOf(c.Name, c.Text))
		return parts, "error"
	case "user_editable_context":
		text(textOf(c.UserProfile, c.UserInstructions))
		return parts, "context"
	case "model_editable_context":
		text(c.ModelContext)
		return parts, "context"
	default:
		t.warn(path+".content", "skipped: unknown content type %q", c.ContentType)
	}
	return parts, ""
}

// gptAssetPart maps an uploaded or generated file: the export keeps a
// pointer to ChatGPT's file service (file-service://file-…,
// sediment://file_…), which becomes the part's file id.
func gptAssetPart(a gptAsset) (convo.Part, bool) {
	var t convo.PartType
	switch a.ContentType {
	case "image_asset_pointer":
		t = convo.TypeImage
	case "audio_asset_pointer":
		t = convo.TypeAudio
	case "video_container_asset_pointer":
		t = convo.TypeVideo
	default:
		return convo.Part{}, false
	}
	if a.AssetPointer == "" {
		return convo.Part{}, false
	}
	id := a.AssetPointer
	if i := strings.Index(id, "://"); i >= 0 {
		id = id[i+3:]
	}
	p := convo.Part{Type: t, FileID: id}
	if a.AssetPointer != id {
		ptr, _ := json.Marshal(map[string]string{"asset_pointer": a.AssetPointer})
		p.Native = convo.Native{"openai": ptr}
	}
	return p, true
}
