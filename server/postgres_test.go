package server_test

import (
	"os"
	"sync"
	"testing"

	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/storetest"
)

var postgresNote sync.Once

// postgresBackend is the PostgreSQL backend when CONVO_TEST_POSTGRES names a
// server; each test gets a schema of its own. Without it the tests run on
// SQLite alone, and say once how to include PostgreSQL.
func postgresBackend(t *testing.T) *backend {
	if os.Getenv(storetest.PostgresEnv) == "" {
		postgresNote.Do(func() {
			t.Logf("PostgreSQL skipped: set %s=postgres://USER@127.0.0.1:5432/DB?sslmode=disable to test on it too", storetest.PostgresEnv)
		})
		return nil
	}
	return &backend{
		name: "postgres",
		dsn:  func(t *testing.T) string { return storetest.PostgresDSN(t) },
		openDSN: func(t *testing.T, dsn string) store.Store {
			st, err := postgres.Open(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
}
