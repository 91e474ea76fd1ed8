package backend

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Migration is one step of a backend's schema: a file NNNN_name.sql of its
// embedded migrations directory, applied once, in order, in a transaction.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations reads the *.sql files of dir in fsys. Versions must run 1, 2,
// 3… without gaps, so a missing file cannot go unnoticed.
func Migrations(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, name := range names {
		base := path.Base(name)
		num, label, ok := strings.Cut(strings.TrimSuffix(base, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name is not NNNN_name.sql", base)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: label, SQL: string(b)})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %d (%s): want version %d; versions must have no gaps or repeats", m.Version, m.Name, i+1)
		}
	}
	return out, nil
}

// Pending returns the migrations after applied, the highest version the
// database has. A database newer than the code is an error: the code would
// not know its schema.
func Pending(all []Migration, applied int) ([]Migration, error) {
	if applied > len(all) {
		return nil, fmt.Errorf("database schema version %d is newer than this program's %d: upgrade convo", applied, len(all))
	}
	return all[applied:], nil
}
