package wire

import (
	"errors"
	"fmt"
	"slices"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// CandidateMessages is what a provider.CandidatesAccumulator's Messages
// returns: message's final message of each candidate, the first first,
// with the accumulator's warnings less the one at leftOut (Message's note
// that the other candidates were left out). A later candidate's error is
// named by name. failed, the stream's own error, wins over the
// candidates' errors, which are joined; without any, opts.Check decides on
// the warnings.
func CandidateMessages[C any](cands []C, warns []provider.Warning, leftOut string, failed error, opts provider.Options,
	message func(C, []provider.Warning) (convo.Message, []provider.Warning, error), name func(C) string) ([]convo.Message, []provider.Warning, error) {
	warns = slices.DeleteFunc(slices.Clone(warns), func(w provider.Warning) bool { return w.Path == leftOut })
	ms := make([]convo.Message, 0, len(cands))
	var errs []error
	for k, c := range cands {
		m, w, err := message(c, warns)
		ms, warns = append(ms, m), w
		if err != nil && k > 0 {
			err = fmt.Errorf("%s: %w", name(c), err)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if failed != nil {
		return ms, warns, failed
	}
	if err := errors.Join(errs...); err != nil {
		return ms, warns, err
	}
	return ms, warns, opts.Check(warns)
}
