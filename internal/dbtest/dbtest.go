// Package dbtest dumps database rows as text, so that a test can prove a
// refused request, or a migration, changed nothing: dump before, act, dump
// after, compare.
package dbtest

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
)

// Dump runs each query and prints every row it answers, one line a row,
// every column (text columns as text, not bytes). Order the queries'
// rows (ORDER BY) so that two dumps of the same data are equal.
func Dump(t testing.TB, db *sql.DB, queries ...string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range queries {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		vals, ptrs := make([]any, len(cols)), make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					vals[i] = string(bs)
				}
			}
			fmt.Fprintln(&b, vals...)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}
