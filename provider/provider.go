// Package provider holds what every provider codec shares: the Codec
// interface, conversion options, warnings, and the conversion rules that do
// not depend on the target's wire format (Prepare).
//
// Each wire format lives in its own package under provider/ and imports this
// one and the root package, never another provider. Package provider/all
// lists them by name.
package provider

import (
	"errors"
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/codec"
	"github.com/convo-go/convo/internal/jsonx"
)

// Warning is something a conversion dropped or changed: its Path is the
// place in the history or request (messages[3].parts[1]), Msg says what
// happened, and Code what kind of loss ("" for one not yet classified).
// String gives "path: msg".
type Warning = codec.Warning

// Warnf returns a Warning at path.
func Warnf(path, format string, args ...any) Warning {
	return codec.Warnf(path, format, args...)
}

// ReasoningMode says what to do with reasoning that cannot be sent to the
// target as reasoning.
type ReasoningMode string

// The reasoning modes.
const (
	ReasoningDrop ReasoningMode = "drop" // the default: dropped with a warning
	ReasoningText ReasoningMode = "text" // its visible text sent as assistant text
)

// ServerToolMode says what to do with the calls and results of tools a
// provider ran itself (web search, code execution, …) when sending them to
// another provider or a wire format that cannot carry them.
type ServerToolMode string

// The server tool modes.
const (
	ServerToolsDrop ServerToolMode = "drop" // the default: dropped with a warning
	ServerToolsText ServerToolMode = "text" // sent as assistant text of what was run and what came back
)

// MediaMode says what to do with media the target cannot take.
type MediaMode string

// The media modes.
const (
	MediaError       MediaMode = "error"       // the default: conversion fails
	MediaPlaceholder MediaMode = "placeholder" // replaced by a text placeholder, with a warning
)

// Options control a conversion. The zero value is the strict-enough default:
// warnings are returned, unpaired tool calls are errors, foreign reasoning and
// another provider's server tool runs are dropped, media the target cannot
// take is an error.
type Options struct {
	Strict bool // any warning is an error
	// Repair answers a tool call left without a result in the middle of
	// a history with an error result and drops a result that answers no
	// call, each with a warning, instead of failing. Calls still pending
	// at the end of the history are valid and kept, except for a target
	// that refuses a request ending on them, where Repair answers them
	// too.
	Repair    bool
	Reasoning ReasoningMode // "" means ReasoningDrop
	Media     MediaMode     // "" means MediaError
	// ServerTools says what becomes of provider-run tool calls and
	// results the target cannot take; "" means ServerToolsDrop.
	ServerTools ServerToolMode
	// SystemRole is the role OpenAI Chat system messages are sent with:
	// "system" (the default) or "developer". A message read as developer
	// keeps that role either way.
	SystemRole string
	// Model is the target model, for rules that depend on it.
	Model string
	// GeminiBypass puts Gemini 3's documented bypass thought signature on
	// foreign function calls, which Gemini 3 otherwise rejects. The Gemini
	// codec does so by itself when Model names a Gemini 3 model; set it
	// for a model convo does not recognise.
	GeminiBypass bool
	// Resolve, when set, is offered every media part the target cannot take
	// as it is (a URL for a target that needs bytes, say). It returns a
	// replacement part the target can take, or an error. convo never fetches
	// anything by itself.
	Resolve func(p convo.Part) (convo.Part, error)
	// Limits bound what Decode accepts; zero means convo.DefaultLimits.
	Limits convo.Limits
	// Accept lists the kinds of loss the caller has chosen: warnings with
	// these codes are left out of the results of EncodeRequest,
	// DecodeRequest and the sender, and are no error under Strict. Setting
	// Reasoning to ReasoningDrop explicitly accepts CodeReasoningDropped,
	// and ServerTools to ServerToolsDrop CodeServerToolDropped.
	Accept []Code
	// OnWarning, when set, receives the warnings of EncodeRequest,
	// DecodeRequest and the sender one by one instead of the returned
	// lists, which are then nil.
	OnWarning func(Warning)
}

// DecodeLimits returns the limits Decode should apply.
func (o Options) DecodeLimits() convo.Limits { return o.Limits.WithDefaults() }

// CheckSize returns the limits a decoder should apply to body, or, before
// any parsing, an error when body is larger than they allow. what names the
// document in the error ("anthropic request", "gemini response").
func (o Options) CheckSize(body []byte, what string) (convo.Limits, error) {
	l := o.DecodeLimits()
	if int64(len(body)) > l.MaxBytes {
		return l, fmt.Errorf("%s of more than %d bytes: %w", what, l.MaxBytes, jsonx.ErrTooLarge)
	}
	return l, nil
}

// Check returns an error when o is strict and there are warnings.
func (o Options) Check(warns []Warning) error {
	if !o.Strict || len(warns) == 0 {
		return nil
	}
	return &StrictError{Warnings: warns}
}

// StrictError is returned by a strict conversion that had warnings.
type StrictError struct {
	Warnings []Warning
}

func (e *StrictError) Error() string {
	s := "strict: " + e.Warnings[0].String()
	if n := len(e.Warnings) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more warnings)", n)
	}
	return s
}

// Codec converts between a convo history and one provider's request
// conversation fields.
type Codec interface {
	// Name is the format's name on the command line, e.g. "openai-chat".
	Name() string
	// Provider is the provider id used in Native, Origin and reasoning
	// parts, e.g. "openai".
	Provider() string
	// Encode returns the request's conversation fields as a JSON object
	// (for LiteRT, the messages array), ready to be merged into a request.
	Encode(h convo.History, opts Options) ([]byte, []Warning, error)
	// Decode reads the conversation fields of a request body; other
	// members (model, tools, sampling settings) are ignored.
	Decode(body []byte, opts Options) (convo.History, []Warning, error)
}

// ErrIncomplete is wrapped by the error of every reply reader (an
// Accumulator's Message, a ReplyCodec's ReadStream) whose stream ended
// before the reply was complete: cut off before the provider's terminal
// event, empty, or cut inside a frame. The partial message is returned
// beside it, so a caller can keep what arrived:
//
//	m, warns, err := codec.ReadStream(body, opts)
//	if errors.Is(err, provider.ErrIncomplete) {
//		// m holds what arrived before the cut
//	}
var ErrIncomplete = codec.ErrIncomplete

// ErrUnknownFormat is returned (wrapped) for a format name no codec has.
var ErrUnknownFormat = errors.New("unknown format")

// Lookup finds the codec (or Format) called name among codecs.
func Lookup[C Codec](codecs []C, name string) (C, error) {
	for _, c := range codecs {
		if c.Name() == name {
			return c, nil
		}
	}
	// The names only for the error: a lookup that finds costs nothing.
	names := make([]string, 0, len(codecs))
	for _, c := range codecs {
		names = append(names, c.Name())
	}
	var zero C
	return zero, fmt.Errorf("%w %q (known: %s)", ErrUnknownFormat, name, strings.Join(names, ", "))
}
