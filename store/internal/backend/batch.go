package backend

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// Write is a store.Write checked and encoded before the batch's
// transaction starts, so that the transaction does only database work.
type Write struct {
	store.Write
	// New is the conversation to create when Create is set and it does
	// not exist: its id filled in, its metadata compacted.
	New store.Conversation
	// H and Rows are Messages as Encode returns them.
	H    convo.History
	Rows []Row
	// Meta is the metadata to set (compacted), or with ClearMeta none;
	// neither: left as it is.
	Meta      json.RawMessage
	ClearMeta bool
}

// SetsMeta reports whether the write changes the conversation's metadata.
func (w *Write) SetsMeta() bool { return w.Meta != nil || w.ClearMeta }

// PrepareWrite checks one write of a batch the way Create, Append and
// Update check their arguments. Its errors name the write (writes[i]).
// Messages estimated longer than longFrom bytes (0: none) may be left for
// the store to encode as it stores them (Row.Msg). The messages' encodings
// go in a where it has room (a may be nil).
func PrepareWrite(i int, sw store.Write, longFrom int, a *Arena) (Write, error) {
	w := Write{Write: sw}
	var err error
	if sw.Create {
		w.New, err = NewConversation(store.Conversation{Tenant: sw.Tenant, ID: sw.ID, Meta: sw.Meta})
		if err != nil {
			return w, fmt.Errorf("writes[%d]: %w", i, err)
		}
		w.ID = w.New.ID
	} else if !Findable(sw.Tenant, sw.ID) {
		return w, fmt.Errorf("writes[%d]: conversation %q: %w", i, sw.ID, store.ErrNotFound)
	}
	if w.New.Meta != nil {
		// NewConversation checked and compacted it already: Meta of
		// metadata that is not null gives the same, clearing nothing.
		w.Meta = w.New.Meta
	} else if w.Meta, w.ClearMeta, err = Meta(sw.Meta); err != nil {
		return w, fmt.Errorf("writes[%d]: %w", i, err)
	}
	if w.H, w.Rows, err = encodeIn(a, sw.Messages, Now(), true, longFrom); err != nil {
		return w, fmt.Errorf("writes[%d]: %w", i, err)
	}
	for j, c := range sw.Charges {
		switch {
		case c.Key == "" || len(c.Key) > store.MaxIDBytes || !utf8.ValidString(c.Key):
			return w, fmt.Errorf("writes[%d]: charges[%d]: key: want 1 to %d bytes of UTF-8: %w", i, j, store.MaxIDBytes, store.ErrInvalid)
		case c.USD < 0:
			return w, fmt.Errorf("writes[%d]: charges[%d]: negative amount %s: %w", i, j, c.USD, store.ErrInvalid)
		case c.Day.IsZero():
			return w, fmt.Errorf("writes[%d]: charges[%d]: no day: %w", i, j, store.ErrInvalid)
		}
	}
	return w, nil
}

// Charge is one spend counter's total charge of a batch.
type Charge struct {
	Tenant, Key string
	Day         time.Time
	USD         convo.Money
}

// Charges adds up the charges of the writes applied (those ok reports)
// by counter, in the order of their keys: one statement a counter, and
// the counters' rows locked in the same order by every batch (PostgreSQL),
// so that two batches never wait for each other in a circle.
func Charges(ws []Write, ok func(i int) bool) []Charge {
	var out []Charge
	at := map[Charge]int{} // by tenant, key and day; USD zero
	for i := range ws {
		if !ok(i) {
			continue
		}
		for _, c := range ws[i].Charges {
			k := Charge{Tenant: ws[i].Tenant, Key: c.Key, Day: store.SpendDay(c.Day)}
			j, seen := at[k]
			if !seen {
				j = len(out)
				at[k] = j
				out = append(out, k)
			}
			out[j].USD = AddMoney(out[j].USD, c.USD)
		}
	}
	slices.SortFunc(out, func(a, b Charge) int {
		return cmp.Or(strings.Compare(a.Tenant, b.Tenant), strings.Compare(a.Key, b.Key), a.Day.Compare(b.Day))
	})
	return out
}

// MaxMoney is the largest amount a spend counter holds: counters stop
// there rather than wrap around.
const MaxMoney = convo.Money(math.MaxInt64)

// AddMoney adds two amounts that are not negative, stopping at MaxMoney.
func AddMoney(a, b convo.Money) convo.Money {
	if a > MaxMoney-b {
		return MaxMoney
	}
	return a + b
}
