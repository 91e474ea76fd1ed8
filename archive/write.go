package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// WriteOptions control what Write puts in formats that can leave things out.
type WriteOptions struct {
	// Reasoning writes reasoning text into Markdown (folded in a <details>
	// block); by default it is left out.
	Reasoning bool
	// EmbedMedia writes inline images into Markdown as data: URLs, so the
	// file stands alone; by default an inline image is named, not embedded.
	EmbedMedia bool
}

// Write writes conversations in format f: Markdown one after another with
// a rule between them, fine-tuning JSONL one example a line, ShareGPT one
// JSON array. It returns what the format could not hold, with places
// prefixed by the conversation's index when there is more than one.
func Write(w io.Writer, f Format, cs []*Conversation, opts WriteOptions) ([]provider.Warning, error) {
	cw, err := NewWriter(w, f, opts)
	if err != nil {
		return nil, err
	}
	var warns []provider.Warning
	for i, c := range cs {
		ws, err := cw.Write(c)
		for _, x := range ws {
			if len(cs) > 1 {
				x.Path = fmt.Sprintf("conversations[%d].%s", i, x.Path)
			}
			warns = append(warns, x)
		}
		if err != nil {
			return warns, err
		}
	}
	return warns, cw.Close()
}

// Writer writes conversations one at a time, so an export of any size is
// written with memory bounded by one conversation.
type Writer struct {
	w    io.Writer
	f    Format
	opts WriteOptions
	n    int
}

// NewWriter returns a writer of format f (Markdown, FineTune or ShareGPT).
func NewWriter(w io.Writer, f Format, opts WriteOptions) (*Writer, error) {
	switch f {
	case Markdown, FineTune, ShareGPT:
		return &Writer{w: w, f: f, opts: opts}, nil
	}
	return nil, fmt.Errorf("archive: cannot write format %q (writable: markdown, finetune, sharegpt)", f)
}

// Write writes one conversation and returns what the format could not
// hold of it. Forks are not written: none of the formats has branches.
func (cw *Writer) Write(c *Conversation) ([]provider.Warning, error) {
	var warns []provider.Warning
	if len(c.Forks) > 0 {
		warns = append(warns, provider.Warnf("", "%d forks not written: %s has no branches", len(c.Forks), cw.f))
	}
	var b []byte
	switch cw.f {
	case Markdown:
		if cw.n > 0 {
			b = append(b, "\n---\n\n"...)
		}
		b = append(b, MarkdownOf(c, cw.opts)...)
	case FineTune:
		ex, ws := fineTuneExample(c)
		warns = append(warns, ws...)
		j, err := json.Marshal(ex)
		if err != nil {
			return warns, err
		}
		b = append(j, '\n')
	case ShareGPT:
		rec, ws := shareGPTRecordOf(c)
		warns = append(warns, ws...)
		j, err := json.MarshalIndent(rec, "  ", "  ")
		if err != nil {
			return warns, err
		}
		if cw.n == 0 {
			b = append(b, "[\n  "...)
		} else {
			b = append(b, ",\n  "...)
		}
		b = append(b, j...)
	}
	cw.n++
	_, err := cw.w.Write(b)
	return warns, err
}

// Close ends the output (ShareGPT's array); it does not close the
// underlying writer.
func (cw *Writer) Close() error {
	if cw.f != ShareGPT {
		return nil
	}
	end := "\n]\n"
	if cw.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(cw.w, end)
	return err
}

// MarkdownOf renders a conversation as a Markdown transcript: a heading
// per message, tool calls and results as fenced blocks, images as links
// (or embedded, with EmbedMedia), reasoning folded when asked for.
func MarkdownOf(c *Conversation, opts WriteOptions) string {
	var b strings.Builder
	if c.Title != "" {
		fmt.Fprintf(&b, "# %s\n\n", oneLineMD(c.Title))
	}
	for _, m := range c.History {
		b.WriteString("### ")
		b.WriteString(roleTitle(m.Role))
		if m.Name != "" {
			fmt.Fprintf(&b, " (%s)", oneLineMD(m.Name))
		}
		if m.Origin != nil && m.Origin.Model != "" {
			fmt.Fprintf(&b, " · %s", oneLineMD(m.Origin.Model))
		}
		if !m.Time.IsZero() {
			fmt.Fprintf(&b, " · %s", m.Time.UTC().Format(time.DateTime))
		}
		b.WriteString("\n\n")
		for _, p := range m.Parts {
			markdownPart(&b, p, opts)
		}
	}
	return b.String()
}

func roleTitle(r convo.Role) string {
	switch r {
	case convo.RoleTool:
		return "Tool"
	case convo.RoleError:
		return "Error"
	}
	s := string(r)
	if s == "" {
		return "?"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func markdownPart(b *strings.Builder, p convo.Part, opts WriteOptions) {
	switch p.Type {
	case convo.TypeText:
		b.WriteString(p.Text)
		b.WriteString("\n\n")
	case convo.TypeRefusal:
		fmt.Fprintf(b, "> **Refused:** %s\n\n", oneLineMD(p.Text))
	case convo.TypeReasoning:
		if !opts.Reasoning {
			return
		}
		text := p.Text
		if text == "" {
			text = strings.Join(p.Summary, "\n\n")
		}
		if text == "" {
			return // signed or encrypted only: nothing readable
		}
		fmt.Fprintf(b, "<details><summary>Reasoning</summary>\n\n%s\n\n</details>\n\n", text)
	case convo.TypeToolCall:
		fmt.Fprintf(b, "**Tool call** `%s` (%s)\n\n", oneLineMD(p.Name), oneLineMD(p.ID))
		if p.Args == nil {
			fence(b, "", p.ArgsRaw) // not JSON: code, a query, whatever the tool takes
		} else if pretty, err := indentJSON(p.Args); err == nil {
			fence(b, "json", pretty)
		} else {
			fence(b, "json", string(p.Args))
		}
	case convo.TypeToolResult:
		what := "Tool result"
		if p.Error {
			what = "Tool error"
		}
		fmt.Fprintf(b, "**%s** `%s` (%s)\n\n", what, oneLineMD(p.Name), oneLineMD(p.ID))
		for _, q := range p.Parts {
			switch q.Type {
			case convo.TypeText:
				fence(b, "", q.Text)
			case convo.TypeJSON:
				s, err := indentJSON(q.Value)
				if err != nil {
					s = string(q.Value)
				}
				fence(b, "json", s)
			default:
				markdownPart(b, q, opts)
			}
		}
	case convo.TypeJSON:
		s, err := indentJSON(p.Value)
		if err != nil {
			s = string(p.Value)
		}
		fence(b, "json", s)
	case convo.TypeImage, convo.TypeAudio, convo.TypeVideo, convo.TypeFile:
		markdownMedia(b, p, opts)
	default:
		fmt.Fprintf(b, "*(%s part)*\n\n", oneLineMD(string(p.Type)))
	}
}

func markdownMedia(b *strings.Builder, p convo.Part, opts WriteOptions) {
	label := p.Name
	if label == "" {
		label = string(p.Type)
	}
	label = strings.NewReplacer("[", "(", "]", ")").Replace(oneLineMD(label))
	bang := ""
	if p.Type == convo.TypeImage {
		bang = "!"
	}
	switch {
	case p.URL != "":
		fmt.Fprintf(b, "%s[%s](<%s>)\n\n", bang, label, strings.NewReplacer("<", "%3C", ">", "%3E").Replace(p.URL))
	case p.Data != "" && opts.EmbedMedia && p.Type == convo.TypeImage:
		fmt.Fprintf(b, "![%s](data:%s;base64,%s)\n\n", label, p.MediaType, p.Data)
	case p.Type == convo.TypeFile && p.Text != "":
		fmt.Fprintf(b, "*File %s:*\n\n", label)
		fence(b, "", p.Text)
	case p.Data != "":
		fmt.Fprintf(b, "*(%s %s, %s, %d bytes inline)*\n\n", p.Type, label, p.MediaType, p.DataSize())
	case p.FileID != "":
		fmt.Fprintf(b, "*(%s %s, file %s)*\n\n", p.Type, label, oneLineMD(p.FileID))
	}
}

// fence writes s in a fenced block whose fence is longer than any run of
// backticks in s, so nothing in s can end it.
func fence(b *strings.Builder, lang, s string) {
	run, longest := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	fmt.Fprintf(b, "%s%s\n%s\n%s\n\n", f, lang, strings.TrimRight(s, "\n"), f)
}

func indentJSON(v json.RawMessage) (string, error) {
	var out bytes.Buffer
	err := json.Indent(&out, v, "", "  ")
	return out.String(), err
}

// oneLineMD keeps a name or title on one line.
func oneLineMD(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
