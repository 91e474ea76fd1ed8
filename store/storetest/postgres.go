package storetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresEnv names the environment variable with the PostgreSQL server of
// the tests: a connection string whose user may create schemas.
const PostgresEnv = "CONVO_TEST_POSTGRES"

var schemas atomic.Int64

// PostgresDSN returns a connection string to the server CONVO_TEST_POSTGRES
// names, whose search_path selects a new, empty schema of the test's own,
// dropped when the test ends: tests and parallel runs never see each
// other's tables. Without CONVO_TEST_POSTGRES it skips the test, saying how
// to run it.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip("PostgreSQL tests skipped: set " + PostgresEnv + "=postgres://USER@127.0.0.1:5432/DB?sslmode=disable " +
			"to a server where USER may create schemas (.ci/postgres.sh sets it up for .ci/run)")
	}
	// Only digits go into the name, and it is quoted all the same.
	name := fmt.Sprintf("convo_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemas.Add(1))
	ident := pgx.Identifier{name}.Sanitize()
	exec := func(sql string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return fmt.Errorf("connecting to %s: %w", PostgresEnv, err)
		}
		defer conn.Close(context.Background())
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(`CREATE SCHEMA ` + ident); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := exec(`DROP SCHEMA ` + ident + ` CASCADE`); err != nil {
			t.Errorf("dropping schema %s: %v", name, err)
		}
	})
	dsn, err := withSearchPath(base, name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

// withSearchPath adds search_path to a URL or key=value connection string.
func withSearchPath(dsn, schema string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("%s: %w", PostgresEnv, err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return dsn + " search_path=" + schema, nil
}
