package models

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Cursor is a keyset position in a list ordered by (time DESC, id DESC).
type Cursor struct {
	At time.Time
	ID int64
}

// String encodes the cursor as an opaque token.
func (c Cursor) String() string {
	raw := strconv.FormatInt(c.At.UnixMicro(), 10) + "." + strconv.FormatInt(c.ID, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// ParseCursor decodes a token made by Cursor.String.
func ParseCursor(token string) (Cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: %q", ErrBadCursor, token)
	}
	at, id, ok := strings.Cut(string(raw), ".")
	if !ok {
		return Cursor{}, fmt.Errorf("%w: %q", ErrBadCursor, token)
	}
	micros, err1 := strconv.ParseInt(at, 10, 64)
	n, err2 := strconv.ParseInt(id, 10, 64)
	if err1 != nil || err2 != nil || n <= 0 {
		return Cursor{}, fmt.Errorf("%w: %q", ErrBadCursor, token)
	}
	return Cursor{At: time.UnixMicro(micros).UTC(), ID: n}, nil
}
