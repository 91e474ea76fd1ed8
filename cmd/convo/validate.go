package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/convo-go/convo"
)

func init() {
	commands["validate"] = command{
		usage:   "[--json] [--max-size MiB] [FILE]",
		summary: "check a canonical history; problems go to stderr with their place",
		run:     runValidate,
	}
}

// jsonProblem is a problem in validate --json's report.
type jsonProblem struct {
	Path     string `json:"path"`
	Message  string `json:"message"`
	Unpaired bool   `json:"unpaired,omitempty"`
}

func runValidate(e *env, args []string) error {
	fs := flags(e, "validate")
	asJSON := fs.Bool("json", false, `print {"messages":N,"problems":[{"path","message","unpaired"}]} on stdout instead of lines`)
	maxSize := sizeFlag{convo.DefaultLimits.MaxBytes}
	fs.Var(&maxSize, "max-size", "refuse input larger than `MiB` (the file's size is checked before reading)")
	args, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	// The history is read and checked one message at a time: memory is
	// about twice the largest message, plus the ids seen.
	r, name, done, err := e.openInput(args, maxSize.bytes)
	if err != nil {
		return err
	}
	defer done()
	d := convo.NewDecoder(r)
	var v convo.Validator
	problems := []jsonProblem{}
	n := 0
	progress := e.newMeter()
	defer progress.done()
	for ; ; n++ {
		progress.update(n, r)
		m, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, p := range v.Add(m) {
			if !*asJSON {
				fmt.Fprintln(e.stderr, p.Explain("--repair"))
			}
			problems = append(problems, jsonProblem{p.Path, p.Msg, p.Unpaired})
		}
	}
	if *asJSON {
		b, _ := json.Marshal(struct {
			Messages int           `json:"messages"`
			Problems []jsonProblem `json:"problems"`
		}{n, problems})
		fmt.Fprintf(e.stdout, "%s\n", b)
		if len(problems) > 0 {
			return silentError{}
		}
		return nil
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s in %s", plural(len(problems), "problems"), plural(n, "messages"))
	}
	fmt.Fprintf(e.stdout, "ok: %s\n", plural(n, "messages"))
	return nil
}
