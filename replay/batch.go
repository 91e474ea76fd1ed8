package replay

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// Selection picks the conversations a batch replays: those holding a
// message that matches Search (store.Search), or those updated at or
// after Since, or both (those that match both); at most Limit (0: 100).
// A replay's own fork is never selected.
type Selection struct {
	Search string
	Since  time.Time
	Limit  int
}

// DefaultLimit is how many conversations a Selection takes when it does
// not say.
const DefaultLimit = 100

// Select returns the ids of the conversations sel picks, newest first.
func (r *Replayer) Select(ctx context.Context, tenant string, sel Selection) ([]string, error) {
	if sel.Search == "" && sel.Since.IsZero() {
		return nil, errors.New("replay: select by a search, a time, or both")
	}
	limit := sel.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	var ids []string
	seen := map[string]bool{}
	take := func(c store.Conversation) bool {
		if seen[c.ID] || c.Updated.Before(sel.Since) {
			return false
		}
		seen[c.ID] = true
		if _, fork := ForkInfo(c); !fork {
			ids = append(ids, c.ID)
		}
		return len(ids) >= limit
	}
	after := ""
	for {
		var cs []store.Conversation
		var err error
		if sel.Search != "" {
			var hits []store.Hit
			hits, after, err = r.opts.Store.Search(ctx, tenant, sel.Search, store.SearchOptions{Limit: store.MaxSearchLimit, After: after})
			for _, h := range hits {
				cs = append(cs, h.Conversation)
			}
		} else {
			cs, after, err = r.opts.Store.List(ctx, tenant, store.ListOptions{Limit: store.MaxListLimit, After: after})
		}
		if err != nil {
			return nil, fmt.Errorf("replay: selecting: %w", err)
		}
		for _, c := range cs {
			if sel.Search == "" && c.Updated.Before(sel.Since) {
				return ids, nil // newest first: the rest are older
			}
			if take(c) {
				return ids, nil
			}
		}
		if after == "" {
			return ids, nil
		}
	}
}

// Outcome is one conversation's replay in a batch: its Result, or the
// error that left it unreplayed.
type Outcome struct {
	Conversation string  `json:"conversation"`
	Result       *Result `json:"result,omitempty"`
	Err          string  `json:"error,omitempty"`
}

// Progress is told of each replay of a batch as it ends: how many have
// ended, of how many.
type Progress func(done, total int, o Outcome)

// Many replays the last turn of each conversation with the model and
// overrides of q (its Conversation and At are ignored), at most
// concurrency at once (≤ 0: 4), and returns the outcomes in the order of
// ids. A replay made already is not made again (Result.Skipped), so a
// batch that was interrupted is finished by running it again. When ctx
// ends, no further replay starts, and those under way are not stored.
func (r *Replayer) Many(ctx context.Context, ids []string, q Request, concurrency int, progress Progress) []Outcome {
	if concurrency <= 0 {
		concurrency = 4
	}
	out := make([]Outcome, len(ids))
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i, id := range ids {
		out[i].Conversation = id
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			out[i].Err = "not replayed: " + ctx.Err().Error()
			continue
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			one := q
			one.Conversation, one.At = id, ""
			res, err := r.Replay(ctx, one)
			o := Outcome{Conversation: id, Result: res}
			if err != nil {
				o.Err = err.Error()
			}
			mu.Lock()
			out[i] = o
			done++
			if progress != nil {
				progress(done, len(ids), o)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// Totals sum up a batch.
type Totals struct {
	Conversations int `json:"conversations"`
	Replayed      int `json:"replayed"` // made now
	Skipped       int `json:"skipped"`  // made before
	Failed        int `json:"failed"`   // the upstream failed (stored on the fork)
	Errors        int `json:"errors"`   // not replayed (not replayable, …)
	// SameToolCalls and SameFinish count the replays (made now or
	// before, not failed) that agree with their original.
	SameToolCalls int `json:"same_tool_calls"`
	SameFinish    int `json:"same_finish"`
	// MeanSimilarity is the mean text similarity of those replays.
	MeanSimilarity float64 `json:"mean_similarity"`
	// Tokens and cost of the originals and of the replays compared.
	Original SideTotals `json:"original"`
	Replay   SideTotals `json:"replay"`
}

// SideTotals add up one side's usage, latency and cost.
type SideTotals struct {
	Input     int64        `json:"input"`
	Output    int64        `json:"output"`
	LatencyMS int64        `json:"latency_ms,omitempty"`
	CostUSD   *convo.Money `json:"cost_usd,omitempty"`
}

// Total sums up the outcomes of a batch.
func Total(outs []Outcome) Totals {
	t := Totals{Conversations: len(outs)}
	compared := 0
	for _, o := range outs {
		res := o.Result
		switch {
		case res == nil:
			t.Errors++
			continue
		case res.Replay.Error != "":
			t.Failed++
			continue
		case res.Skipped:
			t.Skipped++
		default:
			t.Replayed++
		}
		compared++
		if res.Compare.SameToolCalls {
			t.SameToolCalls++
		}
		if res.Compare.SameFinish {
			t.SameFinish++
		}
		t.MeanSimilarity += res.Compare.TextSimilarity
		t.Original.add(res.Original)
		t.Replay.add(res.Replay)
	}
	if compared > 0 {
		t.MeanSimilarity /= float64(compared)
	}
	return t
}

func (t *SideTotals) add(s Side) {
	if s.Usage != nil {
		t.Input += s.Usage.Input
		t.Output += s.Usage.Output
	}
	if s.LatencyMS != nil {
		t.LatencyMS += *s.LatencyMS
	}
	if s.CostUSD != nil {
		if t.CostUSD == nil {
			t.CostUSD = new(convo.Money)
		}
		*t.CostUSD += *s.CostUSD
	}
}
