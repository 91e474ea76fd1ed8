// Package archive reads and writes the conversation formats of other tools:
// chat exports (ChatGPT, Claude), agent logs (Claude Code sessions, simonw's
// llm logs.db), training data (ShareGPT, OpenAI fine-tuning JSONL) and
// Markdown transcripts.
//
// Readers return one Conversation at a time from a Reader, so an export of
// any size is read with memory bounded by its largest conversation. A
// reader tolerates what real exports contain — missing fields, content of
// kinds it does not know, broken links between messages — and reports what
// it skipped as warnings with their place, never silently.
//
// Writers take a Conversation and say in warnings what the target format
// cannot hold.
package archive

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// Format names an outside format.
type Format string

// The formats this package reads (R) and writes (W).
const (
	ChatGPT    Format = "chatgpt"     // R: ChatGPT data export, conversations.json or its shards
	Claude     Format = "claude"      // R: Claude data export, conversations.json
	ClaudeCode Format = "claude-code" // R: a Claude Code session, ~/.claude/projects/…/SESSION.jsonl
	LLM        Format = "llm"         // R: simonw's llm logs.db (SQLite; see OpenLLM)
	ShareGPT   Format = "sharegpt"    // R, W: ShareGPT, a JSON array or JSON Lines
	FineTune   Format = "finetune"    // R, W: OpenAI chat fine-tuning JSONL
	Markdown   Format = "markdown"    // W: a readable transcript
)

// Readable lists the formats this package reads: LLM with Open or
// OpenLLM (it is a database file), the others also with NewReader.
func Readable() []Format { return []Format{ChatGPT, Claude, ClaudeCode, LLM, ShareGPT, FineTune} }

// Writable lists the formats Write writes.
func Writable() []Format { return []Format{Markdown, FineTune, ShareGPT} }

// Conversation is one conversation read from, or to be written to, an
// outside format.
type Conversation struct {
	ID      string
	Title   string
	Created time.Time // zero when unknown
	Updated time.Time
	// History is the main line: for a tree-shaped export (ChatGPT, Claude
	// Code), the branch the user last saw.
	History convo.History
	// Forks are the other branches of a tree-shaped export.
	Forks []Fork
	// Tools are the tool definitions of a training example (fine-tuning
	// JSONL "tools", ShareGPT "tools"), as a JSON array, kept as read.
	Tools json.RawMessage
	// Meta holds facts of the source convo has no field for (the source
	// format, its model, project, …): a JSON object.
	Meta json.RawMessage
	// Warnings say what was skipped or changed while reading, with the
	// place in the source.
	Warnings []provider.Warning
}

// Fork is a branch of a conversation that leaves the main line.
type Fork struct {
	// At is how many messages of the main line the branch shares.
	At int
	// History is the branch's own messages, after the shared ones.
	History convo.History
	// Leaf is the source's id of the branch's last message.
	Leaf string
}

// Options bound what a reader accepts.
type Options struct {
	// MaxBytes bounds one conversation (one element of an export's array,
	// one line of JSON Lines, one session file); zero means
	// convo.DefaultLimits.MaxBytes.
	MaxBytes int64
}

func (o Options) maxBytes() int64 {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return convo.DefaultLimits.MaxBytes
}

// Reader reads conversations one at a time.
type Reader struct {
	next     func() (*Conversation, error)
	close    func() error
	count    func() int64
	warnings []provider.Warning
}

// Next returns the next conversation, or io.EOF after the last. A
// conversation too broken to read is skipped and recorded in Warnings; an
// error from Next means the input cannot be read further.
func (r *Reader) Next() (*Conversation, error) { return r.next() }

// Warnings returns what the reader skipped so far outside any conversation
// it returned (whole conversations that could not be read).
func (r *Reader) Warnings() []provider.Warning { return r.warnings }

// Close releases what the reader holds (the database of OpenLLM).
func (r *Reader) Close() error {
	if r.close == nil {
		return nil
	}
	return r.close()
}

func (r *Reader) skip(path, format string, args ...any) {
	r.warnings = append(r.warnings, provider.Warnf(path, format, args...))
}

// NewReader returns a reader of format f over r. Formats stored as JSON
// (every one but LLM) are read as a stream: a top-level array one element
// at a time, JSON Lines one line at a time.
func NewReader(r io.Reader, f Format, opts Options) (*Reader, error) {
	switch f {
	case ChatGPT:
		return newChatGPTReader(r, opts), nil
	case Claude:
		return newClaudeReader(r, opts), nil
	case ClaudeCode:
		return newClaudeCodeReader(r, opts), nil
	case ShareGPT:
		return newShareGPTReader(r, opts), nil
	case FineTune:
		return newFineTuneReader(r, opts), nil
	case LLM:
		return nil, errors.New("archive: llm logs.db is a SQLite file: read it with OpenLLM")
	}
	return nil, fmt.Errorf("archive: unknown format %q", f)
}

// ReadAll reads every conversation of r.
func ReadAll(r *Reader) ([]*Conversation, error) {
	var out []*Conversation
	for {
		c, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
}

// countingReader counts the bytes read through it and refuses to read more
// than limit (when set), so one record of a stream cannot grow without end.
type countingReader struct {
	r     io.Reader
	n     int64
	limit int64
}

var errTooLarge = errors.New("too large")

func (c *countingReader) Read(p []byte) (int, error) {
	if c.limit > 0 && c.n >= c.limit {
		return 0, errTooLarge
	}
	if c.limit > 0 && int64(len(p)) > c.limit-c.n {
		p = p[:c.limit-c.n]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// records reads a stream of JSON values: the elements of one top-level
// array, or a sequence of values (JSON Lines, or a single object). Memory is
// bounded by the largest record.
type records struct {
	cr    *countingReader
	br    *bufio.Reader
	dec   *json.Decoder
	max   int64
	name  string // what an element is called in places: "conversations"
	index int    // of the next record
	array bool
	lines bool // outside an array, one record a line (JSON Lines)
	state int  // 0 not started, 1 reading, 2 done
	line  []byte
}

func newRecords(r io.Reader, name string, opts Options) *records {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	return &records{cr: cr, br: br, max: opts.maxBytes(), name: name}
}

// place names record i.
func (s *records) place(i int) string { return fmt.Sprintf("%s[%d]", s.name, i) }

// next returns the next record's bytes and its index, or io.EOF.
func (s *records) next() (json.RawMessage, int, error) {
	if s.state == 0 {
		s.state = 1
		c, err := s.peek()
		if err == io.EOF {
			s.state = 2
			return nil, 0, io.EOF
		}
		if err != nil {
			return nil, 0, err
		}
		if c != '[' && s.lines {
			s.state = 3
		}
		s.dec = json.NewDecoder(s.br)
		if c == '[' {
			s.array = true
			if _, err := s.dec.Token(); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", s.name, err)
			}
		}
	}
	if s.state == 2 {
		return nil, 0, io.EOF
	}
	if s.state == 3 {
		return s.nextLine()
	}
	if !s.dec.More() {
		if s.array {
			if _, err := s.dec.Token(); err != nil {
				return nil, 0, fmt.Errorf("%s: %w", s.name, err)
			}
		}
		s.state = 2
		if s.array {
			if _, err := s.dec.Token(); err != io.EOF {
				return nil, 0, fmt.Errorf("%s: data after the array", s.name)
			}
		}
		return nil, 0, io.EOF
	}
	i := s.index
	s.index++
	s.cr.limit = s.cr.n + s.max
	var raw json.RawMessage
	err := s.dec.Decode(&raw)
	s.cr.limit = 0
	if errors.Is(err, errTooLarge) {
		s.state = 2
		return nil, i, fmt.Errorf("%s: larger than %d bytes", s.place(i), s.max)
	}
	if err != nil {
		s.state = 2
		return nil, i, fmt.Errorf("%s: %w", s.place(i), err)
	}
	if int64(len(raw)) > s.max {
		s.state = 2
		return nil, i, fmt.Errorf("%s: larger than %d bytes", s.place(i), s.max)
	}
	if !utf8.Valid(raw) {
		return nil, i, fmt.Errorf("%s: invalid UTF-8", s.place(i))
	}
	return raw, i, nil
}

// nextLine returns the next line that is not blank. A line that is not
// JSON is returned as it is: the caller skips it with a warning.
func (s *records) nextLine() (json.RawMessage, int, error) {
	for {
		s.line = s.line[:0]
		for {
			chunk, err := s.br.ReadSlice('\n')
			s.line = append(s.line, chunk...)
			if int64(len(s.line)) > s.max {
				s.state = 2
				return nil, s.index, fmt.Errorf("%s: larger than %d bytes", s.place(s.index), s.max)
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				if len(bytesTrim(s.line)) == 0 {
					s.state = 2
					return nil, s.index, io.EOF
				}
				break
			}
			if err != nil {
				s.state = 2
				return nil, s.index, err
			}
			break
		}
		line := bytesTrim(s.line)
		if len(line) == 0 {
			s.index++
			continue
		}
		i := s.index
		s.index++
		if !utf8.Valid(line) {
			return json.RawMessage(`"invalid UTF-8"`), i, nil
		}
		return append(json.RawMessage(nil), line...), i, nil
	}
}

func bytesTrim(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// peek returns the first byte that is not white space.
func (s *records) peek() (byte, error) {
	for {
		b, err := s.br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			s.br.ReadByte()
			continue
		case 0xEF: // a UTF-8 byte-order mark, which some tools write
			if bom, _ := s.br.Peek(3); string(bom) == "\uFEFF" {
				s.br.Discard(3)
				continue
			}
		}
		return b[0], nil
	}
}

// jsonReader is the common shape of the JSON readers: records, each
// decoded by conv into a conversation, or skipped with a warning.
func jsonReader(r io.Reader, name string, lines bool, opts Options, conv func(raw json.RawMessage, place string) (*Conversation, error)) *Reader {
	s := newRecords(r, name, opts)
	s.lines = lines
	rd := &Reader{count: func() int64 { return s.cr.n }}
	rd.next = func() (*Conversation, error) {
		for {
			raw, i, err := s.next()
			if err != nil {
				return nil, err
			}
			c, err := conv(raw, s.place(i))
			if err != nil {
				rd.skip(s.place(i), "skipped: %v", err)
				continue
			}
			if c == nil {
				continue
			}
			return c, nil
		}
	}
	return rd
}

// BytesRead returns how many bytes of the input a JSON reader has consumed
// so far (for a progress line); -1 for readers that are not streams.
func (r *Reader) BytesRead() int64 {
	if r.count == nil {
		return -1
	}
	return r.count()
}

// unixTime converts the fractional Unix seconds of ChatGPT exports.
func unixTime(f *float64) time.Time {
	if f == nil || *f <= 0 {
		return time.Time{}
	}
	sec := int64(*f)
	return time.Unix(sec, int64((*f-float64(sec))*1e9)).UTC().Truncate(time.Millisecond)
}

// parseTime reads an RFC 3339 time, zero when absent or malformed.
func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// metaObject builds a Meta object from key/value pairs, leaving out empty
// values.
func metaObject(kv ...any) json.RawMessage {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		switch v := kv[i+1].(type) {
		case string:
			if v == "" {
				continue
			}
		case json.RawMessage:
			if len(v) == 0 || string(v) == "null" {
				continue
			}
		case nil:
			continue
		}
		m[kv[i].(string)] = kv[i+1]
	}
	if len(m) == 0 {
		return nil
	}
	b, _ := json.Marshal(m)
	return b
}

// pair makes h valid in its tool pairing without losing anything: a tool
// result that answers no call gets a call synthesised in an assistant
// message before it, a call left unanswered before the conversation goes on
// gets an error result (calls still open at the end stay pending). Both are
// warnings. place names message i.
func pair(h convo.History, place func(i int) string) (convo.History, []provider.Warning) {
	pr := pairer{out: make(convo.History, 0, len(h)), place: place}
	for i, m := range h {
		m = fillCalls(m, i, place, &pr.warns)
		if m.Role == convo.RoleAssistant && len(m.Parts) == 0 && m.Finish == "" {
			m.Finish = convo.FinishOther // a reply that produced nothing, for a reason not recorded
		}
		switch m.Role {
		case convo.RoleTool:
			pr.tool(m, i)
		default:
			pr.closeOpen(i)
			pr.out = append(pr.out, m)
			if m.Role == convo.RoleAssistant {
				pr.open = m.ToolCalls()
			}
		}
	}
	// Calls still open at the end are pending: a history may end so.
	return pr.out, pr.warns
}

// pairer is the history pair makes, as it is made.
type pairer struct {
	out   convo.History
	open  []convo.Part // calls of the last assistant message not yet answered
	warns []provider.Warning
	place func(i int) string
}

// closeOpen answers the open calls with error results, before message i.
func (pr *pairer) closeOpen(i int) {
	if len(pr.open) == 0 {
		return
	}
	var res []convo.Part
	for _, c := range pr.open {
		res = append(res, convo.ToolError(c.ID, c.Name, "no result was recorded"))
		pr.warns = append(pr.warns, provider.Warnf(pr.place(i), "tool call %q (%s) has no recorded result: an error result was added", c.ID, c.Name))
	}
	pr.out = append(pr.out, convo.ToolResults(res...))
	pr.open = nil
}

// tool adds tool message m (message i), with calls synthesised before the
// results that answer none.
func (pr *pairer) tool(m convo.Message, i int) {
	orphans := pr.answer(m, i)
	if len(orphans) == 0 {
		pr.out = append(pr.out, m)
		return
	}
	// The calls still open belong to the message before: answer them
	// first, then the synthesised calls get their own message.
	if len(orphans) < len(m.Parts) {
		pr.warns = append(pr.warns, provider.Warnf(pr.place(i), "results that answer no call were split off"))
		var kept, rest []convo.Part
		for _, p := range m.Parts {
			if slices.ContainsFunc(orphans, func(o convo.Part) bool { return o.ID == p.ID }) {
				rest = append(rest, p)
			} else {
				kept = append(kept, p)
			}
		}
		km := m
		km.Parts = kept
		pr.out = append(pr.out, km)
		m.Parts = rest
	}
	pr.closeOpen(i)
	calls := make([]convo.Part, len(orphans))
	for k, o := range orphans {
		calls[k] = convo.ToolCall(o.ID, o.Name, json.RawMessage(`{}`))
		pr.warns = append(pr.warns, provider.Warnf(pr.place(i), "tool result %q (%s) answers no call: a call was synthesised", o.ID, o.Name))
	}
	pr.out = append(pr.out, convo.Message{Role: convo.RoleAssistant, Parts: calls, Meta: json.RawMessage(`{"synthesized":true}`)})
	pr.out = append(pr.out, m)
}

// answer closes the open calls the results of tool message m (message i)
// answer, giving a result without an id the id of the first open call of
// its tool, and returns the results that answer no call.
func (pr *pairer) answer(m convo.Message, i int) []convo.Part {
	var orphans []convo.Part
	for k := range m.Parts {
		p := &m.Parts[k]
		if p.Type != convo.TypeToolResult {
			continue
		}
		if p.ID == "" && len(pr.open) > 0 {
			// A result without an id answers the first open call of its tool.
			j := max(0, slices.IndexFunc(pr.open, func(c convo.Part) bool { return c.Name == p.Name }))
			p.ID = pr.open[j].ID
			if p.Name == "" {
				p.Name = pr.open[j].Name
			}
		}
		if p.ID == "" {
			p.ID = fmt.Sprintf("call_%d_%d", i, k)
		}
		if k := slices.IndexFunc(pr.open, func(c convo.Part) bool { return c.ID == p.ID }); k >= 0 {
			pr.open = slices.Delete(pr.open, k, k+1)
			continue
		}
		if p.Name == "" {
			p.Name = "unknown"
		}
		orphans = append(orphans, *p)
	}
	return orphans
}

// fillCalls gives the tool calls of m that lack an id or a name a made-up
// one, with a warning: a call must have both to be answered.
func fillCalls(m convo.Message, i int, place func(int) string, warns *[]provider.Warning) convo.Message {
	if m.Role != convo.RoleAssistant && m.Role != convo.RoleTool {
		return m
	}
	copied := false
	for k, p := range m.Parts {
		if p.Type != convo.TypeToolCall && p.Type != convo.TypeToolResult {
			continue
		}
		if !copied {
			m.Parts = slices.Clone(m.Parts)
			copied = true
		}
		if p.Type != convo.TypeToolCall {
			continue
		}
		if p.ID == "" {
			m.Parts[k].ID = fmt.Sprintf("call_%d_%d", i, k)
			*warns = append(*warns, provider.Warnf(fmt.Sprintf("%s.parts[%d]", place(i), k), "tool call without an id: given %q", m.Parts[k].ID))
		}
		if p.Name == "" {
			m.Parts[k].Name = "unknown"
			*warns = append(*warns, provider.Warnf(fmt.Sprintf("%s.parts[%d]", place(i), k), "tool call without a name: named \"unknown\""))
		}
	}
	return m
}

// textOf joins strings with blank lines, leaving out empty ones.
func textOf(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n\n")
}

// dedupe drops repeated warnings: a message shared by several branches is
// reported once.
func dedupe(ws []provider.Warning) []provider.Warning {
	seen := map[provider.Warning]bool{}
	out := ws[:0]
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// forksOf makes the forks of a tree-shaped conversation: for every leaf
// but the main line's, its branch past the messages it shares with main.
// A leaf whose branch holds nothing of its own is left out.
func forksOf(main convo.History, leaves []string, mainLeaf string, history func(leaf string) convo.History) []Fork {
	var forks []Fork
	for _, l := range leaves {
		if l == mainLeaf {
			continue
		}
		h := history(l)
		at := 0
		for at < len(h) && at < len(main) && h[at].Equal(main[at]) {
			at++
		}
		if at < len(h) {
			forks = append(forks, Fork{At: at, History: h[at:], Leaf: l})
		}
	}
	return forks
}
