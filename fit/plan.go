package fit

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/convo-go/convo"
)

// How Fit chooses what to trim.
//
// The messages between the leading system messages (lead) and the latest
// user turn (p) are the old part; everything else is kept as it is. The old
// part is measured in tokens from its start, and block boundary k is the
// first cut point (a turn start, or the end of a tool group inside a turn)
// at or after k×Block tokens. Such a boundary never moves
// when messages are appended, because the tokens before it do not change.
//
// Each enabled strategy is a front that covers the old part up to a block
// boundary: the first strategy leads, each next one trails it by a block.
// Plan q puts the leading front on boundary q. Plans are tried in order and
// the first that saves enough is taken.
//
// "Enough" is quantised too: a history over the budget by x tokens must
// save ceil(x/Block) blocks' worth. While the history grows within the
// same level, every plan's savings stay the same (appended messages are
// never trimmed) and so does the need: the same plan wins, and the
// request's start stays the same. It changes only when the history has
// grown by a block — once per Block tokens of conversation.

type fitter struct {
	h       convo.History
	opts    Options
	fronts  []Strategy // reasoning, shorten, drop: as enabled, in order
	summary bool

	n, lead, p int
	count      []int // tokens of each message; 0 for one that is not sent
	pos        []int // pos[j]: tokens of h[lead:j]
	total      int   // tokens of the whole request
	required   int   // tokens of what is always kept
	block      int   // 0: keep as much as the budget allows
	bounds     []int // bounds[k-1]: block boundary k
	cuts       []int // every cut point in the old part, its end (p) last

	// closes[i] is true when h[i] is the final answer that expires a
	// turn-scoped system message: leaving it out would make that message
	// live again. Nil when there is none.
	closes []bool

	// countsReasoning is false when the counter says requests carry no
	// reasoning, so dropping it saves nothing and need not be counted.
	countsReasoning bool

	// trims holds, per message, its trimmed forms and what they save,
	// computed only for the messages a plan under consideration trims.
	trims []trim
}

// trim is what Fit knows of trimming one message.
type trim struct {
	rDone, sDone bool
	rGone        bool // the message held only reasoning: it goes with it
	rSave, sSave int
	shortened    int // tool results shortened
	rMsg, sMsg   *convo.Message
}

func newFitter(h convo.History, opts Options) (*fitter, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if opts.Counts != nil {
		if len(opts.Counts) != len(h) {
			return nil, fmt.Errorf("fit: %d counts for %d messages", len(opts.Counts), len(h))
		}
		for i, c := range opts.Counts {
			if c < 0 {
				return nil, fmt.Errorf("fit: negative count for %s", msgPath(i))
			}
		}
	}
	strategies := opts.Strategies
	if strategies == nil {
		strategies = DefaultStrategies
	}
	f := &fitter{h: h, opts: opts, n: len(h), lead: h.Leading(), countsReasoning: true}
	if rc, ok := opts.Counter.(interface{ CountsReasoning() bool }); ok {
		f.countsReasoning = rc.CountsReasoning()
	}
	for _, s := range strategies {
		if s == Summarize {
			f.summary = true
			s = DropOldest
		}
		if !contains(f.fronts, s) {
			f.fronts = append(f.fronts, s)
		}
	}
	f.block = opts.Block
	if f.opts.ShortenTo == 0 {
		f.opts.ShortenTo = 1024
	}
	if f.opts.SummaryReserve == 0 {
		base := f.block
		if base == 0 {
			base = opts.Budget / 4
		}
		f.opts.SummaryReserve = max(1, base/8)
	}
	return f, nil
}

func contains(ss []Strategy, s Strategy) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func (f *fitter) measure() {
	h := f.h
	expired := h.Expired()
	f.count = make([]int, f.n)
	f.pos = make([]int, f.n+1)
	f.total = f.opts.Counter.RequestTokens()
	for i := range h {
		switch {
		case expired[i] || h[i].Role == convo.RoleError:
		case f.opts.Counts != nil:
			f.count[i] = f.opts.Counts[i]
		default:
			f.count[i] = f.opts.Counter.MessageTokens(h[i])
		}
		f.total += f.count[i]
		if i >= f.lead {
			f.pos[i+1] = f.pos[i] + f.count[i]
		}
	}
	pending := false
	for i, m := range h {
		switch {
		case m.IsFinalAnswer() && pending:
			if f.closes == nil {
				f.closes = make([]bool, f.n)
			}
			f.closes[i], pending = true, false
		case m.IsTurnScoped():
			pending = true
		}
	}
	// The latest user turn starts at the last user message; without one,
	// at the last group (a call and its results are one).
	f.p = f.n
	for i := f.n - 1; i >= f.lead; i-- {
		if h[i].Role == convo.RoleUser {
			f.p = i
			break
		}
	}
	users := f.p < f.n
	if !users {
		for i := f.n - 1; i >= f.lead; i-- {
			if h[i].Role != convo.RoleTool && h.CanCut(i) {
				f.p = i
				break
			}
		}
	}
	f.required = f.total - (f.pos[f.p] - f.pos[f.lead])
	// Block boundaries: turn starts (group starts when there are no user
	// turns) in the old part, the latest turn's start last of all.
	// Within a user turn, the end of a tool group (an assistant message
	// right after the results it waited for) is a cut point too, unless the
	// turn holds a turn-scoped system message, whose lifetime is the turn.
	next := f.block
	scoped := false
	for j := f.lead + 1; j <= f.p; j++ {
		start := h[j].Role == convo.RoleUser || h[j].Role == convo.RoleSummary
		if start || j == f.lead+1 {
			scoped = false
			for k := j; k < f.p && (k == j || (h[k].Role != convo.RoleUser && h[k].Role != convo.RoleSummary)); k++ {
				scoped = scoped || h[k].Role == convo.RoleSystem
			}
		}
		group := users && !scoped && h[j].Role == convo.RoleAssistant && h[j-1].Role == convo.RoleTool && h.CanCut(j)
		turn := j == f.p || start || group ||
			(!users && h[j].Role != convo.RoleTool && h.CanCut(j))
		if turn {
			f.cuts = append(f.cuts, j)
		}
		for turn && f.block > 0 && f.pos[j] >= next {
			f.bounds = append(f.bounds, j)
			next += f.block
		}
	}
}

// bound is the index where block boundary k lies (k = 0 is the start of
// the old part); k must be at most len(f.bounds).
func (f *fitter) bound(k int) int {
	if k == 0 {
		return f.lead
	}
	return f.bounds[k-1]
}

// reasoning returns what dropping reasoning saves in h[a:b].
func (f *fitter) reasoning(a, b int) int {
	sum := 0
	for i := a; i < b; i++ {
		t := &f.trims[i]
		if !t.rDone {
			t.rDone = true
			m := f.h[i]
			if f.count[i] > 0 && m.Role == convo.RoleAssistant && m.HasReasoning() && (f.countsReasoning || onlyReasoning(m)) {
				stripped := m.WithoutReasoning()
				if len(stripped.Parts) == 0 {
					if f.closes != nil && f.closes[i] {
						// It ends a turn-scoped system message's life.
						continue
					}
					t.rGone = true
					t.rSave = f.count[i]
				} else if c := f.opts.Counter.MessageTokens(stripped); c < f.count[i] {
					t.rSave = f.count[i] - c
				}
				if t.rSave > 0 {
					t.rMsg = &stripped
				}
			}
		}
		sum += t.rSave
	}
	return sum
}

// onlyReasoning reports whether every part of m is reasoning: dropping it
// drops the message, which saves its whole count whatever the counter
// makes of reasoning.
func onlyReasoning(m convo.Message) bool {
	for _, p := range m.Parts {
		if p.Type != convo.TypeReasoning {
			return false
		}
	}
	return true
}

// shorten returns what shortening tool results saves in h[a:b].
func (f *fitter) shorten(a, b int) int {
	sum := 0
	for i := a; i < b; i++ {
		t := &f.trims[i]
		if !t.sDone {
			t.sDone = true
			if m := f.h[i]; f.count[i] > 0 && m.Role == convo.RoleTool && longResults(m, f.opts.ShortenTo) {
				if short, n := shortenResults(m, f.opts.ShortenTo); n > 0 {
					if c := f.opts.Counter.MessageTokens(short); c < f.count[i] {
						t.sSave = f.count[i] - c
						t.sMsg = &short
						t.shortened = n
					}
				}
			}
		}
		sum += t.sSave
	}
	return sum
}

// plan is a choice of how far each strategy reaches: message indices in
// the old part, from lead (nothing) to p (all of it).
type plan struct {
	reasoning, shorten, drop int
}

// planFor places the fronts for plan q. It reports false when the leading
// front's boundary does not exist yet. With capped, fronts beyond the last
// boundary stop at the latest turn instead.
func (f *fitter) planFor(q int, capped bool) (plan, bool) {
	pl := plan{f.lead, f.lead, f.lead}
	for t, s := range f.fronts {
		k := max(0, q-t)
		var at int
		switch {
		case k <= len(f.bounds):
			at = f.bound(k)
		case capped:
			at = f.p
		default:
			return pl, false
		}
		pl.set(s, at)
	}
	return pl, true
}

// saves is what plan pl saves, counting reserve tokens for a summary of
// what it drops.
func (f *fitter) saves(pl plan, reserve int) int {
	s := f.pos[pl.drop] - f.pos[f.lead]
	if pl.reasoning > pl.drop {
		s += f.reasoning(pl.drop, pl.reasoning)
	}
	if pl.shorten > pl.drop {
		s += f.shorten(pl.drop, pl.shorten)
	}
	if f.summary && pl.drop > f.lead {
		s -= reserve
	}
	return s
}

func (f *fitter) run(ctx context.Context) (*Result, error) {
	f.measure()
	budget := f.opts.Budget
	res := &Result{Budget: budget, Original: f.total, Summary: -1}
	if f.total <= budget {
		res.History, res.Tokens = f.h, f.total
		return res, nil
	}
	if f.required > budget {
		return nil, &BudgetError{Budget: budget, Need: f.required}
	}
	if len(f.fronts) == 0 {
		return nil, fmt.Errorf("fit: %d tokens is over the budget of %d and no strategy may make room", f.total, budget)
	}
	f.trims = make([]trim, f.n)
	excess := f.total - budget
	res.Level = 1
	if f.block > 0 {
		res.Level = (excess + f.block - 1) / f.block
	}
	reserve := f.opts.SummaryReserve
	summaryNote := ""
	// The summary is written at most a few times: a summarizer whose text
	// keeps outgrowing the room made for it ends with the turns dropped
	// without one.
	for attempt := 0; ; attempt++ {
		pl, stable, ok := f.choose(excess, res.Level, reserve)
		if !ok {
			if !f.summary {
				return nil, fmt.Errorf("fit: the strategies %v cannot bring %d tokens within the budget of %d (allow %q)",
					f.fronts, f.total, budget, DropOldest)
			}
			// Only the room for a summary can make the full drop miss.
			f.summary = false
			summaryNote = "the summary did not fit the budget: the oldest turns were dropped without one"
			continue
		}
		text := ""
		if f.summary && pl.drop > f.lead {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			var err error
			text, err = f.opts.Summarizer.Summarize(ctx, f.h[f.lead:pl.drop])
			if err != nil {
				return nil, fmt.Errorf("fit: summarizing %d messages: %w", pl.drop-f.lead, err)
			}
			sum := f.opts.Counter.MessageTokens(convo.Summary(text, pl.drop-f.lead))
			if f.total-f.saves(pl, sum) > budget {
				if attempt >= 3 {
					f.summary = false
					summaryNote = fmt.Sprintf("the summary (%d tokens) did not fit the budget: the oldest turns were dropped without one", sum)
				} else {
					reserve = max(sum, 2*reserve)
				}
				continue
			}
		}
		if !stable {
			res.Notes = append(res.Notes, "the budget is tight: the cut was placed where it fits rather than on a block boundary, so the request's start may change on the next turn")
		}
		if summaryNote != "" {
			res.Notes = append(res.Notes, summaryNote)
		}
		f.build(res, pl, text)
		return res, nil
	}
}

// choose finds a plan saving at least excess tokens. Without a block it
// is the plan keeping the most (keepMost). With one, it is the first plan
// saving level blocks' worth on block boundaries; failing that, the first
// saving excess with the fronts allowed past the last boundary, and stable
// is false.
func (f *fitter) choose(excess, level, reserve int) (pl plan, stable, ok bool) {
	if f.block == 0 {
		pl, ok = f.keepMost(excess, reserve)
		return pl, true, ok
	}
	need := level * f.block
	// A plan saves at most every token up to its leading front: plans whose
	// leading boundary comes before need tokens are passed over without
	// looking at their messages, so a long history costs integer work
	// until the few plans that might do.
	first := 1
	for first <= len(f.bounds) && f.pos[f.bound(first)]-f.pos[f.lead] < need {
		first++
	}
	for q := first; ; q++ {
		p, avail := f.planFor(q, false)
		if !avail {
			break
		}
		if f.saves(p, reserve) >= need {
			return p, true, true
		}
	}
	for q := 1; q <= len(f.bounds)+len(f.fronts)+1; q++ {
		p, _ := f.planFor(q, true)
		if f.saves(p, reserve) >= excess {
			return p, false, true
		}
	}
	return plan{}, false, false
}

// keepMost finds the plan that keeps the most of the old part: the latest
// cut point from which the strategies before DropOldest, applied to all
// that is kept, save at least need; then each of those strategies in turn
// reaches only as far as it must. Every plan's saving grows with how far
// its fronts reach, so both are binary searches.
func (f *fitter) keepMost(need, reserve int) (plan, bool) {
	pl := plan{f.lead, f.lead, f.lead}
	var trims []Strategy // those before DropOldest, in order
	for _, s := range f.fronts {
		if s == DropOldest {
			break
		}
		trims = append(trims, s)
	}
	full := func(d int) plan {
		q := plan{d, d, d}
		for _, s := range trims {
			q.set(s, f.p)
		}
		return q
	}
	if f.saves(full(f.lead), reserve) < need {
		if !contains(f.fronts, DropOldest) {
			return pl, false
		}
		// The first cut point that saves enough: cuts[len(cuts)-1] is p,
		// which drops the whole old part.
		i := sort.Search(len(f.cuts), func(i int) bool { return f.saves(full(f.cuts[i]), reserve) >= need })
		if i == len(f.cuts) {
			return pl, false
		}
		pl.drop = f.cuts[i]
	}
	// The drop is settled; now each trimming strategy in order, the ones
	// after it not yet used.
	for _, s := range trims {
		q := pl
		q.set(s, f.p)
		if f.saves(q, reserve) < need {
			pl = q
			continue
		}
		n := f.p - pl.drop
		reach := pl.drop + sort.Search(n, func(i int) bool {
			q := pl
			q.set(s, pl.drop+i+1)
			return f.saves(q, reserve) >= need
		}) + 1
		pl.set(s, reach)
		break
	}
	return pl, true
}

// set places the front of strategy s at index at.
func (pl *plan) set(s Strategy, at int) {
	switch s {
	case DropReasoning:
		pl.reasoning = at
	case ShortenResults:
		pl.shorten = at
	case DropOldest:
		pl.drop = at
	}
}

func (f *fitter) build(res *Result, pl plan, summary string) {
	h := f.h
	out := make(convo.History, 0, f.n-(pl.drop-f.lead)+1)
	res.Excluded = make([]Excluded, 0, pl.drop-f.lead)
	out = append(out, h[:f.lead]...)
	reason := "left out: among the oldest turns"
	if f.summary && pl.drop > f.lead {
		res.Summary = len(out)
		out = append(out, convo.Summary(summary, pl.drop-f.lead))
		reason = "summarised into " + msgPath(res.Summary)
	}
	for i := f.lead; i < pl.drop; i++ {
		res.Excluded = append(res.Excluded, Excluded{Index: i, Role: h[i].Role, Tokens: f.count[i], Reason: reason})
	}
	for i := pl.drop; i < f.n; i++ {
		m := h[i]
		switch {
		case i < pl.reasoning && f.trims[i].rMsg != nil:
			if f.trims[i].rGone {
				res.Excluded = append(res.Excluded, Excluded{Index: i, Role: m.Role, Tokens: f.count[i], Reason: "left out: it held only reasoning, which was dropped"})
				continue
			}
			res.Changed = append(res.Changed, Changed{Index: i, At: len(out), Role: m.Role, What: "reasoning dropped",
				Saved: f.trims[i].rSave})
			m = *f.trims[i].rMsg
		case i < pl.shorten && f.trims[i].sMsg != nil:
			what := "tool result shortened"
			if n := f.trims[i].shortened; n > 1 {
				what = strconv.Itoa(n) + " tool results shortened"
			}
			res.Changed = append(res.Changed, Changed{Index: i, At: len(out), Role: m.Role, What: what,
				Saved: f.trims[i].sSave})
			m = *f.trims[i].sMsg
		}
		out = append(out, m)
	}
	res.History = out
	// The count of what is sent, from the counts already made.
	res.Tokens = f.total - (f.pos[pl.drop] - f.pos[f.lead])
	for _, c := range res.Changed {
		res.Tokens -= c.Saved
	}
	for _, e := range res.Excluded {
		if e.Index >= pl.drop {
			res.Tokens -= e.Tokens
		}
	}
	if res.Summary >= 0 {
		res.Tokens += f.opts.Counter.MessageTokens(out[res.Summary])
	}
}
