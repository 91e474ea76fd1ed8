package openai

import (
	"reflect"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// standIn is an assistant message item that reads as one part: put before
// an item decoded alone, it gives the item the place it has after the
// reply's first message item (a later message item marks where it starts).
const standIn = `{"type":"message","role":"assistant","content":[{"type":"output_text","text":""}]}`

// itemPiece says what the item event being read changed in the parts when
// it can tell without a snapshot, which re-encodes and decodes the whole
// response: an output_item.added of a new last item adds the part it
// reads as, after the others; an output_item.done whose copy reads as the
// parts the events built changes nothing. Only the item is decoded. It
// reports false when the count of parts so far is not known, a terminal
// response or a base one with items of its own may reorder the output,
// or an item is one whose place in the message this cannot tell.
func (a *respAcc) itemPiece() (provider.Piece, bool) {
	e := &a.ev
	k := int(e.output)
	if a.nparts < 0 || a.terminal != nil || a.baseItems || k >= len(a.items) {
		return provider.Piece{}, false
	}
	hasMsg, ok := a.context(k)
	if !ok {
		return provider.Piece{}, false
	}
	it := a.items[k]
	switch string(e.typ) {
	case "response.output_item.added":
		if !a.fresh || k != len(a.items)-1 {
			return provider.Piece{}, false
		}
		parts, ok := itemParts(it.build(), hasMsg, a.depth)
		switch {
		case !ok || len(parts) > 1:
			return provider.Piece{}, false
		case len(parts) == 0:
			return provider.Piece{}, true
		}
		a.nparts++
		a.snapOK = false // find looks in a new snapshot: this part is not in the last
		return provider.Piece{Kind: provider.DeltaPartStart, Index: a.nparts - 1, Part: &parts[0]}, true
	case "response.output_item.done":
		if a.before == nil {
			return provider.Piece{}, false
		}
		was, ok := itemParts(a.before, hasMsg, a.depth)
		if !ok {
			return provider.Piece{}, false
		}
		now, ok := itemParts(it.done, hasMsg, a.depth)
		return provider.Piece{}, ok && reflect.DeepEqual(was, now)
	}
	return provider.Piece{}, false
}

// context reports whether an assistant message item comes before item k,
// and whether item k and those before it all join the reply's assistant
// message in order (each has a type; each message item is the
// assistant's), so that item k's parts are the ones it reads as alone.
func (a *respAcc) context(k int) (hasMsg, ok bool) {
	for i, it := range a.items[:k+1] {
		if it == nil {
			continue
		}
		switch it.typ {
		case "":
			return false, false
		case "message":
			raw := it.done
			if raw == nil {
				raw = it.added
			}
			if raw == nil || itemMember(raw, "role") != "assistant" {
				return false, false
			}
			hasMsg = hasMsg || i < k
		}
	}
	return hasMsg, true
}

// itemParts returns the parts one output item reads as in a reply, after
// an assistant message item when hasMsg.
func itemParts(item []byte, hasMsg bool, depth int) ([]convo.Part, bool) {
	body := make([]byte, 0, len(item)+len(standIn)+16)
	body = append(body, `{"output":[`...)
	if hasMsg {
		body = append(append(body, standIn...), ',')
	}
	body = append(append(body, item...), "]}"...)
	opts := provider.Options{Limits: convo.Limits{MaxBytes: 1 << 62, MaxDepth: depth}}
	m, _, err := decodeResponsesReply(body, opts)
	if err != nil {
		return nil, false
	}
	parts := m.Parts
	if hasMsg {
		if len(parts) == 0 {
			return nil, false
		}
		parts = parts[1:]
	}
	return parts, true
}
