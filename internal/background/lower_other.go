//go:build !linux

package background

import "errors"

// lower does nothing: only Linux sets the priority of one thread.
func lower() {}

// idle does nothing, as lower.
func idle() {}

// firstThread reports false: no thread is lowered here, the first one
// included.
func firstThread() bool { return false }

// ThreadNice returns an error: only Linux keeps a nice value for each
// thread.
func ThreadNice() (int, error) { return 0, errors.New("background: no nice value for one thread here") }
