package sqlite

import (
	"cmp"
	"context"
	"math/bits"
	"strings"
)

// A stage holds the rows of a Batch's writes for the tables that nothing
// in the Batch reads back (messages, usage, meta_values), to insert them
// at its end, many rows a statement. Each statement costs something of
// its own beside its rows (the driver binding it, database/sql's work
// around it, their allocations): inserted so, the four statements a
// recorded exchange had for its question, reply, usage and fingerprint
// became an eighth of one at batches of 128 exchanges, and
// BenchmarkExchange/batch took 119.9–125.8 µs of CPU an exchange against
// 130.6–141.4 (69 allocations against 98).
// Rows go in at once when a Batch runs its writes apart (each in a
// savepoint, to find the one that fails); so when a staged row fails, its
// Batch runs again apart. A statement that reads or deletes such rows
// (any not in keepsStage) inserts those staged first.
type stage struct {
	tables [len(stagedTables)][]any // each table's rows' values, a row after the other
	err    error                    // the first flush's failure
}

// A stagedTable is a table a stage holds rows for: the statements that
// insert 1, 2, 4, … maxStagedRows of its rows.
type stagedTable struct {
	cols  int
	multi [stagedSizes]string // multi[k]: 1<<k rows
}

// maxStagedRows (1 << (stagedSizes-1)) is the most rows one statement
// inserts: SQLite binds at most 32,766 values a statement, and longer
// statements gain little.
const (
	stagedSizes   = 6
	maxStagedRows = 1 << (stagedSizes - 1)
)

// The staged tables, by their index in stage.tables.
const (
	stagedMessages = iota
	stagedUsage
	stagedMeta
)

var stagedTables = [...]stagedTable{
	stagedMessages: multiRow(insertMessage, 5),
	stagedUsage:    multiRow(insertUsage, 11),
	stagedMeta:     multiRow(insertMetaValue, 3),
}

// multiRow makes the statements inserting 1, 2, 4, … rows from single, a
// statement inserting one row of cols values that ends with its VALUES
// list.
func multiRow(single string, cols int) stagedTable {
	t := stagedTable{cols: cols}
	head, row, ok := strings.Cut(single, "VALUES")
	if !ok {
		panic("sqlite: no VALUES in " + single)
	}
	row = strings.TrimSpace(row)
	for k := range t.multi {
		t.multi[k] = head + "VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", 1<<k), ", ")
	}
	return t
}

// stagedQueries are the statements a stage runs, prepared with the
// writer's others.
func stagedQueries() []string {
	var qs []string
	for _, t := range stagedTables {
		qs = append(qs, t.multi[1:]...) // multi[0] is the single row's, prepared already
	}
	return qs
}

// keepsStage are the statements of a Batch that neither read nor delete
// the staged tables' rows: the staged rows can wait past them.
var keepsStage = func() map[string]bool {
	m := map[string]bool{}
	for _, q := range []string{selectConv, selectPK, insertConvRow, insertNewConvRow, insertChunk, insertLongText,
		insertBlob, insertRef, updateAppended, updateAppendedMeta, updateTitle, chargeSpend} {
		m[q] = true
	}
	for _, t := range stagedTables {
		for _, q := range t.multi {
			m[q] = true
		}
	}
	return m
}()

// add stages a row of table t; values must stay as they are until flush.
func (s *stage) add(t int, values ...any) {
	s.tables[t] = append(s.tables[t], values...)
}

// empty reports whether no rows wait.
func (s *stage) empty() bool {
	for _, v := range s.tables {
		if len(v) > 0 {
			return false
		}
	}
	return true
}

// flush inserts the rows staged, as many a statement as a power of two
// (at most maxStagedRows) allows, and forgets them: a table's last rows
// take at most five statements.
func (s *stage) flush(ctx context.Context, tx ptx) error {
	for i, t := range stagedTables {
		vals := s.tables[i]
		for len(vals) > 0 {
			k := bits.Len(uint(min(len(vals)/t.cols, maxStagedRows))) - 1
			n := t.cols << k
			if _, err := tx.ExecContext(ctx, t.multi[k], vals[:n]...); err != nil {
				s.err = cmp.Or(s.err, wrap(err))
				return s.err
			}
			vals = vals[n:]
		}
		clear(s.tables[i]) // the bodies are the caller's
		s.tables[i] = s.tables[i][:0]
	}
	return nil
}

// reset forgets the rows staged and any failure.
func (s *stage) reset() {
	for i := range s.tables {
		clear(s.tables[i])
		s.tables[i] = s.tables[i][:0]
	}
	s.err = nil
}
