package ui

import (
	"html/template"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// funcs are the helpers the templates call.
var funcs = template.FuncMap{
	"number": func(n any) string {
		switch v := n.(type) {
		case int:
			return number(int64(v))
		case int64:
			return number(v)
		}
		return ""
	},
	"size": size,
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2 Jan 2006, 15:04:05 UTC")
	},
	"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) },
	"ago":  ago,
	"join": func(s []string) string { return strings.Join(s, ", ") },
	"total": func(u *convo.Usage) int64 {
		if u == nil {
			return 0
		}
		return total(u)
	},
	"highlight": highlight,
	"add":       func(a, b int) int { return a + b },
	"titleOf": func(c store.Conversation) string {
		if c.Title == "" {
			return "Untitled conversation"
		}
		return c.Title
	},
	"roleLabel": func(role string, scope string) string {
		switch role {
		case "system":
			if scope == "turn" {
				return "System · this turn"
			}
			return "System"
		case "user":
			return "User"
		case "assistant":
			return "Assistant"
		case "tool":
			return "Tool"
		case "summary":
			return "Summary"
		case "error":
			return "Error"
		}
		return role
	},
	"open": func(r *resultView) bool { return r != nil && r.Lines <= 12 },
}

// highlight writes a snippet with its highlights marked, every piece
// escaped.
func highlight(snippet string, marks [][2]int) template.HTML {
	var b strings.Builder
	at := 0
	for _, m := range marks {
		if m[0] < at || m[1] > len(snippet) || m[0] >= m[1] {
			continue
		}
		b.WriteString(template.HTMLEscapeString(snippet[at:m[0]]))
		b.WriteString("<mark>")
		b.WriteString(template.HTMLEscapeString(snippet[m[0]:m[1]]))
		b.WriteString("</mark>")
		at = m[1]
	}
	b.WriteString(template.HTMLEscapeString(snippet[at:]))
	return template.HTML(b.String())
}

// ago says how long ago t was, roughly.
func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute") + " ago"
	case d < 24*time.Hour:
		return plural(int(d/time.Hour), "hour") + " ago"
	case d < 30*24*time.Hour:
		return plural(int(d/(24*time.Hour)), "day") + " ago"
	}
	return t.UTC().Format("2 Jan 2006")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return number(int64(n)) + " " + unit + "s"
}
