package main

import (
	"bytes"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

func init() {
	commands["reply"] = command{
		usage:   "--from F [--stream] [FILE]",
		summary: "turn a provider response (or a captured stream) into one assistant message",
		run:     runReply,
	}
}

func runReply(e *env, args []string) error {
	fs := flags(e, "reply")
	from := fs.String("from", "", "the provider format of the response: "+formatNames())
	stream := fs.Bool("stream", false, "the input is a captured stream (SSE, NDJSON, AWS event-stream, LiteRT chunks)")
	strict := fs.Bool("strict", false, "treat every warning as an error")
	args, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if *from == "" {
		return usagef("--from is required")
	}
	rc, err := all.LookupReply(*from)
	if err != nil {
		return usageError{err.Error()}
	}
	opts := provider.Options{Strict: *strict}
	body, name, err := e.input(args, opts.DecodeLimits().MaxBytes)
	if err != nil {
		return err
	}
	var m convo.Message
	var warns []provider.Warning
	if *stream {
		m, warns, err = rc.ReadStream(bytes.NewReader(body), opts)
	} else {
		m, warns, err = rc.DecodeReply(body, opts)
	}
	e.warn(warns)
	if err == nil {
		err = opts.Check(warns)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	out, err := convo.AppendMessage(nil, m)
	if err != nil {
		return err
	}
	_, err = e.stdout.Write(append(out, '\n'))
	return err
}
