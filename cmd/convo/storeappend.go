package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/pricing"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/store"
)

// storeAppend adds messages (canonical JSON: one message, JSON Lines or the
// envelope) or a provider's reply (--from) at the end of a stored
// conversation, if it is still at the version the caller read.
func storeAppend(e *env, args []string) error {
	fs, sf := newStoreFlags(e, "append")
	version := fs.Int64("version", 0, "append only if the conversation is still at version `N` (default: the version read just before, so a concurrent change is still a conflict)")
	from := fs.String("from", "convo", "the input: canonical messages (convo), or a provider's reply body or stream ("+providerNames()+")")
	prices := fs.String("prices", "", "price assistant messages without a cost by the JSON `FILE` of USD per million tokens by model glob, before the catalogue")
	args, err := parse(fs, args, 2)
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return usagef("missing conversation ID")
	}
	id, args := args[0], args[1:]
	var msgs convo.History
	if *from == "convo" {
		if msgs, err = e.readHistory(args); err != nil {
			return err
		}
	} else {
		rc, err := all.Lookup(*from)
		if err != nil {
			return usageError{err.Error()}
		}
		m, warns, name, err := e.readReply(rc, *from, args, provider.Options{}, false)
		e.warn(warns)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		msgs = convo.History{m}
	}
	pricer, err := pricing.Default(*prices, e.models)
	if err != nil {
		return err
	}
	msgs = pricer.Fill(msgs) // priced as recorded: kept with each message
	ctx, s, done, err := sf.openExisting()
	if err != nil {
		return err
	}
	defer done()
	v := *version
	if v <= 0 {
		c, err := s.Get(ctx, *sf.tenant, id)
		if err != nil {
			return err
		}
		v = c.Version
	}
	c, err := s.Append(ctx, *sf.tenant, id, v, msgs...)
	if errors.Is(err, store.ErrConflict) {
		if cur, gerr := s.Get(ctx, *sf.tenant, id); gerr == nil {
			return fmt.Errorf("conversation %s is at version %d, not %d: read it again (convo store show %s)", id, cur.Version, v, id)
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: version %d, %s\n", c.ID, c.Version, plural(c.Messages, "messages"))
	return nil
}

// importBatch is how many bytes of messages an import stores at a time.
var importBatch = 8 << 20 // a variable for tests

// importStream stores the canonical history in args[0] (or stdin) as a new
// conversation c, reading and storing it a batch at a time: the first batch
// creates the conversation, the others are appended at the version the last
// one left, so memory is a batch, not the history. If a later batch fails,
// the conversation is deleted again: an import stores all or nothing.
func importStream(e *env, sf storeFlags, c store.Conversation, args []string, limit int64) (store.Conversation, error) {
	r, name, closeInput, err := e.openInput(args, limit)
	if err != nil {
		return c, err
	}
	defer closeInput()
	d := convo.NewDecoder(r)
	var batch convo.History
	size, offset := 0, 0
	eof := false
	progress := e.newMeter()
	defer progress.done()
	next := func() error {
		batch, size = batch[:0], 0
		for size < importBatch {
			progress.update(offset+len(batch), r)
			m, err := d.Next()
			if errors.Is(err, io.EOF) {
				eof = true
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			batch = append(batch, m)
			size += approxSize(m)
		}
		return nil
	}
	if err := next(); err != nil {
		return c, err
	}
	ctx, s, done, err := sf.open()
	if err != nil {
		return c, err
	}
	defer done()
	if c.Title == "" {
		c.Title = defaultTitle(batch, args)
	}
	c, err = s.Create(ctx, c, batch...)
	if err != nil {
		return c, err
	}
	for !eof {
		offset += len(batch)
		if err = next(); err == nil && len(batch) > 0 {
			var appended store.Conversation
			if appended, err = s.Append(ctx, c.Tenant, c.ID, c.Version, batch...); err == nil {
				c = appended
			}
			err = renumber(err, offset)
		}
		if err != nil {
			if derr := s.Delete(context.Background(), c.Tenant, c.ID); derr != nil {
				return c, fmt.Errorf("%w (and removing the partial import failed: %v)", err, derr)
			}
			return c, err
		}
	}
	return c, nil
}

// approxSize is about the size of m in canonical JSON, for batching.
func approxSize(m convo.Message) int {
	n := 64 + len(m.Meta)
	for _, p := range m.Parts {
		n += 64 + len(p.Text) + len(p.Data) + len(p.Args) + len(p.Value) + len(p.ArgsRaw) + len(p.Signature) + len(p.Encrypted)
		for _, q := range p.Parts {
			n += 64 + len(q.Text) + len(q.Data)
		}
	}
	return n
}

// renumber makes the message indexes of a store error for a batch that
// starts at offset count from the start of the history.
func renumber(err error, offset int) error {
	if err == nil || offset == 0 {
		return err
	}
	return batchError{err: err, offset: offset}
}

type batchError struct {
	err    error
	offset int
}

func (b batchError) Unwrap() error { return b.err }

func (b batchError) Error() string {
	return msgIndex.ReplaceAllStringFunc(b.err.Error(), func(s string) string {
		var i int
		fmt.Sscanf(s, "messages[%d]", &i)
		return fmt.Sprintf("messages[%d]", i+b.offset)
	})
}

var msgIndex = regexp.MustCompile(`messages\[\d+\]`)
