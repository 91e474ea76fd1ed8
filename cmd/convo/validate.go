package main

import (
	"errors"
	"fmt"

	"github.com/convo-go/convo"
)

func init() {
	commands["validate"] = command{
		usage:   "[FILE]",
		summary: "check a canonical history; problems go to stderr with their place",
		run:     runValidate,
	}
}

func runValidate(e *env, args []string) error {
	fs := flags(e, "validate")
	args, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	h, err := e.readHistory(args)
	if err != nil {
		return err
	}
	var ve *convo.ValidationError
	if err := h.Validate(); errors.As(err, &ve) {
		for _, p := range ve.Problems {
			fmt.Fprintln(e.stderr, p.Explain("--repair"))
		}
		return fmt.Errorf("%s in %s", plural(len(ve.Problems), "problems"), plural(len(h), "messages"))
	}
	fmt.Fprintf(e.stdout, "ok: %s\n", plural(len(h), "messages"))
	return nil
}
