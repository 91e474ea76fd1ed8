package gateway

import (
	"bytes"
	"errors"
	"io"

	"github.com/convo-go/convo"
)

// liveFrom is how long a streamed reply grows, kept for the writer to
// fold, before the rest is folded as it arrives (liveFold). Most replies
// are far shorter and keep the cheaper path: copied whole, folded by the
// writer after the client has its reply. A long one, kept whole, was held
// as its stream (1.0× its bytes) beside the message it was folded into
// (the text's pieces, 0.86×, then the text joined, 0.84×): the largest
// part of the gateway's peak memory for a long reply (bench/gatewaymem).
var liveFrom int64 = 1 << 20 // a variable for the tests

// errOver ends a live fold whose reply passed MaxReplyBytes: it is not
// recorded.
var errOver = errors.New("reply too long to record")

// liveFold folds a streamed reply into its message while the reply is
// copied to the client: a goroutine reads what was kept of the stream,
// then each piece written to it, through the upstream protocol's stream
// reader. A write returns once the fold has read the piece (io.Pipe), so
// the copy's buffer can be reused at once and nothing waits in between.
type liveFold struct {
	pw   *io.PipeWriter
	done chan foldResult
}

// foldResult is a live fold's message and its error.
type foldResult struct {
	m   convo.Message
	err error
}

// startFold starts folding a stream of protocol p whose first bytes are
// the tap's then buf's (the pool's array when pooled), and returns the
// buffer to carry each later read to the fold in: buf itself when pooled
// (its bytes are copied), else a new one (buf's array is the fold's).
func startFold(p *protocol, tap [][]byte, buf []byte, pooled bool) (*liveFold, []byte) {
	if pooled {
		return newFold(p, append(tap, bytes.Clone(buf))), buf[:0]
	}
	return newFold(p, append(tap, buf)), make([]byte, 0, tapChunk)
}

// newFold starts folding a stream of protocol p whose first bytes are
// kept.
func newFold(p *protocol, kept [][]byte) *liveFold {
	pr, pw := io.Pipe()
	f := &liveFold{pw: pw, done: make(chan foldResult, 1)}
	go func() {
		var res foldResult
		res.m, res.err = readStream(p, io.MultiReader(tapReader(kept), pr))
		// A fold that stopped early (an unreadable event) reads no
		// more: later writes fail at once rather than wait for it.
		pr.CloseWithError(errFoldEnded)
		f.done <- res
	}()
	return f
}

// errFoldEnded is what a write to a fold that has stopped reading gets.
var errFoldEnded = errors.New("the reply's fold has ended")

// write hands p to the fold and returns once it has been read. A fold that
// has ended (its error is finish's) takes nothing more.
func (f *liveFold) write(p []byte) { _, _ = f.pw.Write(p) }

// finish ends the stream the fold reads, with err (nil: the reply ended
// where it should; else where and why it was cut), and returns what was
// folded.
func (f *liveFold) finish(err error) foldResult {
	_ = f.pw.CloseWithError(err)
	return <-f.done
}
