package backends

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/sqlite"
	"github.com/convo-go/convo/store/storetest"
)

func TestOpenSQLite(t *testing.T) {
	dir := t.TempDir()
	for _, dsn := range []string{filepath.Join(dir, "a.db"), "sqlite:" + filepath.Join(dir, "b.db")} {
		s, err := Open(t.Context(), dsn)
		if err != nil {
			t.Fatalf("Open(%q): %v", dsn, err)
		}
		if _, ok := s.(*sqlite.Store); !ok {
			t.Fatalf("Open(%q) = %T, want *sqlite.Store", dsn, s)
		}
		s.Close()
	}
	for _, name := range []string{"a.db", "b.db"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	for _, dsn := range []string{"", "sqlite:", "sqlite::memory:", "postgres://%zz"} {
		if s, err := Open(t.Context(), dsn); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", dsn)
		}
	}
	if _, err := Open(t.Context(), filepath.Join(t.TempDir(), "missing-dir", "x.db")); err == nil || !strings.Contains(err.Error(), "x.db") {
		t.Errorf("Open in a missing directory: %v (want an error naming the file)", err)
	}
}

func TestOpenPostgres(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	s, err := Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*postgres.Store); !ok {
		t.Fatalf("Open(%q) = %T, want *postgres.Store", dsn, s)
	}
}

// TestOpenPostgresPartitioned: convo_partitions in the URL creates the
// schema partitioned, and a bad number is a one-line error.
func TestOpenPostgresPartitioned(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	if _, err := Open(t.Context(), dsn+"&"+PartitionsParam+"=x"); err == nil || !strings.Contains(err.Error(), PartitionsParam) {
		t.Fatalf("Open with %s=x: %v", PartitionsParam, err)
	}
	s, err := Open(t.Context(), dsn+"&"+PartitionsParam+"=3")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.(*postgres.Store).Partitions(t.Context()); err != nil || n != 3 {
		t.Fatalf("Partitions %d %v, want 3", n, err)
	}
}

func TestSQLiteDSN(t *testing.T) {
	for _, c := range []struct {
		dsn, path string
		o         sqlite.Options
		ok        bool
	}{
		{"a.db", "a.db", sqlite.Options{}, true},
		{"sqlite:a.db", "a.db", sqlite.Options{}, true},
		{"sqlite:a.db?synchronous=normal", "a.db", sqlite.Options{Synchronous: "normal"}, true},
		{"sqlite:/d/a.db?", "/d/a.db", sqlite.Options{}, true},
		{"/d/a?b.db", "/d/a?b.db", sqlite.Options{}, true}, // a plain path is taken whole
		{"postgres://h/db?synchronous=normal", "", sqlite.Options{}, false},
	} {
		path, o, ok, err := SQLite(c.dsn)
		if err != nil || path != c.path || o != c.o || ok != c.ok {
			t.Errorf("SQLite(%q) = %q, %+v, %v, %v; want %q, %+v, %v", c.dsn, path, o, ok, err, c.path, c.o, c.ok)
		}
	}
	for _, dsn := range []string{"sqlite:a.db?sync=normal", "sqlite:a.db?synchronous=normal&synchronous=full", "sqlite:a.db?%zz"} {
		if _, _, _, err := SQLite(dsn); err == nil || !strings.Contains(err.Error(), "a.db") {
			t.Errorf("SQLite(%q): %v, want an error naming it", dsn, err)
		}
	}
	// Open takes the file without its parameters, and SQLite's own check
	// of the setting.
	dir := t.TempDir()
	s, err := Open(t.Context(), "sqlite:"+filepath.Join(dir, "n.db")+"?synchronous=normal")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, "n.db")); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(t.Context(), "sqlite:"+filepath.Join(dir, "o.db")+"?synchronous=off"); err == nil {
		s.Close()
		t.Error("synchronous=off accepted")
	}
}
