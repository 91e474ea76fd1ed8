package backend

import (
	"encoding/json"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// What every backend checks at the start of an operation, before it asks
// its database anything, so the SQLite and PostgreSQL stores refuse the
// same requests with the same errors.

// Find is nil when tenant and id could name a stored conversation, and
// otherwise the ErrNotFound a lookup of them reports.
func Find(tenant, id string) error {
	if !Findable(tenant, id) {
		return NotFound(id)
	}
	return nil
}

// NotFound is the error for a conversation that is not there.
func NotFound(id string) error {
	return fmt.Errorf("conversation %q: %w", id, store.ErrNotFound)
}

// FindMessage is Find for one message of a conversation.
func FindMessage(tenant, id, messageID string) error {
	if !Findable(tenant, id, messageID) {
		return MessageNotFound(id, messageID)
	}
	return nil
}

// MessageNotFound is the error for a message that is not there.
func MessageNotFound(id, messageID string) error {
	return fmt.Errorf("message %q of conversation %q: %w", messageID, id, store.ErrNotFound)
}

// CheckVersion is the ErrConflict of a write that expected version want of
// a conversation at version at, and nil when want is at or AnyVersion.
func CheckVersion(id string, at, want int64) error {
	if want != store.AnyVersion && want != at {
		return fmt.Errorf("conversation %q is at version %d, not %d: %w", id, at, want, store.ErrConflict)
	}
	return nil
}

// Created is a checked new conversation and its first messages, ready to
// insert.
type Created struct {
	Conversation store.Conversation
	Rows         []Row
	Open         []byte // the calls its last message leaves open, for the conversation's row
}

// PrepareCreate checks a Create: the conversation's fields and its
// messages, as Append checks them. The description it returns is the one
// Create returns, at version 1, created now. Messages estimated longer
// than longFrom bytes (0: none) may be left for the store to encode
// (Row.Msg).
func PrepareCreate(c store.Conversation, msgs []convo.Message, longFrom int) (Created, error) {
	c, err := NewConversation(c)
	if err != nil {
		return Created{}, err
	}
	h, rows, err := encode(msgs, Now(), true, longFrom)
	if err != nil {
		return Created{}, err
	}
	open, err := Check(nil, h)
	if err != nil {
		return Created{}, err
	}
	now := Now()
	c.Version, c.Messages, c.ForkedFrom, c.ForkedAt, c.Created, c.Updated = 1, len(rows), "", 0, now, now
	return Created{Conversation: c, Rows: rows, Open: MarshalCalls(open)}, nil
}

// Updated is a checked Update: the metadata to store (nil and Clear false
// to leave it as it is).
type Updated struct {
	Meta  json.RawMessage
	Clear bool
}

// PrepareUpdate checks an Update's conversation, title and metadata.
func PrepareUpdate(tenant, id string, title *string, meta json.RawMessage) (Updated, error) {
	if err := Find(tenant, id); err != nil {
		return Updated{}, err
	}
	if title != nil {
		if err := CheckTitle(*title); err != nil {
			return Updated{}, err
		}
	}
	m, clear, err := Meta(meta)
	return Updated{Meta: m, Clear: clear}, err
}

// PrepareAppend checks an Append's conversation and encodes its messages
// (those estimated longer than longFrom bytes as PrepareCreate does);
// CheckAppend checks them against the conversation once it is read.
func PrepareAppend(tenant, id string, msgs []convo.Message, longFrom int) (convo.History, []Row, error) {
	if err := Find(tenant, id); err != nil {
		return nil, nil, err
	}
	return encode(msgs, Now(), true, longFrom)
}

// CheckAppend checks messages h appended to a conversation whose stored
// open calls are open (as MarshalCalls wrote them), and returns the open
// calls after them, marshalled for the conversation's row.
func CheckAppend(open []byte, h convo.History) ([]byte, error) {
	calls, err := UnmarshalCalls(open)
	if err != nil {
		return nil, err
	}
	after, err := Check(calls, h)
	if err != nil {
		return nil, err
	}
	return MarshalCalls(after), nil
}

// CheckLoad checks a LoadRange's conversation and start.
func CheckLoad(tenant, id string, from int) error {
	if from < 0 {
		return fmt.Errorf("%w: load from %d", store.ErrInvalid, from)
	}
	return Find(tenant, id)
}

// Span is how many messages a LoadRange of n (n < 0: all) from index from
// returns from a conversation of messages messages.
func Span(from, n, messages int) int {
	if n < 0 || n > messages-from {
		n = messages - from
	}
	return max(n, 0)
}
