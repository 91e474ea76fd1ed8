package tokens

import (
	"math"
	"strconv"

	"github.com/convo-go/convo"
)

// A Tally counts a history one message at a time, as it is read, holding
// only each message's count and not the messages: a history of any length
// (from a convo.Decoder) is counted in memory that grows with the number of
// messages, not their size. Its Result is the Counter's Count of the same
// history, and its Cheap the Counter's Cheap.
//
//	t := c.Tally()
//	for {
//		m, err := d.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil {
//			return err
//		}
//		t.Add(m)
//	}
//	r := t.Result()
//
// A Tally is not safe for concurrent use.
type Tally struct {
	c    *Counter
	msgs []MessageCount
	// open holds the indices of the turn-scoped system messages since the
	// last final answer: the next final answer ends their turn, and they
	// are then marked not sent, as History.Expired says.
	open []int
	// base is the usage of the last assistant message that reported one,
	// at baseAt (-1 when none did): where Cheap starts.
	base   int64
	baseAt int
	// lazy (CheapTally) leaves messages uncounted until Cheap needs them:
	// pending holds those after the last baseline, the only ones it counts.
	lazy    bool
	pending []pendingMessage
	// emit (Stream) takes each count once it is final; msgs then holds only
	// the counts not yet final, msgs[0] being message off, and streamed
	// the sums of those already emitted.
	emit     func(MessageCount)
	off, n   int
	streamed Result
}

// Tally returns an empty Tally counting with c. Options.Progress, if set, is
// called by each Add with the number of messages added so far.
func (c *Counter) Tally() *Tally { return &Tally{c: c, baseAt: -1} }

// CheapTally returns a Tally for Cheap alone: it tokenizes only the
// messages after the last reported usage, as Counter.Cheap does, and holds
// those messages (not their counts) until Cheap. Its Result is its Cheap.
func (c *Counter) CheapTally() *Tally { return &Tally{c: c, baseAt: -1, lazy: true} }

// pendingMessage is a message a lazy Tally has not counted yet.
type pendingMessage struct {
	i int
	m convo.Message
}

// Add counts m, the next message of the history.
func (t *Tally) Add(m convo.Message) {
	i := t.n
	t.n++
	var mc MessageCount
	switch {
	case m.Role == convo.RoleError:
		mc = MessageCount{Index: i, Role: m.Role, Exact: true, Note: "not sent: error message"}
	case t.lazy:
		mc = MessageCount{Index: i, Role: m.Role} // counted by Cheap if it is after the baseline
		t.pending = append(t.pending, pendingMessage{i, m})
	default:
		mc = t.c.message(m).public(i, m.Role, true)
	}
	t.msgs = append(t.msgs, mc)
	switch {
	case m.IsFinalAnswer():
		for _, j := range t.open {
			t.msgs[j-t.off] = MessageCount{Index: j, Role: t.msgs[j-t.off].Role, Exact: true, Note: "not sent: its turn is over"}
		}
		t.open = t.open[:0]
	case m.IsTurnScoped():
		t.open = append(t.open, i)
	}
	if u := m.Usage; m.Role == convo.RoleAssistant && u != nil && u.Input+u.Output > 0 {
		t.base, t.baseAt = u.Input+u.Output, i
		clear(t.pending) // within the baseline: never counted
		t.pending = t.pending[:0]
	}
	if t.c.progress != nil {
		t.c.progress(i + 1)
	}
	if t.emit != nil {
		// A count is final unless a turn-scoped system message at or
		// before it may still be marked unsent by a later final answer.
		final := len(t.msgs)
		if len(t.open) > 0 {
			final = t.open[0] - t.off
		}
		t.flush(final)
	}
}

// Stream makes t hand each message's count to emit, in order, as soon as
// it is final (at once, but for a turn-scoped system message and those
// after it, until its turn ends), instead of keeping it: memory then stays
// the same however many messages are added. Result emits what is left and
// returns the totals with no Messages. Call it before the first Add; a
// CheapTally keeps its counts, as Cheap needs them, and ignores it.
func (t *Tally) Stream(emit func(MessageCount)) {
	if !t.lazy {
		t.emit = emit
		t.streamed = Result{Exact: true}
	}
}

// flush emits the first k counts held and forgets them.
func (t *Tally) flush(k int) {
	for _, mc := range t.msgs[:k] {
		t.streamed.Exact = t.streamed.Exact && mc.Exact
		t.streamed.Tokens += mc.Tokens
		t.streamed.Warnings = append(t.streamed.Warnings, mc.Warnings...)
		t.emit(mc)
	}
	t.off += k
	t.msgs = append(t.msgs[:0], t.msgs[k:]...)
}

// Len returns the number of messages added.
func (t *Tally) Len() int { return t.n }

// Result returns the count of the messages added so far: what Count returns
// for them as a history.
func (t *Tally) Result() Result {
	if t.lazy {
		return t.Cheap()
	}
	return t.all()
}

// all sums every message's count.
func (t *Tally) all() Result {
	if t.emit != nil {
		t.flush(len(t.msgs))
		res := t.c.newResult(0)
		res.Messages = nil
		res.Exact = res.Exact && t.streamed.Exact
		res.Tokens, res.Warnings = t.streamed.Tokens, t.streamed.Warnings
		res.Request = t.c.fam.PerRequest
		res.Tokens += res.Request
		return res
	}
	res := t.c.newResult(len(t.msgs))
	t.sum(&res, 0)
	return res
}

// Cheap returns what Counter.Cheap returns for the messages added so far:
// the usage last reported plus the counts of the messages after it, or
// Result when no message reported usage.
func (t *Tally) Cheap() Result {
	for _, p := range t.pending {
		if t.msgs[p.i].Note == "" { // not marked unsent since
			t.msgs[p.i] = t.c.message(p.m).public(p.i, p.m.Role, true)
		}
	}
	t.pending = nil
	b := t.baseAt
	if b < 0 {
		return t.all()
	}
	res := t.c.newResult(len(t.msgs))
	res.Exact, res.Basis = false, "usage"
	res.Baseline, res.BaselineAt = t.base, b
	note := "in the usage baseline of messages[" + strconv.Itoa(b) + "]"
	for i := 0; i <= b; i++ {
		res.Messages = append(res.Messages, MessageCount{Index: i, Role: t.msgs[i].Role, Exact: false, Note: note})
	}
	res.Tokens = int(min(t.base, math.MaxInt32))
	t.sum(&res, b+1)
	return res
}

// sum adds the counts of messages[from:] to res, as Counter.countFrom does.
func (t *Tally) sum(res *Result, from int) {
	for _, mc := range t.msgs[from:] {
		if !mc.Exact {
			res.Exact = false
		}
		res.Tokens += mc.Tokens
		res.Warnings = append(res.Warnings, mc.Warnings...)
		res.Messages = append(res.Messages, mc)
	}
	res.Request = t.c.fam.PerRequest
	res.Tokens += res.Request
}
