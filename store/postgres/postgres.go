// Package postgres is the store.Store for many servers sharing one
// database: PostgreSQL through github.com/jackc/pgx/v5 (a pgxpool pool).
//
// Appends take two round trips and no explicit transaction: the
// conversation row is read, the messages are checked against it in Go, and
// one statement then bumps the version (only if it is still the one read)
// and inserts the messages. One statement is atomic, and the version
// condition makes concurrent appends from any number of servers serialize
// on the conversation's row: the loser of a race gets store.ErrConflict
// (or, with store.AnyVersion, is retried against the new version).
// Commits are as durable as the server's synchronous_commit makes them (on
// by default: flushed to the WAL before the acknowledgement).
//
// The schema is versioned by the embedded migrations/NNNN_name.sql files,
// applied in order on open under an advisory lock, so servers starting
// together migrate once; table schema_migrations records them. The tables
// live in the schema that search_path names first (Options.Schema sets it).
package postgres

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/internal/backend"
)

//go:embed migrations/*.sql migrations/partitioned/*.sql
var migrationFS embed.FS

// Options configure a store.
type Options struct {
	// Schema is the schema that holds the tables; Open creates it if need
	// be and puts it first in every connection's search_path. Empty: the
	// connection string's search_path (by default the schema "public").
	Schema string
	// MaxConns is the size of the connection pool (0: the connection
	// string's pool_max_conns, else pgxpool's default).
	MaxConns int32
	// Partitions, when the schema is new, creates its tables PARTITION BY
	// HASH (tenant) with this many partitions each (migrations/partitioned,
	// docs/store.md "Partitioning"); 0 creates them unpartitioned. A
	// schema that exists keeps the layout it was created with, and its
	// number of partitions; asking for partitions of an unpartitioned one
	// is an error rather than a silent no.
	Partitions int
}

// MaxPartitions bounds Options.Partitions: beyond it every statement that
// cannot name its tenant would visit too many tables.
const MaxPartitions = 256

// Store is a store.Store in a PostgreSQL database.
type Store struct {
	pool *pgxpool.Pool
	// partitioned: the schema's tables are partitioned by tenant, and q
	// holds the statements that write the tenant into every table.
	partitioned bool
	q           *queries
}

var _ store.Store = (*Store)(nil)

// Open connects to the database dsn (a postgres:// URL or key=value
// string; see pgxpool.ParseConfig) and brings its schema up to date.
func Open(ctx context.Context, dsn string) (*Store, error) { return Options{}.Open(ctx, dsn) }

// Open connects with options o.
func (o Options) Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if o.Partitions < 0 || o.Partitions > MaxPartitions {
		return nil, fmt.Errorf("postgres: %d partitions: want 0 (none) to %d", o.Partitions, MaxPartitions)
	}
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	if o.Schema != "" {
		if err := createSchema(ctx, cfg.ConnConfig.Copy(), o.Schema); err != nil {
			return nil, err
		}
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{o.Schema}.Sanitize()
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &Store{pool: pool}
	if err := s.migrate(ctx, o.Partitions); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return s, nil
}

func createSchema(ctx context.Context, cfg *pgx.ConnConfig, schema string) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(context.Background())
	// An identifier cannot be a parameter; Sanitize quotes it.
	if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
		return fmt.Errorf("postgres: create schema: %w", err)
	}
	return nil
}

// Close closes the pool, waiting for connections in use to be returned.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Pool is the connection pool, for callers that keep their own tables in
// the same database.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

func (s *Store) migrate(ctx context.Context, partitions int) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	var schema *string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return err
	}
	if schema == nil {
		return errors.New("no schema to create tables in: search_path names none that exists")
	}
	// Servers starting together take turns; the key is per schema.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('convo.migrate.' || current_schema()))`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied timestamptz NOT NULL)`); err != nil {
		return err
	}
	var applied int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&applied); err != nil {
		return err
	}
	if err := s.layout(ctx, tx, *schema, applied, partitions); err != nil {
		return err
	}
	all, err := migrations(s.partitioned)
	if err != nil {
		return err
	}
	pending, err := backend.Pending(all, applied)
	if err != nil {
		return err
	}
	for _, m := range pending {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
		if m.Version == 2 {
			if err := indexStored(ctx, tx); err != nil {
				return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)`,
			m.Version, m.Name, backend.Now()); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// layout settles whether the schema's tables are partitioned: as asked
// (partitions > 0) when none exist yet, else as they were created.
func (s *Store) layout(ctx context.Context, tx pgx.Tx, schema string, applied, partitions int) error {
	if applied == 0 {
		s.partitioned = partitions > 0
		if s.partitioned {
			// Read by migrations/partitioned/0001_init.sql, for this
			// transaction only.
			if _, err := tx.Exec(ctx, `SELECT set_config('convo.partitions', $1, true)`, strconv.Itoa(partitions)); err != nil {
				return err
			}
		}
	} else {
		var kind string
		err := tx.QueryRow(ctx, `SELECT coalesce((SELECT relkind::text FROM pg_class WHERE oid = to_regclass('conversations')), '')`).Scan(&kind)
		if err != nil {
			return err
		}
		s.partitioned = kind == "p"
		if partitions > 0 && !s.partitioned {
			return fmt.Errorf("schema %q was created unpartitioned (version %d): partitions apply to a new schema only; "+
				"copy the data into one (docs/store.md, Partitioning)", schema, applied)
		}
	}
	s.q = layouts[0]
	if s.partitioned {
		s.q = layouts[1]
	}
	return nil
}

// migrations returns the schema's migrations: migrations/NNNN_name.sql,
// for the partitioned layout with migrations/partitioned/NNNN_name.sql in
// place of the file of the same version and name where there is one.
func migrations(partitioned bool) ([]backend.Migration, error) {
	all, err := backend.Migrations(migrationFS, "migrations")
	if err != nil || !partitioned {
		return all, err
	}
	names, err := fs.Glob(migrationFS, "migrations/partitioned/*.sql")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		base := path.Base(name)
		i := slices.IndexFunc(all, func(m backend.Migration) bool {
			return base == fmt.Sprintf("%04d_%s.sql", m.Version, m.Name)
		})
		if i < 0 {
			return nil, fmt.Errorf("migration partitioned/%s: no migration of that version and name to replace", base)
		}
		b, err := fs.ReadFile(migrationFS, name)
		if err != nil {
			return nil, err
		}
		all[i].SQL = string(b)
	}
	return all, nil
}

// Partitions returns how many partitions each of the schema's tables has:
// 0 when they are not partitioned.
func (s *Store) Partitions(ctx context.Context) (int, error) {
	if !s.partitioned {
		return 0, nil
	}
	var n int
	err := s.pool.QueryRow(ctx, `SELECT convo_partitions()`).Scan(&n)
	return n, wrap(err)
}

// SchemaVersion returns the version of the newest migration applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// The columns of a conversation row, in the order scanConv reads them.
const convCols = `pk, id, tenant, title, meta, version, messages, next_pos, open_calls, forked_from, forked_at, created, updated`

type row struct {
	store.Conversation
	pk      int64
	nextPos int64
	open    []byte
}

func scanConv(sc pgx.Row) (row, error) {
	var r row
	var meta, open *string
	err := sc.Scan(&r.pk, &r.ID, &r.Tenant, &r.Title, &meta, &r.Version, &r.Messages, &r.nextPos, &open,
		&r.ForkedFrom, &r.ForkedAt, &r.Created, &r.Updated)
	if err != nil {
		return r, err
	}
	if meta != nil {
		r.Meta = json.RawMessage(*meta)
	}
	if open != nil {
		r.open = []byte(*open)
	}
	r.Created, r.Updated = r.Created.UTC(), r.Updated.UTC()
	return r, nil
}

// querier is what a pool and a transaction have in common.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

const selectConv = `SELECT ` + convCols + ` FROM conversations WHERE tenant = $1 AND id = $2`

// lockConvsQuery locks and reads the conversations of the tenants and ids
// in $1 and $2 (pairs, by position), in the order of tenant and id.
const lockConvsQuery = `SELECT ` + convCols + ` FROM conversations
	WHERE (tenant, id) IN (SELECT * FROM unnest($1::text[], $2::text[]))
	ORDER BY tenant, id FOR UPDATE`

func getConv(ctx context.Context, q querier, query, tenant, id string) (row, error) {
	r, err := scanConv(q.QueryRow(ctx, query, tenant, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return r, backend.NotFound(id)
	}
	return r, wrap(err)
}

func wrap(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if unavailable(err) {
		return fmt.Errorf("postgres: %w: %w", store.ErrUnavailable, err)
	}
	return fmt.Errorf("postgres: %w", err)
}

// unavailable reports whether err is the database out of reach rather than
// a statement it refused: no connection could be made, or the one in use
// broke. PostgreSQL's own "cannot connect now" and "too many connections"
// (SQLSTATE classes 08 and 57P0x, 53300) say the same.
func unavailable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P0") || pe.Code == "53300"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, io.EOF) || pgconn.SafeToRetry(err)
}

// Ping reports whether the database answers now (store.Pinger).
func (s *Store) Ping(ctx context.Context) error { return wrap(s.pool.Ping(ctx)) }

// uniqueViolation reports whether err broke the named unique constraint.
// In the partitioned layout the error names the partition's index, which
// PostgreSQL names after the partition and the columns: constraint
// messages_conv_id (conv, id, tenant) is messages_p3_conv_id_tenant_key
// in partition messages_p3.
func uniqueViolation(err error, constraint string) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return false
	}
	if pe.ConstraintName == constraint {
		return true
	}
	i := strings.LastIndex(pe.TableName, "_p")
	if i < 0 || i+2 == len(pe.TableName) || strings.Trim(pe.TableName[i+2:], "0123456789") != "" || !strings.HasPrefix(pe.ConstraintName, pe.TableName+"_") {
		return false
	}
	cols := strings.TrimPrefix(pe.ConstraintName, pe.TableName+"_")
	return strings.HasPrefix(pe.TableName[:i]+"_"+cols, constraint+"_")
}

func nullString(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// cols are the arrays the insert statements unnest: each message's id,
// role, body, searchable text and its words.
type cols struct {
	ids, roles   []string
	bodies       [][]byte
	texts, words []string
	// The blobs of all rows, each once, and the references: the index of
	// the row, the byte of its body and the blob.
	hashes  []string
	blobs   [][]byte
	refRow  []int64
	refOff  []int32
	refHash []string
	// The usage index's rows (usage.go): the index of the row and its
	// usage, cost -1 for none.
	uRow, uAt                []int64
	uModel                   []string
	uIn, uOut, uCR, uCW, uRe []int64
	uCost                    []int64
}

// mediaCTEs insert the blobs ($a: hashes, $a+1: data) and references
// ($a+2: row index, $a+3: byte, $a+4: hash) of cols into the messages of
// CTE c (pk, first). ON CONFLICT DO UPDATE locks each existing blob until
// the transaction ends, so a concurrent removal of its last reference waits
// and then sees the new one (the triggers of migration 3 count them).
func mediaCTEs(a int) string {
	return fmt.Sprintf(`, b AS (
	INSERT INTO blobs (hash, refs, data) SELECT u.h, 0, u.d FROM c, unnest($%d::text[], $%d::bytea[]) AS u (h, d)
	ON CONFLICT (hash) DO UPDATE SET refs = blobs.refs
), f AS (
	INSERT INTO media_refs ({tenant,}conv, pos, off, hash)
	SELECT {c.tenant,}c.pk, c.first + u.i, u.off, u.h FROM c, unnest($%d::bigint[], $%d::integer[], $%d::text[]) AS u (i, off, h)
)`, a, a+1, a+2, a+3, a+4)
}

// columns splits rows into the arrays the insert statements unnest.
func columns(rows []backend.Row) cols {
	c := cols{ids: make([]string, len(rows)), roles: make([]string, len(rows)), bodies: make([][]byte, len(rows)),
		texts: make([]string, len(rows)), words: make([]string, len(rows))}
	for i, r := range rows {
		c.ids[i], c.roles[i], c.bodies[i], c.texts[i] = r.ID, string(r.Role), r.Body, r.Text
		c.words[i] = strings.Join(backend.Words(r.Text), " ")
		for _, b := range r.Blobs {
			if !slices.Contains(c.hashes, b.Hash) {
				c.hashes, c.blobs = append(c.hashes, b.Hash), append(c.blobs, b.Data)
			}
		}
		for _, m := range r.Media {
			c.refRow, c.refOff, c.refHash = append(c.refRow, int64(i)), append(c.refOff, int32(m.Off)), append(c.refHash, m.Hash)
		}
		c.addUsage(i, r.Usage)
	}
	return c
}

// createConv inserts a conversation and its first messages in one
// statement (a template of newQueries).
var createConv = `WITH c AS (
	INSERT INTO conversations (tenant, id, title, meta, version, messages, next_pos, open_calls, forked_from, forked_at, created, updated)
	VALUES ($1, $2, $3, $4, 1, $5::integer, $5::integer, $6, '', 0, $7, $7)
	RETURNING pk, 0::bigint AS first, tenant
), m AS (
	INSERT INTO messages ({tenant,}conv, pos, id, role, body, text, words)
	SELECT {c.tenant,}c.pk, r.ord - 1, r.id, r.role, r.body, r.text, to_tsvector('simple', r.words)
	FROM c, unnest($8::text[], $9::text[], $10::bytea[], $11::text[], $12::text[]) WITH ORDINALITY AS r (id, role, body, text, words, ord)
)` + mediaCTEs(13) + usageCTE(18) + `
SELECT pk FROM c`

// Fork's copies of the messages and media references of conversation $2
// (the first $3 messages) into conversation $1 of the same tenant.
// Templates of newQueries.
const (
	forkMessages = `INSERT INTO messages ({tenant,}conv, pos, id, role, body, text, words)
	SELECT {tenant,}$1, pos, id, role, body, text, words FROM messages WHERE conv = $2 ORDER BY pos LIMIT $3`
	forkMedia = `INSERT INTO media_refs ({tenant,}conv, pos, off, hash)
	SELECT {r.tenant,}$1, r.pos, r.off, r.hash FROM media_refs r JOIN messages m ON m.conv = $1 AND m.pos = r.pos WHERE r.conv = $2`
)

// queries are the statements that differ between the two layouts: those
// that insert the rows a conversation owns, which carry its tenant, the
// partition key, when the tables are partitioned. In the templates,
// {tenant,} {c.tenant,} and {r.tenant,} stand for that column, or nothing.
type queries struct {
	createConv, appendRows, forkMessages, forkMedia string
}

// layouts are the statements of the unpartitioned layout and of the
// partitioned one.
var layouts = [2]*queries{newQueries(false), newQueries(true)}

func newQueries(partitioned bool) *queries {
	r := strings.NewReplacer("{tenant,}", "", "{c.tenant,}", "", "{r.tenant,}", "")
	if partitioned {
		r = strings.NewReplacer("{tenant,}", "tenant, ", "{c.tenant,}", "c.tenant, ", "{r.tenant,}", "r.tenant, ")
	}
	return &queries{createConv: r.Replace(createConv), appendRows: r.Replace(appendRows),
		forkMessages: r.Replace(forkMessages), forkMedia: r.Replace(forkMedia)}
}

// Create stores a new conversation.
func (s *Store) Create(ctx context.Context, c store.Conversation, msgs ...convo.Message) (store.Conversation, error) {
	cr, err := backend.PrepareCreate(c, msgs, 0)
	if err != nil {
		return store.Conversation{}, err
	}
	c, rows := cr.Conversation, cr.Rows
	cl := columns(rows)
	var pk int64
	err = s.pool.QueryRow(ctx, s.q.createConv, cl.withUsage(c.Tenant, c.ID, c.Title, nullString(c.Meta), len(rows),
		nullString(cr.Open), c.Created, cl.ids, cl.roles, cl.bodies, cl.texts, cl.words,
		cl.hashes, cl.blobs, cl.refRow, cl.refOff, cl.refHash)...).Scan(&pk)
	if uniqueViolation(err, "conversations_tenant_id") {
		return store.Conversation{}, fmt.Errorf("conversation %q: %w", c.ID, store.ErrExists)
	}
	if err != nil {
		return store.Conversation{}, wrap(err)
	}
	return c, nil
}

// Get returns a conversation's description.
func (s *Store) Get(ctx context.Context, tenant, id string) (store.Conversation, error) {
	if err := backend.Find(tenant, id); err != nil {
		return store.Conversation{}, err
	}
	r, err := getConv(ctx, s.pool, selectConv, tenant, id)
	return r.Conversation, err
}

// Update changes a conversation's title and metadata in one statement.
func (s *Store) Update(ctx context.Context, tenant, id string, title *string, meta json.RawMessage) (store.Conversation, error) {
	u, err := backend.PrepareUpdate(tenant, id, title, meta)
	if err != nil {
		return store.Conversation{}, err
	}
	r, err := scanConv(s.pool.QueryRow(ctx, `UPDATE conversations SET
		title = coalesce($3, title),
		meta = CASE WHEN $5 THEN NULL ELSE coalesce($4, meta) END,
		updated = greatest(updated, $6)
		WHERE tenant = $1 AND id = $2
		RETURNING `+convCols, tenant, id, title, nullString(u.Meta), u.Clear, backend.Now()))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Conversation{}, backend.NotFound(id)
	}
	return r.Conversation, wrap(err)
}

// appendRows bumps the version of conversation $1 if it still is $2 and
// inserts the messages after its last one, in one statement: both happen
// or neither. No row back means the version moved (or the conversation is
// gone). A template of newQueries.
var appendRows = `WITH c AS (
	UPDATE conversations SET version = version + 1, messages = messages + $3::integer, next_pos = next_pos + $3::integer,
		open_calls = $4, updated = greatest(updated, $5)
	WHERE pk = $1 AND version = $2
	RETURNING pk, next_pos - $3::integer AS first, version, messages, updated, tenant
), m AS (
	INSERT INTO messages ({tenant,}conv, pos, id, role, body, text, words)
	SELECT {c.tenant,}c.pk, c.first + r.ord - 1, r.id, r.role, r.body, r.text, to_tsvector('simple', r.words)
	FROM c, unnest($6::text[], $7::text[], $8::bytea[], $9::text[], $10::text[]) WITH ORDINALITY AS r (id, role, body, text, words, ord)
)` + mediaCTEs(11) + usageCTE(16) + `
SELECT version, messages, updated FROM c`

// Append adds messages at the end if the version still is version.
func (s *Store) Append(ctx context.Context, tenant, id string, version int64, msgs ...convo.Message) (store.Conversation, error) {
	h, rows, err := backend.PrepareAppend(tenant, id, msgs, 0)
	if err != nil {
		return store.Conversation{}, err
	}
	cl := columns(rows)
	for {
		r, err := getConv(ctx, s.pool, selectConv, tenant, id)
		if err != nil {
			return store.Conversation{}, err
		}
		if err := backend.CheckVersion(id, r.Version, version); err != nil {
			return store.Conversation{}, err
		}
		if len(rows) == 0 {
			return r.Conversation, nil
		}
		after, err := backend.CheckAppend(r.open, h)
		if err != nil {
			return store.Conversation{}, err
		}
		out := r.Conversation
		err = s.pool.QueryRow(ctx, s.q.appendRows, cl.withUsage(r.pk, r.Version, len(rows), nullString(after),
			backend.Now(), cl.ids, cl.roles, cl.bodies, cl.texts, cl.words,
			cl.hashes, cl.blobs, cl.refRow, cl.refOff, cl.refHash)...).Scan(&out.Version, &out.Messages, &out.Updated)
		switch {
		case err == nil:
			out.Updated = out.Updated.UTC()
			return out, nil
		case uniqueViolation(err, "messages_conv_id"):
			return store.Conversation{}, fmt.Errorf("a message id of conversation %q: %w", id, store.ErrExists)
		case !errors.Is(err, pgx.ErrNoRows):
			return store.Conversation{}, wrap(err)
		}
		// Someone else changed the conversation between the read and the
		// write (or deleted it: the next read says so).
		if version != store.AnyVersion {
			if _, err := getConv(ctx, s.pool, selectConv, tenant, id); err != nil {
				return store.Conversation{}, err
			}
			return store.Conversation{}, fmt.Errorf("conversation %q changed from version %d: %w", id, version, store.ErrConflict)
		}
	}
}

// Load returns the messages from index from on and the description, read
// in one repeatable-read transaction so the two agree.
func (s *Store) Load(ctx context.Context, tenant, id string, from int) (convo.History, store.Conversation, error) {
	return s.LoadRange(ctx, tenant, id, from, -1)
}

// LoadRange returns at most n messages (n < 0: all) from index from on and
// the description, read in one repeatable-read transaction so the two
// agree. It reads only those messages: while no message has been deleted,
// a message's position is its index and the range is one index scan.
func (s *Store) LoadRange(ctx context.Context, tenant, id string, from, n int) (convo.History, store.Conversation, error) {
	if err := backend.CheckLoad(tenant, id, from); err != nil {
		return nil, store.Conversation{}, err
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, store.Conversation{}, wrap(err)
	}
	defer tx.Rollback(context.Background())
	r, err := getConv(ctx, tx, selectConv, tenant, id)
	if err != nil {
		return nil, store.Conversation{}, err
	}
	n = backend.Span(from, n, r.Messages)
	if n <= 0 {
		return convo.History{}, r.Conversation, wrap(tx.Commit(ctx))
	}
	lo, hi := int64(0), r.nextPos
	if int64(r.Messages) == r.nextPos {
		lo, hi = int64(from), int64(from+n-1)
	}
	media, err := loadMedia(ctx, tx, r.pk, lo, hi)
	if err != nil {
		return nil, store.Conversation{}, err
	}
	var rows pgx.Rows
	if int64(r.Messages) == r.nextPos {
		// Positions 0…Messages-1 are all taken: position is index.
		rows, err = tx.Query(ctx, `SELECT pos, body FROM messages WHERE conv = $1 AND pos >= $2 AND pos < $3 ORDER BY pos`, r.pk, from, from+n)
	} else {
		rows, err = tx.Query(ctx, `SELECT pos, body FROM messages WHERE conv = $1 ORDER BY pos LIMIT $2 OFFSET $3`, r.pk, n, from)
	}
	if err != nil {
		return nil, store.Conversation{}, wrap(err)
	}
	l := backend.NewLoader(id, n)
	var pos int64
	var body []byte
	_, err = pgx.ForEachRow(rows, []any{&pos, &body}, func() error {
		b, err := media.Restore(body, id, pos)
		if err != nil {
			return err
		}
		return l.Add(b, pos)
	})
	if err != nil {
		return nil, store.Conversation{}, wrap(err)
	}
	h, err := l.History()
	if err != nil {
		return nil, store.Conversation{}, err
	}
	return h, r.Conversation, wrap(tx.Commit(ctx))
}

// Message returns one message by its id.
func (s *Store) Message(ctx context.Context, tenant, id, messageID string) (convo.Message, error) {
	if err := backend.FindMessage(tenant, id, messageID); err != nil {
		return convo.Message{}, err
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return convo.Message{}, wrap(err)
	}
	defer tx.Rollback(context.Background())
	var pk, pos int64
	var body []byte
	err = tx.QueryRow(ctx, `SELECT m.conv, m.pos, m.body FROM conversations c JOIN messages m ON m.conv = c.pk
		WHERE c.tenant = $1 AND c.id = $2 AND m.id = $3`, tenant, id, messageID).Scan(&pk, &pos, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return convo.Message{}, backend.MessageNotFound(id, messageID)
	}
	if err != nil {
		return convo.Message{}, wrap(err)
	}
	media, err := loadMedia(ctx, tx, pk, pos, pos)
	if err != nil {
		return convo.Message{}, err
	}
	if body, err = media.Restore(body, id, pos); err != nil {
		return convo.Message{}, err
	}
	return backend.Decode(body, id, pos)
}

// loadMedia reads the media of conversation pk's messages at positions lo
// to hi: only through its messages, so a tenant reads no blob it does not
// hold.
func loadMedia(ctx context.Context, tx pgx.Tx, pk, lo, hi int64) (*backend.Media, error) {
	m := &backend.Media{Refs: map[int64][]backend.MediaRef{}, Data: map[string][]byte{}}
	rows, err := tx.Query(ctx, `SELECT pos, off, hash FROM media_refs WHERE conv = $1 AND pos >= $2 AND pos <= $3 ORDER BY pos, off`, pk, lo, hi)
	if err != nil {
		return nil, wrap(err)
	}
	var pos int64
	var off int32
	var hash string
	if _, err := pgx.ForEachRow(rows, []any{&pos, &off, &hash}, func() error {
		m.Refs[pos] = append(m.Refs[pos], backend.MediaRef{Off: int(off), Hash: hash})
		return nil
	}); err != nil {
		return nil, wrap(err)
	}
	if len(m.Refs) == 0 {
		return m, nil
	}
	rows, err = tx.Query(ctx, `SELECT hash, data FROM blobs WHERE hash IN
		(SELECT DISTINCT hash FROM media_refs WHERE conv = $1 AND pos >= $2 AND pos <= $3)`, pk, lo, hi)
	if err != nil {
		return nil, wrap(err)
	}
	var data []byte
	if _, err := pgx.ForEachRow(rows, []any{&hash, &data}, func() error {
		m.Data[hash] = slices.Clone(data)
		return nil
	}); err != nil {
		return nil, wrap(err)
	}
	return m, nil
}

// tail returns the open tool calls at the end of conversation pk: the
// calls of its last message that is not a tool message, minus the results
// after it.
func tail(ctx context.Context, q querier, pk int64, id string) ([]backend.Call, error) {
	rows, err := q.Query(ctx, `SELECT pos, body FROM messages WHERE conv = $1
		AND pos >= (SELECT coalesce(max(pos), 0) FROM messages WHERE conv = $1 AND role <> 'tool')
		ORDER BY pos`, pk)
	if err != nil {
		return nil, wrap(err)
	}
	var h convo.History
	var pos int64
	var body []byte
	_, err = pgx.ForEachRow(rows, []any{&pos, &body}, func() error {
		m, err := backend.Decode(body, id, pos)
		h = append(h, m)
		return err
	})
	if err != nil {
		return nil, wrap(err)
	}
	return backend.OpenCalls(h), nil
}

// DeleteMessage removes one message, with the version check of Append.
func (s *Store) DeleteMessage(ctx context.Context, tenant, id string, version int64, messageID string) (store.Conversation, error) {
	if err := backend.FindMessage(tenant, id, messageID); err != nil {
		return store.Conversation{}, err
	}
	var out store.Conversation
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		r, err := getConv(ctx, tx, selectConv+` FOR UPDATE`, tenant, id)
		if err != nil {
			return err
		}
		if err := backend.CheckVersion(id, r.Version, version); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM messages WHERE conv = $1 AND id = $2`, r.pk, messageID)
		if err != nil {
			return wrap(err)
		}
		if tag.RowsAffected() == 0 {
			return backend.MessageNotFound(id, messageID)
		}
		open, err := tail(ctx, tx, r.pk, id)
		if err != nil {
			return err
		}
		out = r.Conversation
		err = tx.QueryRow(ctx, `UPDATE conversations SET version = version + 1, messages = messages - 1,
			open_calls = $2, updated = greatest(updated, $3) WHERE pk = $1 RETURNING version, messages, updated`,
			r.pk, nullString(backend.MarshalCalls(open)), backend.Now()).Scan(&out.Version, &out.Messages, &out.Updated)
		out.Updated = out.Updated.UTC()
		return wrap(err)
	})
	if err != nil {
		return store.Conversation{}, err
	}
	return out, nil
}

// Fork creates a new conversation holding the first at messages of id. The
// original's row is locked (FOR SHARE) meanwhile, so no append or deletion
// changes what is copied.
func (s *Store) Fork(ctx context.Context, tenant, id string, at int, c store.Conversation) (store.Conversation, error) {
	if err := backend.Find(tenant, id); err != nil {
		return store.Conversation{}, err
	}
	c.Tenant = tenant
	c, err := backend.NewConversation(c)
	if err != nil {
		return store.Conversation{}, err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		src, err := getConv(ctx, tx, selectConv+` FOR SHARE`, tenant, id)
		if err != nil {
			return err
		}
		if at < 0 || at > src.Messages {
			return fmt.Errorf("%w: fork at %d of %d messages", store.ErrInvalid, at, src.Messages)
		}
		if c.Title == "" {
			c.Title = src.Title
		}
		if c.Meta == nil {
			c.Meta = src.Meta
		}
		now := backend.Now()
		c.Version, c.Messages, c.ForkedFrom, c.ForkedAt, c.Created, c.Updated = 1, at, src.ID, at, now, now
		var pk int64
		err = tx.QueryRow(ctx, `INSERT INTO conversations
			(tenant, id, title, meta, version, messages, next_pos, forked_from, forked_at, created, updated)
			VALUES ($1, $2, $3, $4, 1, $5::integer, 0, $6, $5::integer, $7, $7) RETURNING pk`,
			c.Tenant, c.ID, c.Title, nullString(c.Meta), at, src.ID, now).Scan(&pk)
		if uniqueViolation(err, "conversations_tenant_id") {
			return fmt.Errorf("conversation %q: %w", c.ID, store.ErrExists)
		}
		if err != nil {
			return wrap(err)
		}
		if _, err := tx.Exec(ctx, s.q.forkMessages, pk, src.pk, at); err != nil {
			return wrap(err)
		}
		// The copies reference the same blobs; locking them first keeps a
		// concurrent last delete from removing one under the new reference.
		if _, err := tx.Exec(ctx, `SELECT 1 FROM blobs WHERE hash IN
			(SELECT r.hash FROM media_refs r JOIN messages m ON m.conv = $1 AND m.pos = r.pos WHERE r.conv = $2) FOR UPDATE`, pk, src.pk); err != nil {
			return wrap(err)
		}
		if _, err := tx.Exec(ctx, s.q.forkMedia, pk, src.pk); err != nil {
			return wrap(err)
		}
		open, err := tail(ctx, tx, pk, c.ID)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE conversations SET open_calls = $2,
			next_pos = (SELECT coalesce(max(pos) + 1, 0) FROM messages WHERE conv = $1) WHERE pk = $1`,
			pk, nullString(backend.MarshalCalls(open)))
		return wrap(err)
	})
	if err != nil {
		return store.Conversation{}, err
	}
	return c, nil
}

// The list queries, from the start and after a cursor. The metadata filter
// keeps rows whose metadata has every member of $3 with an equal jsonb
// value. A filter with a member the index of metadata holds
// (backend.Filter.Indexed, the two parameters after the others) reads only
// the conversations having it; any other reads the tenant's conversations
// by the index on (tenant, created, id), turning down those whose text
// lacks the filter's needle $5 (backend.Filter.Needle), and has no
// backslash, before their metadata is parsed.
const (
	listWhere = `tenant = $1 AND ($2 = '' OR strpos(lower(title), lower($2)) > 0)
		AND ($3::text IS NULL OR (($5 = '' OR strpos(meta, $5) > 0 OR strpos(meta, '\') > 0) AND NOT EXISTS (
			SELECT 1 FROM jsonb_each($3::jsonb) f WHERE (meta::jsonb) -> f.key IS DISTINCT FROM f.value)))`
	listIndexed = ` FROM meta_values JOIN conversations ON pk = conv WHERE key = $6 AND value = $7 AND `
	listIxAfter = ` FROM meta_values JOIN conversations ON pk = conv WHERE key = $8 AND value = $9 AND `
	listOrder   = ` ORDER BY created DESC, id DESC LIMIT $4`
	listAfterAt = ` AND (created, id) < ($6, $7)`
	listFirst   = `SELECT ` + convCols + ` FROM conversations WHERE ` + listWhere + listOrder
	listAfter   = `SELECT ` + convCols + ` FROM conversations WHERE ` + listWhere + listAfterAt + listOrder
	listFirstIx = `SELECT ` + convCols + listIndexed + listWhere + listOrder
	listAfterIx = `SELECT ` + convCols + listIxAfter + listWhere + listAfterAt + listOrder
)

var listQueries = backend.ListQueries{First: listFirst, After: listAfter, FirstIndexed: listFirstIx, AfterIndexed: listAfterIx}

// List returns a page of the tenant's conversations, newest first.
func (s *Store) List(ctx context.Context, tenant string, opts store.ListOptions) ([]store.Conversation, string, error) {
	limit, err := backend.Limit(opts.Limit)
	if err != nil {
		return nil, "", err
	}
	cur, after, err := backend.ParseCursor(opts.After)
	if err != nil {
		return nil, "", err
	}
	filter, err := backend.ParseFilter(opts.Meta)
	if err != nil {
		return nil, "", err
	}
	if !backend.Findable(tenant, opts.Title) {
		return nil, "", nil // no conversation has such a tenant or title
	}
	var meta *string
	if filter != nil {
		m, _, _ := backend.Meta(opts.Meta)
		meta = nullString(m)
	}
	args := []any{tenant, opts.Title, meta, limit + 1, filter.Needle()}
	key, value, indexed := filter.Indexed()
	query := listQueries.Pick(indexed, after)
	if after {
		args = append(args, cur.Created, cur.ID)
	}
	if indexed {
		args = append(args, key, value)
	}
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, "", wrap(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Conversation, error) {
		c, err := scanConv(r)
		return c.Conversation, err
	})
	if err != nil {
		return nil, "", wrap(err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		last := out[limit-1]
		next = backend.Cursor{Created: last.Created, ID: last.ID}.String()
	}
	return out, next, nil
}

// Delete removes a conversation; its messages go with it (ON DELETE
// CASCADE).
func (s *Store) Delete(ctx context.Context, tenant, id string) error {
	if err := backend.Find(tenant, id); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM conversations WHERE tenant = $1 AND id = $2`, tenant, id)
	if err != nil {
		return wrap(err)
	}
	if tag.RowsAffected() == 0 {
		return backend.NotFound(id)
	}
	return nil
}

// indexStored fills in the search columns of the messages stored before
// migration 2, a thousand at a time.
func indexStored(ctx context.Context, tx pgx.Tx) error {
	var conv, pos int64 = -1, -1
	for {
		rows, err := tx.Query(ctx, `SELECT conv, pos, body FROM messages WHERE (conv, pos) > ($1, $2)
			ORDER BY conv, pos LIMIT 1000`, conv, pos)
		if err != nil {
			return err
		}
		var convs, poss []int64
		var texts, words []string
		var body []byte
		_, err = pgx.ForEachRow(rows, []any{&conv, &pos, &body}, func() error {
			m, err := backend.Decode(body, strconv.FormatInt(conv, 10), pos)
			if err != nil {
				return err
			}
			t := backend.SearchText(m)
			convs, poss = append(convs, conv), append(poss, pos)
			texts, words = append(texts, t), append(words, strings.Join(backend.Words(t), " "))
			return nil
		})
		if err != nil || len(convs) == 0 {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE messages m SET text = u.text, words = to_tsvector('simple', u.words)
			FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[]) AS u (conv, pos, text, words)
			WHERE m.conv = u.conv AND m.pos = u.pos`, convs, poss, texts, words); err != nil {
			return err
		}
	}
}

// The search query: the tenant's messages whose words hold every query
// word ($2, words separated by spaces), newest conversation first, from
// the last message back. The GIN index finds the matches; $4 and $5 are
// the cursor (NULL on the first page).
const searchQuery = `SELECT c.pk, c.id, c.tenant, c.title, c.meta, c.version, c.messages, c.next_pos, c.open_calls,
	c.forked_from, c.forked_at, c.created, c.updated, m.pos, m.id, m.role, m.text,
	(SELECT count(*) FROM messages x WHERE x.conv = m.conv AND x.pos < m.pos)
	FROM messages m JOIN conversations c ON c.pk = m.conv
	WHERE c.tenant = $1 AND m.words @@ plainto_tsquery('simple', $2)
	AND ($4::bigint IS NULL OR (m.conv, m.pos) < ($4::bigint, $5::bigint))
	ORDER BY m.conv DESC, m.pos DESC LIMIT $3`

// Search finds the tenant's messages that hold every word of query.
func (s *Store) Search(ctx context.Context, tenant, query string, opts store.SearchOptions) ([]store.Hit, string, error) {
	q, ok, err := backend.ParseSearch(tenant, query, opts)
	if err != nil || !ok {
		return nil, "", err
	}
	var curConv, curPos *int64
	if q.After != nil {
		curConv, curPos = &q.After.Conv, &q.After.Pos
	}
	rows, err := s.pool.Query(ctx, searchQuery, tenant, strings.Join(q.Words, " "), q.Limit+1, curConv, curPos)
	if err != nil {
		return nil, "", wrap(err)
	}
	defer rows.Close()
	var out []store.Hit
	var last backend.SearchCursor
	for rows.Next() {
		if len(out) == q.Limit {
			return out, last.String(), nil
		}
		var r row
		var meta, open *string
		var pos int64
		var index int
		var id, role, text string
		err := rows.Scan(&r.pk, &r.ID, &r.Tenant, &r.Title, &meta, &r.Version, &r.Messages, &r.nextPos, &open,
			&r.ForkedFrom, &r.ForkedAt, &r.Created, &r.Updated, &pos, &id, &role, &text, &index)
		if err != nil {
			return nil, "", wrap(err)
		}
		if meta != nil {
			r.Meta = json.RawMessage(*meta)
		}
		r.Created, r.Updated = r.Created.UTC(), r.Updated.UTC()
		out = append(out, q.Hit(r.Conversation, id, index, role, text))
		last = backend.SearchCursor{Conv: r.pk, Pos: pos}
	}
	if err := rows.Err(); err != nil {
		return nil, "", wrap(err)
	}
	return out, "", nil
}

// ExpireContent replaces the conversation's messages by their metadata
// (store.WithoutContent), empties their search columns and records when in
// its metadata (store.ContentExpiredKey), in one transaction. The version
// moves; Updated does not, so metadata retention still counts from the
// last change a client made.
func (s *Store) ExpireContent(ctx context.Context, tenant, id string, at time.Time) (store.Conversation, error) {
	if err := backend.Find(tenant, id); err != nil {
		return store.Conversation{}, err
	}
	var out store.Conversation
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		r, err := getConv(ctx, tx, selectConv+` FOR UPDATE`, tenant, id)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT pos, body FROM messages WHERE conv = $1 ORDER BY pos`, r.pk)
		if err != nil {
			return wrap(err)
		}
		var poss []int64
		var bodies [][]byte
		var pos int64
		var body []byte
		_, err = pgx.ForEachRow(rows, []any{&pos, &body}, func() error {
			nb, changed, err := backend.Expired(body, id, pos)
			if changed {
				poss, bodies = append(poss, pos), append(bodies, nb)
			}
			return err
		})
		if err != nil {
			return wrap(err)
		}
		if _, err := tx.Exec(ctx, `UPDATE messages m SET body = u.body, text = '', words = to_tsvector('simple', '')
			FROM unnest($2::bigint[], $3::bytea[]) AS u (pos, body) WHERE m.conv = $1 AND m.pos = u.pos`, r.pk, poss, bodies); err != nil {
			return wrap(err)
		}
		out = r.Conversation
		out.Meta = backend.ExpiredMeta(r.Meta, at)
		err = tx.QueryRow(ctx, `UPDATE conversations SET meta = $2, version = version + 1 WHERE pk = $1 RETURNING version`,
			r.pk, string(out.Meta)).Scan(&out.Version)
		return wrap(err)
	})
	if err != nil {
		return store.Conversation{}, err
	}
	return out, nil
}

// errCreateRaced is a batch write's create that lost a race with another
// creator of the same conversation: the write is retried as an append.
var errCreateRaced = errors.New("created concurrently")

// Batch applies writes in one transaction. It locks the conversations it
// writes in the order of their tenant and id, so two batches that share
// conversations cannot deadlock; writes to one conversation keep their
// order. It first tries the writes plainly (batchPlain): the
// conversations locked and read in one query, and the writes sent in one
// more round trip. With a savepoint each, a write takes four or five round
// trips, which cost more than the commit itself on a quiet machine
// (bench/analysis.md, "Recording in batches"), and a gateway's writes
// rarely fail. When one fails, that transaction is rolled back and the
// batch is applied again with each write in a savepoint of its own, so a
// failing write leaves the others done.
func (s *Store) Batch(ctx context.Context, writes []store.Write) []store.WriteResult {
	res := make([]store.WriteResult, len(writes))
	ws := make([]backend.Write, len(writes))
	var order []int
	for i, sw := range writes {
		if ws[i], res[i].Err = backend.PrepareWrite(i, sw, 0, nil); res[i].Err == nil {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return res
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(strings.Compare(ws[a].Tenant, ws[b].Tenant), strings.Compare(ws[a].ID, ws[b].ID))
	})
	applied := func(i int) bool { return res[i].Err == nil }
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.batchPlain(ctx, tx, ws, order, res); err != nil {
			return err
		}
		return charge(ctx, tx, backend.Charges(ws, applied))
	})
	if err == nil {
		return res
	}
	if !errors.Is(err, errRetry) {
		for _, i := range order {
			res[i] = store.WriteResult{Err: wrap(err)}
		}
		return res
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, i := range order {
			c, err := s.batchOne(ctx, tx, &ws[i])
			var fatal fatalError
			if errors.As(err, &fatal) {
				return fatal.err
			}
			res[i].Conversation, res[i].Err = c, err
			if err != nil {
				res[i].Err = fmt.Errorf("writes[%d]: %w", i, err)
			}
		}
		return charge(ctx, tx, backend.Charges(ws, applied))
	})
	if err != nil {
		for _, i := range order {
			if res[i].Err == nil {
				res[i] = store.WriteResult{Err: wrap(err)}
			}
		}
	}
	return res
}

// batchPlain is a batch's first attempt, without savepoints: the
// conversations it writes are locked and read in one query, and the first
// write of each goes in one more round trip. The first write that fails
// ends it with errRetry.
func (s *Store) batchPlain(ctx context.Context, tx pgx.Tx, ws []backend.Write, order []int, res []store.WriteResult) error {
	locked, err := lockConvs(ctx, tx, ws, order)
	if err != nil {
		return err
	}
	// Each conversation's first write: all their statements go in one
	// round trip. A conversation's later writes follow, one by one, each
	// reading the row as the writes before it left it.
	b := &pgx.Batch{}
	seen := map[[2]string]bool{}
	var later []int
	for _, i := range order {
		k := [2]string{ws[i].Tenant, ws[i].ID}
		if seen[k] {
			later = append(later, i)
			continue
		}
		seen[k] = true
		r, ok := locked[k]
		if s.writeLocked(inBatch(b), &ws[i], r, ok, &res[i].Conversation) != nil {
			return errRetry
		}
	}
	if b.Len() > 0 && tx.SendBatch(ctx, b).Close() != nil {
		return errRetry
	}
	for _, i := range later {
		if res[i].Conversation, err = s.batchWrite(ctx, tx, &ws[i], ws[i].Create); err != nil {
			return errRetry
		}
	}
	return nil
}

// lockConvs locks, in one round trip, the conversations of writes that
// exist, in the order of their tenant and id (order's), and returns them
// by tenant and id.
func lockConvs(ctx context.Context, tx pgx.Tx, ws []backend.Write, order []int) (map[[2]string]row, error) {
	tenants, ids := make([]string, len(order)), make([]string, len(order))
	for j, i := range order {
		tenants[j], ids[j] = ws[i].Tenant, ws[i].ID
	}
	rows, err := tx.Query(ctx, lockConvsQuery, tenants, ids)
	if err != nil {
		return nil, wrap(err)
	}
	defer rows.Close()
	locked := map[[2]string]row{}
	for rows.Next() {
		r, err := scanConv(rows)
		if err != nil {
			return nil, wrap(err)
		}
		locked[[2]string{r.Tenant, r.ID}] = r
	}
	return locked, wrap(rows.Err())
}

// errRetry ends a batch's first attempt, without savepoints, when one of
// its writes fails.
var errRetry = errors.New("a write failed: retrying the batch with savepoints")

// fatalError is a failure of a batch's transaction itself (its savepoints),
// which ends the whole batch.
type fatalError struct{ err error }

func (e fatalError) Error() string { return e.err.Error() }

// batchOne applies one write of a batch in a savepoint, retrying a create
// that raced as an append.
func (s *Store) batchOne(ctx context.Context, tx pgx.Tx, w *backend.Write) (store.Conversation, error) {
	create := w.Create
	for {
		sp, err := tx.Begin(ctx) // SAVEPOINT
		if err != nil {
			return store.Conversation{}, fatalError{err}
		}
		c, err := s.batchWrite(ctx, sp, w, create)
		if err == nil {
			if err := sp.Commit(ctx); err != nil { // RELEASE
				return store.Conversation{}, fatalError{err}
			}
			return c, nil
		}
		if rerr := sp.Rollback(ctx); rerr != nil { // ROLLBACK TO
			return store.Conversation{}, fatalError{rerr}
		}
		if !errors.Is(err, errCreateRaced) || !create {
			return store.Conversation{}, err
		}
		create = false
	}
}

// batchWrite applies one write of a batch: creates the conversation (when
// create is set and it does not exist), or appends to it and sets its
// metadata.
func (s *Store) batchWrite(ctx context.Context, tx pgx.Tx, w *backend.Write, create bool) (store.Conversation, error) {
	r, err := getConv(ctx, tx, selectConv+` FOR UPDATE`, w.Tenant, w.ID)
	if errors.Is(err, store.ErrNotFound) && create {
		return s.createIn(atOnce(ctx, tx), w.New, w.H, w.Rows)
	}
	if err != nil {
		return store.Conversation{}, err
	}
	var out store.Conversation
	err = s.appendIn(atOnce(ctx, tx), w, r, &out)
	return out, err
}

// A rowQuery runs a statement that returns one row and scans the row with
// scan: at once (atOnce), or queued in a batch of statements sent
// together (inBatch), scan then running as the batch's results are read.
type rowQuery func(sql string, args []any, scan func(pgx.Row) error) error

func atOnce(ctx context.Context, tx pgx.Tx) rowQuery {
	return func(sql string, args []any, scan func(pgx.Row) error) error {
		return scan(tx.QueryRow(ctx, sql, args...))
	}
}

func inBatch(b *pgx.Batch) rowQuery {
	return func(sql string, args []any, scan func(pgx.Row) error) error {
		b.Queue(sql, args...).QueryRow(scan)
		return nil
	}
}

// writeLocked applies one write of a batch whose conversation's row r,
// when it exists, is locked and read already; out is the conversation
// after it, complete once q's statements have run.
func (s *Store) writeLocked(q rowQuery, w *backend.Write, r row, exists bool, out *store.Conversation) error {
	switch {
	case exists:
		return s.appendIn(q, w, r, out)
	case w.Create:
		c, err := s.createIn(q, w.New, w.H, w.Rows)
		*out = c
		return err
	}
	return backend.NotFound(w.ID)
}

// appendIn appends a write's messages to the locked conversation r and sets
// its metadata; out is the conversation after it, complete once q's
// statements have run.
func (s *Store) appendIn(q rowQuery, w *backend.Write, r row, out *store.Conversation) error {
	if err := backend.CheckVersion(r.ID, r.Version, w.Version); err != nil {
		return err
	}
	*out = r.Conversation
	if len(w.Rows) > 0 {
		open, err := backend.UnmarshalCalls(r.open)
		if err != nil {
			return err
		}
		after, err := backend.Check(open, w.H)
		if err != nil {
			return err
		}
		cl := columns(w.Rows)
		err = q(s.q.appendRows, cl.withUsage(r.pk, r.Version, len(w.Rows), nullString(backend.MarshalCalls(after)),
			backend.Now(), cl.ids, cl.roles, cl.bodies, cl.texts, cl.words,
			cl.hashes, cl.blobs, cl.refRow, cl.refOff, cl.refHash), func(row pgx.Row) error {
			err := row.Scan(&out.Version, &out.Messages, &out.Updated)
			if uniqueViolation(err, "messages_conv_id") {
				return fmt.Errorf("a message id of conversation %q: %w", r.ID, store.ErrExists)
			}
			out.Updated = out.Updated.UTC()
			return wrap(err)
		})
		if err != nil {
			return err
		}
	}
	if w.SetsMeta() {
		out.Meta = w.Meta
		return q(`UPDATE conversations SET meta = $2, updated = greatest(updated, $3) WHERE pk = $1 RETURNING updated`,
			[]any{r.pk, nullString(w.Meta), backend.Now()}, func(row pgx.Row) error {
				err := row.Scan(&out.Updated)
				out.Updated = out.Updated.UTC()
				return wrap(err)
			})
	}
	return nil
}

// createIn creates the conversation c (checked by backend.NewConversation)
// with the messages h, rows, for a write of a batch.
func (s *Store) createIn(q rowQuery, c store.Conversation, h convo.History, rows []backend.Row) (store.Conversation, error) {
	open, err := backend.Check(nil, h)
	if err != nil {
		return store.Conversation{}, err
	}
	now := backend.Now()
	c.Version, c.Messages, c.ForkedFrom, c.ForkedAt, c.Created, c.Updated = 1, len(rows), "", 0, now, now
	cl := columns(rows)
	err = q(s.q.createConv, cl.withUsage(c.Tenant, c.ID, c.Title, nullString(c.Meta), len(rows),
		nullString(backend.MarshalCalls(open)), now, cl.ids, cl.roles, cl.bodies, cl.texts, cl.words,
		cl.hashes, cl.blobs, cl.refRow, cl.refOff, cl.refHash), func(row pgx.Row) error {
		var pk int64
		err := row.Scan(&pk)
		switch {
		case uniqueViolation(err, "conversations_tenant_id"):
			return fmt.Errorf("conversation %q: %w", c.ID, errCreateRaced)
		case uniqueViolation(err, "messages_conv_id"):
			return fmt.Errorf("a message id of conversation %q: %w", c.ID, store.ErrExists)
		}
		return wrap(err)
	})
	if err != nil {
		return store.Conversation{}, err
	}
	return c, nil
}
