package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/convo-go/convo/archive"
	"github.com/convo-go/convo/provider"
)

// The outside formats of package archive, beside the provider formats.

func archiveNames(fs []archive.Format) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

func isReadable(name string) bool {
	for _, f := range archive.Readable() {
		if string(f) == name {
			return true
		}
	}
	return false
}

func isWritable(name string) bool {
	for _, f := range archive.Writable() {
		if string(f) == name {
			return true
		}
	}
	return false
}

// archiveFlags are convert's flags for the outside formats.
type archiveFlags struct {
	pick  string
	embed bool
}

func (a *archiveFlags) register(fs interface {
	BoolVar(*bool, string, bool, string)
	StringVar(*string, string, string, string)
}) {
	fs.StringVar(&a.pick, "pick", "", "from an export of many conversations, the one to convert: its index (0 is the first) or its id")
	fs.BoolVar(&a.embed, "embed-media", false, "with --to markdown, embed inline images as data: URLs")
}

// openArchive reads format f from args[0] (a file, a directory or a zip)
// or stdin.
func (e *env) openArchive(f archive.Format, args []string) (*archive.Reader, string, error) {
	if len(args) > 0 && args[0] != "-" {
		r, err := archive.Open(args[0], f, archive.Options{})
		return r, args[0], err
	}
	if f == archive.LLM {
		return nil, "", usagef("--from llm reads a logs.db file: name it")
	}
	r, err := archive.NewReader(e.stdin, f, archive.Options{})
	return r, "stdin", err
}

// convertArchive is convert when either side is an outside format.
func convertArchive(e *env, from, to string, args []string, opts provider.Options, af archiveFlags, lines bool) error {
	if err := checkArchiveFormats(from, to); err != nil {
		return err
	}
	next, closeIn, name, err := e.conversations(from, args, opts)
	if err != nil {
		return err
	}
	defer closeIn()
	warn := func(ws []provider.Warning) error {
		e.warn(ws)
		if opts.Strict && len(ws) > 0 {
			return fmt.Errorf("%s: strict: %d warnings", name, len(ws))
		}
		return nil
	}
	if isWritable(to) {
		w, err := archive.NewWriter(e.stdout, archive.Format(to), archive.WriteOptions{Reasoning: opts.Reasoning == provider.ReasoningText, EmbedMedia: af.embed})
		if err != nil {
			return err
		}
		if err := writeArchive(w, next, name, af.pick, warn); err != nil {
			return err
		}
		return w.Close()
	}
	// To convo or a provider format: one conversation.
	chosen, err := chooseConversation(next, name, from, af.pick, warn)
	if err != nil {
		return err
	}
	if len(chosen.Forks) > 0 {
		if err := warn([]provider.Warning{provider.Warnf("", "%d forks left out: the output holds the main line", len(chosen.Forks))}); err != nil {
			return err
		}
	}
	dst, err := codec("to", to)
	if err != nil {
		return err
	}
	return e.writeHistory(chosen.History, dst, opts, lines)
}

// checkArchiveFormats checks that from can be read and to written, before
// any input is read.
func checkArchiveFormats(from, to string) error {
	if from != "convo" && !isReadable(from) {
		if _, err := codec("from", from); err != nil {
			return err
		}
	}
	if to != "convo" && !isWritable(to) {
		if isReadable(to) {
			return usagef("--to: %s is read, not written (written: %s)", to, archiveNames(archive.Writable()))
		}
		if _, err := codec("to", to); err != nil {
			return err
		}
	}
	return nil
}

// writeArchive writes the conversations next reads (the one pick names,
// when set) to w, passing on the warnings of both sides.
func writeArchive(w *archive.Writer, next func() (*archive.Conversation, []provider.Warning, error), name, pick string, warn func([]provider.Warning) error) error {
	for i := 0; ; i++ {
		c, ws, err := next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if pick != "" && !picked(pick, i, c) {
			continue
		}
		if err := warn(ws); err != nil {
			return err
		}
		ws, err = w.Write(c)
		if err != nil {
			return err
		}
		if err := warn(ws); err != nil {
			return err
		}
	}
}

// chooseConversation returns the one conversation next reads, or the one
// pick names; an input of several needs a pick.
func chooseConversation(next func() (*archive.Conversation, []provider.Warning, error), name, from, pick string, warn func([]provider.Warning) error) (*archive.Conversation, error) {
	var chosen *archive.Conversation
	for i := 0; ; i++ {
		c, ws, err := next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if pick != "" && !picked(pick, i, c) {
			continue
		}
		if chosen != nil {
			return nil, fmt.Errorf("%s holds more than one conversation: choose one with --pick N or --pick ID, or store them all with convo store import --from %s", name, from)
		}
		if err := warn(ws); err != nil {
			return nil, err
		}
		chosen = c
		if pick != "" {
			break
		}
	}
	if chosen == nil {
		if pick != "" {
			return nil, fmt.Errorf("%s: no conversation %q", name, pick)
		}
		chosen = &archive.Conversation{}
	}
	return chosen, nil
}

// picked reports whether conversation i is the one --pick names.
func picked(pick string, i int, c *archive.Conversation) bool {
	if n, err := strconv.Atoi(pick); err == nil {
		return n == i
	}
	return c.ID == pick
}

// conversations returns a function that yields the input's conversations
// with their warnings: the outside formats' readers, or one conversation
// decoded from convo or a provider format.
func (e *env) conversations(from string, args []string, opts provider.Options) (func() (*archive.Conversation, []provider.Warning, error), func(), string, error) {
	if isReadable(from) {
		r, name, err := e.openArchive(archive.Format(from), args)
		if err != nil {
			return nil, nil, name, err
		}
		reported := 0
		return func() (*archive.Conversation, []provider.Warning, error) {
			c, err := r.Next()
			// Whole conversations skipped so far are reported as they happen.
			ws := r.Warnings()[reported:]
			reported += len(ws)
			if err != nil {
				e.warn(ws)
				return nil, nil, err
			}
			return c, append(ws, c.Warnings...), nil
		}, func() { r.Close() }, name, nil
	}
	src, err := codec("from", from)
	if err != nil {
		return nil, nil, "", err
	}
	body, name, err := e.input(args, opts.DecodeLimits().MaxBytes)
	if err != nil {
		return nil, nil, name, err
	}
	if src != nil {
		if body, _, err = e.unwrapInput(body, name, from); err != nil {
			return nil, nil, name, err
		}
	}
	h, ws, err := decodeHistory(src, body, opts)
	if err != nil {
		return nil, nil, name, fmt.Errorf("%s: %w", name, err)
	}
	done := false
	return func() (*archive.Conversation, []provider.Warning, error) {
		if done {
			return nil, nil, io.EOF
		}
		done = true
		return &archive.Conversation{History: h}, ws, nil
	}, func() {}, name, nil
}

// storeImportArchive is convo store import --from F: every conversation of
// an export, streamed into the store, with a progress line on stderr.
func storeImportArchive(e *env, sf storeFlags, from string, meta []byte, args []string) error {
	if !isReadable(from) {
		return usagef("--from: unknown format %q (one of convo, %s)", from, archiveNames(archive.Readable()))
	}
	r, name, err := e.openArchive(archive.Format(from), args)
	if err != nil {
		return err
	}
	defer r.Close()
	var total int64 = -1
	if len(args) > 0 && args[0] != "-" {
		if st, err := os.Stat(args[0]); err == nil && st.Mode().IsRegular() {
			total = st.Size()
		}
	}
	ctx, s, done, err := sf.open()
	if err != nil {
		return err
	}
	defer done()
	pr := progress{w: e.stderr, total: total, tty: isTerminalWriter(e.stderr)}
	p, warns, err := archive.Import(ctx, s, archive.Format(from), r, archive.ImportOptions{Tenant: *sf.tenant, Meta: meta, Progress: pr.update})
	pr.finish(p)
	e.warn(warns)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("%s: interrupted after %d conversations", name, p.Conversations)
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	if p.Failed > 0 {
		return fmt.Errorf("%s: %d conversations refused by the store (see the warnings)", name, p.Failed)
	}
	return nil
}

// progress writes the import's progress line: redrawn in place on a
// terminal, a line every few seconds otherwise, and a last line at the end.
type progress struct {
	w     io.Writer
	total int64
	tty   bool
	last  time.Time
}

func (p *progress) line(ip archive.ImportProgress) string {
	s := fmt.Sprintf("imported %d conversations, %d forks", ip.Conversations, ip.Forks)
	if ip.Existing > 0 {
		s += fmt.Sprintf(", %d already there", ip.Existing)
	}
	if ip.Failed > 0 {
		s += fmt.Sprintf(", %d refused", ip.Failed)
	}
	if ip.BytesRead >= 0 {
		s += fmt.Sprintf(" (%s", mib(ip.BytesRead))
		if p.total > 0 {
			s += fmt.Sprintf(" of %s, %d%%", mib(p.total), min(100, ip.BytesRead*100/p.total))
		}
		s += ")"
	}
	return s
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func (p *progress) update(ip archive.ImportProgress) {
	every := 5 * time.Second
	if p.tty {
		every = 200 * time.Millisecond
	}
	if time.Since(p.last) < every {
		return
	}
	p.last = time.Now()
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", p.line(ip))
		return
	}
	fmt.Fprintln(p.w, p.line(ip))
}

func (p *progress) finish(ip archive.ImportProgress) {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintln(p.w, p.line(ip))
}

func isTerminalWriter(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}
