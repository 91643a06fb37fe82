package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// ExchangeQuery selects one page of a user's exchanges.
type ExchangeQuery struct {
	Scope    string // ScopeGeneral, ScopePage or ScopeJob
	PageID   int64  // with ScopePage: that page's exchanges only
	Archived bool   // the archived exchanges only; otherwise only the others
	Pinned   *bool  // set: only the pinned (true) or only the unpinned (false)
	Before   *Cursor
	Limit    int
}

// ExchangeSummary is an exchange as the history lists show it: its first
// turn's query and response, and the rating of its latest reply.
type ExchangeSummary struct {
	Exchange
	Query         string
	Response      string
	AgentResponse *AgentResponse
	Feedback      *int64
}

// Cursor is the keyset position just after this exchange.
func (e *Exchange) Cursor() Cursor { return Cursor{At: e.UpdatedAt, ID: e.ID} }

// Exchange loads one of the user's exchanges.
func (s *Store) Exchange(ctx context.Context, userID, id int64) (*Exchange, error) {
	var e Exchange
	err := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", id, userID).Take(&e).Error
	return &e, wrap("exchange", err)
}

// ExchangeScope is the scope of one of the user's exchanges: what a turn
// checks before it starts, without reading (and parsing) the whole header.
func (s *Store) ExchangeScope(ctx context.Context, userID, id int64) (string, error) {
	// By hand: every send to an exchange reads it (turnsql.go).
	sqlDB, err := s.db.DB()
	if err != nil {
		return "", wrap("exchange", err)
	}
	var scope string
	err = sqlDB.QueryRowContext(ctx, exchangeScopeStmt.in(s.dialect), id, userID).Scan(&scope)
	if errors.Is(err, sql.ErrNoRows) {
		err = gorm.ErrRecordNotFound
	}
	return scope, wrap("exchange", err)
}

// JobExchange loads the user's exchange about a job.
func (s *Store) JobExchange(ctx context.Context, userID int64, jobID string) (*Exchange, error) {
	var e Exchange
	err := s.db.WithContext(ctx).Where("user_id = ? AND job_id = ?", userID, jobID).Take(&e).Error
	return &e, wrap("job exchange", err)
}

// ListExchanges returns one keyset page of the user's exchanges in a scope,
// most recent activity first. It runs two queries whatever the page size.
func (s *Store) ListExchanges(ctx context.Context, userID int64, q ExchangeQuery) ([]ExchangeSummary, error) {
	db := s.db.WithContext(ctx)
	var exs []Exchange
	tx := db.Where("user_id = ? AND scope = ? AND archived = ?", userID, q.Scope, q.Archived)
	if q.Scope == ScopePage {
		tx = tx.Where("page_id = ?", q.PageID)
	}
	if q.Pinned != nil {
		tx = tx.Where("pinned = ?", *q.Pinned)
	}
	if q.Before != nil {
		// In UTC like every stored time: SQLite compares times as text, so
		// the same instant in another zone would sort wrongly.
		at := q.Before.At.UTC()
		tx = tx.Where("(updated_at < ? OR (updated_at = ? AND id < ?))", at, at, q.Before.ID)
	}
	if err := tx.Order("updated_at DESC, id DESC").Limit(q.Limit).Find(&exs).Error; err != nil {
		return nil, wrap("list exchanges", err)
	}
	return s.summarize(ctx, exs)
}

// Summary is one of the user's exchanges as the history lists show it.
func (s *Store) Summary(ctx context.Context, userID, id int64) (*ExchangeSummary, error) {
	ex, err := s.Exchange(ctx, userID, id)
	if err != nil {
		return nil, err
	}
	sums, err := s.summarize(ctx, []Exchange{*ex})
	if err != nil {
		return nil, err
	}
	return &sums[0], nil
}

// summarize adds to each exchange its first turn and latest rating, in one
// query whatever their number: the exchange's row names those messages
// (migration 00011), so the query is one primary-key read per message.
func (s *Store) summarize(ctx context.Context, exs []Exchange) ([]ExchangeSummary, error) {
	out := make([]ExchangeSummary, len(exs))
	ids := make([]int64, 0, 3*len(exs))
	for i := range exs {
		out[i].Exchange = exs[i]
		for _, id := range []*int64{exs[i].FirstQueryID, exs[i].FirstReplyID, exs[i].LastReplyID} {
			if id != nil {
				ids = append(ids, *id)
			}
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	var msgs []Message
	err := s.db.WithContext(ctx).Select("id, role, content, agent_response, feedback").
		Where("id IN ?", ids).Find(&msgs).Error
	if err != nil {
		return nil, wrap("list exchanges: first turns", err)
	}
	byID := make(map[int64]*Message, len(msgs))
	for i := range msgs {
		byID[msgs[i].ID] = &msgs[i]
	}
	for i := range out {
		sum := &out[i]
		if m := messageAt(byID, sum.FirstQueryID); m != nil {
			sum.Query = m.Content
		}
		if m := messageAt(byID, sum.FirstReplyID); m != nil {
			sum.Response, sum.AgentResponse = m.Content, m.AgentResponse
		}
		if m := messageAt(byID, sum.LastReplyID); m != nil {
			sum.Feedback = m.Feedback
		}
	}
	return out, nil
}

// messageAt is the message id names among byID, or nil.
func messageAt(byID map[int64]*Message, id *int64) *Message {
	if id == nil {
		return nil
	}
	return byID[*id]
}

// RenameExchange sets an exchange's title.
func (s *Store) RenameExchange(ctx context.Context, userID, id int64, title string) (*Exchange, error) {
	return s.UpdateExchange(ctx, userID, id, ExchangeUpdate{Title: &title})
}

// ExchangeUpdate is what a person may change of an exchange's header; nil
// fields stay as they are.
type ExchangeUpdate struct {
	Title    *string
	Pinned   *bool
	Archived *bool
}

// UpdateExchange changes the title, pin or archive of one of the user's
// exchanges. None of them is activity: updated_at (the history's order)
// stays.
func (s *Store) UpdateExchange(ctx context.Context, userID, id int64, u ExchangeUpdate) (*Exchange, error) {
	cols := map[string]any{}
	if u.Title != nil {
		cols["title"] = *u.Title
	}
	if u.Pinned != nil {
		cols["pinned"] = *u.Pinned
	}
	if u.Archived != nil {
		cols["archived"] = *u.Archived
	}
	if len(cols) == 0 {
		return s.Exchange(ctx, userID, id)
	}
	res := s.db.WithContext(ctx).Model(&Exchange{}).Where("id = ? AND user_id = ?", id, userID).UpdateColumns(cols)
	if res.Error != nil {
		return nil, wrap("update exchange", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, fmt.Errorf("update exchange: %w", ErrNotFound)
	}
	return s.Exchange(ctx, userID, id)
}

// ReplaceTitle sets the title of one of the user's exchanges to title only
// while it is still was: a title made in the background (by a model) must
// not overwrite the one its owner gave it meanwhile. It is not activity:
// updated_at stays. It says whether the title changed, and returns the
// header as it now stands.
func (s *Store) ReplaceTitle(ctx context.Context, userID, exchangeID int64, was, title string) (*Exchange, bool, error) {
	res := s.db.WithContext(ctx).Model(&Exchange{}).
		Where("id = ? AND user_id = ? AND title = ?", exchangeID, userID, was).UpdateColumn("title", title)
	if res.Error != nil {
		return nil, false, wrap("replace title", res.Error)
	}
	ex, err := s.Exchange(ctx, userID, exchangeID)
	if err != nil {
		return nil, false, err
	}
	return ex, res.RowsAffected > 0, nil
}

// DeleteExchange deletes one of the user's exchanges and, by cascade, its
// log. Its forks stay whole, in the family (reparentForks).
func (s *Store) DeleteExchange(ctx context.Context, userID, id int64) error {
	n, err := s.DeleteExchanges(ctx, userID, []int64{id})
	if err != nil {
		return fmt.Errorf("delete exchange: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("delete exchange: %w", ErrNotFound)
	}
	return nil
}

// DeleteExchanges deletes those of ids that belong to the user and says how
// many went; other users' ids are skipped. Forks of the deleted stay whole,
// in the family (reparentForks).
func (s *Store) DeleteExchanges(ctx context.Context, userID int64, ids []int64) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var n int64
	var told []Deletion
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var own []int64
		// +user_id: primary-key reads, not a walk of the user's activity
		// index (which covers id, so SQLite would take it).
		if err := tx.Model(&Exchange{}).Where("+user_id = ? AND id IN ?", userID, ids).Pluck("id", &own).Error; err != nil {
			return err
		}
		d, err := s.beforeDelete(tx, own)
		if err != nil {
			return err
		}
		if err := s.reparentForks(tx, own); err != nil {
			return err
		}
		res := tx.Where("+user_id = ? AND id IN ?", userID, ids).Delete(&Exchange{})
		if res.Error != nil {
			return res.Error
		}
		n = res.RowsAffected
		told, err = s.afterDelete(tx, d)
		return err
	})
	if err == nil {
		s.tellDeleted(told)
	}
	return n, wrap("delete exchanges", err)
}

// ClearExchanges deletes all of the user's exchanges in a scope (with
// ScopePage, of one page) and says how many exchanges and messages went.
func (s *Store) ClearExchanges(ctx context.Context, userID int64, scope string, pageID int64) (exchanges, messages int64, err error) {
	var told []Deletion
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		sel := tx.Model(&Exchange{}).Select("id").Where("user_id = ? AND scope = ?", userID, scope)
		if scope == ScopePage {
			sel = sel.Where("page_id = ?", pageID)
		}
		if err := tx.Model(&Message{}).Where("exchange_id IN (?)", sel).Count(&messages).Error; err != nil {
			return err
		}
		var ids []int64
		pick := tx.Model(&Exchange{}).Where("user_id = ? AND scope = ?", userID, scope)
		if scope == ScopePage {
			pick = pick.Where("page_id = ?", pageID)
		}
		if err := pick.Pluck("id", &ids).Error; err != nil {
			return err
		}
		d, err := s.beforeDelete(tx, ids)
		if err != nil {
			return err
		}
		del := tx.Where("user_id = ? AND scope = ?", userID, scope)
		if scope == ScopePage {
			del = del.Where("page_id = ?", pageID)
		}
		res := del.Delete(&Exchange{})
		if res.Error != nil {
			return res.Error
		}
		exchanges = res.RowsAffected
		told, err = s.afterDelete(tx, d)
		return err
	})
	if err == nil {
		s.tellDeleted(told)
	}
	return exchanges, messages, wrap("clear exchanges", err)
}
