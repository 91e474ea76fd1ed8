package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/convo-go/convo/store"
)

// storeUsage prints the tokens and cost of the stored assistant messages,
// grouped, over a time range.
func storeUsage(e *env, args []string) error {
	fs, sf := newStoreFlags(e, "usage")
	by := fs.String("by", "", "group by `KEY`: model, conversation, tenant or day (default: one total)")
	since := fs.String("since", "", "count messages from `TIME` on (RFC 3339, or a UTC day YYYY-MM-DD)")
	until := fs.String("until", "", "count messages before `TIME` (RFC 3339, or a UTC day YYYY-MM-DD: that day excluded)")
	all := fs.Bool("all-tenants", false, "add up every tenant's usage (--by tenant implies it)")
	limit := fs.Int("limit", 0, "print at most `N` groups (default "+strconv.Itoa(store.DefaultUsageLimit)+"; conversations: the most costly)")
	asJSON := fs.Bool("json", false, "a JSON array of objects instead of a table")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	q := store.UsageQuery{Tenant: *sf.tenant, AllTenants: *all || *by == "tenant", By: store.UsageGroup(*by), Limit: *limit}
	if !q.By.Known() {
		return usagef("--by %q: want model, conversation, tenant or day", *by)
	}
	if *limit < 0 {
		return usagef("--limit must not be negative")
	}
	var err error
	if q.Since, err = parseWhen(*since); err != nil {
		return usagef("--since: %v", err)
	}
	if q.Until, err = parseWhen(*until); err != nil {
		return usagef("--until: %v", err)
	}
	ctx, s, done, err := sf.openExisting()
	if err != nil {
		return err
	}
	defer done()
	ur, ok := s.(store.UsageReporter)
	if !ok {
		return errors.New("this store does not answer usage questions")
	}
	rows, err := ur.Usage(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		return printUsageJSON(e, q, rows)
	}
	return printUsageTable(e, q, rows)
}

// parseWhen reads an RFC 3339 time or a UTC day; "" is the zero time.
func parseWhen(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// printUsageJSON prints rows as a JSON array (store.UsageJSON), the shape
// GET /convo/v1/usage answers too.
func printUsageJSON(e *env, q store.UsageQuery, rows []store.UsageRow) error {
	out := store.UsageRowsJSON(q.By, rows)
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.stdout, "%s\n", b)
	return err
}

func printUsageTable(e *env, q store.UsageQuery, rows []store.UsageRow) error {
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := "TOTAL"
	if q.By != store.ByNone {
		head = map[store.UsageGroup]string{store.ByModel: "MODEL", store.ByConversation: "CONVERSATION", store.ByTenant: "TENANT", store.ByDay: "DAY"}[q.By]
	}
	fmt.Fprintf(tw, "%s\tMESSAGES\tINPUT\tOUTPUT\tCACHED\tREASONING\tCOST USD\t\n", head)
	var unpriced int64
	for _, r := range rows {
		key := r.Key
		if q.By == store.ByNone {
			key = "all"
		}
		if key == "" {
			key = "(none)"
		}
		cost := r.Cost.String()
		if r.Unpriced > 0 {
			cost += "*"
			unpriced += r.Unpriced
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t\n", key, r.Messages, r.Input, r.Output, r.CacheRead, r.Reasoning, cost)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if unpriced > 0 {
		fmt.Fprintf(e.stdout, "* %s without a known price: their cost is unknown and not in the total\n", plural(int(unpriced), "messages"))
	}
	return nil
}
