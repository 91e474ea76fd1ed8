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

// jsonProblem is a problem in validate --json's report. Kind is empty for a
// problem of the history (the checks of convo.Validator), "decode" for a
// message or document that does not decode, "input" for input that cannot
// be read at all.
type jsonProblem struct {
	Path     string `json:"path"`
	Message  string `json:"message"`
	Unpaired bool   `json:"unpaired,omitempty"`
	Kind     string `json:"kind,omitempty"`
}

// validateReport is validate --json's answer, whatever went wrong.
type validateReport struct {
	// Messages counts the messages read, those that did not decode
	// included, so that it is one more than the last index a path names.
	Messages int           `json:"messages"`
	Problems []jsonProblem `json:"problems"`
}

func runValidate(e *env, args []string) error {
	fs := flags(e, "validate")
	asJSON := fs.Bool("json", false, `print {"messages":N,"problems":[{"path","message","unpaired","kind"}]} on stdout instead of lines, for every failure; a message that does not decode is reported (kind "decode") and the rest still checked`)
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
		if *asJSON {
			return e.writeValidateReport(validateReport{Problems: []jsonProblem{{Message: err.Error(), Kind: "input"}}})
		}
		return err
	}
	defer done()
	progress := e.newMeter()
	defer progress.done()
	rep, err := checkHistory(convo.NewDecoder(r), func(n int) { progress.update(n, r) }, *asJSON, func(p convo.Problem) {
		fmt.Fprintln(e.stderr, p.Explain("--repair"))
	})
	if *asJSON {
		return e.writeValidateReport(rep)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("%s in %s", plural(len(rep.Problems), "problems"), plural(rep.Messages, "messages"))
	}
	fmt.Fprintf(e.stdout, "ok: %s\n", plural(rep.Messages, "messages"))
	return nil
}

// checkHistory decodes and checks every message d reads. With all, a
// message that does not decode becomes a problem and the rest is still
// checked (as far as the decoder can find the next message); without, the
// first such error ends the check and is returned. show sees each history
// problem as it is found.
func checkHistory(d *convo.Decoder, tick func(int), all bool, show func(convo.Problem)) (validateReport, error) {
	var v convo.Validator
	rep := validateReport{Problems: []jsonProblem{}}
	for ; ; rep.Messages++ {
		tick(rep.Messages)
		m, err := d.Next()
		if errors.Is(err, io.EOF) {
			return rep, nil
		}
		if err != nil {
			if !all {
				return rep, err
			}
			rep.Problems = append(rep.Problems, decodeProblem(err))
			if !d.Resume() {
				return rep, nil
			}
			v.Skip()
			continue
		}
		for _, p := range v.Add(m) {
			if !all {
				show(p)
			}
			rep.Problems = append(rep.Problems, jsonProblem{Path: p.Path, Message: p.Msg, Unpaired: p.Unpaired})
		}
	}
}

// decodeProblem turns a decoding error into a problem with its place.
func decodeProblem(err error) jsonProblem {
	if errors.Is(err, errTooLarge) {
		return jsonProblem{Message: err.Error(), Kind: "input"}
	}
	var de *convo.DecodeError
	if errors.As(err, &de) {
		return jsonProblem{Path: de.Path, Message: de.Err.Error(), Kind: "decode"}
	}
	return jsonProblem{Message: err.Error(), Kind: "decode"}
}

// writeValidateReport prints the report as one JSON object and fails the
// command, without more words, when it holds a problem.
func (e *env) writeValidateReport(rep validateReport) error {
	if rep.Problems == nil {
		rep.Problems = []jsonProblem{}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s\n", b)
	if len(rep.Problems) > 0 {
		return silentError{}
	}
	return nil
}
