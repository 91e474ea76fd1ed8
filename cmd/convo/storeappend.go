package main

import (
	"errors"
	"fmt"

	"github.com/convo-go/convo"
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
	from := fs.String("from", "convo", "the input: canonical messages (convo), or a provider's reply body or stream ("+formatNames()+")")
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
		m, warns, name, err := e.readReply(rc, args, provider.Options{}, false)
		e.warn(warns)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		msgs = convo.History{m}
	}
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
