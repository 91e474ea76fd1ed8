// Package sqlite is the embedded store.Store: one SQLite file, through the
// pure-Go driver modernc.org/sqlite (no cgo).
//
// The database runs in WAL mode, so readers never wait for the writer.
// Writes in one process go through one connection, queued in Go rather than
// spinning on SQLite's lock; processes sharing a file wait for each other
// up to Options.BusyTimeout. With the default synchronous=FULL every
// acknowledged write has reached the disk (fsync of the WAL at each commit):
// it survives the process being killed and the machine losing power.
// synchronous=NORMAL survives a killed process but may lose the last
// commits on power loss, for about twice the write throughput.
//
// The schema is versioned by the embedded migrations/NNNN_name.sql files,
// applied in order when a store opens (table schema_migrations records
// them). Opening a database written by a newer convo is an error.
package sqlite

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/background"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/internal/backend"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// Options configure a store. The zero value is the recommended setting.
type Options struct {
	// Synchronous is SQLite's synchronous setting: "FULL" (the default:
	// durable across power loss), "NORMAL" (durable across crashes of the
	// process only) or "EXTRA".
	Synchronous string
	// BusyTimeout is how long a write waits for another process holding
	// the database's write lock (default 10 s).
	BusyTimeout time.Duration
	// Readers is how many connections serve reads at once (default
	// GOMAXPROCS, at least 2).
	Readers int
}

// Store is a store.Store in one SQLite file.
type Store struct {
	w    *sql.DB   // the one writing connection
	wc   *sql.Conn // w's connection, held by writer for the store's life
	r    *sql.DB   // read-only connections
	rdsn string    // their data source name
	wp   prepared  // statements prepared on wc
	rp   prepared  // statements prepared on r
	path string
	// staged is Batch's stage on the writer, kept for its arrays.
	staged stage
	arena  atomic.Pointer[backend.Arena] // Batch's, between batches

	ops        chan *op      // writes for the writer
	quit       chan struct{} // closed by Close
	writerDone chan struct{} // closed when the writer has stopped
	closeOnce  sync.Once
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if need be) the database file at path with the
// default Options and brings its schema up to date.
func Open(ctx context.Context, path string) (*Store, error) { return Options{}.Open(ctx, path) }

// Open opens the database file at path with options o.
func (o Options) Open(ctx context.Context, path string) (*Store, error) {
	syncMode, busy, readers, err := o.settings()
	if err != nil {
		return nil, err
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("sqlite: %q: want the path of a database file", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	registerFuncs()

	params := func(extra ...string) string {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous("+syncMode+")")
		for i := 0; i < len(extra); i += 2 {
			q.Add(extra[i], extra[i+1])
		}
		// A URI, so that no character of the path is taken for a parameter.
		return (&url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}).String()
	}
	// The writer keeps its savepoints' journal in memory: in a file,
	// writing each savepoint's pages there made BenchmarkRecord's batches
	// of 128 a quarter slower. Its statements sort nothing large.
	w, err := sql.Open("sqlite", params("_txlock", "immediate", "_pragma", "temp_store(MEMORY)"))
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &Store{w: w, path: abs}
	if err := s.migrate(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", path, err)
	}
	s.rdsn = params("_query_only", "1")
	r, err := sql.Open("sqlite", s.rdsn)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	r.SetConnMaxIdleTime(0)
	s.r = r
	// The writer holds its connection and runs its transactions with
	// statements of its own (BEGIN IMMEDIATE … COMMIT) rather than
	// through sql.Tx: a statement of a sql.Tx is a new sql.Stmt each
	// time, and a query of one starts a goroutine that watches the
	// transaction's context — a tenth of a recorded exchange's store
	// CPU in BenchmarkRecord, for a transaction nothing cancels.
	if s.wc, err = w.Conn(ctx); err == nil {
		if s.wp, err = prepare(ctx, s.wc, append(writeQueries, stagedQueries()...)); err == nil {
			s.rp, err = prepare(ctx, r, readQueries)
		}
	}
	if err != nil {
		s.wp.close()
		if s.wc != nil {
			s.wc.Close()
		}
		r.Close()
		w.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	s.ops, s.quit, s.writerDone = make(chan *op), make(chan struct{}), make(chan struct{})
	go s.writer()
	return s, nil
}

// settings returns o's synchronous mode, busy timeout and number of
// readers, the defaults filled in.
func (o Options) settings() (syncMode string, busy time.Duration, readers int, err error) {
	syncMode = strings.ToUpper(o.Synchronous)
	switch syncMode {
	case "":
		syncMode = "FULL"
	case "FULL", "NORMAL", "EXTRA":
	default:
		return "", 0, 0, fmt.Errorf("sqlite: synchronous %q: want FULL, NORMAL or EXTRA", o.Synchronous)
	}
	busy = o.BusyTimeout
	if busy <= 0 {
		busy = 10 * time.Second
	}
	readers = o.Readers
	if readers <= 0 {
		readers = max(2, runtime.GOMAXPROCS(0))
	}
	return syncMode, busy, readers, nil
}

// Close waits for the writes under way, then closes the database. Writes
// after Close fail.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.quit)
		<-s.writerDone
		err = errors.Join(s.rp.close(), s.wp.close(), s.wc.Close(), s.r.Close(), s.w.Close())
	})
	return err
}

// Path is the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// Check runs SQLite's integrity check of the whole file, and checks that
// the long bodies stored in pieces (migration 7) have all theirs.
//
// It checks on a connection of its own: a read connection that had run
// the check before kept the full-text index's state of then, and the
// check after a write there reported "fts5: checksum mismatch" for an
// index that was sound (TestCheckAfterWrite).
func (s *Store) Check(ctx context.Context) error {
	db, err := sql.Open("sqlite", s.rdsn)
	if err != nil {
		return fmt.Errorf("sqlite: integrity check: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var problems []string
	for _, q := range []string{`PRAGMA integrity_check`, checkChunks} {
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("sqlite: integrity check: %w", err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: integrity check: %w", err)
			}
			if line != "ok" {
				problems = append(problems, line)
			}
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("sqlite: integrity check: %w", err)
		}
	}
	if problems != nil {
		return fmt.Errorf("sqlite: integrity check: %s", strings.Join(problems, "; "))
	}
	return nil
}

// checkChunks names the messages whose empty body has no pieces, pieces
// not numbered 0, 1, 2…, pieces of no message with an empty body, and
// long texts (migration 10) of none either. (length() of a blob column
// reads no overflow page.)
const checkChunks = `SELECT 'message ' || m.conv || '/' || m.pos || ': an empty body without pieces' FROM messages m
	WHERE length(m.body) = 0 AND NOT EXISTS (SELECT 1 FROM body_chunks c WHERE c.conv = m.conv AND c.pos = m.pos)
UNION ALL
SELECT 'message ' || conv || '/' || pos || ': ' || count(*) || ' pieces numbered ' || min(seq) || ' to ' || max(seq) FROM body_chunks
	GROUP BY conv, pos HAVING min(seq) <> 0 OR max(seq) <> count(*) - 1
UNION ALL
SELECT 'message ' || c.conv || '/' || c.pos || ': pieces of no message with an empty body' FROM body_chunks c
	WHERE c.seq = 0 AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.conv = c.conv AND m.pos = c.pos AND length(m.body) = 0)
UNION ALL
SELECT 'message ' || t.conv || '/' || t.pos || ': a long text of no message with an empty body' FROM long_texts t
	WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.conv = t.conv AND m.pos = t.pos AND length(m.body) = 0)`

func (s *Store) migrate(ctx context.Context) error {
	all, err := backend.Migrations(migrationFS, "migrations")
	if err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: one process migrates at a time
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL) STRICT`); err != nil {
		return err
	}
	var applied int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&applied); err != nil {
		return err
	}
	pending, err := backend.Pending(all, applied)
	if err != nil {
		return err
	}
	for _, m := range pending {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, ?)`,
			m.Version, m.Name, backend.Now().UnixMicro()); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// SchemaVersion returns the version of the newest migration applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.r.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

// The columns of a conversation row, in the order scanConv reads them.
const convCols = `pk, id, tenant, title, meta, version, messages, next_pos, open_calls, forked_from, forked_at, created, updated`

// The statements of the store, prepared once when it opens: on the
// writing connection (writeQueries) or the read pool (readQueries).
const (
	selectConv    = `SELECT ` + convCols + ` FROM conversations WHERE tenant = ? AND id = ?`
	selectPK      = `SELECT pk FROM conversations WHERE tenant = ? AND id = ?`
	insertConvRow = `INSERT INTO conversations
		(tenant, id, title, meta, version, messages, next_pos, open_calls, forked_from, forked_at, created, updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	// insertNewConvRow is insertConvRow doing nothing when the id is
	// taken (see createIn).
	insertNewConvRow = insertConvRow + ` ON CONFLICT (tenant, id) DO NOTHING`
	insertMetaValue  = `INSERT OR IGNORE INTO meta_values (key, value, conv) VALUES (?, ?, ?)`
	deleteMetaValues = `DELETE FROM meta_values WHERE conv = ?`
	insertMessage    = `INSERT INTO messages (conv, pos, id, role, body) VALUES (?, ?, ?, ?, ?)`
	insertBlob       = `INSERT INTO blobs (hash, refs, data) VALUES (?, 0, ?) ON CONFLICT (hash) DO NOTHING`
	insertRef        = `INSERT INTO media_refs (conv, pos, off, hash) VALUES (?, ?, ?, ?)`
	copyRefs         = `INSERT INTO media_refs (conv, pos, off, hash)
		SELECT ?1, r.pos, r.off, r.hash FROM media_refs r JOIN messages m ON m.conv = ?1 AND m.pos = r.pos WHERE r.conv = ?2`
	// insertText's rowid is bound, not computed in SQL from ?1 and ?2:
	// the driver reads a numbered parameter's name (a string it
	// allocates) for each value bound.
	insertText  = `INSERT INTO messages_fts (rowid, text) VALUES (?, ?)`
	insertUsage = `INSERT INTO usage (conv, pos, tenant, at, model, input, output, cache_read, cache_write, reasoning, cost)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	updateTitle        = `UPDATE conversations SET title = ?, meta = ?, updated = ? WHERE pk = ?`
	updateAppended     = `UPDATE conversations SET version = ?, messages = ?, next_pos = ?, open_calls = ?, updated = ? WHERE pk = ?`
	updateAppendedMeta = `UPDATE conversations SET version = ?, messages = ?, next_pos = ?, open_calls = ?, updated = ?, meta = ? WHERE pk = ?`
	updateDeleted      = `UPDATE conversations SET version = ?, messages = ?, open_calls = ?, updated = ? WHERE pk = ?`
	updateForked       = `UPDATE conversations SET open_calls = ?,
		next_pos = (SELECT coalesce(max(pos) + 1, 0) FROM messages WHERE conv = ?) WHERE pk = ?`
	copyMessages = `INSERT INTO messages (conv, pos, id, role, body)
		SELECT ?, pos, id, role, body FROM messages WHERE conv = ? ORDER BY pos LIMIT ?`
	selectTail     = `SELECT pos, role, body FROM messages WHERE conv = ? ORDER BY pos DESC`
	deleteMessage  = `DELETE FROM messages WHERE conv = ? AND id = ? RETURNING pos`
	deleteText     = `DELETE FROM messages_fts WHERE rowid = (?1 << 32 | ?2)`
	deleteMessages = `DELETE FROM messages WHERE conv = ?`
	deleteTexts    = `DELETE FROM messages_fts WHERE rowid >= (?1 << 32) AND rowid < ((?1 + 1) << 32)`
	deleteConv     = `DELETE FROM conversations WHERE pk = ?`
	// The writer's transactions (see Store.commit).
	beginTx    = `BEGIN IMMEDIATE`
	commitTx   = `COMMIT`
	rollbackTx = `ROLLBACK`
	savepoint  = `SAVEPOINT convo_write`
	rollbackTo = `ROLLBACK TO convo_write`
	release    = `RELEASE convo_write`
	// The savepoints of one write of a Batch, inside the group's.
	batchSavepoint  = `SAVEPOINT convo_batch`
	batchRollbackTo = `ROLLBACK TO convo_batch`
	batchRelease    = `RELEASE convo_batch`

	loadMessages  = `SELECT pos, body FROM messages WHERE conv = ? ORDER BY pos LIMIT ? OFFSET ?`
	loadRange     = `SELECT pos, body FROM messages WHERE conv = ? AND pos >= ? AND pos < ? ORDER BY pos`
	selectMessage = `SELECT m.conv, m.pos, m.body FROM conversations c JOIN messages m ON m.conv = c.pk
		WHERE c.tenant = ? AND c.id = ? AND m.id = ?`
	// selectRefs and selectBlobs read the media of conversation ?1's
	// messages at positions ?2 to ?3: only through its messages, so a
	// tenant reads no blob it does not hold.
	selectRefs  = `SELECT pos, off, hash FROM media_refs WHERE conv = ?1 AND pos >= ?2 AND pos <= ?3 ORDER BY pos, off`
	selectBlobs = `SELECT hash, data FROM blobs WHERE hash IN
		(SELECT DISTINCT hash FROM media_refs WHERE conv = ?1 AND pos >= ?2 AND pos <= ?3)`
)

// A long body's pieces (see chunkBytes): inserted one a statement, read
// back in order, copied by a fork (forkChunks) beside copyMessages.
const (
	insertChunk = `INSERT INTO body_chunks (conv, pos, seq, data) VALUES (?, ?, ?, ?)`
	// selectChunks's second column is the body's length, the same on each
	// row (an uncorrelated subquery, run once): the pieces are joined
	// into one buffer of that size.
	selectChunks = `SELECT data, (SELECT sum(length(data)) FROM body_chunks WHERE conv = ?1 AND pos = ?2)
		FROM body_chunks WHERE conv = ?1 AND pos = ?2 ORDER BY seq`
	// The search text of a body in pieces (migration 10), which the
	// index does not keep and the body is too long to read for.
	insertLongText = `INSERT INTO long_texts (conv, pos, text) VALUES (?, ?, ?)`
	selectLongText = `SELECT text FROM long_texts WHERE conv = ? AND pos = ?`
	copyLongTexts  = `INSERT INTO long_texts (conv, pos, text)
		SELECT ?1, t.pos, t.text FROM long_texts t JOIN messages m ON m.conv = ?1 AND m.pos = t.pos WHERE t.conv = ?2
		RETURNING pos, text`
	// A fork copies the pieces of the long bodies copied into conversation
	// ?1 from ?2 one a statement: an INSERT … SELECT of a table into itself
	// first copies what it reads into a temporary table, which (in memory,
	// temp_store) would hold every copied body whole.
	selectChunkKeys = `SELECT c.pos, c.seq FROM body_chunks c JOIN messages m ON m.conv = ?1 AND m.pos = c.pos WHERE c.conv = ?2`
	copyChunk       = `INSERT INTO body_chunks (conv, pos, seq, data)
		SELECT ?1, pos, seq, data FROM body_chunks WHERE conv = ?2 AND pos = ?3 AND seq = ?4`
)

var (
	writeQueries = []string{selectConv, selectPK, insertConvRow, insertNewConvRow, insertMessage, insertText, updateTitle, updateAppended, updateAppendedMeta, updateDeleted,
		insertMetaValue, deleteMetaValues, updateForked, copyMessages, insertChunk, selectChunks, selectChunkKeys, copyChunk, insertLongText, copyLongTexts, insertUsage, insertBlob, insertRef, copyRefs, selectTail, deleteMessage, deleteText, deleteMessages, deleteTexts, deleteConv,
		beginTx, commitTx, rollbackTx, savepoint, rollbackTo, release, batchSavepoint, batchRollbackTo, batchRelease, chargeSpend}
	readQueries = []string{selectConv, selectChunks, selectLongText, loadMessages, loadRange, selectMessage, selectRefs, selectBlobs, listFirst, listAfter, listFirstIx, listAfterIx, searchFirst, searchAfter, selectSpent}
)

// prepared holds statements prepared on one pool, by their SQL.
type prepared map[string]*sql.Stmt

func prepare(ctx context.Context, db interface {
	PrepareContext(context.Context, string) (*sql.Stmt, error)
}, queries []string) (prepared, error) {
	p := prepared{}
	for _, q := range queries {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("preparing %.40q: %w", q, err)
		}
		p[q] = st
	}
	return p, nil
}

func (p prepared) close() error {
	var errs []error
	for _, st := range p {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

// ptx runs statements in a transaction, using the prepared ones: SQLite
// compiling each statement anew would be a quarter of an append's time.
// The transaction is a read transaction of the pool (tx), or the one the
// writer began on its connection (c, the statements prepared on it).
type ptx struct {
	tx    *sql.Tx
	c     *sql.Conn
	p     prepared
	texts *texts // the writer's: rows for the search index, inserted late
	stage *stage // a Batch's rows inserted at its end, when it runs its writes together
	// apart asks a Batch to run each write in a savepoint of its own
	// (see Store.commit and Batch).
	apart bool
}

// stmt returns q's prepared statement in the transaction, or nil.
func (t ptx) stmt(ctx context.Context, q string) *sql.Stmt {
	st := t.p[q]
	if st != nil && t.tx != nil {
		st = t.tx.StmtContext(ctx, st)
	}
	return st
}

// conn is what runs a statement that is not prepared.
func (t ptx) conn() queryer {
	if t.tx != nil {
		return t.tx
	}
	return t.c
}

func (t ptx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if t.texts != nil && t.texts.done < len(t.texts.rows) && readsIndex[q] {
		// The statement must see the rows added so far.
		if err := t.texts.flush(ctx, t); err != nil {
			return nil, err
		}
	}
	if err := t.unstage(ctx, q); err != nil {
		return nil, err
	}
	if st := t.stmt(ctx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.conn().ExecContext(ctx, q, args...)
}

// unstage inserts the rows staged before q runs, unless q can run before
// them (keepsStage).
func (t ptx) unstage(ctx context.Context, q string) error {
	if t.stage == nil || keepsStage[q] || t.stage.empty() {
		return nil
	}
	return t.stage.flush(ctx, t)
}

func (t ptx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	_ = t.unstage(ctx, q) // a failure stays the stage's (stage.err): its Batch runs again apart
	if st := t.stmt(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.conn().QueryRowContext(ctx, q, args...)
}

func (t ptx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if err := t.unstage(ctx, q); err != nil {
		return nil, err
	}
	if st := t.stmt(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.conn().QueryContext(ctx, q, args...)
}

// texts holds the search index's rows for the messages a transaction
// stores, to be inserted just before it commits. FTS5 writes the terms it
// holds in memory to disk at every savepoint, and the writer opens one per
// write of a group (and Batch one per write): inserted at once, each
// write's rows became a segment of their own, merged again later.
// Inserted together, and in key order (see flush), they are one segment.
// A statement that reads or
// deletes index rows (readsIndex) inserts those waiting first.
type texts struct {
	rows  []textRow
	done  int     // rows[:done] are in the index
	order []int32 // flush's: the rows waiting, by key
}

type textRow struct {
	conv, pos int64
	text      string
}

// A textMark is where texts stood when a savepoint was opened: rolling
// back to the savepoint takes the index back there too.
type textMark struct{ n, done int }

// readsIndex are the statements that read or delete the index's rows.
var readsIndex = map[string]bool{deleteText: true, deleteTexts: true}

func (t *texts) add(conv, pos int64, text string) {
	t.rows = append(t.rows, textRow{conv, pos, text})
}

func (t *texts) mark() textMark { return textMark{len(t.rows), t.done} }

// reset forgets the rows added after m, and counts those inserted after
// m as waiting again: the rollback to m's savepoint removed them.
func (t *texts) reset(m textMark) {
	clear(t.rows[m.n:])
	t.rows, t.done = t.rows[:m.n], m.done
}

// flush inserts the rows waiting, in the order of their keys (conv << 32
// | pos). FTS5 holds a transaction's new terms in memory and writes them
// out as one segment, but only while the rowids come in ascending order:
// a rowid below the last one writes out what it holds as a segment of its
// own first. In write order, a batch's continued conversations (older,
// lower keys) come among its new ones, each nearly a segment of its own,
// merged again later: most of the index's cost. The rows
// stay in write order (a savepoint's mark is a position among them); the
// order is kept in t.order.
func (t *texts) flush(ctx context.Context, tx ptx) error {
	if t.done == len(t.rows) {
		return nil
	}
	t.order = t.order[:0]
	for i := t.done; i < len(t.rows); i++ {
		t.order = append(t.order, int32(i))
	}
	slices.SortFunc(t.order, func(a, b int32) int {
		ra, rb := &t.rows[a], &t.rows[b]
		if c := cmp.Compare(ra.conv, rb.conv); c != 0 {
			return c
		}
		return cmp.Compare(ra.pos, rb.pos)
	})
	// One row a statement: a statement of many rows opens a savepoint of
	// the index's (it may fail half-way), and FTS5 writes out what it
	// holds at each savepoint.
	st := tx.stmt(ctx, insertText)
	for _, i := range t.order {
		r := &t.rows[i]
		if _, err := st.ExecContext(ctx, r.conv<<32|r.pos, r.text); err != nil {
			return wrap(err)
		}
	}
	t.done = len(t.rows)
	return nil
}

// ppool runs statements on a pool outside a transaction, prepared ones
// when they are.
type ppool struct {
	db *sql.DB
	p  prepared
}

func (d ppool) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if st := d.p[q]; st != nil {
		return st.ExecContext(ctx, args...)
	}
	return d.db.ExecContext(ctx, q, args...)
}

func (d ppool) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	if st := d.p[q]; st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return d.db.QueryRowContext(ctx, q, args...)
}

func (d ppool) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if st := d.p[q]; st != nil {
		return st.QueryContext(ctx, args...)
	}
	return d.db.QueryContext(ctx, q, args...)
}

// row is a conversation row: the description plus the bookkeeping only
// the backend sees.
type row struct {
	store.Conversation
	pk      int64
	nextPos int64
	open    []byte
}

type scanner interface{ Scan(...any) error }

func scanConv(sc scanner) (row, error) {
	var r row
	var meta, open []byte
	var created, updated int64
	err := sc.Scan(&r.pk, &r.ID, &r.Tenant, &r.Title, &meta, &r.Version, &r.Messages, &r.nextPos, &open,
		&r.ForkedFrom, &r.ForkedAt, &created, &updated)
	if err != nil {
		return r, err
	}
	if meta != nil {
		r.Meta = json.RawMessage(meta)
	}
	r.open = open
	r.Created = time.UnixMicro(created).UTC()
	r.Updated = time.UnixMicro(updated).UTC()
	return r, nil
}

// queryer is what a transaction and a database have in common.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func getConv(ctx context.Context, q queryer, tenant, id string) (row, error) {
	r, err := scanConv(q.QueryRowContext(ctx, selectConv, tenant, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, backend.NotFound(id)
	}
	if err != nil {
		return r, wrap(err)
	}
	return r, nil
}

// wrap names the backend in an error, keeping context errors as they are.
func wrap(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if busy(err) {
		return fmt.Errorf("sqlite: %w: %w", store.ErrUnavailable, err)
	}
	return fmt.Errorf("sqlite: %w", err)
}

// busy reports whether err is the database locked by another connection
// past the busy timeout: it passes when that connection is done.
func busy(err error) bool {
	var e *msqlite.Error
	return errors.As(err, &e) && (e.Code()&0xff == sqlite3.SQLITE_BUSY || e.Code()&0xff == sqlite3.SQLITE_LOCKED)
}

// Ping reports whether the database answers now (store.Pinger).
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return wrap(s.r.QueryRowContext(ctx, "SELECT 1").Scan(&one))
}

func isUnique(err error) bool {
	var e *msqlite.Error
	return errors.As(err, &e) && (e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

func nullString(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// write runs fn in a write transaction on the one writing connection and
// returns once the transaction has committed (or fn failed). Writes are
// committed in groups: while one group commits, the writes that arrive
// queue up, and the next transaction runs them all, each inside a
// savepoint of its own, so a write that fails leaves the others intact.
// One fsync then acknowledges the whole group, which is what lets many
// clients append faster than the disk syncs.
//
// fn must use the ctx it is given, not the caller's: a statement
// interrupted by its context would roll back the whole group's transaction.
// The caller's context counts until fn starts; a write canceled while it
// waits is never run.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context, tx ptx) error) error {
	// Ended already, the context must not race a free writer below: a
	// select picks at random among the cases ready.
	if err := ctx.Err(); err != nil {
		return err
	}
	o := &op{fn: fn, done: make(chan error, 1), background: store.Yields(ctx)}
	select {
	case s.ops <- o:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.quit:
		return errClosed
	}
	select {
	case err := <-o.done:
		return err
	case <-ctx.Done():
		if o.state.CompareAndSwap(opQueued, opCanceled) {
			return ctx.Err()
		}
		// Already running: its outcome is known soon, and the caller
		// should learn it rather than guess.
		return <-o.done
	}
}

var errClosed = errors.New("sqlite: store is closed")

// errApart is what a Batch run without savepoints returns when one of its
// writes fails: the writer runs it again, each write apart.
var errApart = errors.New("sqlite: a write of the batch failed: run the writes apart")

// An op is one write waiting for the writer.
type op struct {
	fn    func(ctx context.Context, tx ptx) error
	state atomic.Int32
	done  chan error
	// background: the write was made under store.Yielding, off any
	// request's path.
	background bool
}

const (
	opQueued = iota
	opRunning
	opCanceled
)

// maxGroup bounds the writes of one transaction.
const maxGroup = 256

// writer owns the writing connection: it takes whatever writes are waiting
// and commits them as one transaction.
//
// A group of writes that are all in the background (store.Yielding) is
// run on a thread that runs only when a processor has nothing else to run
// (package background, NewIdle): SQLite's work is done in this process,
// and on a machine of few cores a recording gateway's commits would
// otherwise compete with the replies being served for the processors. On
// a thread of nice 10 instead, a recorded reply's first byte at one
// stream came 0.04–0.26 ms later in bench/gateway; under load, when such a
// thread waits longest, the gateway's writer is behind and its writes are
// not in the background. The thread is started with the first such
// group.
func (s *Store) writer() {
	defer close(s.writerDone)
	bg := background.NewIdle()
	defer bg.Stop()
	var group []*op
	commit := func() { s.commit(group) } // of the group at the time
	for {
		group = nil
		select {
		case o := <-s.ops:
			group = append(group, o)
		case <-s.quit:
			return
		}
	more:
		for len(group) < maxGroup {
			select {
			case o := <-s.ops:
				group = append(group, o)
			default:
				break more
			}
		}
		if !inBackground(group) {
			s.commit(group)
			continue
		}
		bg.Do(commit)
	}
}

// inBackground reports whether every write of group is in the background.
func inBackground(group []*op) bool {
	for _, o := range group {
		if !o.background {
			return false
		}
	}
	return true
}

func (s *Store) commit(group []*op) {
	live := group[:0]
	for _, o := range group {
		if o.state.CompareAndSwap(opQueued, opRunning) {
			live = append(live, o)
		}
	}
	if len(live) == 0 {
		return
	}
	// The writer's own context: nothing interrupts a group half-way.
	ctx := context.Background()
	fail := func(err error) {
		for _, o := range live {
			o.done <- err
		}
	}
	tx := ptx{c: s.wc, p: s.wp, texts: &texts{}, apart: len(live) > 1}
	if _, err := tx.ExecContext(ctx, beginTx); err != nil {
		fail(wrap(err))
		return
	}
	// An error may have ended the transaction already (SQLite rolls back
	// on some, such as a full disk): ROLLBACK then fails, harmlessly.
	rollback := func() { _, _ = tx.ExecContext(ctx, rollbackTx) }
	results := make([]error, len(live))
	var err error
	if len(live) == 1 {
		results[0], err = runAlone(ctx, &tx, live[0].fn, rollback)
	} else {
		err = runApart(ctx, tx, live, results)
	}
	if err != nil {
		rollback()
		fail(wrap(err))
		return
	}
	if len(live) == 1 && results[0] != nil {
		rollback()
		live[0].done <- results[0]
		return
	}
	err = tx.texts.flush(ctx, tx)
	if err == nil {
		_, err = tx.ExecContext(ctx, commitTx)
	}
	if err != nil {
		rollback()
		for i, o := range live {
			if results[i] == nil {
				results[i] = wrap(err)
			}
			o.done <- results[i]
		}
		return
	}
	for i, o := range live {
		o.done <- results[i]
	}
}

// runAlone runs the one write of a group. A Batch runs its writes without
// savepoints; when one of them fails (errApart), the transaction is begun
// again and the Batch runs again, each write in a savepoint of its own.
// err is an error of the transaction itself; result is the write's.
func runAlone(ctx context.Context, tx *ptx, fn func(context.Context, ptx) error, rollback func()) (result, err error) {
	result = run(ctx, *tx, fn)
	if result != errApart {
		return result, nil
	}
	rollback()
	if _, err := tx.ExecContext(ctx, beginTx); err != nil {
		return nil, err
	}
	tx.texts, tx.apart = &texts{}, true
	return run(ctx, *tx, fn), nil
}

// runApart runs the writes of a group each in a savepoint of its own, so
// that one that fails leaves nothing of itself and the others in; their
// results go in results. err is an error of the transaction itself.
func runApart(ctx context.Context, tx ptx, live []*op, results []error) error {
	for i, o := range live {
		if _, err := tx.ExecContext(ctx, savepoint); err != nil {
			return err
		}
		m := tx.texts.mark()
		results[i] = run(ctx, tx, o.fn)
		if results[i] != nil {
			if _, err := tx.ExecContext(ctx, rollbackTo); err != nil {
				return err
			}
			tx.texts.reset(m)
		}
		if _, err := tx.ExecContext(ctx, release); err != nil {
			return err
		}
	}
	return nil
}

// run calls fn, turning a panic into an error so that one bad write cannot
// stop the writer.
func run(ctx context.Context, tx ptx, fn func(context.Context, ptx) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("sqlite: write panicked: %v", r)
		}
	}()
	return fn(ctx, tx)
}

// maxPos bounds a message's position: the search index keys a message by
// conv << 32 | pos.
const maxPos = 1<<32 - 1

// insertMessages stores rows at positions from pos on in conversation conv
// of tenant, and indexes their text.
func insertMessages(ctx context.Context, tx ptx, conv int64, tenant string, pos int64, rows []backend.Row) error {
	if pos+int64(len(rows)) > maxPos {
		return fmt.Errorf("%w: a conversation takes at most %d appended messages in its life", store.ErrInvalid, maxPos)
	}
	for i, r := range rows {
		body, chunked := r.Body, len(r.Body) > chunkBytes || r.Msg != nil
		if chunked {
			body = []byte{} // in body_chunks, below
		}
		if tx.stage != nil && !chunked {
			tx.stage.add(stagedMessages, conv, pos+int64(i), r.ID, string(r.Role), body)
		} else if _, err := tx.ExecContext(ctx, insertMessage, conv, pos+int64(i), r.ID, string(r.Role), body); err != nil {
			if isUnique(err) {
				return fmt.Errorf("message id %q: %w", r.ID, store.ErrExists)
			}
			return wrap(err)
		}
		if chunked {
			if err := insertChunks(ctx, tx, conv, pos+int64(i), i, &r); err != nil {
				return err
			}
			if r.Text != "" {
				if _, err := tx.ExecContext(ctx, insertLongText, conv, pos+int64(i), r.Text); err != nil {
					return wrap(err)
				}
			}
		}
		for _, b := range r.Blobs {
			if _, err := tx.ExecContext(ctx, insertBlob, b.Hash, b.Data); err != nil {
				return wrap(err)
			}
		}
		for _, m := range r.Media {
			if _, err := tx.ExecContext(ctx, insertRef, conv, pos+int64(i), m.Off, m.Hash); err != nil {
				return wrap(err)
			}
		}
		if r.Text != "" {
			tx.texts.add(conv, pos+int64(i), r.Text)
		}
		if u := r.Usage; u != nil {
			var cost any
			if u.Cost != backend.NoCost {
				cost = u.Cost
			}
			if tx.stage != nil {
				tx.stage.add(stagedUsage, conv, pos+int64(i), tenant, u.At, u.Model, u.Input, u.Output,
					u.CacheRead, u.CacheWrite, u.Reasoning, cost)
			} else if _, err := tx.ExecContext(ctx, insertUsage, conv, pos+int64(i), tenant, u.At, u.Model, u.Input, u.Output,
				u.CacheRead, u.CacheWrite, u.Reasoning, cost); err != nil {
				return wrap(err)
			}
		}
	}
	return nil
}

// chunkBytes is the length past which a body is long (migration 7): it
// is stored in body_chunks, in pieces of at most chunkBytes and
// maxPieceBytes, messages.body left empty. SQLite's C heap then holds a
// piece at a time, not the body's bound copy, its record and its pages
// (2.1-2.4 times the body). A variable so that tests can cut small bodies
// into many pieces.
var chunkBytes = 1 << 20

// maxPieceBytes bounds a long body's pieces: what SQLite's C heap holds of
// the body while it stores one. Written in pieces of 1 MiB, a 40 MiB reply
// recorded by the gateway took its peak resident memory to 2.00-2.15
// times the reply; in pieces of 256 KiB, 1.90-2.01 (bench/gatewaymem, 7
// December 2026, passed through and translated); 64 KiB did no better.
// Bodies stored before in larger pieces read the same: a body's pieces are
// joined whatever their length.
const maxPieceBytes = 256 << 10

// insertChunks stores r's body in pieces as the body of message pos of
// conversation conv (the write's i-th), each piece a statement: its Body
// bound a piece where it is, or its long message (Msg) encoded a piece at
// a time, so that the encoding is never whole (bench/gatewaymem: a 40 MiB
// reply recorded took the gateway's peak resident memory to 1.79-1.89
// times the reply, 1.94-2.05 with its JSON whole; TestLongWriteMemory).
func insertChunks(ctx context.Context, tx ptx, conv, pos int64, i int, r *backend.Row) error {
	w := &pieceWriter{ctx: ctx, tx: tx, conv: conv, pos: pos, size: min(chunkBytes, maxPieceBytes)}
	if r.Msg == nil {
		for body := r.Body; len(body) > 0; {
			n := min(len(body), w.size)
			if err := w.insert(body[:n:n]); err != nil {
				return err
			}
			body = body[n:]
		}
		return nil
	}
	w.buf = make([]byte, 0, w.size)
	if err := backend.WriteLong(w, i, r.Msg); err != nil {
		return err
	}
	if len(w.buf) > 0 {
		return w.insert(w.buf)
	}
	return nil
}

// pieceWriter stores what is written to it as the pieces of a long body,
// size bytes each but the last.
type pieceWriter struct {
	ctx       context.Context
	tx        ptx
	conv, pos int64
	seq, size int
	buf       []byte
}

func (w *pieceWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), w.size-len(w.buf))
		w.buf, p = append(w.buf, p[:k]...), p[k:]
		if len(w.buf) == w.size {
			if err := w.insert(w.buf); err != nil {
				return 0, err
			}
			w.buf = w.buf[:0] // the driver bound a copy
		}
	}
	return n, nil
}

// insert stores piece as the next one.
func (w *pieceWriter) insert(piece []byte) error {
	if _, err := w.tx.ExecContext(w.ctx, insertChunk, w.conv, w.pos, w.seq, piece); err != nil {
		return wrap(err)
	}
	w.seq++
	return nil
}

// wholeBody returns the body of message pos of conversation conv, read as
// body: body itself, or, when it is empty, its pieces joined.
func wholeBody(ctx context.Context, q queryer, conv, pos int64, body []byte) ([]byte, error) {
	if len(body) > 0 {
		return body, nil
	}
	rows, err := q.QueryContext(ctx, selectChunks, conv, pos)
	if err != nil {
		return nil, wrap(err)
	}
	defer rows.Close()
	var out []byte
	for rows.Next() {
		var data sql.RawBytes
		var n int
		if err := rows.Scan(&data, &n); err != nil {
			return nil, wrap(err)
		}
		if out == nil {
			out = make([]byte, 0, n)
		}
		out = append(out, data...)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sqlite: message at position %d of conversation %d: an empty body and no pieces", pos, conv)
	}
	return out, nil
}

// Create stores a new conversation.
func (s *Store) Create(ctx context.Context, c store.Conversation, msgs ...convo.Message) (store.Conversation, error) {
	cr, err := backend.PrepareCreate(c, msgs, chunkBytes)
	if err != nil {
		return store.Conversation{}, err
	}
	c, rows := cr.Conversation, cr.Rows
	err = s.write(ctx, func(ctx context.Context, tx ptx) error {
		pk, err := insertConv(ctx, tx, c, int64(len(rows)), cr.Open)
		if err != nil {
			return err
		}
		return insertMessages(ctx, tx, pk, c.Tenant, 0, rows)
	})
	if err != nil {
		return store.Conversation{}, err
	}
	return c, nil
}

// createIn creates the conversation of w, a write of a batch that may
// create it, unless it exists (created is false then, and nothing was
// written). Most such writes do create theirs: the row is inserted at
// once, the insert doing nothing when the id is taken, rather than asked
// for first (a query, its rows, and its columns described by the driver).
func createIn(ctx context.Context, tx ptx, w *backend.Write) (c store.Conversation, created bool, err error) {
	open, err := backend.Check(nil, w.H)
	if err != nil {
		// Invalid as a new conversation's messages, they may still
		// continue the conversation if it exists.
		var pk int64
		switch err2 := tx.QueryRowContext(ctx, selectPK, w.Tenant, w.ID).Scan(&pk); {
		case errors.Is(err2, sql.ErrNoRows):
			return store.Conversation{}, true, err
		case err2 != nil:
			return store.Conversation{}, true, wrap(err2)
		}
		return store.Conversation{}, false, nil
	}
	c = w.New
	now := backend.Now()
	c.Version, c.Messages, c.ForkedFrom, c.ForkedAt, c.Created, c.Updated = 1, len(w.Rows), "", 0, now, now
	res, err := tx.ExecContext(ctx, insertNewConvRow,
		c.Tenant, c.ID, c.Title, nullString(c.Meta), c.Version, c.Messages, int64(len(w.Rows)), nullString(backend.MarshalCalls(open)),
		c.ForkedFrom, c.ForkedAt, c.Created.UnixMicro(), c.Updated.UnixMicro())
	if err != nil {
		return store.Conversation{}, true, wrap(err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return store.Conversation{}, err != nil, wrap(err)
	}
	pk, err := res.LastInsertId()
	if err != nil {
		return store.Conversation{}, true, wrap(err)
	}
	if err := indexMeta(ctx, tx, pk, c.Meta); err != nil {
		return store.Conversation{}, true, err
	}
	return c, true, insertMessages(ctx, tx, pk, c.Tenant, 0, w.Rows)
}

// insertConv inserts c's row and returns its pk. (Exec and the last
// rowid, not RETURNING: a query is a sql.Rows and its bookkeeping.)
func insertConv(ctx context.Context, tx ptx, c store.Conversation, nextPos int64, open []byte) (int64, error) {
	res, err := tx.ExecContext(ctx, insertConvRow,
		c.Tenant, c.ID, c.Title, nullString(c.Meta), c.Version, c.Messages, nextPos, nullString(open),
		c.ForkedFrom, c.ForkedAt, c.Created.UnixMicro(), c.Updated.UnixMicro())
	if isUnique(err) {
		return 0, fmt.Errorf("conversation %q: %w", c.ID, store.ErrExists)
	}
	if err != nil {
		return 0, wrap(err)
	}
	pk, err := res.LastInsertId()
	if err != nil {
		return 0, wrap(err)
	}
	return pk, indexMeta(ctx, tx, pk, c.Meta)
}

// indexMeta writes the index of metadata (table meta_values) of the
// conversation pk, just inserted, whose metadata is meta: its top-level
// members whose value is a string, key and value each of at most
// backend.MaxIndexed bytes (migration 4). The store writes it, not a
// trigger (migration 9): a trigger parsed the metadata again with
// json_each, in a sub-program of the statement.
func indexMeta(ctx context.Context, tx ptx, pk int64, meta []byte) error {
	if len(meta) == 0 {
		return nil
	}
	r := jsonx.NewReader(meta, convo.DefaultLimits.MaxDepth)
	err := r.ReadObject(func(key []byte) error {
		if r.Peek() != jsonx.String || len(key) > backend.MaxIndexed {
			return r.Skip()
		}
		v, err := r.ReadString()
		if err != nil || len(v) > backend.MaxIndexed {
			return err
		}
		if tx.stage != nil {
			tx.stage.add(stagedMeta, string(key), v, pk)
			return nil
		}
		if _, err := tx.ExecContext(ctx, insertMetaValue, string(key), v, pk); err != nil {
			return wrap(err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sqlite: indexing the metadata of conversation %d: %w", pk, err)
	}
	return nil
}

// reindexMeta rewrites the index of metadata of the conversation pk when
// its metadata changes from old to meta.
func reindexMeta(ctx context.Context, tx ptx, pk int64, old, meta []byte) error {
	if bytes.Equal(old, meta) {
		return nil
	}
	if _, err := tx.ExecContext(ctx, deleteMetaValues, pk); err != nil {
		return wrap(err)
	}
	return indexMeta(ctx, tx, pk, meta)
}

// Get returns a conversation's description.
func (s *Store) Get(ctx context.Context, tenant, id string) (store.Conversation, error) {
	if err := backend.Find(tenant, id); err != nil {
		return store.Conversation{}, err
	}
	r, err := getConv(ctx, ppool{s.r, s.rp}, tenant, id)
	return r.Conversation, err
}

// Update changes a conversation's title and metadata.
func (s *Store) Update(ctx context.Context, tenant, id string, title *string, meta json.RawMessage) (store.Conversation, error) {
	u, err := backend.PrepareUpdate(tenant, id, title, meta)
	if err != nil {
		return store.Conversation{}, err
	}
	var out store.Conversation
	err = s.write(ctx, func(ctx context.Context, tx ptx) error {
		r, err := getConv(ctx, tx, tenant, id)
		if err != nil {
			return err
		}
		c := r.Conversation
		if title != nil {
			c.Title = *title
		}
		if u.Meta != nil || u.Clear {
			c.Meta = u.Meta
		}
		c.Updated = backend.Later(c.Updated)
		if _, err = tx.ExecContext(ctx, updateTitle,
			c.Title, nullString(c.Meta), c.Updated.UnixMicro(), r.pk); err != nil {
			return wrap(err)
		}
		out = c
		return reindexMeta(ctx, tx, r.pk, r.Meta, c.Meta)
	})
	return out, err
}

// Append adds messages at the end if the version still is version.
func (s *Store) Append(ctx context.Context, tenant, id string, version int64, msgs ...convo.Message) (store.Conversation, error) {
	h, rows, err := backend.PrepareAppend(tenant, id, msgs, chunkBytes)
	if err != nil {
		return store.Conversation{}, err
	}
	var out store.Conversation
	err = s.write(ctx, func(ctx context.Context, tx ptx) error {
		r, err := getConv(ctx, tx, tenant, id)
		if err != nil {
			return err
		}
		out, err = appendTo(ctx, tx, r, version, h, rows, nil)
		return err
	})
	if err != nil {
		return store.Conversation{}, err
	}
	return out, nil
}

// appendTo appends rows (h, as backend.Encode returned them) to the
// conversation r, with Append's checks, and returns its new description.
// A write of a batch that also sets the metadata (w, not nil) sets it in
// the same UPDATE of the conversation's row, when there are rows: one
// statement fewer for each exchange the gateway records in a continued
// conversation.
func appendTo(ctx context.Context, tx ptx, r row, version int64, h convo.History, rows []backend.Row, w *backend.Write) (store.Conversation, error) {
	if err := backend.CheckVersion(r.ID, r.Version, version); err != nil {
		return store.Conversation{}, err
	}
	out := r.Conversation
	if len(rows) == 0 {
		return out, nil
	}
	after, err := backend.CheckAppend(r.open, h)
	if err != nil {
		return store.Conversation{}, err
	}
	if err := insertMessages(ctx, tx, r.pk, r.Tenant, r.nextPos, rows); err != nil {
		return store.Conversation{}, err
	}
	out.Version++
	out.Messages += len(rows)
	out.Updated = backend.Later(out.Updated)
	if w != nil && w.SetsMeta() {
		out.Meta = w.Meta
		if _, err = tx.ExecContext(ctx, updateAppendedMeta,
			out.Version, out.Messages, r.nextPos+int64(len(rows)), nullString(after), out.Updated.UnixMicro(), nullString(out.Meta), r.pk); err != nil {
			return store.Conversation{}, wrap(err)
		}
		return out, reindexMeta(ctx, tx, r.pk, r.Meta, out.Meta)
	}
	_, err = tx.ExecContext(ctx, updateAppended,
		out.Version, out.Messages, r.nextPos+int64(len(rows)), nullString(after), out.Updated.UnixMicro(), r.pk)
	return out, wrap(err)
}

// Batch applies writes in one transaction, each all or nothing.
//
// Alone in its transaction (as the gateway's recorder's batches are), a
// batch first runs its writes without savepoints. Only when one fails is
// the transaction begun again and the batch run again with a savepoint
// for each write, to keep the others: a savepoint copies every page a
// write changes before it changes it (in BenchmarkRecord and the gateway
// at one stream, a sixth of what the statements of a write cost), and
// nearly every recorder's batch has no write that fails. (One savepoint
// around the whole batch instead was slower: each statement of SQLite's
// that journals itself then truncates a journal as long as the batch's,
// walking it from its start.)
func (s *Store) Batch(ctx context.Context, writes []store.Write) []store.WriteResult {
	res := make([]store.WriteResult, len(writes))
	ws := make([]backend.Write, len(writes))
	invalid := make([]bool, len(writes))
	// The writes' encodings are garbage once the batch is stored (and
	// s.write returns only once its function has run or never will).
	arena := s.arena.Swap(nil)
	if arena == nil {
		arena = backend.NewArena(arenaBytes) // another Batch has the store's
	}
	defer func() {
		arena.Reset()
		s.arena.Store(arena)
	}()
	for i, sw := range writes {
		ws[i], res[i].Err = backend.PrepareWrite(i, sw, chunkBytes, arena)
		invalid[i] = res[i].Err != nil
	}
	err := s.write(ctx, func(ctx context.Context, tx ptx) error {
		if !tx.apart {
			tx.stage = &s.staged
			tx.stage.reset()
			defer tx.stage.reset() // nothing of the writes is kept
		}
		for i := range ws {
			if invalid[i] {
				continue
			}
			if tx.apart {
				if _, err := tx.ExecContext(ctx, batchSavepoint); err != nil {
					return wrap(err)
				}
			}
			m := tx.texts.mark()
			res[i].Conversation, res[i].Err = batchWrite(ctx, tx, &ws[i])
			if res[i].Err != nil {
				if !tx.apart {
					return errApart
				}
				res[i].Err = fmt.Errorf("writes[%d]: %w", i, res[i].Err)
				if _, err := tx.ExecContext(ctx, batchRollbackTo); err != nil {
					return wrap(err)
				}
				tx.texts.reset(m)
			}
			if tx.apart {
				if _, err := tx.ExecContext(ctx, batchRelease); err != nil {
					return wrap(err)
				}
			}
		}
		if tx.stage != nil {
			if tx.stage.flush(ctx, tx) != nil || tx.stage.err != nil {
				return errApart // which write's rows failed is found apart
			}
		}
		return charge(ctx, tx, backend.Charges(ws, func(i int) bool { return res[i].Err == nil }))
	})
	if err != nil {
		for i := range res {
			if res[i].Err == nil {
				res[i] = store.WriteResult{Err: err}
			}
		}
	}
	return res
}

// arenaBytes is the size of the arena that holds the encodings of a
// Batch's messages (backend.Arena), kept by the store from one Batch to
// the next (in a sync.Pool, the collector took it away between batches
// more often than not): a recorder's batch of 128 exchanges of the
// gateway's tool stream encodes about 330 KiB.
const arenaBytes = 512 << 10

// batchWrite applies one write of a batch.
func batchWrite(ctx context.Context, tx ptx, w *backend.Write) (store.Conversation, error) {
	if w.Create {
		if c, created, err := createIn(ctx, tx, w); created || err != nil {
			return c, err
		}
	}
	r, err := getConv(ctx, tx, w.Tenant, w.ID)
	if err != nil {
		return store.Conversation{}, err
	}
	out, err := appendTo(ctx, tx, r, w.Version, w.H, w.Rows, w)
	if err != nil || !w.SetsMeta() || len(w.Rows) > 0 { // with rows, appendTo set the metadata
		return out, err
	}
	out.Meta = w.Meta
	out.Updated = backend.Later(out.Updated)
	if _, err = tx.ExecContext(ctx, updateTitle, out.Title, nullString(out.Meta), out.Updated.UnixMicro(), r.pk); err != nil {
		return store.Conversation{}, wrap(err)
	}
	return out, reindexMeta(ctx, tx, r.pk, r.Meta, out.Meta)
}

// Load returns the messages from index from on, and the description as of
// the same moment (one read transaction).
func (s *Store) Load(ctx context.Context, tenant, id string, from int) (convo.History, store.Conversation, error) {
	return s.LoadRange(ctx, tenant, id, from, -1)
}

// LoadRange returns at most n messages (n < 0: all) from index from on,
// and the description as of the same moment (one read transaction). It
// reads only those messages: while no message has been deleted, a
// message's position is its index and the range is one index seek.
func (s *Store) LoadRange(ctx context.Context, tenant, id string, from, n int) (convo.History, store.Conversation, error) {
	if err := backend.CheckLoad(tenant, id, from); err != nil {
		return nil, store.Conversation{}, err
	}
	sqltx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, store.Conversation{}, wrap(err)
	}
	defer sqltx.Rollback()
	tx := ptx{tx: sqltx, p: s.rp}
	r, err := getConv(ctx, tx, tenant, id)
	if err != nil {
		return nil, store.Conversation{}, err
	}
	n = backend.Span(from, n, r.Messages)
	if n <= 0 {
		return convo.History{}, r.Conversation, nil
	}
	var rows *sql.Rows
	lo, hi := int64(0), r.nextPos
	if int64(r.Messages) == r.nextPos {
		// Positions 0…Messages-1 are all taken: position is index.
		lo, hi = int64(from), int64(from+n-1)
	}
	media, err := loadMedia(ctx, tx, r.pk, lo, hi)
	if err != nil {
		return nil, store.Conversation{}, err
	}
	if int64(r.Messages) == r.nextPos {
		rows, err = tx.QueryContext(ctx, loadRange, r.pk, from, from+n)
	} else {
		rows, err = tx.QueryContext(ctx, loadMessages, r.pk, n, from)
	}
	if err != nil {
		return nil, store.Conversation{}, wrap(err)
	}
	defer rows.Close()
	l := backend.NewLoader(id, n)
	for rows.Next() {
		var pos int64
		var body sql.RawBytes // copied by Add before the next row
		if err := rows.Scan(&pos, &body); err != nil {
			return nil, store.Conversation{}, wrap(err)
		}
		b, err := wholeBody(ctx, tx, r.pk, pos, body)
		if err != nil {
			return nil, store.Conversation{}, err
		}
		if b, err = media.Restore(b, id, pos); err != nil {
			return nil, store.Conversation{}, err
		}
		if err := l.Add(b, pos); err != nil {
			return nil, store.Conversation{}, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, store.Conversation{}, wrap(err)
	}
	h, err := l.History()
	if err != nil {
		return nil, store.Conversation{}, err
	}
	return h, r.Conversation, nil
}

// Message returns one message by its id.
func (s *Store) Message(ctx context.Context, tenant, id, messageID string) (convo.Message, error) {
	if err := backend.FindMessage(tenant, id, messageID); err != nil {
		return convo.Message{}, err
	}
	sqltx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return convo.Message{}, wrap(err)
	}
	defer sqltx.Rollback()
	tx := ptx{tx: sqltx, p: s.rp}
	var pk, pos int64
	var body []byte
	err = tx.QueryRowContext(ctx, selectMessage, tenant, id, messageID).Scan(&pk, &pos, &body)
	if errors.Is(err, sql.ErrNoRows) {
		return convo.Message{}, backend.MessageNotFound(id, messageID)
	}
	if err != nil {
		return convo.Message{}, wrap(err)
	}
	if body, err = wholeBody(ctx, tx, pk, pos, body); err != nil {
		return convo.Message{}, err
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
// to hi.
func loadMedia(ctx context.Context, tx queryer, pk, lo, hi int64) (*backend.Media, error) {
	m := &backend.Media{Refs: map[int64][]backend.MediaRef{}, Data: map[string][]byte{}}
	rows, err := tx.QueryContext(ctx, selectRefs, pk, lo, hi)
	if err != nil {
		return nil, wrap(err)
	}
	defer rows.Close()
	for rows.Next() {
		var pos int64
		var ref backend.MediaRef
		if err := rows.Scan(&pos, &ref.Off, &ref.Hash); err != nil {
			return nil, wrap(err)
		}
		m.Refs[pos] = append(m.Refs[pos], ref)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err)
	}
	if len(m.Refs) == 0 {
		return m, nil
	}
	blobs, err := tx.QueryContext(ctx, selectBlobs, pk, lo, hi)
	if err != nil {
		return nil, wrap(err)
	}
	defer blobs.Close()
	for blobs.Next() {
		var h string
		var data []byte
		if err := blobs.Scan(&h, &data); err != nil {
			return nil, wrap(err)
		}
		m.Data[h] = data
	}
	return m, wrap(blobs.Err())
}

// tail returns the open calls at the end of conversation pk, reading back
// from its last message to the last that is not a tool message.
func tail(ctx context.Context, tx queryer, pk int64, id string) ([]backend.Call, error) {
	rows, err := tx.QueryContext(ctx, selectTail, pk)
	if err != nil {
		return nil, wrap(err)
	}
	defer rows.Close()
	var h convo.History
	for rows.Next() {
		var pos int64
		var role string
		var body []byte
		if err := rows.Scan(&pos, &role, &body); err != nil {
			return nil, wrap(err)
		}
		if body, err = wholeBody(ctx, tx, pk, pos, body); err != nil {
			return nil, err
		}
		m, err := backend.Decode(body, id, pos)
		if err != nil {
			return nil, err
		}
		h = append(h, m)
		if convo.Role(role) != convo.RoleTool {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(err)
	}
	slices.Reverse(h)
	return backend.OpenCalls(h), nil
}

// DeleteMessage removes one message, with the version check of Append.
func (s *Store) DeleteMessage(ctx context.Context, tenant, id string, version int64, messageID string) (store.Conversation, error) {
	if err := backend.FindMessage(tenant, id, messageID); err != nil {
		return store.Conversation{}, err
	}
	var out store.Conversation
	err := s.write(ctx, func(ctx context.Context, tx ptx) error {
		r, err := getConv(ctx, tx, tenant, id)
		if err != nil {
			return err
		}
		if err := backend.CheckVersion(id, r.Version, version); err != nil {
			return err
		}
		var pos int64
		err = tx.QueryRowContext(ctx, deleteMessage, r.pk, messageID).Scan(&pos)
		if errors.Is(err, sql.ErrNoRows) {
			return backend.MessageNotFound(id, messageID)
		}
		if err != nil {
			return wrap(err)
		}
		if _, err := tx.ExecContext(ctx, deleteText, r.pk, pos); err != nil {
			return wrap(err)
		}
		open, err := tail(ctx, tx, r.pk, id)
		if err != nil {
			return err
		}
		out = r.Conversation
		out.Version++
		out.Messages--
		out.Updated = backend.Later(out.Updated)
		_, err = tx.ExecContext(ctx, updateDeleted,
			out.Version, out.Messages, nullString(backend.MarshalCalls(open)), out.Updated.UnixMicro(), r.pk)
		return wrap(err)
	})
	if err != nil {
		return store.Conversation{}, err
	}
	return out, nil
}

// Fork creates a new conversation holding the first at messages of id.
func (s *Store) Fork(ctx context.Context, tenant, id string, at int, c store.Conversation) (store.Conversation, error) {
	if err := backend.Find(tenant, id); err != nil {
		return store.Conversation{}, err
	}
	c.Tenant = tenant
	c, err := backend.NewConversation(c)
	if err != nil {
		return store.Conversation{}, err
	}
	err = s.write(ctx, func(ctx context.Context, tx ptx) error {
		src, err := getConv(ctx, tx, tenant, id)
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
		pk, err := insertConv(ctx, tx, c, 0, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, copyMessages, pk, src.pk, at); err != nil {
			return wrap(err)
		}
		if err := forkChunks(ctx, tx, pk, src.pk); err != nil {
			return err
		}
		if err := indexCopied(ctx, tx, c.ID, pk, src.pk); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, copyRefs, pk, src.pk); err != nil {
			return wrap(err)
		}
		open, err := tail(ctx, tx, pk, c.ID)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, updateForked,
			nullString(backend.MarshalCalls(open)), pk, pk)
		return wrap(err)
	})
	if err != nil {
		return store.Conversation{}, err
	}
	return c, nil
}

// indexCopied adds to the search index the messages a fork copied into
// conversation pk (id) from src. The index keeps no text (migration 10): each
// one's is derived from its body again, as when it was stored, or, for a
// body in pieces, copied from src's long_texts.
func indexCopied(ctx context.Context, tx ptx, id string, pk, src int64) error {
	rows, err := tx.QueryContext(ctx, loadRange, pk, 0, maxPos)
	if err != nil {
		return wrap(err)
	}
	for rows.Next() {
		var pos int64
		var body sql.RawBytes
		if err := rows.Scan(&pos, &body); err != nil {
			rows.Close()
			return wrap(err)
		}
		if len(body) == 0 {
			continue
		}
		text, err := bodyText(body, id, pos)
		if err != nil {
			rows.Close()
			return err
		}
		if text != "" {
			tx.texts.add(pk, pos, text)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return wrap(err)
	}
	if rows, err = tx.QueryContext(ctx, copyLongTexts, pk, src); err != nil {
		return wrap(err)
	}
	for rows.Next() {
		var pos int64
		var text string
		if err := rows.Scan(&pos, &text); err != nil {
			rows.Close()
			return wrap(err)
		}
		tx.texts.add(pk, pos, text)
	}
	return wrap(errors.Join(rows.Err(), rows.Close()))
}

// forkChunks copies the pieces of the long bodies of conversation src that
// a fork copied into conversation pk, one piece a statement.
func forkChunks(ctx context.Context, tx ptx, pk, src int64) error {
	rows, err := tx.QueryContext(ctx, selectChunkKeys, pk, src)
	if err != nil {
		return wrap(err)
	}
	var keys [][2]int64
	for rows.Next() {
		var pos, seq int64
		if err := rows.Scan(&pos, &seq); err != nil {
			rows.Close()
			return wrap(err)
		}
		keys = append(keys, [2]int64{pos, seq})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return wrap(err)
	}
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, copyChunk, pk, src, k[0], k[1]); err != nil {
			return wrap(err)
		}
	}
	return nil
}

// The list queries, from the start and after a cursor. A filter with a
// member the index of metadata holds (backend.Filter.Indexed: ?8, ?9) reads
// only the conversations having it; any other reads the tenant's
// conversations by the index on (tenant, created, id), turning down
// without parsing their metadata those whose text lacks the filter's
// needle ?7 (backend.Filter.Needle) and has no backslash.
const (
	listWhere = `tenant = ?1 AND (?2 = '' OR instr(convo_lower(title), convo_lower(?2)) > 0)
		AND (?3 IS NULL OR ((?7 = '' OR instr(meta, ?7) > 0 OR instr(meta, '\') > 0) AND convo_meta_match(meta, ?3)))`
	// CROSS JOIN makes SQLite read meta_values first, rather than every
	// conversation in order to save sorting the few that match.
	listIndexed = ` FROM meta_values CROSS JOIN conversations ON pk = conv WHERE key = ?8 AND value = ?9 AND `
	listOrder   = ` ORDER BY created DESC, id DESC LIMIT ?4`
	listAfterAt = ` AND (created, id) < (?5, ?6)`
	listFirst   = `SELECT ` + convCols + ` FROM conversations WHERE ` + listWhere + listOrder
	listAfter   = `SELECT ` + convCols + ` FROM conversations WHERE ` + listWhere + listAfterAt + listOrder
	listFirstIx = `SELECT ` + convCols + listIndexed + listWhere + listOrder
	listAfterIx = `SELECT ` + convCols + listIndexed + listWhere + listAfterAt + listOrder
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
	var meta any
	if filter != nil {
		m, _, _ := backend.Meta(opts.Meta)
		meta = string(m)
	}
	// One more than the page, to know whether another page follows; the
	// cursor, when there is one; the filter's needle, which turns most
	// rows down before convo_meta_match is called on them.
	args := []any{tenant, opts.Title, meta, limit + 1, nil, nil, filter.Needle()}
	key, value, indexed := filter.Indexed()
	query := listQueries.Pick(indexed, after)
	if after {
		args[4], args[5] = cur.Created.UnixMicro(), cur.ID
	}
	if indexed {
		args = append(args, key, value)
	}
	rows, err := ppool{s.r, s.rp}.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, "", wrap(err)
	}
	defer rows.Close()
	var out []store.Conversation
	for rows.Next() {
		r, err := scanConv(rows)
		if err != nil {
			return nil, "", wrap(err)
		}
		out = append(out, r.Conversation)
	}
	if err := rows.Err(); err != nil {
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

// Delete removes a conversation and its messages.
func (s *Store) Delete(ctx context.Context, tenant, id string) error {
	if err := backend.Find(tenant, id); err != nil {
		return err
	}
	return s.write(ctx, func(ctx context.Context, tx ptx) error {
		var pk int64
		err := tx.QueryRowContext(ctx, selectPK, tenant, id).Scan(&pk)
		if errors.Is(err, sql.ErrNoRows) {
			return backend.NotFound(id)
		}
		if err != nil {
			return wrap(err)
		}
		if _, err := tx.ExecContext(ctx, deleteMessages, pk); err != nil {
			return wrap(err)
		}
		if _, err := tx.ExecContext(ctx, deleteTexts, pk); err != nil {
			return wrap(err)
		}
		_, err = tx.ExecContext(ctx, deleteConv, pk)
		return wrap(err)
	})
}

// The two search queries, from the start and after a cursor. FTS5 walks its
// matches in rowid order, newest conversation first, so a page reads only
// as many index entries as it needs (plus other tenants' matches on the
// way). ?1 is an FTS5 query, ?2 the tenant.
const (
	searchSelect = `SELECT ` + convColsC + `, f.rowid & 4294967295, m.id, m.role, m.body,
		(SELECT count(*) FROM messages x WHERE x.conv = c.pk AND x.pos < (f.rowid & 4294967295))
		FROM messages_fts f
		JOIN conversations c ON c.pk = f.rowid >> 32
		JOIN messages m ON m.conv = c.pk AND m.pos = (f.rowid & 4294967295)
		WHERE messages_fts MATCH ?1 AND c.tenant = ?2`
	searchFirst = searchSelect + ` ORDER BY f.rowid DESC LIMIT ?3`
	searchAfter = searchSelect + ` AND f.rowid < ?4 ORDER BY f.rowid DESC LIMIT ?3`
)

// convColsC is convCols of the conversations table named c.
const convColsC = `c.pk, c.id, c.tenant, c.title, c.meta, c.version, c.messages, c.next_pos, c.open_calls,
	c.forked_from, c.forked_at, c.created, c.updated`

// Search finds the tenant's messages that hold every word of query.
func (s *Store) Search(ctx context.Context, tenant, query string, opts store.SearchOptions) ([]store.Hit, string, error) {
	q, ok, err := backend.ParseSearch(tenant, query, opts)
	if err != nil || !ok {
		return nil, "", err
	}
	// One read transaction: a hit's text is read from its body, which a
	// long one's pieces hold (a second query, on the same connection).
	sqltx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, "", wrap(err)
	}
	defer sqltx.Rollback()
	tx := ptx{tx: sqltx, p: s.rp}
	args := []any{matchQuery(q.Words), tenant, q.Limit + 1}
	stmt := searchFirst
	if q.After != nil {
		stmt = searchAfter
		args = append(args, q.After.Conv<<32|q.After.Pos)
	}
	rows, err := tx.QueryContext(ctx, stmt, args...)
	// A word the tokenizer splits in more than one token is a phrase,
	// which the index answers no more (migration 8): the query is then
	// of the tokens, and each hit checked against the words of its text,
	// reading on (no LIMIT) until the page is full.
	checked := isPhraseError(err)
	if checked {
		var tokens []string
		if tokens, err = tokenWords(ctx, tx, q.Words); err != nil {
			return nil, "", wrap(err)
		}
		args[0], args[2] = matchQuery(tokens), -1
		rows, err = tx.QueryContext(ctx, stmt, args...)
	}
	if err != nil {
		return nil, "", wrap(err)
	}
	defer rows.Close()
	var out []store.Hit
	var last backend.SearchCursor
	for rows.Next() {
		var r row
		var meta, open []byte
		var created, updated, pos int64
		var index int
		var id, role string
		var body sql.RawBytes
		err := rows.Scan(&r.pk, &r.ID, &r.Tenant, &r.Title, &meta, &r.Version, &r.Messages, &r.nextPos, &open,
			&r.ForkedFrom, &r.ForkedAt, &created, &updated, &pos, &id, &role, &body, &index)
		if err != nil {
			return nil, "", wrap(err)
		}
		var text string
		if checked || len(out) < q.Limit { // not for the hit that only tells a next page exists
			if text, err = hitText(ctx, tx, r.ID, r.pk, pos, body); err != nil {
				return nil, "", err
			}
		}
		if checked && !holdsWords(text, q.Words) {
			continue
		}
		if len(out) == q.Limit {
			return out, last.String(), nil
		}
		if meta != nil {
			r.Meta = json.RawMessage(meta)
		}
		r.Created, r.Updated = time.UnixMicro(created).UTC(), time.UnixMicro(updated).UTC()
		out = append(out, q.Hit(r.Conversation, id, index, role, text))
		last = backend.SearchCursor{Conv: r.pk, Pos: pos}
	}
	if err := rows.Err(); err != nil {
		return nil, "", wrap(err)
	}
	return out, "", nil
}

// hitText is the text search indexed of the message at pos of
// conversation conv (id), whose stored body is body (empty when stored in
// pieces, whose text long_texts keeps): the index keeps none (migration
// 10). A stored body's media are holes, which hold no text.
func hitText(ctx context.Context, tx ptx, id string, conv, pos int64, body []byte) (string, error) {
	if len(body) == 0 { // in pieces (migration 7)
		var text string
		err := tx.QueryRowContext(ctx, selectLongText, conv, pos).Scan(&text)
		if errors.Is(err, sql.ErrNoRows) {
			// Lost (Check names it): the hit without its snippet,
			// not a search that fails.
			err = nil
		}
		return text, wrap(err)
	}
	return bodyText(body, id, pos)
}

// bodyText is the search text of a stored body (not in pieces) of the
// message at pos of conversation id, derived as when it was indexed.
func bodyText(body []byte, id string, pos int64) (string, error) {
	m, err := backend.Decode(body, id, pos)
	if err != nil {
		return "", err
	}
	return backend.SearchText(m), nil
}

// matchQuery is the FTS5 query of words: each a quoted string, so that
// FTS5 syntax in a query is never interpreted, and the strings ANDed.
func matchQuery(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(`"` + strings.ReplaceAll(w, `"`, `""`) + `"`)
	}
	return b.String()
}

// isPhraseError says whether err is FTS5 refusing a phrase of more than
// one token, which an index without positions (detail = none) cannot
// answer.
func isPhraseError(err error) bool {
	return err != nil && strings.Contains(err.Error(), "phrase queries are not supported")
}

// separators caches, for each character asked about, whether the
// tokenizer separates tokens at it (see tokenWords).
var separators sync.Map // rune → bool

// tokenWords returns words cut where the tokenizer (unicode61) separates
// tokens but Go's letters and digits do not: a few characters, such as
// New Tai Lue's vowel signs, which Unicode made letters after the
// tokenizer's tables were written. It asks SQLite about each character
// not ASCII once a process: "a<c>a" is a phrase of two tokens, refused,
// when c separates.
func tokenWords(ctx context.Context, q queryer, words []string) ([]string, error) {
	var out []string
	for _, w := range words {
		start := 0
		for i, c := range w {
			if c < 0x80 {
				continue
			}
			sep, ok := separators.Load(c)
			if !ok {
				rows, err := q.QueryContext(ctx, `SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT 1`, `"a`+string(c)+`a"`)
				if err == nil {
					err = rows.Close()
				}
				if err != nil && !isPhraseError(err) {
					return nil, err
				}
				sep = err != nil
				separators.Store(c, sep)
			}
			if sep.(bool) {
				out = appendNonEmpty(out, w[start:i])
				start = i + utf8.RuneLen(c)
			}
		}
		out = appendNonEmpty(out, w[start:])
	}
	return out, nil
}

// appendNonEmpty appends s to out unless it is empty.
func appendNonEmpty(out []string, s string) []string {
	if s == "" {
		return out
	}
	return append(out, s)
}

// holdsWords says whether text has every one of words (lower-cased), as
// backend.Words splits it.
func holdsWords(text string, words []string) bool {
	have := make(map[string]bool)
	for _, w := range backend.Words(text) {
		have[w] = true
	}
	for _, w := range words {
		if !have[w] {
			return false
		}
	}
	return true
}

// registerFuncs registers convo_meta_match(meta, filter) with the driver,
// once per process: the metadata filter of List, with the JSON equality
// PostgreSQL's jsonb has, which SQLite's JSON functions cannot express. It
// also registers convo_search_text(body), the searchable text of a stored
// message, with which a migration indexes the messages stored before it.
var registerFuncs = sync.OnceFunc(func() {
	msqlite.MustRegisterDeterministicScalarFunction("convo_search_text", 1, func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		var body []byte
		switch v := args[0].(type) {
		case []byte:
			body = v
		case string:
			body = []byte(v)
		}
		m, err := convo.UnmarshalMessage(body)
		if err != nil {
			return nil, fmt.Errorf("convo_search_text: %w", err)
		}
		return backend.SearchText(m), nil
	})
	// SQLite's lower() folds ASCII only; List's title filter ignores case
	// in every script.
	msqlite.MustRegisterDeterministicScalarFunction("convo_lower", 1, func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		s, _ := args[0].(string)
		return strings.ToLower(s), nil
	})
	msqlite.MustRegisterDeterministicScalarFunction("convo_meta_match", 2, func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		meta, _ := args[0].(string)
		filter, _ := args[1].(string)
		f, err := parsedFilter(filter)
		if err != nil {
			return nil, err
		}
		return f.Match([]byte(meta)), nil
	})
})

// A parsed filter is a metadata filter and its text.
type parsed struct {
	src string
	f   backend.Filter
}

// lastFilter is the filter convo_meta_match parsed last: a List calls it
// once per conversation of the tenant, with the same filter.
var lastFilter atomic.Pointer[parsed]

// parsedFilter is backend.ParseFilter, parsing each filter once in a row.
func parsedFilter(src string) (backend.Filter, error) {
	if l := lastFilter.Load(); l != nil && l.src == src {
		return l.f, nil
	}
	f, err := backend.ParseFilter(json.RawMessage(src))
	if err == nil {
		lastFilter.Store(&parsed{src, f})
	}
	return f, err
}

// ExpireContent replaces the conversation's messages by their metadata
// (store.WithoutContent), removes them from the search index and records
// when in its metadata (store.ContentExpiredKey), in one transaction. The
// version moves; Updated does not, so metadata retention still counts
// from the last change a client made.
func (s *Store) ExpireContent(ctx context.Context, tenant, id string, at time.Time) (store.Conversation, error) {
	if err := backend.Find(tenant, id); err != nil {
		return store.Conversation{}, err
	}
	var out store.Conversation
	err := s.write(ctx, func(ctx context.Context, tx ptx) error {
		r, err := getConv(ctx, tx, tenant, id)
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT pos, body FROM messages WHERE conv = ? ORDER BY pos`, r.pk)
		if err != nil {
			return wrap(err)
		}
		type rewrite struct {
			pos  int64
			body []byte
		}
		var todo []rewrite
		for rows.Next() {
			var pos int64
			var body []byte
			if err := rows.Scan(&pos, &body); err != nil {
				rows.Close()
				return wrap(err)
			}
			if body, err = wholeBody(ctx, tx, r.pk, pos, body); err != nil {
				rows.Close()
				return err
			}
			nb, changed, err := backend.Expired(body, id, pos)
			if err != nil {
				rows.Close()
				return err
			}
			if changed {
				todo = append(todo, rewrite{pos, nb})
			}
		}
		if err := rows.Close(); err != nil {
			return wrap(err)
		}
		for _, w := range todo {
			if _, err := tx.ExecContext(ctx, `UPDATE messages SET body = ? WHERE conv = ? AND pos = ?`, w.body, r.pk, w.pos); err != nil {
				return wrap(err)
			}
		}
		if _, err := tx.ExecContext(ctx, deleteTexts, r.pk); err != nil {
			return wrap(err)
		}
		out = r.Conversation
		out.Meta = backend.ExpiredMeta(r.Meta, at)
		out.Version++
		if _, err = tx.ExecContext(ctx, `UPDATE conversations SET meta = ?, version = ? WHERE pk = ?`, string(out.Meta), out.Version, r.pk); err != nil {
			return wrap(err)
		}
		return reindexMeta(ctx, tx, r.pk, r.Meta, out.Meta)
	})
	return out, err
}
