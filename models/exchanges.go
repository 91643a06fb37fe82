package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// ExchangeQuery selects one batch of a user's exchanges.
type ExchangeQuery struct {
	Scope    string // ScopeGeneral, ScopePage or ScopeJob
	PageID   int64  // with ScopePage: that page's exchanges only
	Archived bool   // the archived exchanges only; otherwise only the others
	Pinned   *bool  // set: only the pinned (true) or only the unpinned (false)
	// ProjectID set: that project's chats only. Temporary chats are never
	// listed.
	ProjectID *int64
	Before    *Cursor
	Limit     int
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

// JobExchange loads the user's exchange about a job.
func (s *Store) JobExchange(ctx context.Context, userID int64, jobID string) (*Exchange, error) {
	var e Exchange
	err := s.db.WithContext(ctx).Where("user_id = ? AND job_id = ?", userID, jobID).Take(&e).Error
	return &e, wrap("job exchange", err)
}

// ListExchanges returns one batch (by keyset) of the user's exchanges in a
// scope, most recent activity first, in one statement (HistorySQL) whatever
// the batch size. Each item's Exchange holds the header fields the lists show
// (HistorySQL names them), not the whole row: load it with Exchange.
func (s *Store) ListExchanges(ctx context.Context, userID int64, q ExchangeQuery) ([]ExchangeSummary, error) {
	query, args := HistorySQL(userID, q)
	sums, err := s.summaries(ctx, userID, max(q.Limit, 0), query, args...)
	return sums, wrap("list exchanges", err)
}

// Summary is one of the user's exchanges as the history lists show it (its
// Exchange as ListExchanges fills it).
func (s *Store) Summary(ctx context.Context, userID, id int64) (*ExchangeSummary, error) {
	sums, err := s.summaries(ctx, userID, 1, historySelect+` WHERE e.id = ? AND e.user_id = ?`, id, userID)
	if err != nil {
		return nil, wrap("exchange summary", err)
	}
	if len(sums) == 0 {
		return nil, fmt.Errorf("exchange summary: %w", ErrNotFound)
	}
	return &sums[0], nil
}

// historySelect reads what a history item shows: the header fields the
// lists use, the exchange's first user message, its first reply (text and
// agent_response) and the rating of its latest reply. The exchange's row
// names those three messages (migration 00011), so each is a primary-key
// read joined to the row, and only the columns shown are read: at 50
// items, SELECT * of the headers and a second query for the messages cost
// twice as much (the columns' decoding, the second statement's reads).
const historySelect = `SELECT e.id, e.scope, e.page_id, e.job_id, e.title, e.agent_type, e.forked_from_id, e.forked_at_seq,
	e.pinned, e.archived, e.turn_count, e.created_at, e.updated_at, e.turn_status, e.turn_waiting, e.project_id,
	q.content, r.content, r.agent_response, l.feedback
	FROM exchanges e
	LEFT JOIN messages q ON q.id = e.first_query_id
	LEFT JOIN messages r ON r.id = e.first_reply_id
	LEFT JOIN messages l ON l.id = e.last_reply_id`

// HistorySQL is the statement ListExchanges runs for a batch of the user's
// history, with its arguments (? placeholders, as GORM takes them): one
// keyset read of the exchanges (user, scope, activity) joined to the three
// messages each shows. The bench times it bare.
func HistorySQL(userID int64, q ExchangeQuery) (string, []any) {
	var b strings.Builder
	b.WriteString(historySelect)
	b.WriteString(` WHERE e.user_id = ? AND e.scope = ? AND e.archived = ?`)
	args := []any{userID, q.Scope, q.Archived}
	if q.Scope == ScopePage {
		b.WriteString(` AND e.page_id = ?`)
		args = append(args, q.PageID)
	}
	if q.ProjectID != nil {
		b.WriteString(` AND e.project_id = ?`)
		args = append(args, *q.ProjectID)
	}
	b.WriteString(` AND NOT e.temporary`)
	if q.Pinned != nil {
		b.WriteString(` AND e.pinned = ?`)
		args = append(args, *q.Pinned)
	}
	if q.Before != nil {
		// In UTC like every stored time: SQLite compares times as text, so
		// the same instant in another zone would sort wrongly.
		at := q.Before.At.UTC()
		b.WriteString(` AND (e.updated_at < ? OR (e.updated_at = ? AND e.id < ?))`)
		args = append(args, at, at, q.Before.ID)
	}
	// The limit written out, as GORM writes it: PostgreSQL plans the
	// joins knowing it is a batch, not a tenth of the table.
	fmt.Fprintf(&b, ` ORDER BY e.updated_at DESC, e.id DESC LIMIT %d`, max(q.Limit, 0))
	return b.String(), args
}

// summaries runs a historySelect statement and scans its rows by hand
// (GORM's reflection over them cost more than the statement).
func (s *Store) summaries(ctx context.Context, userID int64, capacity int, query string, args ...any) ([]ExchangeSummary, error) {
	rows, err := s.db.WithContext(ctx).Raw(query, args...).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]ExchangeSummary, 0, min(capacity, 256))
	var qText, rText sql.NullString
	var resp sql.RawBytes // read before the next row
	for rows.Next() {
		sum := ExchangeSummary{Exchange: Exchange{UserID: userID}}
		e := &sum.Exchange
		if err := rows.Scan(&e.ID, &e.Scope, &e.PageID, &e.JobID, &e.Title, &e.AgentType, &e.ForkedFromID, &e.ForkedAtSeq,
			&e.Pinned, &e.Archived, &e.TurnCount, &e.CreatedAt, &e.UpdatedAt, &e.TurnStatus, &e.TurnWaiting, &e.ProjectID,
			&qText, &rText, &resp, &sum.Feedback); err != nil {
			return nil, err
		}
		sum.Query, sum.Response = qText.String, rText.String
		// As the json serializer of Message.AgentResponse reads it: NULL,
		// empty or "null" is none.
		if len(resp) > 0 {
			if err := json.Unmarshal(resp, &sum.AgentResponse); err != nil {
				return nil, fmt.Errorf("exchange %d's first reply's agent_response: %w", e.ID, err)
			}
		}
		out = append(out, sum)
	}
	return out, rows.Err()
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
	cols := u.flags()
	if u.Title != nil {
		cols["title"] = *u.Title
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

// UpdateFamily sets pinned and archived (Title is ignored) on every
// exchange of the family the user's exchange id belongs to, and returns
// that exchange as it now stands. The sidebar shows a family as one
// conversation: pinning or archiving it there moves all its branches, so
// that no branch stays behind in the list the person cleared it from.
func (s *Store) UpdateFamily(ctx context.Context, userID, id int64, u ExchangeUpdate) (*Exchange, error) {
	cols := u.flags()
	if len(cols) == 0 {
		return s.Exchange(ctx, userID, id)
	}
	family, err := s.Family(ctx, userID, id)
	if err != nil {
		return nil, fmt.Errorf("update family: %w", err)
	}
	ids := make([]int64, len(family))
	for i, ex := range family {
		ids[i] = ex.ID
	}
	err = s.db.WithContext(ctx).Model(&Exchange{}).Where("user_id = ? AND id IN ?", userID, ids).UpdateColumns(cols).Error
	if err != nil {
		return nil, wrap("update family", err)
	}
	return s.Exchange(ctx, userID, id)
}

// flags are the columns u sets of pinned and archived.
func (u ExchangeUpdate) flags() map[string]any {
	cols := map[string]any{}
	if u.Pinned != nil {
		cols["pinned"] = *u.Pinned
	}
	if u.Archived != nil {
		cols["archived"] = *u.Archived
	}
	return cols
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
// log, and returns the deletion as the live tabs hear of it: its heir is
// the branch that stands for its family now (Family.Heir), where a tab
// that showed it goes. Its forks stay whole, in the family (reparentForks).
func (s *Store) DeleteExchange(ctx context.Context, userID, id int64) (*Deletion, error) {
	_, told, err := s.deleteExchanges(ctx, userID, []int64{id})
	if err != nil {
		return nil, fmt.Errorf("delete exchange: %w", err)
	}
	if len(told) == 0 {
		return nil, fmt.Errorf("delete exchange: %w", ErrNotFound)
	}
	return &told[0], nil
}

// DeleteExchanges deletes those of ids that belong to the user and says how
// many went; other users' ids are skipped. Forks of the deleted stay whole,
// in the family (reparentForks).
func (s *Store) DeleteExchanges(ctx context.Context, userID int64, ids []int64) (int64, error) {
	n, _, err := s.deleteExchanges(ctx, userID, ids)
	return n, err
}

// deleteExchanges is DeleteExchanges with the deletions it told.
func (s *Store) deleteExchanges(ctx context.Context, userID int64, ids []int64) (int64, []Deletion, error) {
	if len(ids) == 0 {
		return 0, nil, nil
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
	if err != nil {
		return 0, nil, wrap("delete exchanges", err)
	}
	s.tellDeleted(told)
	return n, told, nil
}

// ClearExchanges deletes all of the user's exchanges in a scope (with
// ScopePage, of one page) and says how many exchanges and messages went.
func (s *Store) ClearExchanges(ctx context.Context, userID int64, scope string, pageID int64) (exchanges, messages int64, err error) {
	var told []Deletion
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// The scope's exchanges, for each statement below.
		cleared := func() *gorm.DB {
			q := tx.Model(&Exchange{}).Where("user_id = ? AND scope = ?", userID, scope)
			if scope == ScopePage {
				q = q.Where("page_id = ?", pageID)
			}
			return q
		}
		if err := tx.Model(&Message{}).Where("exchange_id IN (?)", cleared().Select("id")).Count(&messages).Error; err != nil {
			return err
		}
		var ids []int64
		if err := cleared().Pluck("id", &ids).Error; err != nil {
			return err
		}
		d, err := s.beforeDelete(tx, ids)
		if err != nil {
			return err
		}
		res := cleared().Delete(&Exchange{})
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
