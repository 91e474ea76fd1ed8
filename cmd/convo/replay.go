package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/pricing"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/store/backends"
)

func init() {
	commands["replay"] = command{
		usage: "[--db FILE|postgres://…] [--tenant T] (CONVERSATION [--at MESSAGE_ID] | --search QUERY|--since T [--limit N] [--concurrency N]) " +
			"--model M (--upstream NAME=PROTOCOL@URL[,key-env=VAR] … --route MODEL_GLOB=NAME … | --config FILE) [--set NAME=VALUE …] [--json]",
		summary: "run a recorded turn again on another model, keep the answer as a fork, and compare",
		run:     runReplay,
	}
	examples["replay"] = "convo replay --config gateway.json --model claude-haiku-4-5 --set temperature=0.2 conv_0193…"
}

// setFlag collects --set NAME=VALUE.
type setFlag []replay.Setting

func (s *setFlag) String() string { return "" }
func (s *setFlag) Set(v string) error {
	st, err := replay.ParseSetting(v)
	if err != nil {
		return err
	}
	*s = append(*s, st)
	return nil
}

// replayArgs is a parsed convo replay command line.
type replayArgs struct {
	sf          storeFlags
	q           replay.Request
	sel         replay.Selection
	concurrency int
	timeout     time.Duration
	json        bool
	opts        replay.Options
}

func parseReplay(e *env, args []string) (replayArgs, error) {
	fs := flags(e, "replay")
	sf := storeFlags{
		db:     fs.String("db", e.envOr("CONVO_DB", backends.DefaultDSN), "the store: a SQLite `FILE`, or a postgres:// URL (default $CONVO_DB, else "+backends.DefaultDSN+")"),
		tenant: fs.String("tenant", "", "the `TENANT` whose conversations to replay"),
	}
	a := replayArgs{sf: sf}
	at := fs.String("at", "", "replay from the message `ID` (default: the last turn)")
	model := fs.String("model", "", "the `MODEL` to replay on (a route must match it)")
	search := fs.String("search", "", "replay the last turn of every conversation with a message matching `QUERY`")
	since := fs.String("since", "", "replay the last turn of every conversation updated since `T` (RFC 3339, a date, or a duration ago: 24h)")
	fs.IntVar(&a.sel.Limit, "limit", replay.DefaultLimit, "with --search or --since, at most `N` conversations")
	fs.IntVar(&a.concurrency, "concurrency", 4, "with --search or --since, at most `N` replays at once")
	fs.DurationVar(&a.timeout, "timeout", replay.DefaultTimeout, "give up on an upstream after `DURATION`")
	fs.BoolVar(&a.json, "json", false, "write the comparison as JSON")
	var set setFlag
	fs.Var(&set, "set", "override a recorded setting: `NAME=VALUE`, VALUE JSON or a string (temperature=0.2, max_tokens=500; repeatable)")
	ups := newUpstreamFlags(fs)
	rest, err := parseInterspersed(fs, args, 1)
	if err != nil {
		return a, err
	}
	batch := *search != "" || *since != ""
	switch {
	case *model == "":
		return a, usagef("--model is required")
	case batch && len(rest) > 0:
		return a, usagef("give a CONVERSATION or --search/--since, not both")
	case !batch && len(rest) == 0:
		return a, usagef("give a CONVERSATION, or --search QUERY or --since T")
	case batch && *at != "":
		return a, usagef("--at goes with one CONVERSATION")
	case a.concurrency < 1 || a.timeout <= 0:
		return a, usagef("--concurrency and --timeout must be positive")
	}
	if a.opts.Config, err = ups.read(); err != nil {
		return a, err
	}
	if *since != "" {
		if a.sel.Since, err = parseSince(*since, time.Now()); err != nil {
			return a, usagef("--since: %v", err)
		}
	}
	a.sel.Search = *search
	a.q = replay.Request{Tenant: *sf.tenant, At: *at, Model: *model, Set: set}
	if len(rest) > 0 {
		a.q.Conversation = rest[0]
	}
	a.opts.Timeout = a.timeout
	return a, nil
}

// parseInterspersed is parse with flags after the positional arguments
// too (convo replay CONVERSATION --at ID), as the synopsis shows them.
func parseInterspersed(fs *flag.FlagSet, args []string, max int) ([]string, error) {
	var pos []string
	for {
		rest, err := parse(fs, args, len(args))
		if err != nil {
			return nil, err
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) > max {
		return nil, usagef("too many arguments: %s", strings.Join(pos[max:], " "))
	}
	return pos, nil
}

// newReplayer makes a Replayer with the command's environment: keys from
// it, Bedrock's signer, the prices.
func newReplayer(e *env, opts replay.Options) (*replay.Replayer, error) {
	pricer, err := pricing.Default("", e.models)
	if err != nil {
		return nil, err
	}
	opts.Getenv, opts.Price, opts.Models = e.getenv, replayPrice(pricer), e.models
	for _, u := range opts.Config.Upstreams {
		if u.Protocol == "bedrock" && opts.SignBedrock == nil {
			if opts.SignBedrock, err = bedrockSigner(e.getenv); err != nil {
				return nil, err
			}
		}
	}
	return replay.New(opts)
}

// replayPrice prices a reply's usage for the comparisons with p (the
// prices file, then the model catalogue).
func replayPrice(p *pricing.Pricer) replay.PriceFunc {
	return func(_, model string, u convo.Usage) (convo.Money, bool) {
		pr, ok := p.Price(model)
		if !ok {
			return 0, false
		}
		usd, err := pr.Of(u)
		return usd, err == nil
	}
}

// parseSince reads --since: a time (RFC 3339), a date, or a duration
// before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (2026-12-01T10:00:00Z), a date (2026-12-01) or a duration (24h)", s)
}

func runReplay(e *env, args []string) error {
	a, err := parseReplay(e, args)
	if err != nil {
		return err
	}
	ctx, st, done, err := a.sf.openExisting()
	if err != nil {
		return err
	}
	defer done()
	a.opts.Store = st
	r, err := newReplayer(e, a.opts)
	if err != nil {
		return err
	}
	if a.q.Conversation == "" {
		return replayMany(ctx, e, r, a)
	}
	res, err := r.Replay(ctx, a.q)
	if err != nil {
		return err
	}
	if a.json {
		return writeJSONTo(e.stdout, res)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(e.stderr, "convo replay: warning: %s\n", w)
	}
	printResult(e.stdout, res)
	return nil
}

// replayMany replays the last turn of each conversation selected, with
// progress on a terminal.
func replayMany(ctx context.Context, e *env, r *replay.Replayer, a replayArgs) error {
	ids, err := r.Select(ctx, a.q.Tenant, a.sel)
	if err != nil {
		return err
	}
	var progress replay.Progress
	if isTerminalWriter(e.stderr) {
		progress = func(done, total int, o replay.Outcome) {
			fmt.Fprintf(e.stderr, "\rconvo replay: %d/%d %-40.40s", done, total, o.Conversation)
			if done == total {
				fmt.Fprintln(e.stderr)
			}
		}
	}
	outs := r.Many(ctx, ids, a.q, a.concurrency, progress)
	total := replay.Total(outs)
	if a.json {
		return writeJSONTo(e.stdout, struct {
			Outcomes []replay.Outcome `json:"outcomes"`
			Total    replay.Totals    `json:"total"`
		}{outs, total})
	}
	printBatch(e.stdout, outs, total)
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: run the same command again to replay the rest")
	}
	return nil
}

func writeJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printResult writes one comparison as a table.
func printResult(w io.Writer, res *replay.Result) {
	what := "replayed"
	if res.Skipped {
		what = "replayed before"
	}
	fmt.Fprintf(w, "%s %s at message %d → fork %s\n\n", what, res.Conversation, res.At, res.Fork)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	o, p := res.Original, res.Replay
	fmt.Fprintf(tw, "\toriginal\treplay\n")
	fmt.Fprintf(tw, "model\t%s\t%s\n", dash(o.Model), dash(p.Model))
	fmt.Fprintf(tw, "finish\t%s\t%s\t%s\n", dash(o.Finish), dash(p.Finish), sameOr(res.Compare.SameFinish, "same", "different"))
	fmt.Fprintf(tw, "tokens in/out\t%s\t%s\n", usageText(o.Usage), usageText(p.Usage))
	fmt.Fprintf(tw, "latency\t%s\t%s\n", latency(o.LatencyMS), latency(p.LatencyMS))
	fmt.Fprintf(tw, "cost\t%s\t%s\n", cost(o.CostUSD), cost(p.CostUSD))
	for _, c := range res.Compare.ToolCalls {
		fmt.Fprintf(tw, "tool call\t%s\t%s\t%s\n", call(c.Original), call(c.Replay), sameOr(c.Same, "same", "different"))
	}
	if o.Error != "" || p.Error != "" {
		fmt.Fprintf(tw, "error\t%s\t%s\n", dash(o.Error), dash(p.Error))
	}
	fmt.Fprintf(tw, "text similarity\t%.2f\n", res.Compare.TextSimilarity)
	tw.Flush()
	fmt.Fprintf(w, "\noriginal:\n%s\n\nreplay:\n%s\n", indent(o.Text), indent(p.Text))
}

// printBatch writes a batch's outcomes, a line each, and the totals.
func printBatch(w io.Writer, outs []replay.Outcome, t replay.Totals) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONVERSATION\tSTATUS\tTOOL CALLS\tFINISH\tSIMILARITY\tTOKENS\tLATENCY\tCOST\tFORK")
	for _, o := range outs {
		res := o.Result
		if res == nil {
			fmt.Fprintf(tw, "%s\terror: %s\n", o.Conversation, o.Err)
			continue
		}
		status := "replayed"
		switch {
		case res.Replay.Error != "":
			status = "failed: " + res.Replay.Error
		case res.Skipped:
			status = "skipped"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s→%s\t%.2f\t%s → %s\t%s\t%s\t%s\n", o.Conversation, status,
			sameOr(res.Compare.SameToolCalls, "same", "different"), dash(res.Original.Finish), dash(res.Replay.Finish),
			res.Compare.TextSimilarity, usageText(res.Original.Usage), usageText(res.Replay.Usage),
			latency(res.Replay.LatencyMS), cost(res.Replay.CostUSD), res.Fork)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d conversations: %d replayed, %d skipped (replayed before), %d failed, %d not replayed\n",
		t.Conversations, t.Replayed, t.Skipped, t.Failed, t.Errors)
	fmt.Fprintf(w, "same tool calls %d, same finish %d, mean text similarity %.2f\n", t.SameToolCalls, t.SameFinish, t.MeanSimilarity)
	fmt.Fprintf(w, "tokens in/out: original %d/%d, replay %d/%d; cost: original %s, replay %s\n",
		t.Original.Input, t.Original.Output, t.Replay.Input, t.Replay.Output, cost(t.Original.CostUSD), cost(t.Replay.CostUSD))
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func sameOr(same bool, yes, no string) string {
	if same {
		return yes
	}
	return no
}

func usageText(u *replay.Usage) string {
	if u == nil {
		return "—"
	}
	return fmt.Sprintf("%d/%d", u.Input, u.Output)
}

func latency(ms *int64) string {
	if ms == nil {
		return "—"
	}
	return fmt.Sprintf("%d ms", *ms)
}

func cost(usd *convo.Money) string {
	if usd == nil {
		return "—"
	}
	return "$" + usd.String()
}

func call(c *replay.Call) string {
	if c == nil {
		return "—"
	}
	args := string(c.Args)
	if len(args) > 60 {
		args = args[:57] + "…"
	}
	return c.Name + " " + args
}

func indent(s string) string {
	if s == "" {
		return "  (no text)"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
