package throttle

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync/atomic"
	"time"
)

// Postgres is a Throttle counted in a PostgreSQL database (the
// throttle_events table of migration 00012), so that every server process
// sharing the database shares the counts: five failed sign-ins spread over
// three processes are five. Its rows are bounded as Memory's keys are: a
// refused Take writes nothing, so a key has at most Max events within its
// window, and the expired ones are deleted at most once a minute by each
// process.
//
// Take serialises the takes of one key with a transaction-scoped advisory
// lock on it (taken in a fixed order when a take names several keys), so
// parallel attempts, in one process or several, cannot slip past the limit.
type Postgres struct {
	db        *sql.DB
	now       func() time.Time
	lastSweep atomic.Int64 // Unix nanoseconds
}

// NewPostgres counts in db, a PostgreSQL pool migrated to 00012. now is the
// clock (nil: the database's, so processes whose clocks differ still agree).
func NewPostgres(db *sql.DB, now func() time.Time) *Postgres {
	return &Postgres{db: db, now: now}
}

// lockName is what a key's advisory lock is taken on (hashed by PostgreSQL).
func lockName(k Key) string { return "throttle|" + k.Limit.Name + "|" + k.ID }

// Take implements Throttle.
func (p *Postgres) Take(ctx context.Context, keys ...Key) (time.Duration, error) {
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, func(a, b Key) int { return cmp.Compare(lockName(a), lockName(b)) })
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("throttle: %w", err)
	}
	defer tx.Rollback()
	for _, k := range sorted {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, lockName(k)); err != nil {
			return 0, fmt.Errorf("throttle: lock: %w", err)
		}
	}
	now, err := p.clock(ctx, tx)
	if err != nil {
		return 0, err
	}
	var wait time.Duration
	for _, k := range keys {
		// The key's latest Max events within the window; when there are
		// Max, the next is let in when the oldest of them leaves it.
		var n int
		var oldest sql.NullTime
		err := tx.QueryRowContext(ctx, `SELECT count(*), min(at) FROM (
				SELECT at FROM throttle_events WHERE limit_name = $1 AND key_id = $2 AND at > $3
				ORDER BY at DESC LIMIT $4) AS latest`,
			k.Limit.Name, k.ID, now.Add(-k.Limit.Window), k.Limit.Max).Scan(&n, &oldest)
		if err != nil {
			return 0, fmt.Errorf("throttle: count: %w", err)
		}
		if n >= k.Limit.Max && oldest.Valid {
			wait = max(wait, oldest.Time.Add(k.Limit.Window).Sub(now))
		}
	}
	if wait > 0 {
		return wait, nil
	}
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `INSERT INTO throttle_events (limit_name, key_id, at, expires_at) VALUES ($1, $2, $3, $4)`,
			k.Limit.Name, k.ID, now, now.Add(k.Limit.Window)); err != nil {
			return 0, fmt.Errorf("throttle: count: %w", err)
		}
	}
	if last := p.lastSweep.Load(); now.UnixNano()-last >= int64(sweepEvery) && p.lastSweep.CompareAndSwap(last, now.UnixNano()) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM throttle_events WHERE expires_at <= $1`, now); err != nil {
			return 0, fmt.Errorf("throttle: sweep: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("throttle: %w", err)
	}
	return 0, nil
}

// clock is now by the throttle's clock.
func (p *Postgres) clock(ctx context.Context, tx *sql.Tx) (time.Time, error) {
	if p.now != nil {
		return p.now().UTC(), nil
	}
	var now time.Time
	if err := tx.QueryRowContext(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, fmt.Errorf("throttle: clock: %w", err)
	}
	return now.UTC(), nil
}

// Undo implements Throttle.
func (p *Postgres) Undo(ctx context.Context, keys ...Key) error {
	for _, k := range keys {
		if _, err := p.db.ExecContext(ctx, `DELETE FROM throttle_events WHERE id = (
				SELECT id FROM throttle_events WHERE limit_name = $1 AND key_id = $2 ORDER BY at DESC, id DESC LIMIT 1)`,
			k.Limit.Name, k.ID); err != nil {
			return fmt.Errorf("throttle: undo: %w", err)
		}
	}
	return nil
}

// Reset implements Throttle.
func (p *Postgres) Reset(ctx context.Context, keys ...Key) error {
	for _, k := range keys {
		if _, err := p.db.ExecContext(ctx, `DELETE FROM throttle_events WHERE limit_name = $1 AND key_id = $2`,
			k.Limit.Name, k.ID); err != nil {
			return fmt.Errorf("throttle: reset: %w", err)
		}
	}
	return nil
}
