package migrations_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pressly/goose/v3"

	"palaver/internal/pgtest"
	"palaver/migrations"
	"palaver/models"
)

// Migration 00006 turns exchanges.job_id into text. On SQLite that rebuilds
// the exchanges table, which messages, admin_audit and forks reference with
// ON DELETE actions: these tests fill a database at version 3 (the schema the
// seed below is written for) with every kind of row that points at an
// exchange, migrate to the end, and check that nothing was lost or cut loose.

// jobSeed is version 3's data: ann's general chat and its fork, her page's
// chat (whose reply is a proposal she rejected and then accepted), her chat
// about job 42 (with an error row), bob's chat about his own job 42, and an
// administrator's reading of bob's chat. Ids are high so that rows the store
// adds later (PostgreSQL's identity sequences start at 1) do not collide.
var jobSeed = []string{
	`INSERT INTO users (id, username, password_hash, is_admin, created_at) VALUES
		(1001, 'ann', 'x', TRUE, '2026-01-01 10:00:00+00:00'),
		(1002, 'bob', 'x', FALSE, '2026-01-01 10:00:00+00:00')`,
	`INSERT INTO pages (id, user_id, title, content, created_at, updated_at) VALUES
		(1001, 1001, 'Trip', '# Trip', '2026-01-01 10:00:00+00:00', '2026-01-01 10:00:00+00:00')`,
	`INSERT INTO exchanges (id, user_id, scope, page_id, job_id, title, agent_type, forked_from_id, forked_at_seq,
			turn_count, created_at, updated_at) VALUES
		(1001, 1001, 'general', NULL, NULL, 'pelicans', 'router', NULL, NULL, 1, '2026-01-01 10:00:00+00:00', '2026-01-01 10:01:00+00:00'),
		(1002, 1001, 'page', 1001, NULL, 'the trip', 'page_assistant', NULL, NULL, 1, '2026-01-01 10:00:00+00:00', '2026-01-01 10:02:00+00:00'),
		(1003, 1001, 'job', NULL, 42, 'why did job 42 fail', 'router', NULL, NULL, 2, '2026-01-01 10:00:00+00:00', '2026-01-01 10:03:00+00:00'),
		(1004, 1002, 'job', NULL, 42, 'bob''s job', 'router', NULL, NULL, 1, '2026-01-01 10:00:00+00:00', '2026-01-01 10:04:00+00:00'),
		(1005, 1001, 'general', NULL, NULL, 'pelicans again', 'router', 1001, 1, 1, '2026-01-01 10:00:00+00:00', '2026-01-01 10:05:00+00:00')`,
	`INSERT INTO messages (id, exchange_id, seq, role, content, agent_type, created_at) VALUES
		(1001, 1001, 0, 'user', 'tell me about pelicans', NULL, '2026-01-01 10:00:00+00:00'),
		(1002, 1001, 1, 'assistant', 'pelicans fly in winter', 'router', '2026-01-01 10:00:01+00:00'),
		(1003, 1002, 0, 'user', 'shorten the trip', NULL, '2026-01-01 10:00:00+00:00'),
		(1004, 1002, 1, 'assistant', 'here is a shorter trip', 'page_assistant', '2026-01-01 10:00:01+00:00'),
		(1005, 1003, 0, 'user', 'why did job 42 fail', NULL, '2026-01-01 10:00:00+00:00'),
		(1006, 1003, 1, 'assistant', 'the pelican tool ran out of memory', 'router', '2026-01-01 10:00:01+00:00'),
		(1007, 1003, 2, 'user', 'and now?', NULL, '2026-01-01 10:00:02+00:00'),
		(1008, 1003, NULL, 'error', 'the model endpoint timed out', NULL, '2026-01-01 10:00:03+00:00'),
		(1009, 1004, 0, 'user', 'my job', NULL, '2026-01-01 10:00:00+00:00'),
		(1010, 1004, 1, 'assistant', 'your job is fine', 'router', '2026-01-01 10:00:01+00:00'),
		(1011, 1005, 0, 'user', 'tell me about pelicans', NULL, '2026-01-01 10:00:00+00:00'),
		(1012, 1005, 1, 'assistant', 'pelicans fly in winter', 'router', '2026-01-01 10:00:01+00:00')`,
	`UPDATE messages SET feedback = 1 WHERE id = 1006`,
	`INSERT INTO page_revisions (id, page_id, content, edit_source, message_id, created_at) VALUES
		(1001, 1001, '# Trip', 'user', NULL, '2026-01-01 10:00:00+00:00'),
		(1002, 1001, '# Short trip', 'agent', 1004, '2026-01-01 10:00:02+00:00')`,
	`INSERT INTO proposal_rejections (message_id, user_id, created_at) VALUES (1004, 1001, '2026-01-01 10:00:01+00:00')`,
	`INSERT INTO admin_audit (id, admin_id, admin_name, exchange_id, exchange_ref, owner_id, owner_name, reason, created_at) VALUES
		(1001, 1001, 'ann', 1004, 1004, 1002, 'bob', 'a support request', '2026-01-01 11:00:00+00:00')`,
}

// jobTables are the tables whose rows the migration must keep as they were.
var jobTables = []string{"pages", "page_revisions", "exchanges", "messages", "proposal_rejections", "admin_audit"}

// seedAtV3 migrates s's empty database to version 3 with goose on the
// migration files, then writes jobSeed.
func seedAtV3(t *testing.T, s *models.Store) *sql.DB {
	t.Helper()
	ctx := context.Background()
	db, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	dialect := goose.DialectSQLite3
	if s.Dialect() == "postgres" {
		dialect = goose.DialectPostgres
	}
	p, err := goose.NewProvider(dialect, db, os.DirFS(s.Dialect()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 3); err != nil {
		t.Fatalf("up to version 3: %v", err)
	}
	for _, q := range jobSeed {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("seed: %v\n%s", err, q)
		}
	}
	return db
}

// sqliteBefore is a SQLite store seeded at version 3 (seedAtV3) and
// migrated up to the one before version, with the goose provider that takes
// it on: the start of a test of that migration. The store closes with the
// test.
func sqliteBefore(t *testing.T, version int64) (*models.Store, *sql.DB, *goose.Provider) {
	t.Helper()
	s, err := models.Open(filepath.Join(t.TempDir(), "m.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	db := seedAtV3(t, s)
	p, err := goose.NewProvider(goose.DialectSQLite3, db, os.DirFS("sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), version-1); err != nil {
		t.Fatal(err)
	}
	return s, db, p
}

// snapshot prints every row of the tables, in id order, every column.
func snapshot(t *testing.T, db *sql.DB, tables ...string) string {
	t.Helper()
	return rowsOf(t, db, columnsOf(t, db, tables...), tables...)
}

// strings1 runs a query that answers one column of text.
func strings1(t *testing.T, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestJobIDTextSQLite(t *testing.T) {
	s, err := models.Open(filepath.Join(t.TempDir(), "m.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	db := seedAtV3(t, s)
	before := snapshot(t, db, jobTables...)
	const schemaOf = "SELECT type || ' ' || name FROM sqlite_master WHERE type IN ('index', 'trigger') AND (tbl_name = 'exchanges' OR sql LIKE '%exchanges%') ORDER BY 1"
	schemaBefore := strings1(t, db, schemaOf)
	const search = "SELECT CAST(rowid AS TEXT) FROM messages_fts WHERE messages_fts MATCH 'pelican*' ORDER BY rowid"
	hitsBefore := strings1(t, db, search)
	if len(hitsBefore) != 5 {
		t.Fatalf("the seed's search finds %v, want 5 messages", hitsBefore)
	}

	// One connection, so that the one goose migrates on is the one asked
	// below whether it enforces foreign keys again.
	db.SetMaxOpenConns(1)
	if _, err := migrations.UpTo(ctx, db, s.Dialect(), jobIDMigration); err != nil {
		t.Fatalf("up: %v", err)
	}
	var fk int
	if err := db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("after the migration its connection has foreign_keys = %d (%v), want 1", fk, err)
	}
	db.SetMaxOpenConns(8)

	if after := snapshot(t, db, jobTables...); after != before {
		t.Fatalf("rows changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if got := strings1(t, db, "SELECT typeof(job_id) || ' ' || job_id FROM exchanges WHERE job_id IS NOT NULL ORDER BY id"); !slices.Equal(got, []string{"text 42", "text 42"}) {
		t.Fatalf("job ids after the migration: %v, want text 42 twice", got)
	}
	if got := strings1(t, db, "SELECT type FROM pragma_table_info('exchanges') WHERE name = 'job_id'"); !slices.Equal(got, []string{"TEXT"}) {
		t.Fatalf("job_id is declared %v, want TEXT", got)
	}
	if got := strings1(t, db, schemaOf); !slices.Equal(got, schemaBefore) {
		t.Fatalf("indexes and triggers on exchanges: %v, before the migration %v", got, schemaBefore)
	}
	if got := strings1(t, db, "SELECT \"table\" FROM pragma_foreign_key_check"); len(got) != 0 {
		t.Fatalf("foreign_key_check: rows of %v point nowhere", got)
	}
	if _, err := db.Exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)"); err != nil {
		t.Fatalf("full-text index integrity: %v", err)
	}
	if got := strings1(t, db, search); !slices.Equal(got, hitsBefore) {
		t.Fatalf("search finds %v, before the migration %v", got, hitsBefore)
	}
	upToLatest(t, db, s.Dialect())
	checkJobStore(t, s, db)
}

func TestJobIDTextPostgres(t *testing.T) {
	s, dsn := pgtest.Wiped(t), pgtest.DSN(t)
	ctx := context.Background()
	db := mustSQL(t, s)
	seedAtV3(t, s)
	before := snapshot(t, db, jobTables...)
	const search = "SELECT id::text FROM messages WHERE content_tsv @@ to_tsquery('simple', 'pelican:*') ORDER BY id"
	hitsBefore := strings1(t, db, search)
	if len(hitsBefore) != 5 {
		t.Fatalf("the seed's search finds %v, want 5 messages", hitsBefore)
	}
	if _, err := migrations.UpTo(ctx, db, s.Dialect(), jobIDMigration); err != nil {
		t.Fatalf("up: %v", err)
	}
	// A server started after the migration: the pool above has statements
	// prepared against the old column type, which PostgreSQL refuses to run
	// now ("cached plan must not change result type").
	s, err := models.Open(dsn, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if db, err = s.SQL(); err != nil {
		t.Fatal(err)
	}
	if after := snapshot(t, db, jobTables...); after != before {
		t.Fatalf("rows changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if got := strings1(t, db, "SELECT data_type FROM information_schema.columns WHERE table_name = 'exchanges' AND column_name = 'job_id'"); !slices.Equal(got, []string{"text"}) {
		t.Fatalf("job_id is %v, want text", got)
	}
	if got := strings1(t, db, "SELECT pg_typeof(job_id)::text || ' ' || job_id FROM exchanges WHERE job_id IS NOT NULL ORDER BY id"); !slices.Equal(got, []string{"text 42", "text 42"}) {
		t.Fatalf("job ids after the migration: %v, want text 42 twice", got)
	}
	if got := strings1(t, db, search); !slices.Equal(got, hitsBefore) {
		t.Fatalf("search finds %v, before the migration %v", got, hitsBefore)
	}
	upToLatest(t, db, s.Dialect())
	checkJobStore(t, s, db)
}

// jobIDMigration is the migration that turns job_id into text: the checks
// above compare the schema and rows just before and just after it (later
// migrations change other things).
const jobIDMigration = 6

// upToLatest applies the migrations after jobIDMigration, so the store's
// checks meet the schema the store expects.
func upToLatest(t *testing.T, db *sql.DB, dialect string) {
	t.Helper()
	if _, err := migrations.Up(context.Background(), db, dialect); err != nil {
		t.Fatalf("up to the latest: %v", err)
	}
}

// checkJobStore uses the migrated database through the store: job ids are
// strings, a job still has one exchange per user, messages still follow
// their exchange and stored sizes are still kept.
func checkJobStore(t *testing.T, s *models.Store, db *sql.DB) {
	t.Helper()
	ctx := context.Background()
	ex, err := s.JobExchange(ctx, 1001, "42")
	if err != nil || ex.ID != 1003 || ex.JobID == nil || *ex.JobID != "42" {
		t.Fatalf("ann's job 42: %+v, %v; want exchange 1003", ex, err)
	}
	if _, err := s.JobExchange(ctx, 1001, "042"); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("job \"042\" is another job than 42: got %v, want not found", err)
	}
	galaxy := "f2db41e1fa331b3e"
	gx, _, err := s.StartTurn(ctx, models.TurnStart{UserID: 1001, Scope: models.ScopeJob, JobID: &galaxy, AgentType: "router", Query: "why?", Owner: "test"})
	if err != nil {
		t.Fatalf("a job chat with an encoded id: %v", err)
	}
	if _, _, err := s.StartTurn(ctx, models.TurnStart{UserID: 1001, Scope: models.ScopeJob, JobID: &galaxy, AgentType: "router", Query: "again", Owner: "test"}); !errors.Is(err, models.ErrTurnRunning) {
		t.Fatalf("a second exchange for the same job: %v, want ErrTurnRunning (one exchange per job)", err)
	}
	if got, err := s.JobExchange(ctx, 1001, galaxy); err != nil || got.ID != gx.ID {
		t.Fatalf("job %s: %+v, %v; want exchange %d", galaxy, got, err, gx.ID)
	}
	var size int64
	if err := db.QueryRow(fmt.Sprintf("SELECT stored_bytes FROM exchanges WHERE id = %d", gx.ID)).Scan(&size); err != nil || size != int64(len("why?")) {
		t.Fatalf("stored_bytes of the new exchange: %d (%v), want %d", size, err, len("why?"))
	}

	// Deleting ann's first chat takes its messages with it and leaves its
	// fork standing alone: the references reach the rebuilt table.
	if _, err := s.DeleteExchange(ctx, 1001, 1001); err != nil {
		t.Fatal(err)
	}
	var msgs int
	var forkedFrom sql.NullInt64
	if err := db.QueryRow("SELECT COUNT(*) FROM messages WHERE exchange_id = 1001").Scan(&msgs); err != nil || msgs != 0 {
		t.Fatalf("a deleted exchange left %d messages (%v)", msgs, err)
	}
	if err := db.QueryRow("SELECT forked_from_id FROM exchanges WHERE id = 1005").Scan(&forkedFrom); err != nil || forkedFrom.Valid {
		t.Fatalf("the fork of a deleted exchange points to %v (%v), want NULL", forkedFrom, err)
	}
}
