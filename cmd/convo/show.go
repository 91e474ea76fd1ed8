package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

func init() {
	commands["show"] = command{
		usage:   "[FILE]",
		summary: "print a canonical history as a readable transcript",
		run:     runShow,
	}
}

func runShow(e *env, args []string) error {
	fs := flags(e, "show")
	color := fs.Bool("color", e.color, "colour the output (default: when stdout is a terminal)")
	args, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	h, err := e.readHistory(args)
	if err != nil {
		return err
	}
	t := transcript{w: e.stdout, color: *color}
	for i, m := range h {
		t.message(i, m)
	}
	return nil
}

// transcript renders messages for a person: roles, tool calls with their
// arguments, results, reasoning marked as such, attachments summarised.
type transcript struct {
	w     io.Writer
	color bool
}

const (
	bold   = "\x1b[1m"
	dim    = "\x1b[2m"
	reset  = "\x1b[0m"
	yellow = "\x1b[33m"
	cyan   = "\x1b[36m"
	red    = "\x1b[31m"
	green  = "\x1b[32m"
)

var roleColor = map[convo.Role]string{
	convo.RoleSystem: yellow, convo.RoleUser: green, convo.RoleAssistant: cyan,
	convo.RoleTool: dim, convo.RoleSummary: yellow, convo.RoleError: red,
}

// paint escapes s (see esc) and, with colour on, wraps it in code.
func (t transcript) paint(code, s string) string {
	s = esc(s)
	if !t.color {
		return s
	}
	return code + s + reset
}

// esc makes text from a conversation safe to write to a terminal: every
// control character but newline and tab (C0, DEL and C1, which include ESC
// and CSI) is written as a Go escape such as \x1b, so message text, a tool
// result or a name can never recolour the screen, move the cursor, set the
// window title or write the clipboard (OSC 52). Invalid UTF-8 is escaped
// too, since a lone byte 0x9b is CSI to some terminals. Always on: a
// transcript piped to a file is as likely to be cat to a terminal later.
func esc(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !unsafeRune(r, n):
			b.WriteString(s[i : i+n])
		case r == utf8.RuneError || r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// unsafeRune reports whether r, n bytes long, is a control character other
// than newline and tab, or a byte of invalid UTF-8.
func unsafeRune(r rune, n int) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r == utf8.RuneError && n == 1)
}

func (t transcript) message(i int, m convo.Message) {
	head := []string{t.paint(bold+roleColor[m.Role], string(m.Role))}
	if m.Name != "" {
		head = append(head, esc(m.Name))
	}
	if m.Scope == convo.ScopeTurn {
		head = append(head, "this turn only")
	}
	if m.Compacted > 0 {
		head = append(head, "replaces "+plural(m.Compacted, "messages"))
	}
	if m.Phase != "" {
		head = append(head, esc(string(m.Phase)))
	}
	if o := m.Origin; o != nil && (o.Provider != "" || o.Model != "") {
		head = append(head, esc(strings.Trim(o.Provider+"/"+o.Model, "/")))
	}
	if m.Finish != "" {
		head = append(head, "finish "+esc(string(m.Finish)))
	}
	if u := m.Usage; u != nil {
		head = append(head, fmt.Sprintf("%d in / %d out tokens", u.Input, u.Output))
	}
	if !m.Time.IsZero() {
		head = append(head, m.Time.UTC().Format(time.DateTime)+"Z")
	}
	fmt.Fprintf(t.w, "%s %s\n", t.paint(dim, fmt.Sprintf("[%d]", i)), strings.Join(head, " · "))
	for _, p := range m.Parts {
		t.part("    ", p)
	}
}

func (t transcript) part(indent string, p convo.Part) {
	line := func(s string) {
		for _, l := range strings.Split(s, "\n") {
			fmt.Fprintln(t.w, indent+l)
		}
	}
	if p.IsServerTool() {
		line(t.serverTool(p))
		return
	}
	switch p.Type {
	case convo.TypeText:
		text := esc(p.Text)
		for i := range p.Citations {
			text += t.paint(cyan, fmt.Sprintf("[%d]", i+1))
		}
		line(text)
		for i, c := range p.Citations {
			line(t.paint(dim, fmt.Sprintf("  [%d] ", i+1)+citation(c)))
		}
	case convo.TypeRefusal:
		line(t.paint(red, "(refusal) ") + esc(p.Text))
	case convo.TypeReasoning:
		line(t.reasoning(p))
	case convo.TypeToolCall:
		args := string(p.Args)
		if p.ArgsRaw != "" {
			args = p.ArgsRaw + " (malformed)"
		}
		line(t.paint(cyan, "→ "+p.Name) + "(" + esc(args) + ") " + t.paint(dim, "["+p.ID+"]"))
	case convo.TypeToolResult:
		label := esc("← " + p.Name)
		if p.Error {
			label = t.paint(red, "← "+p.Name+" failed")
		}
		fmt.Fprintln(t.w, indent+label+" "+t.paint(dim, "["+p.ID+"]"))
		for _, q := range p.Parts {
			t.part(indent+"  ", q)
		}
	case convo.TypeJSON:
		var buf bytes.Buffer
		if len(p.Value) <= 100 || json.Indent(&buf, p.Value, "", "  ") != nil {
			buf.Reset()
			buf.Write(p.Value)
		}
		line(esc(buf.String()))
	case convo.TypeImage, convo.TypeAudio, convo.TypeVideo, convo.TypeFile:
		line(t.paint(dim, "["+attachment(p)+"]"))
	case convo.TypeApprovalRequest:
		args := string(p.Args)
		if p.ArgsRaw != "" {
			args = p.ArgsRaw + " (malformed)"
		}
		gates := ""
		if p.CallID != "" {
			gates = " for " + p.CallID
		}
		line(t.paint(yellow, "? may I run "+esc(p.Name)) + "(" + esc(args) + ") " + t.paint(dim, "["+esc(p.ID+gates)+"]"))
	case convo.TypeApproval:
		verdict := t.paint(green, "✓ approved")
		if !p.Approved {
			verdict = t.paint(red, "✗ denied")
		}
		if p.Reason != "" {
			verdict += ": " + esc(p.Reason)
		}
		line(verdict + " " + t.paint(dim, "["+esc(p.ID)+"]"))
	default:
		line(t.paint(dim, fmt.Sprintf("[%s part, kept as is]", p.Type)))
	}
}

// reasoning is the line of a reasoning part: its tags and its text.
func (t transcript) reasoning(p convo.Part) string {
	var tags []string
	if p.Signature != "" {
		tags = append(tags, "signed")
	}
	if p.Encrypted != "" {
		tags = append(tags, "encrypted")
	}
	if p.Provider != "" {
		tags = append(tags, p.Provider)
	}
	label := "(reasoning"
	if len(tags) > 0 {
		label += ", " + strings.Join(tags, ", ")
	}
	text := p.Text
	if text == "" {
		text = strings.Join(p.Summary, " ")
	}
	return t.paint(dim, label+") "+text)
}

// serverTool shows a provider-run tool call or result as the text another
// provider would get with --server-tools text, marked with who ran it.
func (t transcript) serverTool(p convo.Part) string {
	ran := "⚙ " + p.Server
	if p.Provider != "" {
		ran += " by " + p.Provider
	}
	return t.paint(yellow, esc(ran)) + " " + esc(provider.ServerToolText(p))
}

// attachment summarises a media part by type, name, source and size.
func attachment(p convo.Part) string {
	s := string(p.Type)
	if p.MediaType != "" {
		s += " " + p.MediaType
	}
	if p.Name != "" {
		s += " " + fmt.Sprintf("%q", p.Name)
	}
	switch {
	case p.Data != "":
		s += ", " + size(p.DataSize()) + " inline"
	case p.URL != "":
		s += ", " + p.URL
	case p.FileID != "":
		s += ", file " + p.FileID
	case p.Text != "":
		s += ", " + size(len(p.Text)) + " of text"
	}
	return s
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// citation describes a citation on one line: what it points at (title,
// address or file), where in it, and the quoted passage, shortened.
func citation(c convo.Citation) string {
	var parts []string
	if c.Title != "" {
		parts = append(parts, esc(c.Title))
	}
	switch {
	case c.URL != "":
		parts = append(parts, esc(c.URL))
	case c.FileID != "":
		parts = append(parts, "file "+esc(c.FileID))
	}
	if c.Kind == convo.CiteDocument {
		where := fmt.Sprintf("document %d", c.Source)
		if c.Unit != "" {
			where += fmt.Sprintf(", %s %d–%d", c.Unit, c.Start, c.End)
		}
		parts = append(parts, where)
	} else if c.Kind != convo.CiteURL && c.Kind != convo.CiteFile {
		parts = append(parts, esc(string(c.Kind)))
	}
	if q := []rune(c.Text); len(q) > 0 {
		if len(q) > 80 {
			q = append(q[:79], '…')
		}
		parts = append(parts, "“"+esc(string(q))+"”")
	}
	return strings.Join(parts, " · ")
}
