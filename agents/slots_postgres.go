package agents

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// The lease of a process holding slots in PostgreSQL: renewed every
// SlotLeaseRenew, it lasts SlotLeaseTTL. A process that dies without giving
// its slots back (kill -9, a lost host) stops holding them at most
// SlotLeaseTTL after its last renewal; they no longer count from then on,
// and the next renewal of any live process deletes them.
const (
	SlotLeaseTTL   = 30 * time.Second
	SlotLeaseRenew = 10 * time.Second
)

// PostgresSlots counts slots in a PostgreSQL database (migration 00012's
// slot_holders and user_slots), so that a user's limits hold across every
// process sharing it: 4 turns running in all, not 4 per process.
//
// Each process is a holder with a lease (slot_holders.expires_at); each slot
// is a row naming its holder. A slot counts only while its holder's lease
// is live, which is how the slots of a dead process are not leaked: they
// stop counting when its lease runs out, and go with its holder row (ON
// DELETE CASCADE) at the next sweep. Acquire serialises the acquisitions of
// one user's kind of slot with a transaction-scoped advisory lock, so racing
// requests on several processes cannot pass the limit together. A release
// that cannot reach the database (it is away) is kept and written at the
// next renewal. A live process cut off from the database for longer than
// its lease is taken for dead like any other: its slots stop counting, and
// may be swept, until they end; the limits are looser for that while, never
// tighter, and the process registers again at its next renewal.
type PostgresSlots struct {
	db     *sql.DB
	limits map[SlotKind]int
	holder string
	log    *slog.Logger
	ttl    time.Duration

	mu      sync.Mutex
	pending []int64 // slots given back while the database could not be reached

	stop context.CancelFunc
	done chan struct{}
}

// NewPostgresSlots registers this process as a slot holder in db (a
// PostgreSQL pool migrated to 00012) and renews its lease until ctx ends or
// Close, with API.md's limits.
func NewPostgresSlots(ctx context.Context, db *sql.DB, log *slog.Logger) (*PostgresSlots, error) {
	return newPostgresSlots(ctx, db, log, processOwner(), defaultLimits(), SlotLeaseTTL, SlotLeaseRenew)
}

func defaultLimits() map[SlotKind]int {
	return map[SlotKind]int{SlotTurn: MaxTurnsPerUser, SlotSocket: MaxSocketsPerUser, SlotStream: MaxStreamsPerUser}
}

func newPostgresSlots(ctx context.Context, db *sql.DB, log *slog.Logger, holder string, limits map[SlotKind]int, ttl, renew time.Duration) (*PostgresSlots, error) {
	if log == nil {
		log = slog.Default()
	}
	p := &PostgresSlots{db: db, limits: limits, holder: holder, log: log, ttl: ttl, done: make(chan struct{})}
	if err := p.register(ctx); err != nil {
		return nil, err
	}
	ctx, p.stop = context.WithCancel(context.WithoutCancel(ctx))
	go p.renewEvery(ctx, renew)
	return p, nil
}

// register makes (or renews) this process's holder row.
func (p *PostgresSlots) register(ctx context.Context) error {
	_, err := p.db.ExecContext(ctx, `INSERT INTO slot_holders (holder, expires_at) VALUES ($1, clock_timestamp() + $2 * interval '1 millisecond')
		ON CONFLICT (holder) DO UPDATE SET expires_at = EXCLUDED.expires_at`, p.holder, p.ttl.Milliseconds())
	if err != nil {
		return fmt.Errorf("slots: register %s: %w", p.holder, err)
	}
	return nil
}

// Acquire implements Slots.
func (p *PostgresSlots) Acquire(ctx context.Context, kind SlotKind, userID int64) (func(), error) {
	id, err := p.acquire(ctx, kind, userID)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" { // the holder row was swept: this process was judged dead
		if err = p.register(ctx); err == nil {
			id, err = p.acquire(ctx, kind, userID)
		}
	}
	if err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { p.release(id) }) }, nil
}

func (p *PostgresSlots) acquire(ctx context.Context, kind SlotKind, userID int64) (int64, error) {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("slots: %w", err)
	}
	defer tx.Rollback()
	if limit, ok := p.limits[kind]; ok {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
			"slots|"+string(kind)+"|"+strconv.FormatInt(userID, 10)); err != nil {
			return 0, fmt.Errorf("slots: lock: %w", err)
		}
		var held int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM user_slots s JOIN slot_holders h ON h.holder = s.holder
				WHERE s.user_id = $1 AND s.kind = $2 AND h.expires_at > clock_timestamp()`, userID, string(kind)).Scan(&held); err != nil {
			return 0, fmt.Errorf("slots: count: %w", err)
		}
		if held >= limit {
			return 0, tooMany(kind)
		}
	}
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO user_slots (holder, user_id, kind) VALUES ($1, $2, $3) RETURNING id`,
		p.holder, userID, string(kind)).Scan(&id); err != nil {
		return 0, fmt.Errorf("slots: take: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("slots: %w", err)
	}
	return id, nil
}

// release gives a slot back, or keeps it for the next renewal when the
// database cannot be reached now.
func (p *PostgresSlots) release(id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := p.db.ExecContext(ctx, `DELETE FROM user_slots WHERE id = $1`, id); err != nil {
		p.log.Warn("slot not given back yet: retried at the next lease renewal", "slot", id, "err", err)
		p.mu.Lock()
		p.pending = append(p.pending, id)
		p.mu.Unlock()
	}
}

// renewEvery renews the lease, writes the pending releases and sweeps the
// holders whose leases ran out, every renew, until ctx ends.
func (p *PostgresSlots) renewEvery(ctx context.Context, renew time.Duration) {
	defer close(p.done)
	t := time.NewTicker(renew)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := p.renew(ctx); err != nil && ctx.Err() == nil {
				p.log.Warn("slot lease not renewed", "holder", p.holder, "err", err)
			}
		}
	}
}

// renew is one round of renewEvery.
func (p *PostgresSlots) renew(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.ttl/2)
	defer cancel()
	if err := p.register(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	if len(pending) > 0 {
		if _, err := p.db.ExecContext(ctx, `DELETE FROM user_slots WHERE id = ANY($1)`, pending); err != nil {
			p.mu.Lock()
			p.pending = append(p.pending, pending...)
			p.mu.Unlock()
			return fmt.Errorf("slots: give back %d: %w", len(pending), err)
		}
	}
	if _, err := p.db.ExecContext(ctx, `DELETE FROM slot_holders WHERE expires_at < clock_timestamp()`); err != nil {
		return fmt.Errorf("slots: sweep: %w", err)
	}
	return nil
}

// Close stops renewing and deletes this process's holder row with its
// slots (the turns and connections are over: close them first).
func (p *PostgresSlots) Close(ctx context.Context) error {
	p.stop()
	<-p.done
	if _, err := p.db.ExecContext(ctx, `DELETE FROM slot_holders WHERE holder = $1`, p.holder); err != nil {
		return fmt.Errorf("slots: close: %w", err)
	}
	return nil
}
