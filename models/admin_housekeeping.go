package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"gorm.io/gorm"
)

// Housekeeping: orphans, the retention policy and its runs, the database's
// size and VACUUM.

// OrphanGrace is how long an exchange may sit without messages before it
// counts as an orphan: one being created right now is not one.
const OrphanGrace = time.Hour

// Orphan is an exchange housekeeping would purge, and why.
type Orphan struct {
	ID        int64
	UserID    int64
	Username  string
	Scope     string
	Title     string
	PageTitle *string
	UpdatedAt time.Time
	Messages  int64
	Empty     bool // no messages at all; otherwise its page is deleted
}

// orphanWhere selects orphans among exchanges e: those without a single
// message (idle since before the grace period) and the chats of pages in the
// bin, which deleting the page should have taken with it.
const orphanWhere = `e.turn_status <> 'running' AND (
	(NOT EXISTS (SELECT 1 FROM messages m WHERE m.exchange_id = e.id) AND e.updated_at < ?)
	OR (e.scope = 'page' AND EXISTS (SELECT 1 FROM pages p WHERE p.id = e.page_id AND p.deleted_at IS NOT NULL)))`

// AdminOrphans lists up to limit orphans, oldest activity first, and how many
// there are in all.
func (s *Store) AdminOrphans(ctx context.Context, now time.Time, limit int) ([]Orphan, int64, error) {
	db := s.db.WithContext(ctx)
	cutoff := now.Add(-OrphanGrace).UTC()
	var total int64
	if err := db.Table("exchanges AS e").Where(orphanWhere, cutoff).Count(&total).Error; err != nil {
		return nil, 0, wrap("admin orphans", err)
	}
	var out []Orphan
	err := db.Table("exchanges AS e").
		Select(`e.id, e.user_id, u.username, e.scope, e.title, p.title AS page_title, e.updated_at,
			(SELECT COUNT(*) FROM messages m WHERE m.exchange_id = e.id) AS messages`).
		Joins("JOIN users u ON u.id = e.user_id").
		Joins("LEFT JOIN pages p ON p.id = e.page_id").
		Where(orphanWhere, cutoff).Order("e.updated_at, e.id").Limit(limit).Scan(&out).Error
	for i := range out {
		out[i].Empty = out[i].Messages == 0
	}
	return out, total, wrap("admin orphans", err)
}

// AdminPurgeOrphans deletes every orphan and says how many exchanges and
// messages went.
func (s *Store) AdminPurgeOrphans(ctx context.Context, now time.Time) (exchanges, messages int64, err error) {
	cutoff := now.Add(-OrphanGrace).UTC()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ids := tx.Table("exchanges AS e").Select("e.id").Where(orphanWhere, cutoff)
		if err := tx.Model(&Message{}).Where("exchange_id IN (?)", ids).Count(&messages).Error; err != nil {
			return err
		}
		var gone []int64
		if err := tx.Table("exchanges AS e").Where(orphanWhere, cutoff).Pluck("e.id", &gone).Error; err != nil {
			return err
		}
		if err := s.reparentForks(tx, gone); err != nil {
			return err
		}
		res := tx.Where("id IN (?)", ids).Delete(&Exchange{})
		exchanges = res.RowsAffected
		return res.Error
	})
	return exchanges, messages, wrap("admin purge orphans", err)
}

// Settings are what administrators set in the UI (one row).
type Settings struct {
	ID               int64     `gorm:"primaryKey"`
	RetentionEnabled bool      `gorm:"not null"`
	RetentionDays    int64     `gorm:"not null"`
	UpdatedAt        time.Time `gorm:"not null"`
}

// Settings reads the settings.
func (s *Store) Settings(ctx context.Context) (*Settings, error) {
	var st Settings
	err := s.db.WithContext(ctx).Take(&st, 1).Error
	return &st, wrap("settings", err)
}

// MaxRetentionDays bounds the retention period (100 years).
const MaxRetentionDays = 36500

// ErrRetentionDays means a retention period out of range.
var ErrRetentionDays = fmt.Errorf("keep conversations for 1 to %d days", MaxRetentionDays)

// AdminSetRetention turns the retention policy on or off and sets its period.
func (s *Store) AdminSetRetention(ctx context.Context, enabled bool, days int64) (*Settings, error) {
	if days < 1 || days > MaxRetentionDays {
		return nil, ErrRetentionDays
	}
	err := s.db.WithContext(ctx).Model(&Settings{}).Where("id = 1").Updates(map[string]any{
		"retention_enabled": enabled, "retention_days": days, "updated_at": now(),
	}).Error
	if err != nil {
		return nil, wrap("admin set retention", err)
	}
	return s.Settings(ctx)
}

// RetentionEvery is how often the background job applies the retention
// policy while it is on.
const RetentionEvery = time.Hour

// Retention run sources.
const (
	RetentionScheduled = "schedule" // the background job
	RetentionManual    = "manual"   // an administrator
)

// RetentionRun is the log entry of one retention run.
type RetentionRun struct {
	ID               int64  `gorm:"primaryKey"`
	Source           string `gorm:"not null"`
	AdminID          *int64
	DryRun           bool      `gorm:"not null"`
	Days             int64     `gorm:"not null"`
	Cutoff           time.Time `gorm:"not null"` // exchanges idle since before it go
	StartedAt        time.Time `gorm:"not null"`
	FinishedAt       *time.Time
	DeletedExchanges int64 `gorm:"not null"` // or, dry, would delete
	DeletedMessages  int64 `gorm:"not null"`
	Error            *string
}

// retentionWhere selects the exchanges a retention run deletes: idle since
// before the cutoff, not pinned, no turn running or paused (a paused turn
// waits for its person's answer, however long). Sub-runs are not judged
// by their own activity: they go with their parent.
const retentionWhere = "updated_at < ? AND NOT pinned AND turn_status <> 'running' AND NOT turn_waiting AND parent_id IS NULL"

// retentionBatch is how many exchanges one transaction deletes, so that a
// large first run does not hold SQLite's write lock for long.
const retentionBatch = 500

// ErrRetentionOff means the scheduled job found the policy turned off.
var ErrRetentionOff = errors.New("the retention policy is off")

// RetentionRequest says who runs retention and how.
type RetentionRequest struct {
	Source  string // RetentionScheduled or RetentionManual
	AdminID *int64 // with RetentionManual
	DryRun  bool   // count what would go, delete nothing
	Now     time.Time
	// BatchSize is how many exchanges one transaction deletes; 0 is
	// retentionBatch.
	BatchSize int
	// Days overrides the policy's period for a dry run (an administrator
	// trying a period before saving it); 0 uses the policy's.
	Days int64
}

// RunRetention applies the retention policy: it deletes every exchange idle
// for more than the policy's days (pinned ones and running turns exempt), in
// batches, and logs the run with what went; a dry run only counts. A
// scheduled run does nothing while the policy is off (ErrRetentionOff);
// an administrator's runs use the period whether the schedule is on or not.
// The run is logged even when it fails, with its error.
func (s *Store) RunRetention(ctx context.Context, r RetentionRequest) (*RetentionRun, error) {
	st, err := s.Settings(ctx)
	if err != nil {
		return nil, fmt.Errorf("run retention: %w", err)
	}
	if r.Source == RetentionScheduled && !st.RetentionEnabled {
		return nil, ErrRetentionOff
	}
	if r.Now.IsZero() {
		r.Now = now()
	}
	days := st.RetentionDays
	if r.Days != 0 {
		if !r.DryRun || r.Days < 1 || r.Days > MaxRetentionDays {
			return nil, fmt.Errorf("run retention: %d days: %w", r.Days, ErrRetentionDays)
		}
		days = r.Days
	}
	run := &RetentionRun{
		Source: r.Source, AdminID: r.AdminID, DryRun: r.DryRun, Days: days,
		Cutoff: RetentionCutoff(r.Now, days), StartedAt: now(),
	}
	db := s.db.WithContext(ctx)
	if err := db.Create(run).Error; err != nil {
		return nil, wrap("run retention: log", err)
	}
	if r.BatchSize <= 0 {
		r.BatchSize = retentionBatch
	}
	runErr := s.retention(ctx, run, r.BatchSize)
	finished := now()
	run.FinishedAt = &finished
	if runErr != nil {
		msg := runErr.Error()
		run.Error = &msg
	}
	// Logged with a fresh context: a run cut short by shutdown still says so.
	logCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err = s.db.WithContext(logCtx).Model(run).Updates(map[string]any{
		"finished_at": run.FinishedAt, "deleted_exchanges": run.DeletedExchanges,
		"deleted_messages": run.DeletedMessages, "error": run.Error,
	}).Error
	if runErr != nil {
		return run, wrap("run retention", runErr)
	}
	return run, wrap("run retention: log", err)
}

// RetentionCutoff is the time before which exchanges idle for more than days
// began their idleness.
func RetentionCutoff(at time.Time, days int64) time.Time {
	return at.UTC().Add(-time.Duration(days) * 24 * time.Hour).Truncate(time.Microsecond)
}

// retention counts, or deletes batch by batch, what run's cutoff selects.
func (s *Store) retention(ctx context.Context, run *RetentionRun, batch int) error {
	db := s.db.WithContext(ctx)
	if run.DryRun {
		sel := db.Model(&Exchange{}).Select("id").Where(retentionWhere, run.Cutoff)
		if err := db.Model(&Exchange{}).Where(retentionWhere, run.Cutoff).Count(&run.DeletedExchanges).Error; err != nil {
			return err
		}
		return db.Model(&Message{}).Where("exchange_id IN (?)", sel).Count(&run.DeletedMessages).Error
	}
	for {
		var ids []int64
		if err := db.Model(&Exchange{}).Where(retentionWhere, run.Cutoff).
			Order("updated_at, id").Limit(batch).Pluck("id", &ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		var told []Deletion
		err := db.Transaction(func(tx *gorm.DB) error {
			// Checked again inside the transaction: an exchange that became
			// active or was pinned since the batch was chosen stays.
			var msgs int64
			sel := tx.Model(&Exchange{}).Select("id").Where("id IN ?", ids).Where(retentionWhere, run.Cutoff)
			if err := tx.Model(&Message{}).Where("exchange_id IN (?)", sel).Count(&msgs).Error; err != nil {
				return err
			}
			var gone []int64
			if err := tx.Model(&Exchange{}).Where("id IN ?", ids).Where(retentionWhere, run.Cutoff).Pluck("id", &gone).Error; err != nil {
				return err
			}
			d, err := s.beforeDelete(tx, gone)
			if err != nil {
				return err
			}
			if err := s.reparentForks(tx, gone); err != nil {
				return err
			}
			res := tx.Where("id IN ?", ids).Where(retentionWhere, run.Cutoff).Delete(&Exchange{})
			if res.Error != nil {
				return res.Error
			}
			run.DeletedExchanges += res.RowsAffected
			run.DeletedMessages += msgs
			told, err = s.afterDelete(tx, d)
			return err
		})
		if err != nil {
			return err
		}
		s.tellDeleted(told)
		if len(ids) < batch {
			return nil
		}
	}
}

// RetentionCandidate is an exchange the retention policy would delete.
type RetentionCandidate struct {
	ID          int64
	Username    string
	Scope       string
	Title       string
	UpdatedAt   time.Time
	StoredBytes int64
}

// AdminRetentionCandidates lists up to limit exchanges idle since before
// cutoff that retention would delete, oldest first.
func (s *Store) AdminRetentionCandidates(ctx context.Context, cutoff time.Time, limit int) ([]RetentionCandidate, error) {
	var out []RetentionCandidate
	err := s.db.WithContext(ctx).Table("exchanges AS e").
		Select("e.id, u.username, e.scope, e.title, e.updated_at, e.stored_bytes").
		Joins("JOIN users u ON u.id = e.user_id").
		Where("e.updated_at < ? AND NOT e.pinned AND e.turn_status <> 'running' AND NOT e.turn_waiting AND e.parent_id IS NULL", cutoff.UTC()).
		Order("e.updated_at, e.id").Limit(limit).Scan(&out).Error
	return out, wrap("admin retention candidates", err)
}

// RetentionRunRow is a logged run with the name of the administrator who
// started it (nil for the schedule, or once the account is deleted).
type RetentionRunRow struct {
	RetentionRun
	AdminName *string
}

// AdminRetentionRuns returns the latest limit runs, newest first.
func (s *Store) AdminRetentionRuns(ctx context.Context, limit int) ([]RetentionRunRow, error) {
	var out []RetentionRunRow
	err := s.db.WithContext(ctx).Table("retention_runs AS r").
		Select("r.*, u.username AS admin_name").
		Joins("LEFT JOIN users u ON u.id = r.admin_id").
		Order("r.id DESC").Limit(limit).Scan(&out).Error
	return out, wrap("admin retention runs", err)
}

// DatabaseSize is how much room the database takes.
type DatabaseSize struct {
	Bytes     int64 // everything: on SQLite the file and its write-ahead log
	FileBytes int64 // SQLite: the main file
	WALBytes  int64 // SQLite: the write-ahead log
	FreeBytes int64 // SQLite: free pages in the file, which VACUUM returns
}

// AdminDatabaseSize measures the database: on SQLite page_count × page_size
// plus the write-ahead log file, on PostgreSQL pg_database_size.
func (s *Store) AdminDatabaseSize(ctx context.Context) (DatabaseSize, error) {
	db := s.db.WithContext(ctx)
	var d DatabaseSize
	if s.dialect == "postgres" {
		err := db.Raw("SELECT pg_database_size(current_database())").Scan(&d.Bytes).Error
		return d, wrap("admin database size", err)
	}
	var pages, pageSize, free int64
	for _, p := range []struct {
		name string
		v    *int64
	}{{"page_count", &pages}, {"page_size", &pageSize}, {"freelist_count", &free}} {
		if err := db.Raw("PRAGMA " + p.name).Scan(p.v).Error; err != nil {
			return d, wrap("admin database size", err)
		}
	}
	d.FileBytes, d.FreeBytes = pages*pageSize, free*pageSize
	var files []struct {
		Seq  int64
		Name string
		File string
	}
	if err := db.Raw("PRAGMA database_list").Scan(&files).Error; err != nil {
		return d, wrap("admin database size", err)
	}
	for _, f := range files {
		if f.Name != "main" || f.File == "" {
			continue
		}
		wal, err := os.Stat(f.File + "-wal")
		switch {
		case err == nil:
			d.WALBytes = wal.Size()
		case !errors.Is(err, os.ErrNotExist):
			return d, wrap("admin database size", err)
		}
	}
	d.Bytes = d.FileBytes + d.WALBytes
	return d, nil
}

// VacuumResult is what VACUUM did.
type VacuumResult struct {
	Before, After DatabaseSize
	Took          time.Duration
}

// truncateLog checkpoints the whole log and cuts the -wal file, on conn;
// another checkpoint under way (the background's, erase.go) makes it
// answer busy, so it tries again for a few seconds.
func truncateLog(ctx context.Context, conn *sql.Conn) error {
	for range 100 {
		var busy, logged, copied sql.NullInt64
		if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &copied); err != nil {
			return err
		}
		if busy.Int64 == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil // readers hold the log: the next checkpoint cuts it
}

// AdminVacuum rebuilds the database to return free space: on SQLite it
// merges the full-text index, runs VACUUM, then a checkpoint that truncates
// the write-ahead log VACUUM filled (and with it any old copies of deleted
// pages); on PostgreSQL VACUUM (ANALYZE). Writers wait while it runs.
func (s *Store) AdminVacuum(ctx context.Context) (VacuumResult, error) {
	var r VacuumResult
	var err error
	if r.Before, err = s.AdminDatabaseSize(ctx); err != nil {
		return r, err
	}
	start := time.Now()
	sqlDB, err := s.db.DB()
	if err != nil {
		return r, wrap("admin vacuum", err)
	}
	// Outside any transaction, on one connection: VACUUM cannot run in one.
	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		return r, wrap("admin vacuum", err)
	}
	defer conn.Close()
	if s.dialect == "postgres" {
		_, err = conn.ExecContext(ctx, "VACUUM (ANALYZE)")
	} else {
		// The full-text indexes first, with every message in them: merged
		// into one segment, each is smaller and faster to search (a term is
		// looked up once, not once a segment: search.go, searchChatsMax).
		if err = s.CatchUpSearch(ctx); err != nil {
			return r, wrap("admin vacuum", err)
		}
		for _, q := range []string{"INSERT INTO messages_fts (messages_fts) VALUES ('optimize')",
			"INSERT INTO messages_reasoning_fts (messages_reasoning_fts) VALUES ('optimize')",
			"INSERT INTO exchanges_fts (exchanges_fts) VALUES ('optimize')", "VACUUM"} {
			if _, err = conn.ExecContext(ctx, q); err != nil {
				break
			}
		}
		if err == nil {
			err = truncateLog(ctx, conn)
		}
	}
	if err != nil {
		return r, wrap("admin vacuum", err)
	}
	r.Took = time.Since(start)
	r.After, err = s.AdminDatabaseSize(ctx)
	return r, err
}
