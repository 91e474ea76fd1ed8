package sqlite_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
	"github.com/convo-go/convo/store/storetest"
)

// -stress runs the reliability tests at a size for hunting rare failures.
var stress = flag.Bool("stress", false, "run the crash and concurrency tests longer")

func TestMain(m *testing.M) {
	storetest.Main(m, func(ctx context.Context, dsn string) (store.Store, error) { return sqlite.Open(ctx, dsn) })
}

func open(ctx context.Context, path string) (store.Store, error) { return sqlite.Open(ctx, path) }

func newStore(t *testing.T) store.Store {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "convo.db"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, newStore) }

func TestDurability(t *testing.T) {
	rounds := 8
	if *stress {
		rounds = 200
	}
	storetest.Durability(t, filepath.Join(t.TempDir(), "crash.db"), open, rounds)
}

func TestConcurrency(t *testing.T) {
	procs, goroutines, each := 2, 4, 15
	if *stress {
		procs, goroutines, each = 4, 8, 100
	}
	storetest.Concurrency(t, filepath.Join(t.TempDir(), "shared.db"), open, procs, goroutines, each)
}
