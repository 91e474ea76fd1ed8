package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/convo-go/convo"
)

// Retention says how long a tenant's conversations are kept, counted from
// a conversation's last change (Conversation.Updated). Zero keeps forever.
type Retention struct {
	// Content is how long message content is kept. After it, every
	// message keeps only its metadata (role, id, time, origin, usage,
	// finish) and says "content":"expired" in native.convo; the
	// conversation keeps its title and metadata and says when its content
	// expired (ContentExpired).
	Content time.Duration
	// Metadata is how long the conversation is kept at all: after it, the
	// conversation is deleted.
	Metadata time.Duration
}

// ContentExpiredKey is the conversation metadata member a backend sets to
// the time (RFC 3339) a conversation's content expired.
const ContentExpiredKey = "convo_content_expired"

// ContentExpired reports when c's content expired, if it did.
func ContentExpired(c Conversation) (time.Time, bool) {
	var meta map[string]json.RawMessage
	if json.Unmarshal(c.Meta, &meta) != nil || meta[ContentExpiredKey] == nil {
		return time.Time{}, false
	}
	var t time.Time
	if json.Unmarshal(meta[ContentExpiredKey], &t) != nil {
		return time.Time{}, false
	}
	return t, true
}

// A ContentExpirer can remove a conversation's message content and keep
// its metadata: store/sqlite and store/postgres are.
type ContentExpirer interface {
	// ExpireContent replaces every message of the conversation by
	// WithoutContent(m, "expired"), removes it from the search index,
	// records at under ContentExpiredKey in the conversation's metadata
	// and bumps its version, leaving Updated alone.
	ExpireContent(ctx context.Context, tenant, id string, at time.Time) (Conversation, error)
}

// WithoutContent returns m's metadata only — role, id, name, time, phase,
// origin, usage, finish — with native.convo recording why the content is
// missing ("content":reason) and the types of the parts left out. A message
// already without content is returned as it is.
func WithoutContent(m convo.Message, reason string) convo.Message {
	if len(m.Parts) == 0 && m.Native["convo"] != nil {
		return m
	}
	types := make([]string, len(m.Parts))
	for i, p := range m.Parts {
		types[i] = string(p.Type)
	}
	note, _ := json.Marshal(map[string]any{"content": reason, "parts": types}) // cannot fail
	out := convo.Message{Role: m.Role, ID: m.ID, Name: m.Name, Time: m.Time, Phase: m.Phase,
		Origin: m.Origin, Usage: m.Usage, Cost: m.Cost, Finish: m.Finish, Native: convo.Native{"convo": note}}
	if out.Role == convo.RoleAssistant && out.Finish == "" {
		// An assistant message without parts must say how it ended;
		// "other" is the honest answer when it did not.
		out.Finish = convo.FinishOther
	}
	return out
}

// Pruned counts what Prune did.
type Pruned struct {
	ContentExpired int // conversations whose content was removed
	Deleted        int // conversations deleted
}

// Prune applies r to tenant's conversations as of now: conversations not
// changed for r.Metadata are deleted, those not changed for r.Content lose
// their content (the store must be a ContentExpirer). Passing now makes it
// testable with any clock.
func Prune(ctx context.Context, s Store, tenant string, r Retention, now time.Time) (Pruned, error) {
	var p Pruned
	if r.Content <= 0 && r.Metadata <= 0 {
		return p, nil
	}
	exp, _ := s.(ContentExpirer)
	if r.Content > 0 && exp == nil {
		return p, errors.New("store: content retention: this store cannot expire content")
	}
	after := ""
	for {
		cs, next, err := s.List(ctx, tenant, ListOptions{Limit: MaxListLimit, After: after})
		if err != nil {
			return p, fmt.Errorf("store: prune: %w", err)
		}
		for _, c := range cs {
			age := now.Sub(c.Updated)
			switch {
			case r.Metadata > 0 && age >= r.Metadata:
				if err := s.Delete(ctx, tenant, c.ID); err != nil && !errors.Is(err, ErrNotFound) {
					return p, fmt.Errorf("store: prune %q: %w", c.ID, err)
				}
				p.Deleted++
			case r.Content > 0 && age >= r.Content:
				if _, done := ContentExpired(c); done && c.Updated.Before(expiredAt(c)) {
					continue // nothing appended since
				}
				if _, err := exp.ExpireContent(ctx, tenant, c.ID, now); err != nil && !errors.Is(err, ErrNotFound) {
					return p, fmt.Errorf("store: prune %q: %w", c.ID, err)
				}
				p.ContentExpired++
			}
		}
		if next == "" {
			return p, nil
		}
		after = next
	}
}

func expiredAt(c Conversation) time.Time {
	t, _ := ContentExpired(c)
	return t
}

// Policy is the retention of each tenant, by tenant; tenants not named are
// kept forever. As JSON (convo serve and convo gateway --retention FILE):
//
//	{"acme": {"content": "30d", "metadata": "365d"}, "": {"content": "12h"}}
//
// Durations are days ("30d") or Go durations ("12h", "90m").
type Policy map[string]Retention

// ParsePolicy reads a Policy as JSON, refusing unknown members.
func ParsePolicy(r io.Reader) (Policy, error) {
	var raw map[string]struct {
		Content  string `json:"content"`
		Metadata string `json:"metadata"`
	}
	dec := json.NewDecoder(io.LimitReader(r, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("retention policy: %w", err)
	}
	p := Policy{}
	for tenant, v := range raw {
		var r Retention
		var err error
		if r.Content, err = ParseAge(v.Content); err != nil {
			return nil, fmt.Errorf("retention policy: %q.content: %w", tenant, err)
		}
		if r.Metadata, err = ParseAge(v.Metadata); err != nil {
			return nil, fmt.Errorf("retention policy: %q.metadata: %w", tenant, err)
		}
		p[tenant] = r
	}
	return p, nil
}

// ParseAge reads a retention duration: a number of days ("30d") or a Go
// duration ("12h"); "" is 0, keep forever.
func ParseAge(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	bad := fmt.Errorf("%q: want a positive number of days (30d) or a duration (12h)", s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		d, err := strconv.Atoi(n)
		if err != nil || d <= 0 || d > 1<<20 {
			return 0, bad
		}
		return time.Duration(d) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, bad
	}
	return d, nil
}

// Sweep prunes every tenant of p at once and then every interval, until ctx
// ends. now is the clock (time.Now in production); report, when not nil,
// hears each tenant's outcome.
func Sweep(ctx context.Context, s Store, p Policy, every time.Duration, now func() time.Time, report func(tenant string, pr Pruned, err error)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		for tenant, r := range p {
			pr, err := Prune(ctx, s, tenant, r, now())
			if ctx.Err() != nil {
				return
			}
			if report != nil {
				report(tenant, pr, err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
