package models

import (
	"database/sql/driver"
	"fmt"
	"strings"
	"time"
)

// nullTime reads a time that may be NULL from any dialect. SQLite hands an
// aggregate over a DATETIME column (MAX(updated_at)) back as text, without
// the column's type, so the driver cannot turn it into a time by itself.
type nullTime struct {
	t  time.Time
	ok bool
}

// sqliteTimeLayouts are the layouts SQLite times are written in (those of
// the mattn/go-sqlite3 driver), most likely first.
var sqliteTimeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// Scan implements sql.Scanner.
func (n *nullTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n = nullTime{}
		return nil
	case time.Time:
		*n = nullTime{t: x.UTC(), ok: true}
		return nil
	case []byte:
		return n.parse(string(x))
	case string:
		return n.parse(x)
	}
	return fmt.Errorf("read time: unexpected %T", v)
}

func (n *nullTime) parse(s string) error {
	s = strings.TrimSuffix(s, "Z")
	for _, layout := range sqliteTimeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			*n = nullTime{t: t.UTC(), ok: true}
			return nil
		}
	}
	return fmt.Errorf("read time: %q is not a time", s)
}

// Value implements driver.Valuer, which GORM needs to treat the type as a
// column rather than a relation.
func (n nullTime) Value() (driver.Value, error) {
	if !n.ok {
		return nil, nil
	}
	return n.t, nil
}

// ptr is the time, or nil for NULL.
func (n nullTime) ptr() *time.Time {
	if !n.ok {
		return nil
	}
	t := n.t
	return &t
}
