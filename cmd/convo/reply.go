package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

func init() {
	commands["reply"] = command{
		usage:   "--from F [--stream] [--partial] [--strict] [FILE]",
		summary: "turn a provider response (or a captured stream) into one assistant message",
		run:     runReply,
	}
}

func runReply(e *env, args []string) error {
	fs := flags(e, "reply")
	from := fs.String("from", "", "the provider format of the response: "+providerNames())
	stream := fs.Bool("stream", false, "the input is a captured stream (SSE, NDJSON, AWS event-stream, LiteRT chunks); without it a stream is recognised by its first bytes")
	partial := fs.Bool("partial", false, "on a stream cut off before its end, print what arrived, marked \"incomplete\" in its meta (the exit code stays 1)")
	strict := fs.Bool("strict", false, "treat every warning as an error")
	args, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if *from == "" {
		return usagef("--from is required")
	}
	rc, err := all.Lookup(*from)
	if err != nil {
		// Every provider format reads replies; the canonical format does not.
		return usagef("unknown format %q for replies (known: %s)", *from, providerNames())
	}
	opts := provider.Options{Strict: *strict}
	m, warns, name, err := e.readReply(rc, *from, args, opts, *stream)
	e.warn(warns)
	if err == nil {
		err = opts.Check(warns)
	}
	if err != nil && !(*partial && errors.Is(err, provider.ErrIncomplete)) {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err != nil {
		m.Meta = markIncomplete(m.Meta)
	}
	out, merr := convo.AppendMessage(nil, m)
	if merr != nil {
		return merr
	}
	if _, werr := e.stdout.Write(append(out, '\n')); werr != nil {
		return werr
	}
	if err != nil {
		return fmt.Errorf("%s: %w (printed what arrived, marked incomplete)", name, err)
	}
	return nil
}

// readReply reads a provider's reply from args[0] or stdin: a response
// body, or a captured stream when stream is set or the input looks like
// one (see isStream). An input that fails and looks like another format
// says so.
func (e *env) readReply(rc provider.ReplyCodec, from string, args []string, opts provider.Options, stream bool) (convo.Message, []provider.Warning, string, error) {
	body, name, err := e.input(args, opts.DecodeLimits().MaxBytes)
	if err != nil {
		return convo.Message{}, nil, name, err
	}
	var m convo.Message
	var warns []provider.Warning
	if !stream && truncatedJSON(body) {
		return m, nil, name, fmt.Errorf("the input is a truncated JSON document: it ends at byte %d inside a value", len(body))
	}
	if stream || isStream(body) {
		m, warns, err = rc.ReadStream(bytes.NewReader(body), opts)
	} else {
		m, warns, err = rc.DecodeReply(body, opts)
	}
	if err != nil {
		err = wrongFormat(err, body, from)
	}
	return m, warns, name, err
}

// isStream tells a captured stream from a response body: a body is one
// JSON value; Server-Sent Events begin with a field name or a comment,
// NDJSON and LiteRT chunks are several JSON values, and AWS event-stream is
// binary.
func isStream(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return false
	}
	if b[0] == '{' || b[0] == '[' {
		// Several lines of JSON, each a whole value (NDJSON, LiteRT
		// chunks); a broken value, on one line or pretty-printed over
		// several, is a broken body, and is reported as one.
		first, _, more := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
		return !json.Valid(b) && more && json.Valid(first)
	}
	return true
}

// truncatedJSON reports whether b is the beginning of a JSON document cut
// off inside a value (not several lines of JSON values, a stream).
func truncatedJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') || json.Valid(t) || isStream(b) {
		return false
	}
	var v json.RawMessage
	err := json.Unmarshal(t, &v)
	var se *json.SyntaxError
	return errors.As(err, &se) && se.Error() == "unexpected end of JSON input"
}

// markIncomplete adds "incomplete": true to a message's metadata, so a
// reader of a partial reply cannot take it for a whole one.
func markIncomplete(meta json.RawMessage) json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(meta) > 0 && json.Unmarshal(meta, &m) != nil {
		m = map[string]json.RawMessage{"meta": meta}
	}
	m["incomplete"] = json.RawMessage("true")
	b, _ := json.Marshal(m)
	return b
}
