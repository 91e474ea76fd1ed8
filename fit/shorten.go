package fit

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// shortenedMark opens the note Fit appends to a shortened tool result, so
// the model (and a reader) can tell the output was cut.
const shortenedMark = "[shortened by convo fit: "

// shortenResults returns m with each tool result longer than limit bytes
// cut to limit bytes of its text and marked as shortened, and how many it
// shortened. Media in a shortened result are left out and the mark says
// so. m itself is not modified.
func shortenResults(m convo.Message, limit int) (convo.Message, int) {
	var parts []convo.Part
	n := 0
	for j, p := range m.Parts {
		if p.Type != convo.TypeToolResult {
			continue
		}
		text, media := resultText(p.Parts)
		if len(text) <= limit && media == 0 {
			continue
		}
		if strings.Contains(text, shortenedMark) && media == 0 {
			continue // already shortened, by an earlier fit that was stored
		}
		if parts == nil {
			parts = append([]convo.Part(nil), m.Parts...)
		}
		kept := cut(text, limit)
		note := fmt.Sprintf("%s%d of %d bytes kept", shortenedMark, len(kept), len(text))
		if media > 0 {
			note += fmt.Sprintf("; %d media parts left out", media)
		}
		if kept != "" {
			kept += "\n"
		}
		q := p
		q.Parts = []convo.Part{convo.Text(kept + note + "]")}
		parts[j] = q
		n++
	}
	if n == 0 {
		return m, 0
	}
	m.Parts = parts
	return m, n
}

// longResults reports cheaply whether m may have a result to shorten: one
// whose content is over limit bytes or holds media.
func longResults(m convo.Message, limit int) bool {
	for _, p := range m.Parts {
		n := 0
		for _, q := range p.Parts {
			switch q.Type {
			case convo.TypeText:
				n += len(q.Text) + 1
			case convo.TypeJSON:
				n += len(q.Value) + 1
			default:
				return true
			}
		}
		if n > limit {
			return true
		}
	}
	return false
}

// resultText is the text of a tool result's content as it is sent: text
// parts and JSON values (compacted) joined by newlines, and how many media
// parts it holds besides.
func resultText(ps []convo.Part) (string, int) {
	var b strings.Builder
	media := 0
	for _, p := range ps {
		s := ""
		switch p.Type {
		case convo.TypeText:
			s = p.Text
		case convo.TypeJSON:
			c, err := jsonx.Compact(p.Value, 0)
			if err != nil {
				c = p.Value
			}
			s = string(c)
		default:
			media++
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	return b.String(), media
}

// cut returns the first limit bytes of s, backing off to a character
// boundary.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit]
}
