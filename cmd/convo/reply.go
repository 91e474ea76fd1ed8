package main

import (
	"bytes"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
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
	c, err := codec("from", *from)
	if err != nil {
		return err
	}
	rc, ok := c.(provider.ReplyCodec)
	if c == nil || !ok {
		return usagef("--from %s: not a provider format with replies", *from)
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
