package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/convo-go/convo/store"
)

// storePrune applies a retention to one tenant's conversations now (or at
// --now, for a dry look at what a later sweep does).
func storePrune(e *env, args []string) error {
	fs, sf := newStoreFlags(e, "prune")
	content := fs.String("content", "", "remove message content of conversations unchanged for `DURATION` (e.g. 30d, 12h)")
	metadata := fs.String("metadata", "", "delete conversations unchanged for `DURATION`")
	now := fs.String("now", "", "prune as of this RFC 3339 `TIME` instead of the current time")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	var r store.Retention
	var err error
	if r.Content, err = store.ParseAge(*content); err != nil {
		return usagef("--content: %v", err)
	}
	if r.Metadata, err = store.ParseAge(*metadata); err != nil {
		return usagef("--metadata: %v", err)
	}
	if r.Content == 0 && r.Metadata == 0 {
		return usagef("give --content or --metadata (or both)")
	}
	at := time.Now()
	if *now != "" {
		if at, err = time.Parse(time.RFC3339, *now); err != nil {
			return usagef("--now: %v", err)
		}
	}
	ctx, s, done, err := sf.openExisting()
	if err != nil {
		return err
	}
	defer done()
	p, err := store.Prune(ctx, s, *sf.tenant, r, at)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "content expired in %d conversations, %d deleted\n", p.ContentExpired, p.Deleted)
	return nil
}

// startSweeper reads a retention policy from file ("" : none) and prunes
// st by it every interval in the background until ctx ends, logging what
// it removed and its errors.
func startSweeper(ctx context.Context, file string, every time.Duration, st store.Store, log *slog.Logger) error {
	if file == "" {
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	p, err := store.ParsePolicy(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if every <= 0 {
		return usagef("--sweep-every must be positive")
	}
	go store.Sweep(ctx, st, p, every, time.Now, func(tenant string, pr store.Pruned, err error) {
		switch {
		case err != nil:
			log.Error("retention sweep failed", "tenant", tenant, "err", err)
		case pr != store.Pruned{}:
			log.Info("retention sweep", "tenant", tenant, "content_expired", pr.ContentExpired, "deleted", pr.Deleted)
		}
	})
	return nil
}
