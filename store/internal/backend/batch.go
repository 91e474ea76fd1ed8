package backend

import (
	"encoding/json"
	"fmt"

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
func PrepareWrite(i int, sw store.Write) (Write, error) {
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
	if w.Meta, w.ClearMeta, err = Meta(sw.Meta); err != nil {
		return w, fmt.Errorf("writes[%d]: %w", i, err)
	}
	if w.H, w.Rows, err = Encode(sw.Messages); err != nil {
		return w, fmt.Errorf("writes[%d]: %w", i, err)
	}
	return w, nil
}
