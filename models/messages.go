package models

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"gorm.io/gorm"
)

// Messages returns the user's exchange's log in order, error rows included.
// With at set, it returns the log as it stood when entry at was written.
func (s *Store) Messages(ctx context.Context, userID, exchangeID int64, at *int64) ([]Message, error) {
	if _, err := s.Exchange(ctx, userID, exchangeID); err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	tx := s.db.WithContext(ctx).Where("exchange_id = ?", exchangeID)
	if at != nil {
		// Everything written before the first entry past at: later error rows
		// are cut off with the entries around them.
		tx = tx.Where("id < COALESCE((SELECT MIN(id) FROM messages WHERE exchange_id = ? AND seq > ?), ?)",
			exchangeID, *at, int64(1)<<62)
	}
	var msgs []Message
	err := tx.Order("id").Find(&msgs).Error
	return msgs, wrap("messages", err)
}

// MessagesBefore returns a window of an exchange's log, in order: the last
// limit entries with a seq before beforeSeq (nil: the end of the log), and
// the error rows among them. An error row older than the window's first
// entry belongs to the next window back, so that reading back by the first
// entry's seq never shows a row twice.
func (s *Store) MessagesBefore(ctx context.Context, userID, exchangeID int64, beforeSeq *int64, limit int) ([]Message, error) {
	if _, err := s.Exchange(ctx, userID, exchangeID); err != nil {
		return nil, fmt.Errorf("messages before: %w", err)
	}
	db := s.db.WithContext(ctx)
	cut := int64(1) << 62
	if beforeSeq != nil {
		var ids []int64
		if err := db.Model(&Message{}).Where("exchange_id = ? AND seq >= ?", exchangeID, *beforeSeq).
			Order("seq").Limit(1).Pluck("id", &ids).Error; err != nil {
			return nil, wrap("messages before", err)
		}
		if len(ids) == 1 {
			cut = ids[0]
		}
	}
	var page []Message
	if err := db.Where("exchange_id = ? AND seq IS NOT NULL AND id < ?", exchangeID, cut).
		Order("id DESC").Limit(limit).Find(&page).Error; err != nil {
		return nil, wrap("messages before", err)
	}
	if len(page) == 0 {
		return page, nil
	}
	var errs []Message
	if err := db.Where("exchange_id = ? AND seq IS NULL AND id > ? AND id < ?", exchangeID, page[len(page)-1].ID, cut).
		Find(&errs).Error; err != nil {
		return nil, wrap("messages before", err)
	}
	page = append(page, errs...)
	slices.SortFunc(page, func(a, b Message) int { return cmp.Compare(a.ID, b.ID) })
	return page, nil
}

// RecentContext returns the last limit entries of the log (no error rows) in
// order: an agent's context, bounded so a turn's cost does not grow with the
// conversation. Only what an agent reads is loaded: id, seq, role, content,
// tool fields (not the time, the stored agent responses, nor feedback).
func (s *Store) RecentContext(ctx context.Context, userID, exchangeID int64, limit int) ([]Message, error) {
	// Every turn reads this: the rows are scanned by hand, not by gorm's
	// reflection (that was a tenth of a turn's CPU).
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, wrap("recent context", err)
	}
	return recentContext(ctx, sqlDB, s.dialect, userID, exchangeID, limit)
}

// recentContext reads them on q: the pool, or a transaction's connection.
func recentContext(ctx context.Context, q gorm.ConnPool, dialect string, userID, exchangeID int64, limit int) ([]Message, error) {
	rows, err := q.QueryContext(ctx, recentContextStmt.in(dialect), exchangeID, userID, limit)
	if err != nil {
		return nil, wrap("recent context", err)
	}
	defer rows.Close()
	msgs := make([]Message, 0, min(max(limit, 0), 256))
	for rows.Next() {
		var m Message
		var seq int64
		var tool sql.NullString
		m.ExchangeID = exchangeID
		if err := rows.Scan(&m.ID, &seq, &m.Role, &m.Content, &tool); err != nil {
			return nil, wrap("recent context", err)
		}
		m.Seq = &seq
		if tool.Valid && tool.String != "" && tool.String != "null" {
			m.Tool = &ToolFields{}
			if err := json.Unmarshal([]byte(tool.String), m.Tool); err != nil {
				return nil, fmt.Errorf("recent context: entry %d's tool: %w", m.ID, err)
			}
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("recent context", err)
	}
	slices.Reverse(msgs)
	return msgs, nil
}

// Message loads one message of one of the user's exchanges.
func (s *Store) Message(ctx context.Context, userID, messageID int64) (*Message, error) {
	var m Message
	err := s.db.WithContext(ctx).
		Where("id = ? AND exchange_id IN (SELECT id FROM exchanges WHERE user_id = ?)", messageID, userID).
		Take(&m).Error
	return &m, wrap("message", err)
}

// FirstAnswer returns the first assistant message of the user's exchange.
func (s *Store) FirstAnswer(ctx context.Context, userID, exchangeID int64) (*Message, error) {
	var m Message
	err := s.db.WithContext(ctx).
		Where("exchange_id = (SELECT id FROM exchanges WHERE id = ? AND user_id = ?) AND role = ?", exchangeID, userID, RoleAssistant).
		Order("id").Take(&m).Error
	return &m, wrap("first answer", err)
}

// SetFeedback rates one of the user's assistant messages (nil clears it) and
// returns it. Messages that are not assistant replies give ErrNotFound.
func (s *Store) SetFeedback(ctx context.Context, userID, messageID int64, feedback *int64, comment *string) (*Message, error) {
	res := s.db.WithContext(ctx).Model(&Message{}).
		Where("id = ? AND role = ? AND exchange_id IN (SELECT id FROM exchanges WHERE user_id = ?)", messageID, RoleAssistant, userID).
		Updates(map[string]any{"feedback": feedback, "feedback_comment": comment})
	if res.Error != nil {
		return nil, wrap("set feedback", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("set feedback: %w", ErrNotFound)
	}
	return s.Message(ctx, userID, messageID)
}

// SetExchangeFeedback rates the latest assistant message of the user's
// exchange, keeping its comment, and returns it.
func (s *Store) SetExchangeFeedback(ctx context.Context, userID, exchangeID int64, feedback int64) (*Message, error) {
	if _, err := s.Exchange(ctx, userID, exchangeID); err != nil {
		return nil, fmt.Errorf("set exchange feedback: %w", err)
	}
	var m Message
	err := s.db.WithContext(ctx).Where("exchange_id = ? AND role = ?", exchangeID, RoleAssistant).
		Order("id DESC").Take(&m).Error
	if err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, fmt.Errorf("set exchange feedback: %w", ErrNoAssistantMessage)
		}
		return nil, wrap("set exchange feedback", err)
	}
	return s.SetFeedback(ctx, userID, m.ID, &feedback, m.FeedbackComment)
}

// SetJobFeedback rates the latest assistant message of the user's exchange
// about a job, as SetExchangeFeedback does; a job with no exchange of the
// user's gives ErrNotFound.
func (s *Store) SetJobFeedback(ctx context.Context, userID int64, jobID string, feedback int64) (*Message, error) {
	ex, err := s.JobExchange(ctx, userID, jobID)
	if err != nil {
		return nil, fmt.Errorf("set job feedback: %w", err)
	}
	return s.SetExchangeFeedback(ctx, userID, ex.ID, feedback)
}
