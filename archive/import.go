package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/store"
)

// ImportOptions say where Import puts conversations.
type ImportOptions struct {
	Tenant string
	// Meta is merged into every imported conversation's metadata.
	Meta json.RawMessage
	// Progress, when set, is called after every conversation.
	Progress func(ImportProgress)
}

// ImportProgress counts what Import has done so far.
type ImportProgress struct {
	Conversations int   // stored
	Forks         int   // stored as forks of them
	Existing      int   // already in the store from an earlier import: left alone
	Failed        int   // refused by the store (see the warnings)
	BytesRead     int64 // of the input, -1 when unknown
}

// Import stores every conversation r reads, one at a time, so memory stays
// bounded by the largest conversation whatever the size of the input. Each
// becomes a conversation of its own, titled as in the source; its forks
// become forks of it (store.Store.Fork at the shared messages, then the
// branch's own). The store id is derived from the format and the source's
// id, so importing the same export again stores nothing twice: a
// conversation already there is counted as Existing. The metadata holds
// "source", "source_id", "created" and "updated" beside the reader's.
//
// A conversation the store refuses is counted as Failed and reported in the
// warnings, and the import goes on; an error reading the input or from the
// store itself ends it. The warnings are the reader's and the store's, the
// places prefixed with the conversation's source id.
func Import(ctx context.Context, s store.Store, f Format, r *Reader, opts ImportOptions) (ImportProgress, []provider.Warning, error) {
	var p ImportProgress
	var warns []provider.Warning
	var extra map[string]json.RawMessage
	if len(opts.Meta) > 0 {
		if err := json.Unmarshal(opts.Meta, &extra); err != nil {
			return p, nil, fmt.Errorf("import: meta is not a JSON object: %w", err)
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return p, warns, err
		}
		c, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return p, warns, err
		}
		warns = append(warns, c.Warnings...)
		n, err := importOne(ctx, s, f, c, opts.Tenant, extra)
		switch {
		case errors.Is(err, store.ErrExists):
			p.Existing++
		case errors.Is(err, store.ErrInvalid):
			p.Failed++
			warns = append(warns, provider.Warnf(fmt.Sprintf("conversation %q", c.ID), "refused by the store: %v", err))
		case err != nil:
			return p, warns, err
		default:
			p.Conversations++
			p.Forks += n
		}
		p.BytesRead = r.BytesRead()
		if opts.Progress != nil {
			opts.Progress(p)
		}
	}
	warns = append(warns, r.Warnings()...)
	return p, warns, nil
}

// importOne stores c and its forks; it returns how many forks it stored.
func importOne(ctx context.Context, s store.Store, f Format, c *Conversation, tenant string, extra map[string]json.RawMessage) (int, error) {
	meta := map[string]json.RawMessage{}
	if len(c.Meta) > 0 {
		if err := json.Unmarshal(c.Meta, &meta); err != nil {
			return 0, fmt.Errorf("%w: meta: %v", store.ErrInvalid, err)
		}
	}
	set := func(k string, v any) {
		b, _ := json.Marshal(v)
		meta[k] = b
	}
	set("source", string(f))
	if c.ID != "" {
		set("source_id", c.ID)
	}
	if !c.Created.IsZero() {
		set("created", c.Created.Format(time.RFC3339Nano))
	}
	if !c.Updated.IsZero() {
		set("updated", c.Updated.Format(time.RFC3339Nano))
	}
	for k, v := range extra {
		meta[k] = v
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return 0, err
	}
	sc := store.Conversation{ID: storeID(f, c.ID), Tenant: tenant, Title: c.Title, Meta: mb}
	if len(sc.Title) > store.MaxTitleBytes {
		sc.Title = sc.Title[:store.MaxTitleBytes]
	}
	created, err := s.Create(ctx, sc, c.History...)
	if err != nil {
		return 0, err
	}
	for i, fk := range c.Forks {
		fc := store.Conversation{Tenant: tenant, Title: sc.Title, Meta: mb}
		if created.ID != "" && sc.ID != "" {
			fc.ID = fmt.Sprintf("%s.fork%d", created.ID, i+1)
		}
		forked, err := s.Fork(ctx, tenant, created.ID, fk.At, fc)
		if err != nil {
			return i, fmt.Errorf("conversation %q: fork %d: %w", c.ID, i+1, err)
		}
		if _, err := s.Append(ctx, tenant, forked.ID, forked.Version, fk.History...); err != nil {
			return i, fmt.Errorf("conversation %q: fork %d: %w", c.ID, i+1, err)
		}
	}
	return len(c.Forks), nil
}

// storeID derives a store id from the source's, so a second import of the
// same export finds the first. Ids the store cannot take as they are (too
// long, or with characters it refuses) are hashed. No source id: the store
// picks one.
func storeID(f Format, id string) string {
	if id == "" {
		return ""
	}
	s := string(f) + "-" + id
	if len(s) <= 200 && !strings.ContainsFunc(s, func(r rune) bool {
		return !unicode.IsPrint(r) || unicode.IsSpace(r) || strings.ContainsRune("/?#%\\", r) || r == utf8.RuneError
	}) {
		return s
	}
	sum := sha256.Sum256([]byte(id))
	return string(f) + "-" + hex.EncodeToString(sum[:16])
}
