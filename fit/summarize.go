package fit

import (
	"context"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// Transcript renders messages as plain text for a summarizer: one block per
// message, headed by its role (and name), with tool calls and results
// spelled out. Reasoning and error messages are left out: they are not part
// of what was said. Media appear as a one-line placeholder.
func Transcript(h convo.History) string {
	var b strings.Builder
	for _, m := range h {
		if m.Role == convo.RoleError {
			continue
		}
		head := string(m.Role)
		if m.Name != "" {
			head += " (" + m.Name + ")"
		}
		var body strings.Builder
		writeParts(&body, m.Parts)
		if body.Len() == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(head)
		b.WriteString(":\n")
		b.WriteString(strings.TrimRight(body.String(), "\n"))
	}
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	return b.String()
}

func writeParts(b *strings.Builder, ps []convo.Part) {
	line := func(s string) {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	for _, p := range ps {
		switch p.Type {
		case convo.TypeText:
			line(p.Text)
		case convo.TypeRefusal:
			line("[refused] " + p.Text)
		case convo.TypeJSON:
			line(compact(p.Value))
		case convo.TypeToolCall:
			args := p.ArgsRaw
			if p.Args != nil {
				args = compact(p.Args)
			}
			line("[calls " + p.Name + "] " + args)
		case convo.TypeToolResult:
			label := "[result of " + p.Name + "]"
			if p.Name == "" {
				label = "[result]"
			}
			if p.Error {
				label = "[failed: " + p.Name + "]"
			}
			var sub strings.Builder
			writeParts(&sub, p.Parts)
			line(label + " " + strings.TrimRight(sub.String(), "\n"))
		case convo.TypeImage, convo.TypeAudio, convo.TypeVideo, convo.TypeFile:
			desc := "[" + string(p.Type)
			if p.Name != "" {
				desc += " " + p.Name
			}
			line(desc + "]")
		}
	}
}

func compact(v []byte) string {
	c, err := jsonx.Compact(v, 0)
	if err != nil {
		return string(v)
	}
	return string(c)
}

// Memo wraps a summarizer so that the same messages are summarised once:
// later calls with equal messages return the first summary. Fit calls the
// summarizer whenever it drops turns, and a summary that stays the same
// keeps the request's start the same, which providers' prompt caches need.
// It is safe for concurrent use if s is.
func Memo(s Summarizer) Summarizer {
	return &memo{s: s, seed: maphash.MakeSeed(), m: map[uint64]string{}}
}

type memo struct {
	s    Summarizer
	seed maphash.Seed
	mu   sync.Mutex
	m    map[uint64]string
}

const memoLimit = 1024

func (c *memo) Summarize(ctx context.Context, h convo.History) (string, error) {
	var hh maphash.Hash
	hh.SetSeed(c.seed)
	b, err := convo.MarshalLines(h)
	if err != nil {
		// A history convo cannot encode has no stable key: summarise it
		// each time.
		return c.s.Summarize(ctx, h)
	}
	hh.Write(b)
	k := hh.Sum64()
	c.mu.Lock()
	s, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	s, err = c.s.Summarize(ctx, h)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	if len(c.m) >= memoLimit {
		clear(c.m)
	}
	c.m[k] = s
	c.mu.Unlock()
	return s, nil
}
