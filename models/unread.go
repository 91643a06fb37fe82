package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Unread marks (issue 28). An exchange's row in exchange_reads holds the
// last seq its owner has seen; it is unread while that is below the log's
// last seq and no turn runs on it (a reply still being written is not
// unread until its turn ends). No row means read: conversations from before
// the marks, and those whose replies always finished in front of someone.
// A reply that finishes while no tab of the user shows the exchange adds
// the row (ReplyFinished); opening it on any device moves seen_seq to the
// end (MarkRead).

// ExchangeRead is the last seq the owner has seen of an exchange.
type ExchangeRead struct {
	ExchangeID int64     `gorm:"primaryKey;autoIncrement:false"`
	UserID     int64     `gorm:"not null"`
	SeenSeq    int64     `gorm:"not null"`
	UpdatedAt  time.Time `gorm:"not null"`
}

// lastSeqSQL is the last seq of the exchange the row names.
const lastSeqSQL = `(SELECT COALESCE(MAX(seq), -1) FROM messages WHERE exchange_id = exchange_reads.exchange_id)`

// Unread lists the user's unread exchanges (ids), for the sidebar's marks
// and the tab title's count.
func (s *Store) Unread(ctx context.Context, userID int64) (map[int64]bool, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Table("exchange_reads").Select("exchange_reads.exchange_id").
		Joins("JOIN exchanges e ON e.id = exchange_reads.exchange_id").
		Where("exchange_reads.user_id = ? AND e.turn_status <> ? AND NOT e.archived AND exchange_reads.seen_seq < "+lastSeqSQL,
			userID, TurnRunning).
		Pluck("exchange_reads.exchange_id", &ids).Error
	if err != nil {
		return nil, wrap("unread", err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// UnreadByProject counts the user's unread exchanges in each project (by
// project id; projects with none are absent): the sidebar's count on a
// project.
func (s *Store) UnreadByProject(ctx context.Context, userID int64) (map[int64]int64, error) {
	var rows []struct{ ProjectID, N int64 }
	err := s.db.WithContext(ctx).Table("exchange_reads").Select("e.project_id AS project_id, COUNT(*) AS n").
		Joins("JOIN exchanges e ON e.id = exchange_reads.exchange_id").
		Where("exchange_reads.user_id = ? AND e.project_id IS NOT NULL AND e.turn_status <> ? AND NOT e.archived AND exchange_reads.seen_seq < "+lastSeqSQL,
			userID, TurnRunning).
		Group("e.project_id").Scan(&rows).Error
	if err != nil {
		return nil, wrap("unread by project", err)
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		out[r.ProjectID] = r.N
	}
	return out, nil
}

// MarkRead marks the user's exchange read up to seq (nil: its last entry)
// and says whether that changed anything: an exchange with no mark is read
// already, up to any seq.
func (s *Store) MarkRead(ctx context.Context, userID, exchangeID int64, seq *int64, at time.Time) (bool, error) {
	last, err := s.LastSeq(ctx, userID, exchangeID)
	if err != nil {
		return false, fmt.Errorf("mark read: %w", err)
	}
	seen := last
	if seq != nil {
		seen = min(max(*seq, -1), last)
	}
	n, err := s.changeMarks(ctx, userID, exchangeID, func(tx *gorm.DB) (int64, error) {
		res := tx.Model(&ExchangeRead{}).
			Where("exchange_id = ? AND user_id = ? AND seen_seq <> ?", exchangeID, userID, seen).
			Updates(map[string]any{"seen_seq": seen, "updated_at": at})
		return res.RowsAffected, res.Error
	})
	return n > 0, wrap("mark read", err)
}

// changeMarks runs a change of the user's read marks (of exchangeID; 0:
// of any number) and, on PostgreSQL, when it changed a row, tells the
// other processes in the same transaction (NotifyRead): their tabs of the
// user redraw the marks as this commit leaves them.
func (s *Store) changeMarks(ctx context.Context, userID, exchangeID int64, change func(tx *gorm.DB) (int64, error)) (int64, error) {
	if s.dialect != "postgres" {
		return change(s.db.WithContext(ctx))
	}
	var n int64
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if n, err = change(tx); err != nil || n == 0 {
			return err
		}
		payload, _ := json.Marshal(Notice{Kind: NotifyRead, User: userID, Exchange: exchangeID, Origin: s.tag})
		return tx.Exec("SELECT pg_notify(?, ?)", NotifyChannel, string(payload)).Error
	})
	return n, err
}

// MarkUnread marks the user's exchange unread: its last entry counts as
// not seen.
func (s *Store) MarkUnread(ctx context.Context, userID, exchangeID int64, at time.Time) error {
	last, err := s.LastSeq(ctx, userID, exchangeID)
	if err != nil {
		return fmt.Errorf("mark unread: %w", err)
	}
	_, err = s.changeMarks(ctx, userID, exchangeID, func(tx *gorm.DB) (int64, error) {
		res := tx.Exec(`INSERT INTO exchange_reads (exchange_id, user_id, seen_seq, updated_at)
		VALUES (?, ?, ?, ?) ON CONFLICT (exchange_id) DO UPDATE SET seen_seq = excluded.seen_seq, updated_at = excluded.updated_at`,
			exchangeID, userID, last-1, at)
		return max(res.RowsAffected, 1), res.Error // the same mark again is still news to the tabs
	})
	return wrap("mark unread", err)
}

// MarkAllRead marks every exchange of the user read and says how many
// were not.
func (s *Store) MarkAllRead(ctx context.Context, userID int64, at time.Time) (int64, error) {
	n, err := s.changeMarks(ctx, userID, 0, func(tx *gorm.DB) (int64, error) {
		res := tx.Exec(`UPDATE exchange_reads SET seen_seq = `+lastSeqSQL+`, updated_at = ?
		WHERE user_id = ? AND seen_seq < `+lastSeqSQL, at, userID)
		return res.RowsAffected, res.Error
	})
	return n, wrap("mark all read", err)
}

// ReplyFinished records that a turn of the exchange ended with entries up
// to its log's end: seen, when a tab of the user shows it (its mark, if
// any, moves to the end); else unread from the entry before the reply on,
// unless it was unread already.
//
// The mark is read first, and written only when that changes it: a turn's
// reply most often leaves it as it is (no row, or unread already), and a
// write that changes nothing would still wait for SQLite's writer, behind
// the other turns' commits.
func (s *Store) ReplyFinished(ctx context.Context, userID, exchangeID int64, seen bool, at time.Time) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return wrap("reply finished", err)
	}
	return wrap("reply finished", replyFinished(ctx, sqlDB, s.db.WithContext(ctx), s.dialect, userID, exchangeID, seen, at))
}

// replyFinished is ReplyFinished on q and db: the pool, or a transaction.
func replyFinished(ctx context.Context, q gorm.ConnPool, db *gorm.DB, dialect string, userID, exchangeID int64, seen bool, at time.Time) error {
	// By hand: every turn reads it (gorm's scan into a struct was most of
	// its cost).
	var seenSeq, lastSeq int64
	err := q.QueryRowContext(ctx, replyMarkStmt.in(dialect), exchangeID).Scan(&seenSeq, &lastSeq)
	marked := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	switch {
	case seen && (!marked || seenSeq == lastSeq):
		return nil // read, and stays so
	case !seen && marked:
		return nil // unread already, from where it was
	}
	if seen {
		return db.Exec(`UPDATE exchange_reads SET seen_seq = `+lastSeqSQL+`, updated_at = ?
			WHERE exchange_id = ?`, at, exchangeID).Error
	}
	// The entry before the reply (the user message it answers, or the
	// last tool entry) is what the person saw.
	return db.Exec(`INSERT INTO exchange_reads (exchange_id, user_id, seen_seq, updated_at)
		SELECT ?, ?, COALESCE(MAX(seq), 0) - 1, ? FROM messages WHERE exchange_id = ?
		ON CONFLICT (exchange_id) DO NOTHING`, exchangeID, userID, at, exchangeID).Error
}

// replyMarkStmt reads an exchange's read mark: where its person saw to,
// and where its log ends.
var replyMarkStmt = newStmt(`SELECT seen_seq, ` + lastSeqSQL + ` FROM exchange_reads WHERE exchange_id = ?`)
