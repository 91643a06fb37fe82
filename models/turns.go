package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// TurnStart is the user message that opens a turn, and where it goes.
type TurnStart struct {
	UserID     int64
	ExchangeID int64   // 0 starts a new exchange
	Scope      string  // of a new exchange
	PageID     *int64  // of a new page exchange
	JobID      *string // of a new job exchange
	AgentType  string
	Query      string
	Owner      string // who holds the turn's lease
	ProjectID  *int64 // of a new exchange: the user's project it starts in
	Temporary  bool   // of a new exchange: a temporary chat
	// AfterSeq, with ExchangeID, is the last seq the writer had seen: if
	// the log holds entries after it, StartTurn gives ErrLogMoved and
	// writes nothing (the caller forks instead: StartFork at AfterSeq+1).
	AfterSeq *int64
	// Attachments are the user's files the message holds, committed with
	// it (issue 26); a file that is not the user's: ErrNotFound.
	Attachments []int64
	// CheckScope, with ExchangeID, says the exchange must be of Scope: one
	// of another gives a *ScopeError, and nothing is written.
	CheckScope bool
}

// ScopeError is a message sent to an exchange of another scope than the
// sender's (TurnStart.CheckScope).
type ScopeError struct{ Scope string }

func (e *ScopeError) Error() string { return "the exchange is a " + e.Scope + " chat" }

// StartTurn appends the user message and takes the exchange's turn lease, in
// one transaction, creating the exchange first when ExchangeID is 0. Once it
// returns, the message is durable whatever happens to the turn. A turn already
// running on the exchange gives ErrTurnRunning and changes nothing.
func (s *Store) StartTurn(ctx context.Context, t TurnStart) (*Exchange, *Message, error) {
	ex, msg, _, err := s.startTurn(ctx, t, 0)
	return ex, msg, err
}

// startTurn is StartTurn, reading TurnReads with limit entries of context
// when limit > 0 (StartTurnReading).
func (s *Store) startTurn(ctx context.Context, t TurnStart, limit int) (*Exchange, *Message, *TurnReads, error) {
	var ex Exchange
	var msg *Message
	var reads *TurnReads
	err := s.transact(ctx, func(tx *gorm.DB) error {
		at := now()
		if t.ExchangeID == 0 && t.PageID != nil {
			// The page must be there when its chat is created, not only
			// when the caller looked: a page deleted meanwhile would leave
			// the chat behind (DeletePage deletes the page's chats with
			// it). On PostgreSQL the page row is held until this commits,
			// so a concurrent delete waits and then takes the chat too.
			q := livePage(tx.Model(&Page{}), t.UserID, *t.PageID)
			if s.dialect == "postgres" {
				q = q.Clauses(clause.Locking{Strength: "SHARE"})
			}
			var page Page
			if err := q.Select("id").Take(&page).Error; err != nil {
				return err // gorm.ErrRecordNotFound: ErrNotFound to the caller
			}
		}
		if t.ExchangeID == 0 {
			owner := t.Owner
			ex = Exchange{
				UserID: t.UserID, Scope: t.Scope, PageID: t.PageID, JobID: t.JobID,
				Title: TitleFrom(t.Query), AgentType: t.AgentType, TurnCount: 1,
				CreatedAt: at, UpdatedAt: at, TurnStatus: TurnRunning,
				TurnOwner: &owner, TurnHeartbeatAt: &at, TurnAttempts: 1,
				ProjectID: t.ProjectID, Temporary: t.Temporary,
			}
			if t.ProjectID != nil {
				if err := tx.Select("id").Where("id = ? AND user_id = ?", *t.ProjectID, t.UserID).Take(&Project{}).Error; err != nil {
					return err // another user's project: ErrNotFound
				}
			}
			if err := tx.Create(&ex).Error; err != nil {
				if t.JobID != nil && errors.Is(err, gorm.ErrDuplicatedKey) {
					// A job has one exchange per user: a concurrent first
					// request created it a moment ago and runs its turn.
					return ErrTurnRunning
				}
				return err
			}
		} else {
			if t.CheckScope {
				// In the transaction: on SQLite, on the group commit's
				// warm connection.
				var scope string
				err := tx.Statement.ConnPool.QueryRowContext(ctxOf(tx), exchangeScopeStmt.in(s.dialect), t.ExchangeID, t.UserID).Scan(&scope)
				switch {
				case errors.Is(err, sql.ErrNoRows):
					return gorm.ErrRecordNotFound
				case err != nil:
					return err
				case scope != t.Scope:
					return &ScopeError{Scope: scope}
				}
			}
			if t.AfterSeq != nil {
				var last int64
				err := tx.Model(&Message{}).Select("COALESCE(MAX(seq), -1)").
					Where("exchange_id = (SELECT id FROM exchanges WHERE id = ? AND user_id = ?)", t.ExchangeID, t.UserID).
					Scan(&last).Error
				if err != nil {
					return err
				}
				if last > *t.AfterSeq {
					return ErrLogMoved
				}
			}
			// RETURNING fills ex with the header as updated.
			updated, err := returningExchange(tx, startTurnStmt, &ex,
				t.Owner, at, at, t.AgentType, TitleFrom(t.Query), t.ExchangeID, t.UserID)
			if err != nil {
				return err
			}
			if !updated {
				if err := tx.Where("id = ? AND user_id = ?", t.ExchangeID, t.UserID).Take(&ex).Error; err != nil {
					return err
				}
				return ErrTurnRunning
			}
			if ex.TurnWaiting {
				// A new message to a paused turn: its waiting calls are
				// cancelled first, then the new turn runs.
				if err := cancelWaitingTx(tx, &ex); err != nil {
					return err
				}
			}
		}
		var err error
		msg, err = appendEntry(tx, ex.ID, &Message{Role: RoleUser, Content: t.Query, CreatedAt: at})
		if err != nil {
			return err
		}
		if err := attachFiles(tx, t.UserID, msg.ID, t.Attachments); err != nil {
			return err
		}
		reads = s.turnReads(tx, t, ex.ID, limit)
		return nil
	})
	if err != nil {
		return nil, nil, nil, wrap("start turn", err)
	}
	return &ex, msg, reads, nil
}

// FinishTurn appends the turn's final entries and releases the lease. It
// fails with ErrLeaseLost, writing nothing, if owner no longer holds it.
func (s *Store) FinishTurn(ctx context.Context, exchangeID int64, owner string, entries ...*Message) error {
	_, err := s.FinishTurnHeader(ctx, exchangeID, owner, entries...)
	return err
}

// FinishTurnHeader is FinishTurn, returning the exchange's header as the
// commit left it (read in the same transaction: no second query).
func (s *Store) FinishTurnHeader(ctx context.Context, exchangeID int64, owner string, entries ...*Message) (*Exchange, error) {
	ex, _, err := s.finishTurn(ctx, exchangeID, owner, nil, entries)
	return ex, err
}

// FinishReply is FinishTurnHeader for a turn's reply that also records it
// in the read mark (ReplyFinished) when mark is set, seen or not. On SQLite
// the mark is read and written in the reply's own transaction, on the
// group commit's connection: no commit of its own, no page cache to read
// again. marked says it was; it is not on PostgreSQL (a failed statement
// would abort the transaction, the reply with it), nor when the mark
// failed, and then the caller records it (ReplyFinished).
func (s *Store) FinishReply(ctx context.Context, exchangeID int64, owner string, mark *bool, reply *Message) (ex *Exchange, marked bool, err error) {
	return s.finishTurn(ctx, exchangeID, owner, mark, []*Message{reply})
}

func (s *Store) finishTurn(ctx context.Context, exchangeID int64, owner string, mark *bool, entries []*Message) (*Exchange, bool, error) {
	var ex Exchange
	var marked bool
	err := s.transact(ctx, func(tx *gorm.DB) error {
		ex, marked = Exchange{}, false // a group commit may run this again
		for _, m := range entries {
			if _, err := appendEntry(tx, exchangeID, m); err != nil {
				return err
			}
		}
		// The lease is released last, with RETURNING: the header then
		// holds what the entries' triggers wrote. A lost lease fails the
		// whole write, entries included.
		updated, err := returningExchange(tx, finishTurnStmt, &ex, now(), exchangeID, owner)
		if err != nil {
			return err
		}
		if !updated {
			return lostLease(tx, exchangeID)
		}
		// Each reply's tokens and cost go to its person's usage of the
		// day in this same transaction: reports never scan messages.
		for _, m := range entries {
			if u, ok := usageOf(m); ok {
				if err := addUsage(tx, ex.UserID, now(), u); err != nil {
					return err
				}
			}
		}
		if mark != nil && s.dialect != "postgres" {
			// A failing statement undoes itself alone on SQLite: the
			// reply stays, and the caller marks it.
			marked = replyFinished(ctxOf(tx), tx.Statement.ConnPool, tx, s.dialect, ex.UserID, exchangeID, *mark, now()) == nil
		}
		return nil
	})
	if err != nil {
		return nil, false, wrap("finish turn", err)
	}
	return &ex, marked, nil
}

// FailTurn records why a turn failed as an error row (outside the log: seq
// NULL) and releases the lease, leaving the exchange failed.
func (s *Store) FailTurn(ctx context.Context, exchangeID int64, owner, reason string) (*Message, error) {
	msg, err := s.failTurn(ctx, exchangeID, owner, reason, nil)
	return msg, wrap("fail turn", err)
}

// failTurn is FailTurn; with staleBefore set, only while the lease is still
// stale, so that a turn whose owner renewed it meanwhile is left alone.
func (s *Store) failTurn(ctx context.Context, exchangeID int64, owner, reason string, staleBefore *time.Time) (*Message, error) {
	var msg *Message
	err := s.transact(ctx, func(tx *gorm.DB) error {
		if err := release(tx, exchangeID, owner, TurnFailed, staleBefore); err != nil {
			return err
		}
		var err error
		if msg, err = appendEntry(tx, exchangeID, &Message{Role: RoleError, Content: reason}); err != nil {
			return err
		}
		// A sub-run that fails this way (its process died) ends failed.
		return endSubRun(tx, exchangeID, SubRunFailed, reason)
	})
	if err != nil {
		return nil, err
	}
	return msg, nil
}

// RecoverStaleTurns fails every turn whose heartbeat is older than staleBefore:
// its process died. The user message stays; an error row says what happened.
// It returns the exchanges it failed (id, user and attempts), so that the
// caller can retry them.
func (s *Store) RecoverStaleTurns(ctx context.Context, staleBefore time.Time, reason string) ([]Exchange, error) {
	var stale []Exchange
	db := s.db.WithContext(ctx)
	staleBefore = staleBefore.UTC()
	err := db.Select("id, user_id, scope, turn_owner, turn_attempts").
		Where("turn_status = ? AND (turn_heartbeat_at IS NULL OR turn_heartbeat_at < ?)", TurnRunning, staleBefore).
		Find(&stale).Error
	if err != nil {
		return nil, wrap("recover stale turns", err)
	}
	var failed []Exchange
	for _, e := range stale {
		owner := ""
		if e.TurnOwner != nil {
			owner = *e.TurnOwner
		}
		if _, err := s.failTurn(ctx, e.ID, owner, reason, &staleBefore); err != nil {
			if errors.Is(err, ErrLeaseLost) {
				continue // it finished, renewed its lease or was recovered meanwhile
			}
			return failed, fmt.Errorf("recover stale turns: %w", err)
		}
		failed = append(failed, e)
	}
	return failed, nil
}

// release ends owner's lease on the exchange, leaving it in status; with
// staleBefore set, only if the lease was not renewed since.
func release(tx *gorm.DB, exchangeID int64, owner, status string, staleBefore *time.Time) error {
	tx = tx.Model(&Exchange{}).
		Where("id = ? AND turn_status = ? AND turn_owner = ?", exchangeID, TurnRunning, owner)
	if staleBefore != nil {
		tx = tx.Where("(turn_heartbeat_at IS NULL OR turn_heartbeat_at < ?)", *staleBefore)
	}
	res := tx.Updates(map[string]any{
		"turn_status": status, "turn_owner": nil, "turn_heartbeat_at": nil, "updated_at": now(),
	})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return lostLease(tx, exchangeID)
	}
	return nil
}

// appendEntry inserts m at the exchange's next seq (error rows take none). A
// seq taken by a concurrent writer gives ErrSeqTaken, never an overwrite.
func appendEntry(tx *gorm.DB, exchangeID int64, m *Message) (*Message, error) {
	m.ID, m.ExchangeID = 0, exchangeID // a new row, also when a group commit runs this again
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now()
	}
	m.Seq = nil
	if err := insertEntry(tx, exchangeID, m); err != nil {
		switch {
		case errors.Is(err, gorm.ErrDuplicatedKey):
			return nil, ErrSeqTaken
		case errors.Is(err, gorm.ErrForeignKeyViolated):
			// A message references nothing but its exchange: it was
			// deleted while the turn ran (alone, or with its account).
			return nil, ErrExchangeGone
		}
		return nil, err
	}
	return m, nil
}

// titleLength bounds a title made from a first message, in characters.
const titleLength = 80

// TitleFrom makes an exchange title from its first message: the first
// non-empty line, with whitespace collapsed, cut at a word near titleLength.
func TitleFrom(query string) string {
	line := ""
	for l := range strings.SplitSeq(query, "\n") {
		if line = strings.Join(strings.Fields(l), " "); line != "" {
			break
		}
	}
	r := []rune(line)
	if len(r) <= titleLength {
		return line
	}
	// Cut at the last space within the limit, counted in characters (not
	// bytes, or a title in a non-Latin script would be cut at half its room),
	// unless the limit falls right at a word's end or the last word starts
	// too early to keep a useful title.
	cut := r[:titleLength]
	if r[titleLength] != ' ' {
		if i := lastSpace(cut); i > titleLength/2 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(string(cut), " .,;:") + "…"
}

// lastSpace is the index of the last space in r, or -1.
func lastSpace(r []rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == ' ' {
			return i
		}
	}
	return -1
}

// Heartbeat renews owner's lease on a running turn.
func (s *Store) Heartbeat(ctx context.Context, exchangeID int64, owner string) error {
	err := s.transact(ctx, func(tx *gorm.DB) error { return renewLease(tx, exchangeID, owner) })
	return wrap("heartbeat", err)
}

// lostLease is why a lease the owner held is no longer its own: the exchange
// is gone (ErrExchangeGone: deleted, maybe with its account), or the lease
// was taken over (ErrLeaseLost).
func lostLease(tx *gorm.DB, exchangeID int64) error {
	var n int64
	if err := tx.Model(&Exchange{}).Where("id = ?", exchangeID).Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		return ErrExchangeGone
	}
	return ErrLeaseLost
}

// renewLease renews owner's lease on a running turn, or gives ErrLeaseLost.
// A heartbeat is not activity: updated_at stays.
func renewLease(tx *gorm.DB, exchangeID int64, owner string) error {
	res := tx.Model(&Exchange{}).
		Where("id = ? AND turn_status = ? AND turn_owner = ?", exchangeID, TurnRunning, owner).
		UpdateColumn("turn_heartbeat_at", now())
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return lostLease(tx, exchangeID)
	}
	return nil
}

// AppendEntry commits one finished entry of a running turn (a tool call or a
// tool result) as it is produced, while owner holds the lease.
func (s *Store) AppendEntry(ctx context.Context, exchangeID int64, owner string, m *Message) (*Message, error) {
	var out *Message
	err := s.transact(ctx, func(tx *gorm.DB) error {
		if err := renewLease(tx, exchangeID, owner); err != nil {
			return err
		}
		var err error
		out, err = appendEntry(tx, exchangeID, m)
		return err
	})
	return out, wrap("append entry", err)
}

// RetryTurn takes the lease on the user's failed exchange to answer its last
// user message again, and returns that message. The turn's attempts are
// counted: past maxAttempts it gives ErrRetryLimit; on an exchange whose last
// turn did not fail, ErrNothingToRetry (or ErrTurnRunning).
func (s *Store) RetryTurn(ctx context.Context, userID, exchangeID int64, owner string, maxAttempts int64) (*Exchange, *Message, error) {
	var ex Exchange
	var msg Message
	err := s.transact(ctx, func(tx *gorm.DB) error {
		if err := tx.Where("id = ? AND user_id = ?", exchangeID, userID).Take(&ex).Error; err != nil {
			return err
		}
		switch {
		case ex.Scope == ScopeSubRun:
			return ErrNothingToRetry // its parent's agent decides what to do again
		case ex.TurnStatus == TurnRunning:
			return ErrTurnRunning
		case ex.TurnStatus != TurnFailed:
			return ErrNothingToRetry
		case ex.TurnAttempts >= maxAttempts:
			return ErrRetryLimit
		}
		if err := tx.Where("exchange_id = ? AND role = ?", exchangeID, RoleUser).Order("seq DESC").Take(&msg).Error; err != nil {
			return err
		}
		at := now()
		res := tx.Model(&Exchange{}).Where("id = ? AND turn_status = ?", exchangeID, TurnFailed).
			UpdateColumns(map[string]any{
				"turn_status": TurnRunning, "turn_owner": owner, "turn_heartbeat_at": at,
				"turn_attempts": gorm.Expr("turn_attempts + 1"), "updated_at": at,
			})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrTurnRunning // taken by a concurrent retry
		}
		return tx.Take(&ex, exchangeID).Error
	})
	if err != nil {
		return nil, nil, wrap("retry turn", err)
	}
	return &ex, &msg, nil
}

// RunningTurns lists the exchanges whose turn is running, with their lease
// owners, attempts and heartbeats, across all users (for recovery, not for display).
func (s *Store) RunningTurns(ctx context.Context) ([]Exchange, error) {
	var out []Exchange
	err := s.db.WithContext(ctx).Select("id, user_id, scope, turn_owner, turn_attempts, turn_heartbeat_at").
		Where("turn_status = ?", TurnRunning).Find(&out).Error
	return out, wrap("running turns", err)
}

// cancelWaitingTx cancels the waiting calls of a paused exchange whose
// lease a new turn just took (ex: its header), recording that the person
// moved on.
func cancelWaitingTx(tx *gorm.DB, ex *Exchange) error {
	turn, err := turnEntries(tx, ex.ID)
	if err != nil {
		return err
	}
	cancelled, err := cancelCalls(tx, ex.ID, WaitingCalls(turn), MovedOn)
	if err != nil {
		return err
	}
	ex.TurnWaiting, ex.Cancelled = false, cancelled
	return tx.Model(&Exchange{}).Where("id = ?", ex.ID).UpdateColumn("turn_waiting", false).Error
}
