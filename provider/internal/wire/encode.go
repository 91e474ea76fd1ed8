package wire

import (
	"errors"
	"slices"
	"strconv"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// Begin starts the object a history codec writes into dst, with room for
// about n bytes of it. An empty dst gets a new buffer and an opening brace.
// Otherwise dst is a whole request's object, opened by the settings
// written before the history (jsonx.AppendKey puts the comma before the
// codec's first member), and up to 64 KiB of the room it has spare stays
// spare for the settings written after: the request is built in one
// buffer, never copied whole, and a buffer handed back (AppendRequest)
// large enough is not replaced.
func Begin(dst []byte, n int) []byte {
	// Estimates are close, not exact, and one byte too few would copy the
	// whole body to grow it: a sixteenth more costs less.
	spare := cap(dst) - len(dst)
	need := n + n/16 + min(spare, 64<<10)
	if len(dst) == 0 {
		return append(slices.Grow(dst, need), '{')
	}
	if spare >= need {
		return dst
	}
	return slices.Grow(dst, need)
}

// Encode runs the steps of a codec's Encode around its own mapping:
// provider.PrepareIndexed makes h ready for t, enc maps the prepared
// history onto dst (see Begin; from maps its messages to h's, for error
// paths), and opts.Strict is checked against Prepare's warnings followed
// by own, the format's warnings about h itself. Under Strict, a warning
// from Prepare fails with all the warnings listed.
func Encode(dst []byte, h convo.History, t provider.Target, opts provider.Options, own []provider.Warning,
	enc func(dst []byte, ph convo.History, from []int) ([]byte, error)) ([]byte, []provider.Warning, error) {
	ph, from, warns, err := provider.PrepareIndexed(h, t, opts)
	warns = append(warns, own...)
	if err != nil {
		var se *provider.StrictError
		if errors.As(err, &se) {
			return nil, warns, opts.Check(warns)
		}
		return nil, warns, err
	}
	out, err := enc(dst, ph, from)
	if err != nil {
		return nil, warns, err
	}
	if err := opts.Check(warns); err != nil {
		return nil, warns, err
	}
	return out, warns, nil
}

// PlaceOf names prepared message k in the caller's history, given the map
// provider.PrepareIndexed returned. Part indices under it are the prepared
// message's, which differ only where Prepare dropped a part (and said so in
// a warning).
func PlaceOf(from []int, k int) string {
	if k < len(from) && from[k] >= 0 {
		return "messages[" + strconv.Itoa(from[k]) + "]"
	}
	return "inserted message"
}

// KeptReasoning reports whether provider.Prepare keeps reasoning part p as
// a reasoning part for a target with PlainReasoning (rather than dropping
// it or turning it into text): providerID's own reasoning always, another
// provider's when it has text and opts does not ask for text.
func KeptReasoning(p *convo.Part, providerID string, opts provider.Options) bool {
	if p.Provider == providerID {
		return true
	}
	text := p.Text != "" || len(p.Summary) > 0
	return text && opts.Reasoning != provider.ReasoningText
}
