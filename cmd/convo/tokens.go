package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/tokens"
)

func init() {
	commands["tokens"] = command{
		usage:   "--model M [--json] [--cheap] [--estimate] [--models FILE] [FILE]",
		summary: "count the tokens a history takes for a model, per message; says exact or estimated",
		run:     runTokens,
	}
}

// modelFlags are the flags tokens and fit share to choose a model.
type modelFlags struct {
	model    *string
	estimate *bool
	models   *string
}

func addModelFlags(fs *flag.FlagSet) modelFlags {
	return modelFlags{
		model:    fs.String("model", "", "count for model `M` (gpt-4o, claude-sonnet-4, gemini-2.5-pro, llama3.1, …)"),
		estimate: fs.Bool("estimate", false, "count a model convo does not know with a generic estimate"),
		models:   fs.String("models", "", modelsFlagUsage+"; a file in the format of tokens/models.json adds tokenizer families and models"),
	}
}

// counter builds the counter the flags ask for. Windows come from the
// model catalogue (--models, $CONVO_MODELS); a --models file in the token
// registry's own format adds to the registry instead.
func (f modelFlags) counter(e *env, opts tokens.Options) (*tokens.Counter, error) {
	reg, err := f.registry(e)
	if err != nil {
		return nil, err
	}
	opts.Registry = reg
	opts.Estimate = *f.estimate
	c, err := tokens.NewCounter(*f.model, opts)
	if errors.Is(err, tokens.ErrUnknownModel) {
		return nil, usagef("%v (use --estimate to count it anyway, or --models FILE to add it)", err)
	}
	return c, err
}

// registry is the token registry the flags ask for.
func (f modelFlags) registry(e *env) (*tokens.Registry, error) {
	cat, facts, err := e.loadModels(*f.models, true)
	if err != nil {
		return nil, err
	}
	if facts == nil && cat == catalog.Default() {
		return tokens.Default(), nil
	}
	reg := tokens.New()
	reg.SetCatalog(cat)
	if facts != nil {
		if err := reg.Load(facts); err != nil {
			from := *f.models
			if from == "" {
				from = "CONVO_MODELS=" + e.getenv("CONVO_MODELS")
			}
			return nil, fmt.Errorf("%s: %w", from, err)
		}
	}
	return reg, nil
}

func runTokens(e *env, args []string) error {
	fs := flags(e, "tokens")
	mf := addModelFlags(fs)
	asJSON := fs.Bool("json", false, "print the count as JSON")
	cheap := fs.Bool("cheap", false, "start from the usage the provider last reported and count only the messages after it")
	args, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if *mf.model == "" {
		return usagef("--model is required")
	}
	c, err := mf.counter(e, tokens.Options{})
	if err != nil {
		return err
	}
	// The history is read and counted one message at a time, and each
	// message's row is written once its count is final: memory is about
	// twice the largest message, whatever the number of messages. (--cheap
	// holds the counts: which are inside the baseline is known at the end.)
	r, name, done, err := e.openInput(args, convo.DefaultLimits.MaxBytes)
	if err != nil {
		return err
	}
	defer done()
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	defer out.Flush()
	var rows *rowWriter
	t := c.CheapTally()
	if !*cheap {
		t = c.Tally()
		rows = &rowWriter{w: out, json: *asJSON}
		rows.start(c.Tally().Result())
		t.Stream(rows.row)
	}
	if err := e.tallyAll(t, r, name); err != nil {
		return err
	}
	var res tokens.Result
	if *cheap {
		res = t.Cheap()
	} else {
		res = t.Result()
	}
	warn(e, "tokens", res.Warnings)
	switch {
	case rows != nil:
		err = rows.end(res)
	case *asJSON:
		err = writeTokensJSON(out, res)
	default:
		err = writeTokensTable(out, res)
	}
	if err != nil {
		return err
	}
	return out.Flush()
}

// tallyAll adds every message r holds to t, showing the progress.
func (e *env) tallyAll(t *tokens.Tally, r io.Reader, name string) error {
	d := convo.NewDecoder(r)
	progress := e.newMeter()
	progress.verb = "counted"
	defer progress.done()
	for {
		progress.update(t.Len(), r)
		m, err := d.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		t.Add(m)
	}
}

// rowWriter writes the count of a streaming Tally as it comes: the header,
// a row per message, then the totals; as a table, or as the JSON object
// writeTokensJSON writes with "messages" first.
type rowWriter struct {
	w    *bufio.Writer
	json bool
	n    int
	err  error
}

func (rw *rowWriter) start(r tokens.Result) {
	if rw.json {
		rw.w.WriteString("{\n  \"messages\": [")
		return
	}
	fmt.Fprintf(rw.w, "model %s (%s family, %s)\n", r.Model, r.Family, r.Tokenizer)
	rw.line("#", "role", "tokens", "media", "")
}

// line writes one row of the table, columns right-aligned to widths that
// fit the usual values (a wider one pushes its row only).
func (rw *rowWriter) line(idx, role, tokens, media, note string) {
	s := fmt.Sprintf("%3s  %9s  %6s  %5s", idx, role, tokens, media)
	if note != "" {
		s += "   " + note
	}
	rw.w.WriteString(strings.TrimRight(s, " ") + "\n")
}

func (rw *rowWriter) row(m tokens.MessageCount) {
	if rw.json {
		b, err := json.MarshalIndent(m, "    ", "  ")
		if err != nil && rw.err == nil {
			rw.err = err
		}
		if rw.n > 0 {
			rw.w.WriteByte(',')
		}
		rw.w.WriteString("\n    ")
		rw.w.Write(b)
		rw.n++
		return
	}
	toks, media := fmt.Sprint(m.Tokens), ""
	if !m.Sent {
		toks = "-"
	}
	if m.Media > 0 {
		media = fmt.Sprint(m.Media)
	}
	note := m.Note
	if m.Sent && !m.Exact {
		note = "estimate"
	}
	rw.line(fmt.Sprint(m.Index), string(m.Role), toks, media, note)
}

func (rw *rowWriter) end(r tokens.Result) error {
	if rw.err != nil {
		return rw.err
	}
	if !rw.json {
		rw.line("", "request", fmt.Sprint(r.Request), "", "reply priming")
		_, err := fmt.Fprintln(rw.w, totalLine(r))
		return err
	}
	var b bytes.Buffer
	if err := writeTokensJSON(&b, r); err != nil {
		return err
	}
	// The totals after the rows: writeTokensJSON's object without its
	// opening brace and its (empty) messages.
	rest := strings.Replace(strings.TrimPrefix(b.String(), "{\n"), "  \"messages\": null,\n", "", 1)
	if rw.n > 0 {
		rw.w.WriteString("\n  ")
	}
	_, err := rw.w.WriteString("],\n" + rest)
	return err
}

func warn(e *env, cmd string, ws []provider.Warning) {
	for _, w := range ws {
		fmt.Fprintf(e.stderr, "convo %s: warning: %s\n", cmd, w)
	}
}

// describe says how a count was made, for a person.
func describe(r tokens.Result) string {
	switch {
	case r.Basis == "usage":
		return fmt.Sprintf("estimated: reported usage of messages[%d] plus the messages after it", r.BaselineAt)
	case r.Exact:
		return "exact"
	case r.Bound > 0:
		return fmt.Sprintf("estimated, ±%.0f%%: at most %d", r.Bound*100, r.Max())
	}
	return "estimated: parts without a published rule"
}

func writeTokensTable(w io.Writer, r tokens.Result) error {
	fmt.Fprintf(w, "model %s (%s family, %s)\n", r.Model, r.Family, r.Tokenizer)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "#\trole\ttokens\tmedia\t")
	for _, m := range r.Messages {
		tokens, media := fmt.Sprint(m.Tokens), ""
		if !m.Sent {
			tokens = "-"
		}
		if m.Media > 0 {
			media = fmt.Sprint(m.Media)
		}
		note := m.Note
		if m.Sent && !m.Exact {
			note = "estimate"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t %s\n", m.Index, m.Role, tokens, media, note)
	}
	if r.Baseline > 0 {
		fmt.Fprintf(tw, "\tbaseline\t%d\t\t reported usage of messages[%d]\n", r.Baseline, r.BaselineAt)
	}
	fmt.Fprintf(tw, "\trequest\t%d\t\t reply priming\n", r.Request)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, totalLine(r))
	return err
}

// totalLine is the table's last line: the total and how it was counted.
func totalLine(r tokens.Result) string {
	total := fmt.Sprintf("total %s (%s)", plural(r.Tokens, "tokens"), describe(r))
	if r.Context > 0 {
		total += fmt.Sprintf(" of a %d-token window", r.Context)
	}
	return total
}

func writeTokensJSON(w io.Writer, r tokens.Result) error {
	type out struct {
		tokens.Result
		Max      int      `json:"max"`
		Warnings []string `json:"warnings"`
	}
	o := out{Result: r, Max: r.Max(), Warnings: []string{}}
	for _, x := range r.Warnings {
		o.Warnings = append(o.Warnings, x.String())
	}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// plural is "1 message", "2 messages".
func plural(n int, what string) string {
	what = strings.TrimSuffix(what, "s")
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprint(n) + " " + what + "s"
}
