package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
)

// Tool tiers: where a tool runs.
const (
	ToolTierServer  = "server"
	ToolTierBrowser = "browser"
)

// Tool policies: what a tool may do without the person.
const (
	ToolAuto    = "auto"
	ToolConfirm = "confirm"
	ToolNever   = "never"
)

// Tool call states, as of the latest entry about the call.
const (
	ToolPending          = "pending"
	ToolAwaitingApproval = "awaiting_approval"
	ToolAwaitingClient   = "awaiting_client"
	ToolRunning          = "running"
	ToolDone             = "done"
	ToolDenied           = "denied"
	ToolCancelled        = "cancelled"
	ToolFailed           = "failed"
)

// ErrNothingWaiting means a tool answer found nothing to answer: no call
// waits in the exchange, or not the one named (unknown, or answered).
var ErrNothingWaiting = errors.New("no tool call with that id waits for an answer in this conversation")

// ToolPolicy is one person's choice for one tool.
type ToolPolicy struct {
	ID        int64     `gorm:"primaryKey"`
	UserID    int64     `gorm:"not null"`
	Tool      string    `gorm:"not null"`
	Policy    string    `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

// ToolPolicies reads the user's choices, by tool.
func (s *Store) ToolPolicies(ctx context.Context, userID int64) (map[string]string, error) {
	var rows []ToolPolicy
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Find(&rows).Error; err != nil {
		return nil, wrap("tool policies", err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.Tool] = r.Policy
	}
	return out, nil
}

// SetToolPolicies records the user's choices, by tool, in one transaction.
func (s *Store) SetToolPolicies(ctx context.Context, userID int64, policies map[string]string) error {
	err := s.transact(ctx, func(tx *gorm.DB) error {
		at := now()
		for tool, policy := range policies {
			res := tx.Model(&ToolPolicy{}).Where("user_id = ? AND tool = ?", userID, tool).
				Updates(map[string]any{"policy": policy, "updated_at": at})
			if res.Error != nil {
				return res.Error
			}
			if res.RowsAffected == 0 {
				if err := tx.Create(&ToolPolicy{UserID: userID, Tool: tool, Policy: policy, UpdatedAt: at}).Error; err != nil {
					return err
				}
			}
		}
		return nil
	})
	return wrap("set tool policies", err)
}

// ToolCallState is the state of each call in entries (a log in order), as of
// the latest entry about it, by call id.
func ToolCallState(entries []Message) map[string]string {
	out := map[string]string{}
	for _, m := range entries {
		if m.Tool == nil || m.Tool.CallID == "" {
			continue
		}
		switch {
		case m.Role == RoleToolCall && m.Tool.State != "":
			out[m.Tool.CallID] = m.Tool.State
		case m.Role == RoleToolCall:
			out[m.Tool.CallID] = ToolDone // a call written before states: answered at once
		case m.Role == RoleToolResult && m.Tool.Outcome != "":
			out[m.Tool.CallID] = m.Tool.Outcome
		case m.Role == RoleToolResult:
			out[m.Tool.CallID] = ToolDone
		}
	}
	return out
}

// WaitingCalls are the calls of turn (the entries after the last user
// message, in order) whose latest state waits for an answer, in the order
// they were made, each as its latest tool_call entry (a browser call the
// person approved waits for the browser now).
func WaitingCalls(turn []Message) []Message {
	state := ToolCallState(turn)
	latest := map[string]int{}
	var order []string
	for i, m := range turn {
		if m.Role != RoleToolCall || m.Tool == nil {
			continue
		}
		if st := state[m.Tool.CallID]; st != ToolAwaitingApproval && st != ToolAwaitingClient {
			continue
		}
		if _, ok := latest[m.Tool.CallID]; !ok {
			order = append(order, m.Tool.CallID)
		}
		latest[m.Tool.CallID] = i
	}
	out := make([]Message, 0, len(order))
	for _, id := range order {
		out = append(out, turn[latest[id]])
	}
	return out
}

// TurnEntries reads the user's exchange's current turn: the entries after
// its last user message, in order (error rows left out).
func (s *Store) TurnEntries(ctx context.Context, userID, exchangeID int64) ([]Message, error) {
	if _, err := s.Exchange(ctx, userID, exchangeID); err != nil {
		return nil, wrap("turn entries", err)
	}
	msgs, err := turnEntries(s.db.WithContext(ctx), exchangeID)
	return msgs, wrap("turn entries", err)
}

func turnEntries(tx *gorm.DB, exchangeID int64) ([]Message, error) {
	var msgs []Message
	err := tx.Where(`exchange_id = ? AND seq > COALESCE((SELECT MAX(seq) FROM messages
		WHERE exchange_id = ? AND role = ?), -1)`, exchangeID, exchangeID, RoleUser).
		Order("seq").Find(&msgs).Error
	return msgs, err
}

// PauseTurn appends the turn's waiting calls and releases its lease, leaving
// the exchange paused (idle, TurnWaiting): nothing runs, the turn timeout
// does not tick, and crash recovery (which looks at running turns) leaves
// it alone. active is how long the turn has run so far (kept for its
// resumption: TurnActiveMS). It fails with ErrLeaseLost, writing nothing,
// if owner no longer holds the lease.
func (s *Store) PauseTurn(ctx context.Context, exchangeID int64, owner string, active time.Duration, entries ...*Message) (*Exchange, error) {
	var ex Exchange
	err := s.transact(ctx, func(tx *gorm.DB) error {
		ex = Exchange{}
		for _, m := range entries {
			if _, err := appendEntry(tx, exchangeID, m); err != nil {
				return err
			}
		}
		updated, err := returningExchange(tx, pauseTurnStmt, &ex, active.Milliseconds(), now(), exchangeID, owner)
		if err != nil {
			return err
		}
		if !updated {
			return lostLease(tx, exchangeID)
		}
		return nil
	})
	if err != nil {
		return nil, wrap("pause turn", err)
	}
	return &ex, nil
}

// ToolAnswers answers waiting calls of the user's paused exchange.
type ToolAnswers struct {
	UserID     int64
	ExchangeID int64
	Owner      string // takes the lease when no call waits any more
	CallIDs    []string
	// Entries makes the entries that answer a waiting call (it may refuse
	// the answer: the whole write is then undone and its error returned).
	Entries func(call *Message) ([]*Message, error)
	// Turn, when set and the turn resumes, receives the turn's entries as
	// the answer leaves them (read under the lock, then the answers): the
	// resumed turn goes on from them without reading them again.
	Turn *[]Message
}

// AnswerTools appends (and returns) the answers to waiting calls of the user's paused
// exchange in one transaction. Each named call must wait, once: a call
// answered already (by another tab, a Stop), an unknown one or an exchange
// with nothing waiting give ErrNothingWaiting and change nothing. When no
// call waits any more, Owner takes the turn's lease (the exchange runs
// again) and the turn's user message is returned, to resume the turn.
func (s *Store) AnswerTools(ctx context.Context, a ToolAnswers) (*Exchange, *Message, []*Message, error) {
	var ex Exchange
	var query *Message
	var written []*Message
	err := s.transact(ctx, func(tx *gorm.DB) error {
		ex, query, written = Exchange{}, nil, nil
		turn, waiting, err := lockWaiting(tx, a.UserID, a.ExchangeID)
		if err != nil {
			return err
		}
		byID := map[string]*Message{}
		for i := range waiting {
			byID[waiting[i].Tool.CallID] = &waiting[i]
		}
		if len(a.CallIDs) == 0 {
			return ErrNothingWaiting
		}
		for _, id := range a.CallIDs {
			call := byID[id]
			if call == nil {
				return ErrNothingWaiting
			}
			delete(byID, id) // a second answer to it in the same request finds nothing
			entries, err := a.Entries(call)
			if err != nil {
				return err
			}
			for _, m := range entries {
				if _, err := appendEntry(tx, a.ExchangeID, m); err != nil {
					return err
				}
				written = append(written, m)
				if m.Role == RoleToolCall && m.Tool != nil && (m.Tool.State == ToolAwaitingApproval || m.Tool.State == ToolAwaitingClient) {
					byID[id] = m // answered into another wait (a browser call approved: the browser's turn now)
				}
			}
		}
		at := now()
		if len(byID) > 0 { // others still wait: the turn stays paused
			return tx.Where("id = ?", a.ExchangeID).Take(&ex).Error
		}
		updated, err := returningExchange(tx, resumeTurnStmt, &ex, a.Owner, at, at, a.ExchangeID)
		if err != nil {
			return err
		}
		if !updated {
			return ErrNothingWaiting
		}
		var q Message
		if err := tx.Where("exchange_id = ? AND role = ?", a.ExchangeID, RoleUser).Order("seq DESC").Take(&q).Error; err != nil {
			return err
		}
		query = &q
		if a.Turn != nil {
			for _, m := range written {
				turn = append(turn, *m)
			}
			*a.Turn = turn
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, wrap("answer tools", err)
	}
	return &ex, query, written, nil
}

// lockWaiting holds the user's paused exchange (its row, on PostgreSQL, till
// the transaction ends: two answers, or an answer and a Stop, take turns)
// and reads its turn's entries and, of them, the waiting calls. Not the
// user's: ErrNotFound; not paused: ErrNothingWaiting.
func lockWaiting(tx *gorm.DB, userID, exchangeID int64) (turn, waiting []Message, err error) {
	res := tx.Model(&Exchange{}).Where("id = ? AND user_id = ? AND turn_waiting AND turn_status <> ?", exchangeID, userID, TurnRunning).
		UpdateColumn("turn_waiting", true)
	if res.Error != nil {
		return nil, nil, res.Error
	}
	if res.RowsAffected == 0 {
		var n int64
		if err := tx.Model(&Exchange{}).Where("id = ? AND user_id = ?", exchangeID, userID).Count(&n).Error; err != nil {
			return nil, nil, err
		}
		if n == 0 {
			return nil, nil, ErrNotFound
		}
		return nil, nil, ErrNothingWaiting
	}
	turn, err = turnEntries(tx, exchangeID)
	if err != nil {
		return nil, nil, err
	}
	waiting = WaitingCalls(turn)
	if len(waiting) == 0 {
		return nil, nil, ErrNothingWaiting
	}
	return turn, waiting, nil
}

// CancelWaiting ends the user's paused turn: each waiting call gets a
// cancelled tool_result saying why, then reply (the turn's last word, when
// not nil), and the exchange is idle. Nothing waiting: ErrNothingWaiting.
func (s *Store) CancelWaiting(ctx context.Context, userID, exchangeID int64, why string, reply *Message) (*Exchange, []*Message, error) {
	var ex Exchange
	var written []*Message
	err := s.transact(ctx, func(tx *gorm.DB) error {
		ex, written = Exchange{}, nil
		_, waiting, err := lockWaiting(tx, userID, exchangeID)
		if err != nil {
			return err
		}
		if written, err = cancelCalls(tx, exchangeID, waiting, why); err != nil {
			return err
		}
		if reply != nil {
			if _, err := appendEntry(tx, exchangeID, reply); err != nil {
				return err
			}
			written = append(written, reply)
		}
		_, err = returningExchange(tx, unpauseStmt, &ex, now(), exchangeID)
		return err
	})
	if err != nil {
		return nil, nil, wrap("cancel waiting calls", err)
	}
	return &ex, written, nil
}

// cancelCalls appends a cancelled result for each waiting call.
func cancelCalls(tx *gorm.DB, exchangeID int64, waiting []Message, why string) ([]*Message, error) {
	var out []*Message
	for _, call := range waiting {
		m := CancelledResult(call.Tool, why)
		if _, err := appendEntry(tx, exchangeID, m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// CancelledResult is the tool_result of a call cancelled for why.
func CancelledResult(call *ToolFields, why string) *Message {
	return &Message{Role: RoleToolResult, Content: call.Name + " was cancelled: " + why,
		Tool: &ToolFields{CallID: call.CallID, Name: call.Name, Tier: call.Tier, Outcome: ToolCancelled, Error: why, By: "person"}}
}

// MovedOn is why a new message cancels the calls that waited.
const MovedOn = "the person moved on"

// ExchangeByTitle finds the user's most recently active general exchange
// with that title (case-insensitively).
func (s *Store) ExchangeByTitle(ctx context.Context, userID int64, title string) (*Exchange, error) {
	var ex Exchange
	err := s.db.WithContext(ctx).Where("user_id = ? AND scope = ? AND LOWER(title) = LOWER(?)", userID, ScopeGeneral, title).
		Order("updated_at DESC, id DESC").Take(&ex).Error
	if err != nil {
		return nil, wrap("exchange by title", err)
	}
	return &ex, nil
}
