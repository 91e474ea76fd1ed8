// Package backends opens a store.Store from a data source name, so that
// programs (convo serve, convo store) take one --db flag for every backend.
package backends

import (
	"context"
	"errors"
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
//     may set search_path, pool_max_conns and the other pgx parameters);
//   - sqlite:PATH or a plain file path — a SQLite file (store/sqlite),
//     created if it does not exist.
//
// Either way the schema is brought up to date.
func Open(ctx context.Context, dsn string) (store.Store, error) {
	switch {
	case dsn == "":
		return nil, errors.New("no database given")
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return postgres.Open(ctx, dsn)
	case strings.HasPrefix(dsn, "sqlite:"):
		return sqlite.Open(ctx, strings.TrimPrefix(dsn, "sqlite:"))
	}
	return sqlite.Open(ctx, dsn)
}
