package dbtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// MigratedFile returns a function giving the file of a freshly migrated
// SQLite database, made once per test binary by migrate (which opens the
// database at path, migrates it and closes it): each test's store starts
// from a copy of it rather than running every migration again (0.1–0.3 s
// a store on this machine, and a package makes hundreds). The store is
// closed before the file is read, so the WAL is checkpointed into it and
// removed: the file alone is the whole database, which this checks.
func MigratedFile(migrate func(path string) error) func() ([]byte, error) {
	return sync.OnceValues(func() ([]byte, error) {
		dir, err := os.MkdirTemp("", "palaver-migrated-db.")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "palaver.db")
		if err := migrate(path); err != nil {
			return nil, err
		}
		for _, extra := range []string{"-wal", "-journal"} {
			if fi, err := os.Stat(path + extra); err == nil && fi.Size() > 0 {
				return nil, fmt.Errorf("%s still holds %d bytes once the store is closed", filepath.Base(path+extra), fi.Size())
			}
		}
		return os.ReadFile(path)
	})
}
