// Package migrations holds Palaver's versioned SQL schema, one folder per
// dialect, applied in order by goose from files embedded in the binary.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// Up applies every pending migration for dialect ("sqlite" or "postgres") and
// returns how many it applied. Each migration runs in its own transaction.
func Up(ctx context.Context, db *sql.DB, dialect string) (int, error) {
	p, err := provider(db, dialect)
	if err != nil {
		return 0, err
	}
	results, err := p.Up(ctx)
	if err != nil {
		return len(results), fmt.Errorf("migrate %s: %w", dialect, err)
	}
	return len(results), nil
}

// UpTo applies pending migrations up to and including version: a test of a
// migration's data step fills a database at the version before it.
func UpTo(ctx context.Context, db *sql.DB, dialect string, version int64) (int, error) {
	p, err := provider(db, dialect)
	if err != nil {
		return 0, err
	}
	results, err := p.UpTo(ctx, version)
	if err != nil {
		return len(results), fmt.Errorf("migrate %s to %d: %w", dialect, version, err)
	}
	return len(results), nil
}

func provider(db *sql.DB, dialect string) (*goose.Provider, error) {
	var gd goose.Dialect
	switch dialect {
	case "sqlite":
		gd = goose.DialectSQLite3
	case "postgres":
		gd = goose.DialectPostgres
	default:
		return nil, fmt.Errorf("migrate: unknown dialect %q", dialect)
	}
	sub, err := fs.Sub(files, dialect)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	p, err := goose.NewProvider(gd, db, sub)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return p, nil
}
