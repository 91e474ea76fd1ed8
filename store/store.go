// Package store keeps conversations: a Store interface, the errors every
// backend returns, and (in storetest) the conformance suite every backend
// passes. Backends live in store/sqlite and store/postgres.
//
// Every call is scoped to a tenant. A conversation of another tenant does not
// exist as far as a caller can tell: the same ErrNotFound, never a
// permission error that would confirm it exists.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/convo-go/convo"
)

// Errors every backend returns (possibly wrapped).
var (
	ErrNotFound = errors.New("not found")
	// ErrConflict means the version the caller passed is not the current
	// one: someone else changed the conversation since the caller read it.
	ErrConflict = errors.New("version conflict")
	// ErrExists means a conversation or message with that id exists.
	ErrExists = errors.New("already exists")
	// ErrInvalid means the input failed validation.
	ErrInvalid = errors.New("invalid")
)

// Conversation describes a stored conversation.
type Conversation struct {
	ID     string
	Tenant string
	Title  string
	Meta   json.RawMessage // application metadata: a JSON object, or nil
	// Version increases with every change to the conversation's messages;
	// pass it back to Append to be sure nothing changed in between.
	Version int64
	// Messages is how many messages the conversation holds.
	Messages int
	// ForkedFrom and ForkedAt say which conversation this one was forked
	// from and how many of its messages it took.
	ForkedFrom string
	ForkedAt   int
	Created    time.Time
	Updated    time.Time
}

// ListOptions select and page conversations.
type ListOptions struct {
	Limit  int    // at most this many (0: a backend default, at most 1000)
	After  string // the cursor returned by the previous page
	Title  string // only conversations whose title contains this
	// Meta, a JSON object, keeps conversations whose metadata has all these
	// members with equal values.
	Meta json.RawMessage
}

// Store keeps conversations. Implementations are safe for concurrent use.
type Store interface {
	// Create stores a new conversation. An empty ID is filled in with a new
	// unique id. msgs, if any, become its first messages.
	Create(ctx context.Context, c Conversation, msgs ...convo.Message) (Conversation, error)
	// Get returns a conversation's description.
	Get(ctx context.Context, tenant, id string) (Conversation, error)
	// Update changes a conversation's title and metadata (nil leaves one
	// as it is).
	Update(ctx context.Context, tenant, id string, title *string, meta json.RawMessage) (Conversation, error)
	// Append adds messages at the end if the conversation's version is
	// still version, and returns the new description. A stale version is
	// ErrConflict and changes nothing. Messages without an ID get one.
	Append(ctx context.Context, tenant, id string, version int64, msgs ...convo.Message) (Conversation, error)
	// Load returns the messages from index from (0: all) on.
	Load(ctx context.Context, tenant, id string, from int) (convo.History, Conversation, error)
	// Message returns one message by its id.
	Message(ctx context.Context, tenant, id, messageID string) (convo.Message, error)
	// DeleteMessage removes one message by its id, with the same version
	// check as Append.
	DeleteMessage(ctx context.Context, tenant, id string, version int64, messageID string) (Conversation, error)
	// Fork creates a new conversation holding the first at messages of id,
	// leaving id untouched: edit a turn and regenerate without losing the old
	// branch.
	Fork(ctx context.Context, tenant, id string, at int, c Conversation) (Conversation, error)
	// List returns a page of the tenant's conversations, newest first, and
	// the cursor of the next page ("" at the end).
	List(ctx context.Context, tenant string, opts ListOptions) ([]Conversation, string, error)
	// Delete removes a conversation and its messages.
	Delete(ctx context.Context, tenant, id string) error
	// Close releases the backend's resources.
	Close() error
}
