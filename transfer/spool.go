package transfer

import (
	"fmt"
	"io"
	"os"
)

// Spool copies r to a new temporary file in dir ("": the system's), at
// most limit bytes of it (past them: ErrTooLarge), and rewinds it: an
// import reads its file twice (checked whole, then stored), and an upload
// is received whole before anything is stored. RemoveSpool ends it.
func Spool(r io.Reader, limit int64, dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, "palaver-import-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if err == nil && n > limit {
		err = ErrTooLarge
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		RemoveSpool(f)
		return nil, err
	}
	return f, nil
}

// RemoveSpool closes and deletes a file Spool made.
func RemoveSpool(f *os.File) {
	_ = f.Close()
	_ = os.Remove(f.Name())
}
