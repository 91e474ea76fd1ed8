package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// examples are each command's example invocations, shown by its -h. Every
// command and store subcommand has at least one (TestEveryHelpHasExample).
var examples = map[string]string{
	"convert":      "convo convert --from anthropic --to openai-chat request.json > openai.json",
	"fit":          "convo fit --model claude-sonnet-4-5 --reserve 4096 history.json > fitted.json",
	"gateway":      "convo gateway --upstream oa=openai@https://api.openai.com/v1,key-env=OPENAI_API_KEY --route 'gpt-*=oa'",
	"reply":        "curl … | convo reply --from anthropic > reply.json    # a JSON body or a captured stream",
	"serve":        "CONVO_TOKENS=tok1=acme convo serve --addr :8080 --db postgres://localhost/convo",
	"show":         "convo show history.json | less -R",
	"store":        "convo store import --title 'Trip planning' history.json",
	"store import": "convo store import --title 'Trip planning' history.json",
	"store export": "convo store export --lines conv_0193… > history.jsonl",
	"store list":   "convo store list --title trip --json",
	"store search": "convo store search paris weather",
	"store show":   "convo store show conv_0193…",
	"store rm":     "convo store rm conv_0193…",
	"store prune":  "convo store prune --tenant acme --content 30d --metadata 365d",
	"store append": "convo reply --from openai-chat reply.json | convo store append conv_0193…",
	"store usage":  "convo store usage --by model --since 2026-12-01 --json",
	"tokens":       "convo tokens --model gpt-4o history.json",
	"validate":     "convo validate history.json",
}

// synopsis returns the usage line of a command ("store import" included).
func synopsis(name string) string {
	if sub, ok := strings.CutPrefix(name, "store "); ok {
		if c, ok := storeCommands[sub]; ok {
			return "convo store " + c.usage
		}
	}
	return "convo " + name + " " + commands[name].usage
}

// setUsage makes -h print the command's synopsis, what it does, an example
// and its flags.
func setUsage(fs *flag.FlagSet, w io.Writer, name string) {
	fs.Usage = func() {
		fmt.Fprintf(w, "usage: %s\n", synopsis(name))
		if s := commands[name].summary; s != "" {
			fmt.Fprintf(w, "\n%s.\n", strings.ToUpper(s[:1])+s[1:])
		}
		if ex := examples[name]; ex != "" {
			fmt.Fprintf(w, "\nExample:\n  %s\n", ex)
		}
		fmt.Fprintln(w, "\nFlags:")
		printDefaults(fs, w)
	}
}

// printDefaults is flag.PrintDefaults, except that a flag whose usage
// already says its default ("default $CONVO_DB, else convo.db") does not
// have the value flag computed printed after it a second time.
func printDefaults(fs *flag.FlagSet, w io.Writer) {
	fs.VisitAll(func(f *flag.Flag) {
		var b strings.Builder
		fmt.Fprintf(&b, "  -%s", f.Name)
		name, usage := flag.UnquoteUsage(f)
		if name != "" {
			b.WriteString(" " + name)
		}
		if b.Len() <= 4 { // a one-letter flag fits on the same line
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
		if !strings.Contains(usage, "default") && !zeroDefault(f) {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isString := g.Get().(string); isString {
					fmt.Fprintf(&b, " (default %q)", f.DefValue)
				} else {
					fmt.Fprintf(&b, " (default %v)", f.DefValue)
				}
			} else {
				fmt.Fprintf(&b, " (default %v)", f.DefValue)
			}
		}
		fmt.Fprintln(w, b.String())
	})
}

// zeroDefault reports whether f's default is its type's zero value, which
// flag.PrintDefaults does not print either.
func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}

// version is the module version and VCS revision the binary was built
// from, as Go's build info records them.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "convo (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, when, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	out := "convo " + v
	if rev != "" {
		out += fmt.Sprintf(" (revision %.12s%s", rev, dirty)
		if when != "" {
			out += ", " + when
		}
		out += ")"
	}
	return out + " " + bi.GoVersion
}
