package archive

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"

	_ "modernc.org/sqlite" // the driver store/sqlite uses
)

// simonw's llm logs every prompt to logs.db (SQLite): a row of "responses"
// per model call, grouped by conversation_id, with the prompt, the system
// prompt, the response text, token counts and (llm ≥ 0.26) the tool calls
// made and the tool results sent in "tool_calls" and "tool_results". The
// schema is created by llm/migrations.py; columns a database lacks are left
// out of the queries.

// OpenLLM opens an llm logs.db, read-only, and returns a reader of its
// conversations in the order they started.
func OpenLLM(path string) (*Reader, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rd, err := newLLMReader(context.Background(), db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rd.close = db.Close
	return rd, nil
}

type llmDB struct {
	db      *sql.DB
	ctx     context.Context
	columns map[string]map[string]bool // table → columns it has
}

func (l *llmDB) has(table, column string) bool { return l.columns[table][column] }

func newLLMReader(ctx context.Context, db *sql.DB) (*Reader, error) {
	l := &llmDB{db: db, ctx: ctx, columns: map[string]map[string]bool{}}
	for _, t := range []string{"responses", "conversations", "tool_calls", "tool_results", "prompt_attachments", "attachments", "messages", "parts", "nodes"} {
		rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", t)
		if err != nil {
			return nil, fmt.Errorf("reading the schema: %w", err)
		}
		cols := map[string]bool{}
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				rows.Close()
				return nil, err
			}
			cols[c] = true
		}
		rows.Close()
		if len(cols) > 0 {
			l.columns[t] = cols
		}
	}
	if !l.has("responses", "prompt") || !l.has("responses", "response") || !l.has("responses", "conversation_id") {
		return nil, fmt.Errorf("not an llm logs database: no responses table with prompt, response and conversation_id")
	}
	// The conversations in the order they started; a response with no
	// conversation is one of its own. Ids are few and small: the messages
	// are read one conversation at a time.
	rows, err := db.QueryContext(ctx, `SELECT coalesce(conversation_id, ''), min(rowid), min(id) FROM responses
		GROUP BY coalesce(conversation_id, id) ORDER BY min(datetime_utc), min(rowid)`)
	if err != nil {
		return nil, fmt.Errorf("listing conversations: %w", err)
	}
	type key struct{ conv, resp string }
	var keys []key
	for rows.Next() {
		var k key
		var rowid int64
		if err := rows.Scan(&k.conv, &rowid, &k.resp); err != nil {
			rows.Close()
			return nil, err
		}
		keys = append(keys, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rd := &Reader{}
	i := 0
	rd.next = func() (*Conversation, error) {
		if i >= len(keys) {
			return nil, io.EOF
		}
		k := keys[i]
		i++
		return l.conversation(k.conv, k.resp)
	}
	return rd, nil
}

type llmResponse struct {
	id, model, prompt, system, response, reasoning, datetime string
	input, output                                            sql.NullInt64
	// The node-tree schema (llm's messages, parts and nodes tables): the
	// leaf of what the response sent, where its new input began, and the
	// leaf after its output.
	inputNode, firstInputNode, outputNode string
}

func (l *llmDB) conversation(convID, respID string) (*Conversation, error) {
	rs, err := l.responses(convID, respID)
	if err != nil {
		return nil, err
	}
	c := &Conversation{ID: convID}
	if convID == "" {
		c.ID = respID
	}
	var model string
	if convID != "" && l.columns["conversations"] != nil {
		// A missing conversations row is tolerated: the responses say enough.
		_ = l.db.QueryRowContext(l.ctx, `SELECT coalesce(name, ''), coalesce(model, '') FROM conversations WHERE id = ?`, convID).Scan(&c.Title, &model)
	}
	c.Meta = metaObject("source", "llm", "model", model)
	var h convo.History
	system := ""
	for k, r := range rs {
		place := fmt.Sprintf("responses[%q]", r.id)
		t := llmTime(r.datetime)
		if k == 0 {
			c.Created = t
		}
		c.Updated = t
		var msgs []convo.Message
		if r.outputNode != "" && l.columns["nodes"] != nil && l.columns["parts"] != nil {
			msgs, err = l.nodeMessages(r, t, place, &c.Warnings)
		} else {
			msgs, err = l.flatMessages(r, t, place, &system, &c.Warnings)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", place, err)
		}
		h = append(h, msgs...)
	}
	var warns []provider.Warning
	c.History, warns = pair(h, func(i int) string { return fmt.Sprintf("conversations[%q].messages[%d]", c.ID, i) })
	c.Warnings = append(c.Warnings, warns...)
	return c, nil
}

// responses reads the responses of a conversation, or the one response
// respID when convID is empty, oldest first. Columns older llm versions
// lack read as empty.
func (l *llmDB) responses(convID, respID string) ([]llmResponse, error) {
	col := func(name string) string {
		if l.has("responses", name) {
			return "coalesce(" + name + ", '')"
		}
		return "''"
	}
	num := func(name string) string {
		if l.has("responses", name) {
			return name
		}
		return "NULL"
	}
	q := `SELECT id, coalesce(model, ''), coalesce(prompt, ''), coalesce(system, ''), coalesce(response, ''), ` +
		col("reasoning") + `, coalesce(datetime_utc, ''), ` + num("input_tokens") + `, ` + num("output_tokens") + `, ` +
		col("input_node_id") + `, ` + col("first_input_node_id") + `, ` + col("output_node_id") +
		` FROM responses WHERE `
	arg := convID
	if convID == "" {
		q += `id = ?`
		arg = respID
	} else {
		q += `conversation_id = ?`
	}
	rows, err := l.db.QueryContext(l.ctx, q+` ORDER BY datetime_utc, rowid`, arg)
	if err != nil {
		return nil, fmt.Errorf("reading conversation %s: %w", convID, err)
	}
	var rs []llmResponse
	for rows.Next() {
		var r llmResponse
		if err := rows.Scan(&r.id, &r.model, &r.prompt, &r.system, &r.response, &r.reasoning, &r.datetime, &r.input, &r.output,
			&r.inputNode, &r.firstInputNode, &r.outputNode); err != nil {
			rows.Close()
			return nil, err
		}
		rs = append(rs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return rs, nil
}

// flatMessages returns the messages of one response of the flat schema: a
// system prompt when it changed, tool results, the prompt and its
// attachments, and the reply. system is the system prompt so far.
func (l *llmDB) flatMessages(r llmResponse, t time.Time, place string, system *string, warns *[]provider.Warning) ([]convo.Message, error) {
	var h []convo.Message
	if r.system != "" && r.system != *system {
		h = append(h, convo.Message{Role: convo.RoleSystem, Time: t, Parts: []convo.Part{convo.Text(r.system)}})
	}
	*system = r.system
	results, err := l.toolResults(r.id)
	if err != nil {
		return nil, err
	}
	if len(results) > 0 {
		h = append(h, convo.Message{Role: convo.RoleTool, Time: t, Parts: results})
	}
	att, err := l.attachments(r.id, place, warns)
	if err != nil {
		return nil, err
	}
	if r.prompt != "" || len(att) > 0 {
		h = append(h, convo.Message{Role: convo.RoleUser, Time: t, Parts: append(textParts(r.prompt), att...)})
	}
	m, err := l.reply(r, t)
	if err != nil {
		return nil, err
	}
	return append(h, m), nil
}

// reply returns the assistant message of one response of the flat schema.
func (l *llmDB) reply(r llmResponse, t time.Time) (convo.Message, error) {
	m := convo.Message{Role: convo.RoleAssistant, ID: r.id, Time: t}
	if r.model != "" {
		m.Origin = &convo.Origin{Model: r.model}
	}
	if r.input.Valid || r.output.Valid {
		m.Usage = &convo.Usage{Input: r.input.Int64, Output: r.output.Int64}
	}
	if r.reasoning != "" {
		m.Parts = append(m.Parts, convo.Reasoning(r.reasoning))
	}
	m.Parts = append(m.Parts, textParts(r.response)...)
	calls, err := l.toolCalls(r.id)
	if err != nil {
		return m, err
	}
	if len(calls) > 0 {
		m.Parts = append(m.Parts, calls...)
		m.Finish = convo.FinishToolUse
	}
	if len(m.Parts) == 0 {
		// llm logged an empty response: keep it as the empty text it
		// was (an assistant message needs parts).
		m.Parts = []convo.Part{convo.Text("")}
	}
	return m, nil
}

func textParts(s string) []convo.Part {
	if s == "" {
		return nil
	}
	return []convo.Part{convo.Text(s)}
}

// llmTime reads datetime_utc, which llm writes as Python's isoformat of a
// UTC time without a zone.
func llmTime(s string) time.Time {
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", time.RFC3339Nano, "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

func (l *llmDB) toolCalls(respID string) ([]convo.Part, error) {
	if l.columns["tool_calls"] == nil {
		return nil, nil
	}
	rows, err := l.db.QueryContext(l.ctx, `SELECT coalesce(tool_call_id, ''), coalesce(name, ''), coalesce(arguments, '')
		FROM tool_calls WHERE response_id = ? ORDER BY id`, respID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []convo.Part
	for rows.Next() {
		var id, name, args string
		if err := rows.Scan(&id, &name, &args); err != nil {
			return nil, err
		}
		p := convo.Part{Type: convo.TypeToolCall, ID: id, Name: name}
		p.Args, p.ArgsRaw = callArgs(mustString(args))
		out = append(out, p)
	}
	return out, rows.Err()
}

func (l *llmDB) toolResults(respID string) ([]convo.Part, error) {
	if l.columns["tool_results"] == nil {
		return nil, nil
	}
	exc := "''"
	if l.has("tool_results", "exception") {
		exc = "coalesce(exception, '')"
	}
	rows, err := l.db.QueryContext(l.ctx, `SELECT coalesce(tool_call_id, ''), coalesce(name, ''), coalesce(output, ''), `+exc+`
		FROM tool_results WHERE response_id = ? ORDER BY id`, respID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []convo.Part
	for rows.Next() {
		var id, name, output, exception string
		if err := rows.Scan(&id, &name, &output, &exception); err != nil {
			return nil, err
		}
		p := convo.ToolResult(id, name, output)
		if exception != "" {
			p = convo.ToolError(id, name, textOf(output, exception))
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func (l *llmDB) attachments(respID, place string, warns *[]provider.Warning) ([]convo.Part, error) {
	if l.columns["prompt_attachments"] == nil || l.columns["attachments"] == nil {
		return nil, nil
	}
	rows, err := l.db.QueryContext(l.ctx, `SELECT a.id, coalesce(a.type, ''), coalesce(a.path, ''), coalesce(a.url, ''), a.content
		FROM prompt_attachments pa JOIN attachments a ON a.id = pa.attachment_id
		WHERE pa.response_id = ? ORDER BY pa."order"`, respID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []convo.Part
	for rows.Next() {
		var id, mt, path, u string
		var content []byte
		if err := rows.Scan(&id, &mt, &path, &u, &content); err != nil {
			return nil, err
		}
		p, ok := attachmentPart(mt, path, u, content)
		if !ok {
			*warns = append(*warns, provider.Warnf(place+".attachments["+id+"]", "skipped: no content, url or path"))
			continue
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// attachment reads one attachment by id.
func (l *llmDB) attachment(id string) (convo.Part, bool, error) {
	if l.columns["attachments"] == nil {
		return convo.Part{}, false, nil
	}
	var mt, path, u string
	var content []byte
	err := l.db.QueryRowContext(l.ctx, `SELECT coalesce(type, ''), coalesce(path, ''), coalesce(url, ''), content FROM attachments WHERE id = ?`, id).
		Scan(&mt, &path, &u, &content)
	if err == sql.ErrNoRows {
		return convo.Part{}, false, nil
	}
	if err != nil {
		return convo.Part{}, false, err
	}
	p, ok := attachmentPart(mt, path, u, content)
	return p, ok, nil
}

// attachmentPart makes a media part of an attachment: its bytes inline,
// else its URL, else its local path as a file: URL.
func attachmentPart(mt, path, u string, content []byte) (convo.Part, bool) {
	if mt == "" && len(content) > 0 {
		mt = "application/octet-stream"
	}
	p := convo.Part{Type: mediaType(mt), MediaType: mt}
	switch {
	case len(content) > 0:
		p.Data = base64.StdEncoding.EncodeToString(content)
	case u != "":
		p.URL = u
	case path != "":
		p.URL = (&url.URL{Scheme: "file", Path: path}).String()
	default:
		return convo.Part{}, false
	}
	return p, true
}

// mediaType picks the part type for a MIME type.
func mediaType(mt string) convo.PartType {
	switch {
	case len(mt) > 6 && mt[:6] == "image/":
		return convo.TypeImage
	case len(mt) > 6 && mt[:6] == "audio/":
		return convo.TypeAudio
	case len(mt) > 6 && mt[:6] == "video/":
		return convo.TypeVideo
	}
	return convo.TypeFile
}

// nodeMessages reads a response of llm's node-tree schema: the messages of
// its new input (from first_input_node_id down to input_node_id) and of its
// output (after input_node_id down to output_node_id), each with its typed
// parts in order.
func (l *llmDB) nodeMessages(r llmResponse, t time.Time, place string, warns *[]provider.Warning) ([]convo.Message, error) {
	var in []string
	var err error
	if r.inputNode != "" {
		stop := r.firstInputNode
		if stop == "" {
			stop = r.inputNode
		}
		if in, err = l.chain(r.inputNode, stop, true); err != nil {
			return nil, err
		}
	}
	out, err := l.chain(r.outputNode, r.inputNode, false)
	if err != nil {
		return nil, err
	}
	var msgs []convo.Message
	for k, id := range append(in, out...) {
		ms, err := l.nodeMessage(id, t, fmt.Sprintf("%s.nodes[%q]", place, id), warns)
		if err != nil {
			return nil, err
		}
		for i := range ms {
			if k >= len(in) && ms[i].Role == convo.RoleAssistant {
				if r.model != "" {
					ms[i].Origin = &convo.Origin{Model: r.model}
				}
				if ms[i].HasToolCalls() {
					ms[i].Finish = convo.FinishToolUse
				}
			}
		}
		msgs = append(msgs, ms...)
	}
	// The response's id and usage go on its last assistant message.
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == convo.RoleAssistant {
			msgs[i].ID = r.id
			if r.input.Valid || r.output.Valid {
				msgs[i].Usage = &convo.Usage{Input: r.input.Int64, Output: r.output.Int64}
			}
			break
		}
	}
	return msgs, nil
}

// chain returns the node ids from stop (included or not) down to leaf,
// root first. A broken parent link or a cycle ends it.
func (l *llmDB) chain(leaf, stop string, includeStop bool) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	for id := leaf; id != "" && !seen[id]; {
		seen[id] = true
		if id == stop {
			if includeStop {
				ids = append(ids, id)
			}
			break
		}
		ids = append(ids, id)
		var parent sql.NullString
		err := l.db.QueryRowContext(l.ctx, `SELECT parent_id FROM nodes WHERE id = ?`, id).Scan(&parent)
		if err == sql.ErrNoRows {
			break
		}
		if err != nil {
			return nil, err
		}
		id = parent.String
	}
	slices.Reverse(ids)
	return ids, nil
}

// nodeMessage converts the message at a node; its tool results become a
// tool message of their own, before the rest.
func (l *llmDB) nodeMessage(node string, t time.Time, place string, warns *[]provider.Warning) ([]convo.Message, error) {
	var msgID, role string
	err := l.db.QueryRowContext(l.ctx, `SELECT coalesce(n.message_id, ''), coalesce(m.role, '')
		FROM nodes n LEFT JOIN messages m ON m.id = n.message_id WHERE n.id = ?`, node).Scan(&msgID, &role)
	if err == sql.ErrNoRows || (err == nil && msgID == "") {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m := convo.Message{Time: t}
	switch role {
	case "user", "assistant", "system":
		m.Role = convo.Role(role)
	case "tool":
		m.Role = convo.RoleTool
	default:
		*warns = append(*warns, provider.Warnf(place, "skipped: a message of role %q", role))
		return nil, nil
	}
	rows, err := l.db.QueryContext(l.ctx, `SELECT coalesce(type, ''), coalesce(text, ''), coalesce(name, ''), coalesce(arguments, ''),
		coalesce(output, ''), coalesce(tool_call_id, ''), coalesce(exception, ''), coalesce(attachment_id, '')
		FROM parts WHERE message_id = ? ORDER BY "order", id`, msgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var results []convo.Part
	for k := 0; rows.Next(); k++ {
		var typ, text, name, args, output, callID, exception, attID string
		if err := rows.Scan(&typ, &text, &name, &args, &output, &callID, &exception, &attID); err != nil {
			return nil, err
		}
		pp := fmt.Sprintf("%s.parts[%d]", place, k)
		switch typ {
		case "text":
			m.Parts = append(m.Parts, convo.Text(text))
		case "reasoning":
			if text == "" {
				*warns = append(*warns, provider.Warnf(pp, "skipped: redacted reasoning (the log keeps no payload)"))
				continue
			}
			m.Parts = append(m.Parts, convo.Reasoning(text))
		case "tool_call":
			p := convo.Part{Type: convo.TypeToolCall, ID: callID, Name: name}
			p.Args, p.ArgsRaw = callArgs(mustString(args))
			m.Parts = append(m.Parts, p)
		case "tool_result":
			p := convo.ToolResult(callID, name, output)
			if exception != "" {
				p = convo.ToolError(callID, name, textOf(output, exception))
			}
			results = append(results, p)
		case "attachment":
			p, ok, err := l.attachment(attID)
			if err != nil {
				return nil, err
			}
			if !ok {
				*warns = append(*warns, provider.Warnf(pp, "skipped: attachment %q has no content, url or path", attID))
				continue
			}
			m.Parts = append(m.Parts, p)
		default:
			*warns = append(*warns, provider.Warnf(pp, "skipped: unknown part type %q", typ))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []convo.Message
	if len(results) > 0 {
		out = append(out, convo.Message{Role: convo.RoleTool, Time: t, Parts: results})
	}
	if len(m.Parts) > 0 && m.Role != convo.RoleTool {
		out = append(out, m)
	}
	return out, nil
}
