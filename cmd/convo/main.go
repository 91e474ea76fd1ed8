// Command convo converts, validates, inspects, counts, fits and stores
// conversations kept in convo's canonical format or in a provider's wire
// format. Run "convo help" for the commands.
//
// Exit codes: 0 success, 1 invalid input or failed conversion, 2 usage error.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/provider"
)

// command is one subcommand. Each lives in its own file and adds itself to
// commands in an init function, so commands stay independent of each other.
type command struct {
	usage   string // one line: the arguments
	summary string // one line: what it does
	run     func(e *env, args []string) error
}

var commands = map[string]command{}

// env is what a command may touch: its streams and the working directory's
// files. Tests run commands against buffers.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// color is true when stdout is a terminal that takes colour.
	color bool
	// getenv reads the environment (tests replace it).
	getenv func(string) string
	// jsonWarnings writes warnings as JSON Lines (--json).
	jsonWarnings bool
	// models is the model catalogue the command uses, once loadModels has
	// read it (--models, $CONVO_MODELS).
	models *catalog.Catalog
}

// usageError is a mistake in how the command was called: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// silentError fails a command that has already reported why (a --json
// report): exit code 1, nothing more on stderr.
type silentError struct{}

func (silentError) Error() string { return "failed" }

// silentUsageError is a usage error the command has already reported (a
// --json report): exit code 2, nothing more on stderr.
type silentUsageError struct{}

func (silentUsageError) Error() string { return "usage" }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func main() {
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, color: isTerminal(os.Stdout), getenv: os.Getenv}
	os.Exit(run(e, os.Args[1:]))
}

// run runs the command line args and returns the exit code. A panic in a
// command is turned into one error line: a user never sees a stack trace.
func run(e *env, args []string) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(e.stderr, "convo: internal error: %v\n", r)
			code = 1
		}
	}()
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version" || args[0] == "version") {
		fmt.Fprintln(e.stdout, version())
		return 0
	}
	if len(args) > 1 && args[0] == "help" {
		if _, ok := commands[args[1]]; !ok {
			fmt.Fprintf(e.stderr, "convo: unknown command %q (run 'convo help')\n", args[1])
			return 2
		}
		// "convo help validate" is "convo validate -h"; "convo help store
		// import" is "convo store import -h", on stdout as asked for.
		args = append(slices.Clone(args[1:]), "-h")
		e2 := *e
		e2.stderr = e.stdout
		e = &e2
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(e.stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "convo: unknown command %q (run 'convo help')\n", args[0])
		return 2
	}
	err := c.run(e, args[1:])
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &silentError{}):
		return 1 // the command has said what failed, on stdout
	case errors.As(err, &silentUsageError{}):
		return 2
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "convo %s: %v\nusage: convo %s %s\n", args[0], err, args[0], c.usage)
		return 2
	}
	// A library error that names its package ("fit: …") would say the
	// command's name twice.
	msg := strings.TrimPrefix(oneLine(explain(err)), args[0]+": ")
	fmt.Fprintf(e.stderr, "convo %s: %s\n", args[0], msg)
	return 1
}

// explain is err's text naming the fix of unpaired tool calls as the
// command line spells it (--repair), where the library says Options.Repair.
func explain(err error) string {
	s := err.Error()
	var ue *provider.UnpairedError
	if errors.As(err, &ue) {
		s = strings.Replace(s, ue.Error(), ue.Explain("--repair"), 1)
	}
	var ve *convo.ValidationError
	if errors.As(err, &ve) {
		s = strings.Replace(s, ve.Error(), ve.Explain("--repair"), 1)
	}
	return s
}

// oneLine keeps an error to one line, as the CLI contract promises.
func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ") }

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "convo: one lossless record of an LLM conversation, for every provider.")
	fmt.Fprintln(w, "\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'convo COMMAND -h' for a command's flags and an example; 'convo --version' for the version.")
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 invalid input, 2 usage.")
}

// flags returns a flag set for a command that reports errors as usage
// errors instead of exiting.
func flags(e *env, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("convo "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	setUsage(fs, e.stderr, name)
	return fs
}

// parse parses args, turning flag errors into usage errors, and returns the
// positional arguments, of which there may be at most max.
func parse(fs *flag.FlagSet, args []string, max int) ([]string, error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err.Error()}
	}
	if fs.NArg() > max {
		return nil, usagef("too many arguments: %s", strings.Join(fs.Args()[max:], " "))
	}
	return fs.Args(), nil
}

// envOr returns the environment variable name, or def when it is unset or
// empty: the default of a flag that the environment may set.
func (e *env) envOr(name, def string) string {
	if v := e.getenv(name); v != "" {
		return v
	}
	return def
}

// readHistory reads a canonical document from args[0] or stdin.
// It is decoded one message at a time as it is read, so memory is the
// history itself plus about twice its largest message, not the document's
// bytes as well; a long read shows its progress on a terminal.
func (e *env) readHistory(args []string) (convo.History, error) {
	r, name, done, err := e.openInput(args, convo.DefaultLimits.MaxBytes)
	if err != nil {
		return nil, err
	}
	defer done()
	progress := e.newMeter()
	defer progress.done()
	d := convo.NewDecoder(r)
	h := make(convo.History, 0, messagesIn(args))
	for {
		progress.update(len(h), r)
		m, err := d.Next()
		if errors.Is(err, io.EOF) {
			return h, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		h = append(h, m)
	}
}

// messagesIn guesses how many messages the file args[0] holds, as
// convo.Unmarshal does: writers put one message per line, so it counts
// lines, bounded by the size so a document of many lines per message does
// not make it allocate much more than the document. Room made up front
// saves growing the history by copying it, which cost more memory at the
// peak than reading the document whole. Stdin is not read twice: 0.
func messagesIn(args []string) int {
	if len(args) == 0 || args[0] == "-" {
		return 0
	}
	f, err := os.Open(args[0])
	if err != nil {
		return 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	n, buf := 1, make([]byte, 64<<10)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err != nil {
			break
		}
	}
	return int(min(int64(n), fi.Size()/64+1))
}

func isTerminal(f *os.File) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
