package migrations_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"palaver/migrations"
	"palaver/models"
)

// noIDReuseVersion gives SQLite's integer keys AUTOINCREMENT (issue 22).
const noIDReuseVersion = 17

// userTables are the tables whose rows migration 00017 rebuilds or must
// leave alone: all of them but goose's own and the full-text shadows.
func userTables(t *testing.T, db *sql.DB) []string {
	t.Helper()
	return strings1(t, db, `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'
		AND name NOT LIKE 'sqlite_%' AND name <> 'goose_db_version' ORDER BY name`)
}

// TestNoIDReuseSQLite: the rebuild keeps every row with its id, every index,
// trigger and view exactly as it stood after 00016, every reference and both
// full-text indexes; afterwards ids run on past the highest one ever given,
// including those deleted before the migration that the search watermark,
// the audit trail and the fork families remember; and down gives back the
// schema of 00016.
func TestNoIDReuseSQLite(t *testing.T) {
	ctx := context.Background()
	s, db, p := sqliteBefore(t, noIDReuseVersion)
	// The newest exchange (a fork, with the newest messages) goes before
	// the migration: SQLite would give 1005 and 1011 again.
	for _, q := range []string{
		`INSERT INTO sub_runs (exchange_id, agent, started_at) VALUES (1003, 'helper', '2026-01-01 10:00:00+00:00')`,
		`INSERT INTO retention_runs (source, dry_run, days, cutoff, started_at) VALUES ('manual', 1, 30, '2026-01-01', '2026-01-02')`,
		`INSERT INTO sessions (token, data, expiry) VALUES ('tok', x'00', 1e10)`,
		`DELETE FROM exchanges WHERE id = 1005`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tables := userTables(t, db)
	before := snapshot(t, db, tables...)
	const schemaOf = `SELECT type || ' ' || name || ': ' || sql FROM sqlite_master
		WHERE type IN ('index', 'trigger', 'view') AND sql IS NOT NULL ORDER BY type, name`
	schemaBefore := strings1(t, db, schemaOf)
	tablesBefore := tableDDL(t, db, tables)
	const messages = "SELECT CAST(rowid AS TEXT) FROM messages_fts WHERE messages_fts MATCH 'pelican* OR job' ORDER BY rowid"
	const titles = "SELECT CAST(rowid AS TEXT) FROM exchanges_fts WHERE exchanges_fts MATCH 'pelican* OR trip OR job' ORDER BY rowid"
	msgHits, titleHits := strings1(t, db, messages), strings1(t, db, titles)
	if len(msgHits) == 0 || len(titleHits) == 0 {
		t.Fatalf("the seed's searches find %v and %v", msgHits, titleHits)
	}

	db.SetMaxOpenConns(1)
	if _, err := p.UpTo(ctx, noIDReuseVersion); err != nil {
		t.Fatalf("up: %v", err)
	}
	var fk int
	if err := db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("after the migration its connection has foreign_keys = %d (%v), want 1", fk, err)
	}
	db.SetMaxOpenConns(8)

	if after := snapshot(t, db, tables...); after != before {
		t.Fatalf("rows changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if got := strings1(t, db, schemaOf); !slices.Equal(got, schemaBefore) {
		t.Fatalf("indexes, triggers and views:\n%s\nwant (as after 00016):\n%s", strings.Join(got, "\n"), strings.Join(schemaBefore, "\n"))
	}
	if got := tableDDL(t, db, tables); !slices.Equal(got, tablesBefore) {
		t.Fatalf("tables (but AUTOINCREMENT):\n%s\nwant (as after 00016):\n%s", strings.Join(got, "\n"), strings.Join(tablesBefore, "\n"))
	}
	checkIntact(t, db)
	if got, got2 := strings1(t, db, messages), strings1(t, db, titles); !slices.Equal(got, msgHits) || !slices.Equal(got2, titleHits) {
		t.Fatalf("searches find %v and %v, before the migration %v and %v", got, got2, msgHits, titleHits)
	}
	checkAutoincrement(t, db)

	// The store's own writes after the migration: new ids above all ever given
	// (the later migrations first: the store writes today's columns).
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUser(ctx, "cy", "x", false)
	if err != nil {
		t.Fatal(err)
	}
	ex, q, err := s.StartTurn(ctx, models.TurnStart{UserID: u.ID, Scope: models.ScopeGeneral, AgentType: "router", Query: "pelicans?", Owner: "o"})
	if err != nil {
		t.Fatal(err)
	}
	if u.ID != 1003 || ex.ID != 1006 || q.ID != 1013 {
		t.Fatalf("new user %d, exchange %d, message %d; want 1003, 1006 (1005 was deleted), 1013 (1011-1012 were)", u.ID, ex.ID, q.ID)
	}

	// Down: the schema of 00016 again, the rows kept.
	if _, err := db.Exec("DELETE FROM exchanges WHERE id = 1006"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("DELETE FROM users WHERE id = 1003"); err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := p.DownTo(ctx, noIDReuseVersion-1); err != nil {
		t.Fatalf("down: %v", err)
	}
	db.SetMaxOpenConns(8)
	if got := strings1(t, db, schemaOf); !slices.Equal(got, schemaBefore) {
		t.Fatalf("after down, indexes, triggers and views:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(schemaBefore, "\n"))
	}
	if got := strings1(t, db, "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%' AND name <> 'goose_db_version'"); len(got) != 0 {
		t.Fatalf("after down, %v still AUTOINCREMENT", got)
	}
	checkIntact(t, db)
}

// tableDDL is each table's definition with AUTOINCREMENT, quotes and
// whitespace taken out: what a rebuild must keep (columns, types, defaults,
// checks, references) and nothing it may change.
func tableDDL(t *testing.T, db *sql.DB, tables []string) []string {
	t.Helper()
	var out []string
	for _, table := range tables {
		var ddl string
		if err := db.QueryRow("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&ddl); err != nil {
			t.Fatal(err)
		}
		ddl = strings.ReplaceAll(autoincrementWord.ReplaceAllString(ddl, ""), `"`, "")
		out = append(out, strings.Join(strings.Fields(ddl), ""))
	}
	return out
}

var autoincrementWord = regexp.MustCompile(`(?i)\s+AUTOINCREMENT\b`)

// checkIntact runs SQLite's and FTS5's consistency checks.
func checkIntact(t *testing.T, db *sql.DB) {
	t.Helper()
	if got := strings1(t, db, `SELECT "table" FROM pragma_foreign_key_check`); len(got) != 0 {
		t.Fatalf("foreign_key_check: rows of %v point nowhere", got)
	}
	if got := strings1(t, db, "PRAGMA integrity_check"); !slices.Equal(got, []string{"ok"}) {
		t.Fatalf("integrity_check: %v", got)
	}
	// Rank 1 also compares each index with the content it reads (00015's
	// view of the searchable messages at or below the watermark).
	for _, check := range []string{
		"INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)",
		"INSERT INTO exchanges_fts (exchanges_fts, rank) VALUES ('integrity-check', 1)",
	} {
		if _, err := db.Exec(check); err != nil {
			t.Fatalf("%s: %v", check, err)
		}
	}
}

// autoincrement is an integer key's declaration that never gives an id twice.
var autoincrement = regexp.MustCompile(`(?i)\bINTEGER\s+PRIMARY\s+KEY\s+AUTOINCREMENT\b`)

// checkAutoincrement: every table whose rowid is its key (one INTEGER
// PRIMARY KEY column) is AUTOINCREMENT, read from sqlite_master, so that a
// table added later cannot give a deleted id again unnoticed.
func checkAutoincrement(t *testing.T, db *sql.DB) {
	t.Helper()
	n := 0
	for _, table := range userTables(t, db) {
		pk := strings1(t, db, "SELECT upper(type) FROM pragma_table_info(?) WHERE pk > 0", table)
		if len(pk) != 1 || pk[0] != "INTEGER" {
			continue // a text or composite key: no rowid alias, nothing to reuse
		}
		n++
		var ddl string
		if err := db.QueryRow("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&ddl); err != nil {
			t.Fatal(err)
		}
		if !autoincrement.MatchString(ddl) {
			t.Errorf("table %s has an INTEGER PRIMARY KEY without AUTOINCREMENT: a deleted top id would be given again", table)
		}
	}
	if n < 14 {
		t.Errorf("only %d tables with an integer key found; the query is wrong", n)
	}
}

// TestEveryIntegerKeyAutoincrements checks the rule on the schema as the
// migrations leave it today.
func TestEveryIntegerKeyAutoincrements(t *testing.T) {
	s, err := models.Open(filepath.Join(t.TempDir(), "m.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db := mustSQL(t, s)
	if _, err := migrations.Up(context.Background(), db, s.Dialect()); err != nil {
		t.Fatal(err)
	}
	checkAutoincrement(t, db)
}
