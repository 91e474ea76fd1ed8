// Package store keeps conversations: a Store interface, the errors every
// backend returns, export and import in the canonical format, and (in
// storetest) the conformance suite every backend passes. Backends live in
// store/sqlite (the embedded default) and store/postgres; store/backends
// opens either from a data source name.
//
// Every call is scoped to a tenant. A conversation of another tenant does not
// exist as far as a caller can tell: the same ErrNotFound, never a
// permission error that would confirm it exists, and conversation ids are
// unique per tenant, so creating one never reveals another tenant's ids.
// The empty string is a tenant like any other, for single-user programs.
//
// # What a store checks
//
// Append (and Create, which appends a conversation's first messages) refuses
// with ErrInvalid, changing nothing:
//
//   - a message that cannot be stored losslessly: a string that is not valid
//     UTF-8, a JSON field that is not valid JSON, JSON nested deeper than
//     convo.DefaultLimits allow, a message larger than MaxMessageBytes;
//   - a message that breaks a rule of convo.History.Validate, judged in the
//     context of the conversation: tool results must answer calls of the
//     assistant message directly before them (which may be the last stored
//     message), a conversation whose last assistant message has unanswered
//     tool calls takes only the results of those calls next, message ids are
//     unique in the conversation (a stored id again is ErrExists).
//
// Calls left unanswered at the end of an append are not an error: their
// results usually arrive in a later append. DeleteMessage and Fork do not
// re-validate, so a history edited with them may break the pairing rules;
// appends after that are still judged by the pairing of the stored tail.
//
// A *convo.ValidationError in the error chain lists every problem, with paths
// relative to the appended messages (messages[0] is the first one passed).
package store

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
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
	// ErrUnavailable means the database could not be reached or lost the
	// connection (PostgreSQL), or stayed locked by another process past
	// the busy timeout (SQLite): a condition that passes, so the call may
	// be tried again later. A write that fails so may have been committed
	// before the connection broke; a version check (Append with the
	// version read) makes trying it again safe.
	ErrUnavailable = errors.New("store unavailable")
)

// Pinger is a Store that can say whether its database answers now: the
// readiness a server reports. Both backends implement it.
type Pinger interface {
	Ping(ctx context.Context) error
}

// AnyVersion passed to Append or DeleteMessage skips the version check: the
// messages go at the end of whatever the conversation holds by then. It
// suits APIs without a precondition (the OpenAI Conversations API); appends
// stay atomic and are still validated against the stored tail.
const AnyVersion int64 = -1

// Limits of what a store accepts (bytes). Larger input is ErrInvalid.
const (
	MaxIDBytes        = 256     // conversation id
	MaxTenantBytes    = 256     // tenant
	MaxMessageIDBytes = 1024    // message id
	MaxTitleBytes     = 4096    // title
	MaxMetaBytes      = 1 << 16 // conversation metadata
	// MaxMessageBytes bounds one message's canonical encoding; it is the
	// limit convo.UnmarshalMessage reads back, so whatever a store accepts
	// it can load again.
	MaxMessageBytes = 256 << 20
)

// Conversation describes a stored conversation.
type Conversation struct {
	// ID is unique within the tenant: 1 to MaxIDBytes bytes of printable
	// UTF-8 without white space or any of / ? # % \. Create fills in a new
	// one (see NewID) when it is empty.
	ID     string
	Tenant string
	Title  string
	// Meta is application metadata: a JSON object, or nil. Stores keep it
	// compacted.
	Meta json.RawMessage
	// Version counts changes to the conversation's messages: a new
	// conversation has version 1, and every Append of at least one message
	// and every DeleteMessage adds one. Pass it back to Append to be sure
	// nothing changed in between. Update does not change it: a new title
	// does not invalidate an append in flight.
	Version int64
	// Messages is how many messages the conversation holds.
	Messages int
	// ForkedFrom and ForkedAt say which conversation this one was forked
	// from and how many of its messages it took.
	ForkedFrom string
	ForkedAt   int
	// Created and Updated are UTC, to the microsecond. Updated changes
	// with every change to the conversation, its title or its metadata.
	Created time.Time
	Updated time.Time
}

// ListOptions select and page conversations.
type ListOptions struct {
	Limit int    // at most this many (0: DefaultListLimit; more than MaxListLimit: MaxListLimit)
	After string // the cursor returned by the previous page
	Title string // only conversations whose title contains this, ignoring case
	// Meta, a JSON object, keeps conversations whose metadata has all these
	// top-level members with equal values. Values compare as JSON: numbers
	// by value (1.0 equals 1), objects regardless of member order, arrays
	// element by element. The stores index top-level string members of up
	// to 256 bytes: a filter with one reads only the conversations that
	// have it; a filter without one reads every conversation of the
	// tenant.
	Meta json.RawMessage
}

// The page sizes of List.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// SearchOptions page the results of Search.
type SearchOptions struct {
	Limit int    // at most this many (0: DefaultSearchLimit; more than MaxSearchLimit: MaxSearchLimit)
	After string // the cursor returned by the previous page
}

// The page sizes of Search.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = 200
)

// MaxSearchTextBytes is how much of a message's text the search index
// keeps: a word after the first MaxSearchTextBytes bytes does not find the
// message.
const MaxSearchTextBytes = 128 << 10

// Hit is a message that matches a search.
//
// A message's searchable text is what a reader sees of it: text, refusal,
// reasoning text and summaries (not signatures or encrypted payloads),
// tool names and arguments, tool results, JSON values and file names. A
// word is a run of letters and digits; words match whole and regardless of
// case, and accents are kept (cafe does not find café). Results are
// ordered by conversation, newest first, and within one by position, last
// first.
type Hit struct {
	// Conversation describes the conversation holding the message.
	Conversation Conversation
	// MessageID is the message's id and Index its position in the
	// conversation (0 is the first message).
	MessageID string
	Index     int
	Role      convo.Role
	// Snippet is a stretch of the message's text around the first match
	// (at most about 200 bytes, cut at word boundaries), and Highlights
	// the byte ranges of Snippet, start and end, that match query words.
	Snippet    string
	Highlights [][2]int
}

// Store keeps conversations. Implementations are safe for concurrent use.
// A canceled context abandons a call: a write either happened completely or
// not at all.
type Store interface {
	// Create stores a new conversation in c.Tenant. An empty ID is filled
	// in with a new unique id; an ID the tenant already uses is ErrExists.
	// msgs, if any, become its first messages, checked as Append checks
	// them. Version, Messages, ForkedFrom, ForkedAt, Created and Updated of
	// c are ignored.
	Create(ctx context.Context, c Conversation, msgs ...convo.Message) (Conversation, error)
	// Get returns a conversation's description.
	Get(ctx context.Context, tenant, id string) (Conversation, error)
	// Update changes a conversation's title and metadata (nil leaves one
	// as it is; metadata "null" removes it).
	Update(ctx context.Context, tenant, id string, title *string, meta json.RawMessage) (Conversation, error)
	// Append adds messages at the end if the conversation's version is
	// still version (or version is AnyVersion), and returns the new
	// description. A stale version is ErrConflict and changes nothing; so
	// is any other error: all messages are stored or none. Messages without
	// an ID get one; callers that need to know it set it first (NewID).
	// Appending no messages only checks the version.
	Append(ctx context.Context, tenant, id string, version int64, msgs ...convo.Message) (Conversation, error)
	// Load returns the messages from index from (0: all) on, and the
	// description of the conversation as of the same moment. A from at or
	// past the end returns no messages; a negative one is ErrInvalid.
	Load(ctx context.Context, tenant, id string, from int) (convo.History, Conversation, error)
	// LoadRange returns at most n messages (n < 0: no limit) from index
	// from on, and the description as of the same moment: a page of a long
	// conversation, costing what the page holds, not what precedes or
	// follows it. A from at or past the end returns no messages; a
	// negative one is ErrInvalid.
	LoadRange(ctx context.Context, tenant, id string, from, n int) (convo.History, Conversation, error)
	// Message returns one message by its id.
	Message(ctx context.Context, tenant, id, messageID string) (convo.Message, error)
	// DeleteMessage removes one message by its id, with the same version
	// check as Append. The messages after it move up one index.
	DeleteMessage(ctx context.Context, tenant, id string, version int64, messageID string) (Conversation, error)
	// Fork creates a new conversation holding the first at messages of id,
	// leaving id untouched: edit a turn and regenerate without losing the old
	// branch. c gives the new conversation's ID (empty: a new one), Title
	// and Meta (empty: those of the original); it is in the same tenant. at
	// outside 0…Messages is ErrInvalid.
	Fork(ctx context.Context, tenant, id string, at int, c Conversation) (Conversation, error)
	// List returns a page of the tenant's conversations, newest first, and
	// the cursor of the next page ("" at the end). A cursor that is not one
	// List returned is ErrInvalid.
	List(ctx context.Context, tenant string, opts ListOptions) ([]Conversation, string, error)
	// Delete removes a conversation and its messages. Conversations forked
	// from it keep their own copies.
	Delete(ctx context.Context, tenant, id string) error
	// Search finds the tenant's messages whose text holds every word of
	// query, most recent first (see Hit for what is searched), and
	// returns a page of them with the cursor of the next page ("" at the
	// end). A query without a word is ErrInvalid, as is a cursor that is
	// not one Search returned. The index is kept current by every write: a
	// message is found as soon as Append returns, and never after
	// DeleteMessage or Delete; a fork's copies are found in the fork.
	Search(ctx context.Context, tenant, query string, opts SearchOptions) ([]Hit, string, error)
	// Batch applies writes in order, each all or nothing on its own as
	// Append is: a write that fails changes nothing and leaves the others
	// to be applied. The backend commits them in as few transactions as
	// it can (SQLite and PostgreSQL: one), so a batch costs one commit,
	// not one per write — what a writer with many small appends queued
	// wants. It returns one result per write, in order; a context that
	// ends before the batch commits fails every write with its error. A
	// context made by Yielding asks the backend to give way to the work of
	// requests being served while it writes.
	Batch(ctx context.Context, writes []Write) []WriteResult
	// Close releases the backend's resources.
	Close() error
}

// Write is one write of a Batch: messages appended to a conversation,
// created first when Create is set and it does not exist, and optionally
// its metadata replaced — as Create, or Append then Update, would, in one
// step.
type Write struct {
	Tenant string
	// ID names the conversation. Empty with Create: a new one (see NewID).
	ID string
	// Create makes the write create a conversation that does not exist,
	// with Meta and Messages as its first messages, instead of failing
	// with ErrNotFound.
	Create bool
	// Version is checked as Append checks it (AnyVersion: not checked).
	// A conversation the write creates has no version to check.
	Version int64
	// Messages are appended as Append appends them (checked the same
	// way); none only checks the version.
	Messages []convo.Message
	// Meta, when not nil, replaces the conversation's metadata as Update
	// does ("null" removes it).
	Meta json.RawMessage
	// Charges are added to the tenant's spend counters (SpendKeeper) in
	// the transaction that applies the write, only if it applies: a
	// write that fails, or that a spool writes again after it committed,
	// charges nothing more.
	Charges []Charge
}

// WriteResult is the outcome of one write of a Batch: the conversation's
// description after it, or the error that left it undone.
type WriteResult struct {
	Conversation Conversation
	Err          error
}

// NewID returns a new unique id: prefix, "_", then 32 hexadecimal digits,
// the first 12 of them the time in milliseconds, so ids made later sort
// later (as strings, within one prefix) and index well. Stores make
// conversation ids with prefix "conv" and message ids with prefix "msg".
func NewID(prefix string) string {
	var b [16]byte
	ms := uint64(time.Now().UnixMilli())
	binary.BigEndian.PutUint64(b[:8], ms<<16)
	// The low 80 bits are random: two ids of one millisecond collide with
	// probability 2^-80.
	rand.Read(b[6:]) // never fails (crypto/rand since Go 1.24)
	out := make([]byte, 0, len(prefix)+1+32)
	out = append(out, prefix...)
	out = append(out, '_')
	return string(hex.AppendEncode(out, b[:]))
}
