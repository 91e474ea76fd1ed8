//go:build !unix

package spool

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir opens dir's LOCK file; other systems get no lock between
// processes: give each gateway a spool directory of its own.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return f, nil
}
