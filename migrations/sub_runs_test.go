package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"palaver/internal/dbtest"
	"palaver/internal/pgtest"
	"palaver/migrations"
	"palaver/models"
)

// subRunsVersion rebuilds exchanges on SQLite for the sub-run scope.
const subRunsVersion = 9

// columnsOf lists each table's columns as they are now.
func columnsOf(t *testing.T, db *sql.DB, tables ...string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := db.Query("SELECT * FROM " + table + " LIMIT 0")
		if err != nil {
			t.Fatal(err)
		}
		cols, err := rows.Columns()
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[table] = cols
	}
	return out
}

// rowsOf prints every row of the tables, in id order, in the given columns
// only (a later migration's new columns aside).
func rowsOf(t *testing.T, db *sql.DB, cols map[string][]string, tables ...string) string {
	t.Helper()
	var b strings.Builder
	for _, table := range tables {
		fmt.Fprintln(&b, "#", table)
		b.WriteString(dbtest.Dump(t, db, "SELECT "+strings.Join(cols[table], ", ")+" FROM "+table+" ORDER BY 1"))
	}
	return b.String()
}

// TestSubRunsSQLite: the rebuild of exchanges for sub-runs keeps every row,
// index, trigger and reference, and both full-text indexes.
func TestSubRunsSQLite(t *testing.T) {
	s, err := models.Open(filepath.Join(t.TempDir(), "m.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	db := seedAtV3(t, s)
	if _, err := migrations.UpTo(ctx, db, s.Dialect(), subRunsVersion-1); err != nil {
		t.Fatal(err)
	}
	cols := columnsOf(t, db, jobTables...)
	before := rowsOf(t, db, cols, jobTables...)
	const schemaOf = "SELECT type || ' ' || name FROM sqlite_master WHERE type IN ('index', 'trigger') AND (tbl_name = 'exchanges' OR sql LIKE '%exchanges%') ORDER BY 1"
	schemaBefore := strings1(t, db, schemaOf)
	const messages = "SELECT CAST(rowid AS TEXT) FROM messages_fts WHERE messages_fts MATCH 'pelican*' ORDER BY rowid"
	const titles = "SELECT CAST(rowid AS TEXT) FROM exchanges_fts WHERE exchanges_fts MATCH 'pelican* OR trip' ORDER BY rowid"
	msgHits, titleHits := strings1(t, db, messages), strings1(t, db, titles)
	if len(msgHits) == 0 || len(titleHits) == 0 {
		t.Fatalf("the seed's searches find %v and %v", msgHits, titleHits)
	}

	db.SetMaxOpenConns(1)
	if _, err := migrations.UpTo(ctx, db, s.Dialect(), subRunsVersion); err != nil {
		t.Fatalf("up: %v", err)
	}
	var fk int
	if err := db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("after the migration its connection has foreign_keys = %d (%v), want 1", fk, err)
	}
	db.SetMaxOpenConns(8)

	if after := rowsOf(t, db, cols, jobTables...); after != before {
		t.Fatalf("rows changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	want := slices.Sorted(slices.Values(append(slices.Clone(schemaBefore), "index exchanges_parent")))
	if got := strings1(t, db, schemaOf); !slices.Equal(got, want) {
		t.Fatalf("indexes and triggers on exchanges: %v, want %v", got, want)
	}
	if got := strings1(t, db, "SELECT \"table\" FROM pragma_foreign_key_check"); len(got) != 0 {
		t.Fatalf("foreign_key_check: rows of %v point nowhere", got)
	}
	// Rank 1 also compares the index with the table it reads: right for the
	// titles, all indexed, not for the messages, of which error rows and
	// tool calls are not (00007).
	for _, check := range []string{
		"INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')",
		"INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('integrity-check', 1)",
	} {
		if _, err := db.Exec(check); err != nil {
			t.Fatalf("%s: %v", check, err)
		}
	}
	if got, got2 := strings1(t, db, messages), strings1(t, db, titles); !slices.Equal(got, msgHits) || !slices.Equal(got2, titleHits) {
		t.Fatalf("searches find %v and %v, before the migration %v and %v", got, got2, msgHits, titleHits)
	}
	checkSubRunStore(t, s)
}

func TestSubRunsPostgres(t *testing.T) {
	s := postgresAtV3(t)
	ctx := context.Background()
	db, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.UpTo(ctx, db, s.Dialect(), subRunsVersion-1); err != nil {
		t.Fatal(err)
	}
	cols := columnsOf(t, db, jobTables...)
	before := rowsOf(t, db, cols, jobTables...)
	if _, err := migrations.UpTo(ctx, db, s.Dialect(), subRunsVersion); err != nil {
		t.Fatalf("up: %v", err)
	}
	// A fresh pool: the old one has plans of the table as it was.
	s2, err := models.Open(pgtest.DSN(t), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	db2, err := s2.SQL()
	if err != nil {
		t.Fatal(err)
	}
	if after := rowsOf(t, db2, cols, jobTables...); after != before {
		t.Fatalf("rows changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	checkSubRunStore(t, s2)
}

// checkSubRunStore makes a sub-run of a migrated exchange through the store
// and deletes its parent: the sub-run goes with it.
func checkSubRunStore(t *testing.T, s *models.Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := migrations.Up(ctx, mustSQL(t, s), s.Dialect()); err != nil {
		t.Fatal(err)
	}
	sub, _, err := s.StartSubRun(ctx, models.SubRunStart{UserID: 1001, ParentID: 1001, ParentSeq: 1, Agent: "search", Task: "pelicans", Owner: "test"})
	if err != nil {
		t.Fatalf("a sub-run of a migrated exchange: %v", err)
	}
	if _, err := s.FinishSubRun(ctx, sub.ID, "test", models.SubRunOK, "none"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteExchange(ctx, 1001, 1001); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := mustSQL(t, s).QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM exchanges WHERE id = %d", sub.ID)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the sub-run outlived its parent: %d (%v)", n, err)
	}
}

func mustSQL(t *testing.T, s *models.Store) *sql.DB {
	t.Helper()
	db, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// postgresAtV3 holds the test database (the lock the other packages' tests
// take too) until the test ends, wipes it and seeds it at version 3.
func postgresAtV3(t *testing.T) *models.Store {
	t.Helper()
	s := pgtest.Wiped(t)
	seedAtV3(t, s)
	return s
}
