// Package backends opens a store.Store from a data source name, so that
// programs (convo serve, convo store) take one --db flag for every backend.
package backends

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/sqlite"
)

// DefaultDSN is the database of convo serve and convo store when none is
// given: a SQLite file in the working directory.
const DefaultDSN = "convo.db"

// Open opens the store dsn names:
//
//   - postgres://… or postgresql://… — PostgreSQL (store/postgres; the URL
//     may set search_path, pool_max_conns and the other pgx parameters, and
//     convo_partitions=N, which creates a new schema's tables partitioned
//     by tenant into N partitions: postgres.Options.Partitions);
//   - sqlite:PATH or a plain file path — a SQLite file (store/sqlite),
//     created if it does not exist; sqlite:PATH?synchronous=normal sets
//     sqlite.Options.Synchronous (see SQLite).
//
// Either way the schema is brought up to date.
func Open(ctx context.Context, dsn string) (store.Store, error) {
	switch {
	case dsn == "":
		return nil, errors.New("no database given")
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return openPostgres(ctx, dsn)
	}
	path, o, _, err := SQLite(dsn)
	if err != nil {
		return nil, err
	}
	return o.Open(ctx, path)
}

// SyncParam is the parameter of a sqlite: data source name that sets
// sqlite.Options.Synchronous: full (the default), normal or extra.
const SyncParam = "synchronous"

// SQLite reads a SQLite data source name: the database file and the
// options its parameters set. Parameters are read only after the sqlite:
// prefix (sqlite:PATH?synchronous=normal), so a plain path is taken whole,
// whatever characters it has. ok is false for a PostgreSQL URL.
func SQLite(dsn string) (path string, o sqlite.Options, ok bool, err error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return "", o, false, nil
	}
	rest, prefixed := strings.CutPrefix(dsn, "sqlite:")
	if !prefixed {
		return rest, o, true, nil
	}
	path, query, _ := strings.Cut(rest, "?")
	if query == "" {
		return path, o, true, nil
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", o, true, fmt.Errorf("sqlite: %q: %w", dsn, err)
	}
	for k, v := range q {
		if k != SyncParam || len(v) != 1 {
			return "", o, true, fmt.Errorf("sqlite: %q: parameter %q: want one %s=full, normal or extra", dsn, k, SyncParam)
		}
	}
	o.Synchronous = q.Get(SyncParam)
	return path, o, true, nil
}

// PartitionsParam is the parameter of a postgres:// URL that sets
// postgres.Options.Partitions. It is taken out of the URL before pgx reads
// it, which would send it to the server as a setting.
const PartitionsParam = "convo_partitions"

func openPostgres(ctx context.Context, dsn string) (store.Store, error) {
	u, err := url.Parse(dsn)
	if err != nil || !u.Query().Has(PartitionsParam) {
		return postgres.Open(ctx, dsn) // pgx says what is wrong with the URL
	}
	q := u.Query()
	n, err := strconv.Atoi(q.Get(PartitionsParam))
	if err != nil {
		return nil, fmt.Errorf("postgres: %s=%q: want a number of partitions", PartitionsParam, q.Get(PartitionsParam))
	}
	q.Del(PartitionsParam)
	u.RawQuery = q.Encode()
	return postgres.Options{Partitions: n}.Open(ctx, u.String())
}
