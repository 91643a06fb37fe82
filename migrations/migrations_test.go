package migrations_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"palaver/internal/pgtest"
	"palaver/migrations"
	"palaver/models"
)

// files lists a dialect's migration files, as the embed pattern picks them.
func files(t *testing.T, dialect string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dialect, "*.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	slices.Sort(names)
	return names
}

// TestDialectsInStep checks both dialects have the same migrations, so a
// database moved from one engine to the other sits at the same version.
func TestDialectsInStep(t *testing.T) {
	sqlite, postgres := files(t, "sqlite"), files(t, "postgres")
	if len(sqlite) == 0 {
		t.Fatal("no sqlite migrations found")
	}
	if !slices.Equal(sqlite, postgres) {
		t.Fatalf("migration files differ:\nsqlite:   %v\npostgres: %v", sqlite, postgres)
	}
}

func TestUpSQLite(t *testing.T) {
	s, err := models.Open(filepath.Join(t.TempDir(), "m.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkUp(t, s, len(files(t, "sqlite")))
}

func TestUpPostgres(t *testing.T) {
	s := pgtest.Wiped(t)
	checkUp(t, s, len(files(t, "postgres")))
}

// checkUp applies every migration to a fresh database, then none.
func checkUp(t *testing.T, s *models.Store, want int) {
	t.Helper()
	ctx := context.Background()
	db, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	n, err := migrations.Up(ctx, db, s.Dialect())
	if err != nil {
		t.Fatalf("first Up: %v", err)
	}
	if n < 1 || n != want {
		t.Fatalf("first Up applied %d migrations, want %d (all of them)", n, want)
	}
	n, err = migrations.Up(ctx, db, s.Dialect())
	if err != nil {
		t.Fatalf("second Up: %v", err)
	}
	if n != 0 {
		t.Fatalf("second Up applied %d migrations, want 0", n)
	}
	// The store's own entry point agrees: nothing left to do.
	if n, err := s.Migrate(ctx); err != nil || n != 0 {
		t.Fatalf("Store.Migrate after Up = %d, %v; want 0, nil", n, err)
	}
	for _, table := range []string{"users", "api_keys", "pages", "page_revisions", "exchanges", "messages", "sessions"} {
		if _, err := db.Exec("SELECT COUNT(*) FROM " + table); err != nil {
			t.Errorf("table %s missing after Up: %v", table, err)
		}
	}
}

func TestUpUnknownDialect(t *testing.T) {
	s, err := models.Open(filepath.Join(t.TempDir(), "m.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	db, _ := s.SQL()
	_, err = migrations.Up(context.Background(), db, "mysql")
	if err == nil || !strings.Contains(err.Error(), "mysql") {
		t.Fatalf("Up with dialect mysql: err = %v, want one naming the dialect", err)
	}
}
