package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/fit"
	"github.com/convo-go/convo/tokens"
)

func init() {
	commands["fit"] = command{
		usage:   "--budget N | --model M [--reserve R] [--summarize CMD] [--strategies LIST] [--block N] [--shorten-to N] [--estimate] [--models FILE] [FILE]",
		summary: "fit a history to a token budget; writes the fitted history, the report to stderr",
		run:     runFit,
	}
}

// runFit is fit; with --json every outcome is JSON on stderr, a failure
// included: {"error": …} (with "usage": true for a usage error, exit 2),
// and for a budget too small the counts and the counter that made them.
func runFit(e *env, args []string) error {
	if !wantsJSON(args) {
		return fit1(e, args, false)
	}
	err := fit1(e, args, true)
	if err == nil || errors.Is(err, flag.ErrHelp) || errors.As(err, &silentError{}) {
		return err
	}
	rep := fitFailure{Error: oneLine(explain(err))}
	var ue usageError
	rep.Usage = errors.As(err, &ue)
	var be *fitBudgetError
	if errors.As(err, &be) {
		rep.Budget, rep.Need, rep.Model, rep.Exact = be.Budget, be.Need, be.counter.Model().Name, be.counter.Exact()
		if !rep.Exact {
			rep.Bound = be.counter.Bound()
		}
	}
	b, _ := json.Marshal(rep)
	fmt.Fprintf(e.stderr, "%s\n", b)
	if rep.Usage {
		return silentUsageError{}
	}
	return silentError{}
}

// fitFailure is fit --json's report of a failure.
type fitFailure struct {
	Error  string  `json:"error"`
	Usage  bool    `json:"usage,omitempty"`
	Budget int     `json:"budget,omitempty"`
	Need   int     `json:"need,omitempty"`
	Model  string  `json:"model,omitempty"`
	Exact  bool    `json:"exact,omitempty"`
	Bound  float64 `json:"bound,omitempty"`
}

// wantsJSON reports whether args ask for --json, looked for before the
// flags are parsed so that a mistake in them is reported as JSON too.
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-json", "--json", "-json=true", "--json=true":
			return true
		}
	}
	return false
}

// fitBudgetError is a fit.BudgetError that says how its counts were made:
// exactly, or estimated and with which estimate.
type fitBudgetError struct {
	*fit.BudgetError
	counter *tokens.Counter
}

func (e *fitBudgetError) Error() string {
	return e.BudgetError.Error() + " (" + countHow(e.counter) + ")"
}

func (e *fitBudgetError) Unwrap() error { return e.BudgetError }

func fit1(e *env, args []string, quiet bool) error {
	fs := flags(e, "fit")
	help := fs.Usage
	if quiet { // a mistake is reported as JSON; -h still prints the help
		fs.SetOutput(io.Discard)
		fs.Usage = func() {}
	}
	mf := addModelFlags(fs)
	budget := fs.Int("budget", 0, "fit the prompt into `N` tokens (default: the model's window less --reserve)")
	reserve := fs.Int("reserve", -1, "keep `R` tokens of the model's window for the reply (default: its maximum output, or a fifth of the window)")
	summarize := fs.String("summarize", "", "summarise what is left out by piping its transcript to `CMD` (run by sh -c)")
	strategies := fs.String("strategies", "", "strategies to apply, in order: `LIST` of reasoning, shorten, drop, summarize (default: reasoning,shorten,drop)")
	block := fs.Int("block", 0, "trim in steps of `N` tokens, so the request's start stays the same across turns (default: no steps, keep as much as the budget allows)")
	asJSON := fs.Bool("json", false, "write the report to stderr as one JSON object (see docs) instead of lines")
	shortenTo := fs.Int("shorten-to", 0, "keep `N` bytes of a shortened tool result (default 1024)")
	args, err := parse(fs, args, 1)
	if err != nil {
		if quiet && errors.Is(err, flag.ErrHelp) {
			help()
		}
		return err
	}
	switch {
	case *budget == 0 && *mf.model == "":
		return usagef("give --budget N or --model M")
	case *budget < 0:
		return usagef("--budget must be positive")
	case *reserve >= 0 && (*mf.model == "" || *budget > 0):
		return usagef("--reserve goes with --model and no --budget")
	case *block < 0 || *shortenTo < 0:
		return usagef("--block and --shorten-to must not be negative")
	}
	opts := fit.Options{Budget: *budget, Block: *block, ShortenTo: *shortenTo}
	if *strategies != "" {
		if opts.Strategies, err = fit.ParseStrategies(*strategies); err != nil {
			return usagef("--strategies: %v", err)
		}
	}
	if *summarize != "" {
		opts.Summarizer = commandSummarizer{cmd: *summarize, stderr: e.stderr}
		if opts.Strategies == nil {
			opts.Strategies = []fit.Strategy{fit.DropReasoning, fit.ShortenResults, fit.Summarize}
		} else if !hasStrategy(opts.Strategies, fit.Summarize) {
			opts.Strategies = append(opts.Strategies, fit.Summarize)
		}
	} else if hasStrategy(opts.Strategies, fit.Summarize) {
		return usagef("the summarize strategy needs --summarize CMD")
	}
	c, err := fitCounter(e, mf, &opts, *reserve)
	if err != nil {
		return err
	}
	h, err := e.readHistory(args)
	if err != nil {
		return err
	}
	capHeap()
	progress, step := e.counting(len(h))
	opts.Counter = &meteredCounter{Counter: c, step: step}
	r, err := fit.Fit(context.Background(), h, opts)
	progress.done()
	var be *fit.BudgetError
	if errors.As(err, &be) {
		return &fitBudgetError{be, c}
	}
	if err != nil {
		return err
	}
	if err := writeHistory(e.stdout, r.History); err != nil {
		return err
	}
	if *asJSON {
		return writeFitJSON(e.stderr, r, c)
	}
	writeFitReport(e.stderr, r, c, *block)
	return nil
}

// capHeap bounds the heap while fit counts, unless GOMEMLIMIT says
// otherwise. Counting makes garbage (some 1.2 GB for a 300,000-message
// history) while what fit holds stays the history and a few numbers per
// message; at the default GC pace the heap grows to twice that before it
// is collected. A soft limit of 1.5 times the history plus 64 MiB keeps
// the peak nearer what fit must hold (533 MB down to 425 MB in
// docs/benchmarks.md) at no measurable CPU cost; 1.25 times saved more
// (370 MB) but cost a fifth more CPU.
func capHeap() {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	debug.SetMemoryLimit(int64(ms.HeapAlloc)*3/2 + 64<<20)
}

// writeHistory writes h as convo.Marshal encodes it, a message at a time,
// so the document is never held whole beside the history.
func writeHistory(w io.Writer, h convo.History) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.WriteString(`{"format":"convo/v1","messages":[`)
	var buf []byte
	for i, m := range h {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
		var err error
		if buf, err = convo.AppendMessage(buf[:0], m); err != nil {
			return fmt.Errorf("messages[%d]: %w", i, err)
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	if len(h) > 0 {
		bw.WriteByte('\n')
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// fitCounter builds the counter fit counts with, and sets the budget from
// the model's window when none was given. Budgets are kept with the upper
// end of an estimate: a fitted history must not overflow the window however
// the estimate errs.
func fitCounter(e *env, mf modelFlags, opts *fit.Options, reserve int) (*tokens.Counter, error) {
	if *mf.model == "" {
		reg := tokens.Default()
		m, err := reg.Estimated("any model")
		if err != nil {
			return nil, err
		}
		return reg.CounterFor(m, tokens.Options{Upper: true})
	}
	c, err := mf.counter(e, tokens.Options{Upper: true})
	if err != nil {
		return nil, err
	}
	if opts.Budget == 0 {
		if opts.Budget, err = fit.BudgetFor(c.Model(), reserve); err != nil {
			return nil, usagef("%v", err)
		}
	}
	return c, nil
}

func hasStrategy(ss []fit.Strategy, s fit.Strategy) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// countHow says how c counts: exactly, or estimated, with which estimate.
func countHow(c *tokens.Counter) string {
	switch {
	case c.Exact():
		return "exact, " + c.Model().Name
	case c.Model().Family == "estimate":
		return fmt.Sprintf("estimated at the upper end of ±%.0f%%: no --model", c.Bound()*100)
	}
	return fmt.Sprintf("estimated at the upper end of ±%.0f%%, %s", c.Bound()*100, c.Model().Name)
}

// writeFitReport says, one line each, how the history was fitted: the
// counts, then runs of left-out messages with their reason, then changed
// messages.
func writeFitReport(w io.Writer, r *fit.Result, c *tokens.Counter, block int) {
	fmt.Fprintf(w, "convo fit: %d of %d tokens (%s); the history had %d", r.Tokens, r.Budget, countHow(c), r.Original)
	if r.Level == 0 {
		fmt.Fprintln(w, ": it fits as it is")
		return
	}
	if block > 0 {
		fmt.Fprintf(w, "; %s of trimming\n", plural(r.Level, "blocks"))
	} else {
		fmt.Fprintf(w, "; %s trimmed\n", plural(r.Original-r.Tokens, "tokens"))
	}
	for i := 0; i < len(r.Excluded); {
		j, tok := i, 0
		for j < len(r.Excluded) && r.Excluded[j].Reason == r.Excluded[i].Reason &&
			r.Excluded[j].Index == r.Excluded[i].Index+(j-i) {
			tok += r.Excluded[j].Tokens
			j++
		}
		where := fmt.Sprintf("messages[%d]", r.Excluded[i].Index)
		if j-i > 1 {
			where = fmt.Sprintf("messages[%d:%d]", r.Excluded[i].Index, r.Excluded[j-1].Index+1)
		}
		fmt.Fprintf(w, "  %s (%s, %s): %s\n", where, plural(j-i, "messages"), plural(tok, "tokens"), r.Excluded[i].Reason)
		i = j
	}
	for _, ch := range r.Changed {
		fmt.Fprintf(w, "  messages[%d] (%s, now messages[%d]): %s, %s saved\n", ch.Index, ch.Role, ch.At, ch.What, plural(ch.Saved, "tokens"))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// fitJSON is fit --json's report: the counts, the counter, and every
// message left out or changed, indexes counting in the history given.
type fitJSON struct {
	Tokens   int           `json:"tokens"`
	Budget   int           `json:"budget"`
	Original int           `json:"original"`
	Level    int           `json:"level"`
	Model    string        `json:"model"`
	Exact    bool          `json:"exact"`
	Bound    float64       `json:"bound,omitempty"`
	Excluded []fitExcluded `json:"excluded"`
	Changed  []fitChanged  `json:"changed"`
	Summary  int           `json:"summary,omitempty"`
	Notes    []string      `json:"notes,omitempty"`
}

type fitExcluded struct {
	Index  int    `json:"index"`
	Role   string `json:"role"`
	Tokens int    `json:"tokens"`
	Reason string `json:"reason"`
}

type fitChanged struct {
	Index int    `json:"index"`
	At    int    `json:"at"`
	Role  string `json:"role"`
	What  string `json:"what"`
	Saved int    `json:"saved"`
}

func writeFitJSON(w io.Writer, r *fit.Result, c *tokens.Counter) error {
	rep := fitJSON{Tokens: r.Tokens, Budget: r.Budget, Original: r.Original, Level: r.Level,
		Model: c.Model().Name, Exact: c.Exact(), Summary: r.Summary, Notes: r.Notes,
		Excluded: []fitExcluded{}, Changed: []fitChanged{}}
	if !rep.Exact {
		rep.Bound = c.Bound()
	}
	for _, x := range r.Excluded {
		rep.Excluded = append(rep.Excluded, fitExcluded{x.Index, string(x.Role), x.Tokens, x.Reason})
	}
	for _, x := range r.Changed {
		rep.Changed = append(rep.Changed, fitChanged{x.Index, x.At, string(x.Role), x.What, x.Saved})
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// commandSummarizer summarises by piping a transcript to a shell command
// and taking what it prints.
type commandSummarizer struct {
	cmd    string
	stderr io.Writer
}

func (s commandSummarizer) Summarize(ctx context.Context, left convo.History) (string, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", s.cmd)
	cmd.Stdin = strings.NewReader(fit.Transcript(left))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return "", fmt.Errorf("--summarize %q: %v: %s", s.cmd, err, msg)
		}
		return "", fmt.Errorf("--summarize %q: %w", s.cmd, err)
	}
	text := strings.TrimSpace(out.String())
	if text == "" {
		return "", fmt.Errorf("--summarize %q printed nothing", s.cmd)
	}
	return text, nil
}

// meteredCounter counts as c does and reports each message counted to the
// progress meter; the embedded counter supplies the rest (CountsReasoning).
type meteredCounter struct {
	*tokens.Counter
	step func(done int)
	n    int
}

func (m *meteredCounter) MessageTokens(msg convo.Message) int {
	m.n++
	m.step(m.n)
	return m.Counter.MessageTokens(msg)
}
