package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Statuses of a sub-run.
const (
	SubRunRunning = "running"
	SubRunOK      = "ok"
	SubRunFailed  = "failed"
)

// SubRun records one delegation from an agent to another, as ai-leash
// records the agents it spawns: the sub-agent's work is a conversation of
// its own (the exchange ExchangeID, of scope ScopeSubRun, whose ParentID and
// ParentSeq point at the entry that spawned it), and this row says which
// agent ran, what it was asked, when it started and finished and how it
// ended.
type SubRun struct {
	ExchangeID int64     `gorm:"primaryKey;autoIncrement:false"`
	Agent      string    `gorm:"not null"`
	Task       string    `gorm:"not null"` // what the parent asked, in a line
	Status     string    `gorm:"not null"` // SubRunRunning, SubRunOK or SubRunFailed
	Result     string    `gorm:"not null"` // a short account of the outcome
	StartedAt  time.Time `gorm:"not null"`
	FinishedAt *time.Time
}

// SubRunStart is a delegation about to begin: the parent exchange (the
// user's) and the seq of the entry in its log that spawns it.
type SubRunStart struct {
	UserID    int64
	ParentID  int64
	ParentSeq int64
	Agent     string
	Task      string // the sub-run's first entry, and its title
	Owner     string // who holds the sub-run's lease while it runs
}

// SubRunView is a sub-run with where it belongs, as lists show it.
type SubRunView struct {
	SubRun
	UserID    int64
	ParentID  int64
	ParentSeq int64
	Title     string
	Entries   int64 // entries in its log (error rows included)
}

// StartSubRun opens a sub-run of one of the user's exchanges, in one
// transaction: its exchange (with its lease held by Owner, so that its
// entries are appended as a turn's are), its record (running), and its
// first entry, the task, as the message the sub-agent answers.
func (s *Store) StartSubRun(ctx context.Context, t SubRunStart) (*Exchange, *SubRun, error) {
	var ex Exchange
	var run SubRun
	err := s.transact(ctx, func(tx *gorm.DB) error {
		var parent Exchange
		if err := tx.Select("id").Where("id = ? AND user_id = ?", t.ParentID, t.UserID).Take(&parent).Error; err != nil {
			return err
		}
		at := now()
		owner, parentID, parentSeq := t.Owner, t.ParentID, t.ParentSeq
		ex = Exchange{
			UserID: t.UserID, Scope: ScopeSubRun, ParentID: &parentID, ParentSeq: &parentSeq,
			Title: TitleFrom(t.Agent + ": " + t.Task), AgentType: t.Agent, TurnCount: 1,
			CreatedAt: at, UpdatedAt: at, TurnStatus: TurnRunning,
			TurnOwner: &owner, TurnHeartbeatAt: &at, TurnAttempts: 1,
		}
		if err := tx.Create(&ex).Error; err != nil {
			return err
		}
		run = SubRun{ExchangeID: ex.ID, Agent: t.Agent, Task: t.Task, Status: SubRunRunning, StartedAt: at}
		if err := tx.Create(&run).Error; err != nil {
			return err
		}
		_, err := appendEntry(tx, ex.ID, &Message{Role: RoleUser, Content: t.Task, CreatedAt: at})
		return err
	})
	if err != nil {
		return nil, nil, wrap("start sub-run", err)
	}
	return &ex, &run, nil
}

// FinishSubRun appends a sub-run's last entries, releases its lease and
// records how it ended (SubRunOK or SubRunFailed, with a short result), in
// one transaction. It fails with ErrLeaseLost, writing nothing, if owner no
// longer holds the lease (the sub-run was judged dead and failed).
func (s *Store) FinishSubRun(ctx context.Context, exchangeID int64, owner, status, result string, entries ...*Message) (*SubRun, error) {
	if status != SubRunOK && status != SubRunFailed {
		return nil, fmt.Errorf("finish sub-run: status %q", status)
	}
	var run SubRun
	err := s.transact(ctx, func(tx *gorm.DB) error {
		turn := TurnIdle
		if status == SubRunFailed {
			turn = TurnFailed
		}
		if err := release(tx, exchangeID, owner, turn, nil); err != nil {
			return err
		}
		for _, m := range entries {
			if _, err := appendEntry(tx, exchangeID, m); err != nil {
				return err
			}
		}
		if err := endSubRun(tx, exchangeID, status, result); err != nil {
			return err
		}
		return tx.Take(&run, "exchange_id = ?", exchangeID).Error
	})
	if err != nil {
		return nil, wrap("finish sub-run", err)
	}
	return &run, nil
}

// endSubRun records the end of a sub-run still running; nothing when the
// exchange is no sub-run (a turn's exchange failing) or it already ended.
func endSubRun(tx *gorm.DB, exchangeID int64, status, result string) error {
	return tx.Model(&SubRun{}).Where("exchange_id = ? AND status = ?", exchangeID, SubRunRunning).
		UpdateColumns(map[string]any{"status": status, "result": result, "finished_at": now()}).Error
}

// subRunViews selects sub-runs with their exchange's place and title.
func subRunViews(tx *gorm.DB) *gorm.DB {
	return tx.Table("sub_runs AS r").
		Select(`r.*, e.user_id, e.parent_id, e.parent_seq, e.title,
			(SELECT COUNT(*) FROM messages m WHERE m.exchange_id = e.id) AS entries`).
		Joins("JOIN exchanges e ON e.id = r.exchange_id")
}

// SubRuns lists the sub-runs spawned from one of the user's exchanges, in
// the order they were spawned. Another user's exchange has none.
func (s *Store) SubRuns(ctx context.Context, userID, parentID int64) ([]SubRunView, error) {
	var out []SubRunView
	err := subRunViews(s.db.WithContext(ctx)).Where("e.parent_id = ? AND e.user_id = ?", parentID, userID).
		Order("e.parent_seq, e.id").Scan(&out).Error
	return out, wrap("sub-runs", err)
}

// SubRunOf loads one of the user's sub-runs by its exchange's id.
func (s *Store) SubRunOf(ctx context.Context, userID, exchangeID int64) (*SubRunView, error) {
	var out []SubRunView
	err := subRunViews(s.db.WithContext(ctx)).Where("r.exchange_id = ? AND e.user_id = ?", exchangeID, userID).
		Limit(1).Scan(&out).Error
	if err != nil {
		return nil, wrap("sub-run", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sub-run %d: %w", exchangeID, ErrNotFound)
	}
	return &out[0], nil
}

// AdminSubRuns lists the sub-runs spawned from any user's exchange, in the
// order they were spawned: the admin list leaves sub-runs out, and shows
// them under their parent.
func (s *Store) AdminSubRuns(ctx context.Context, parentID int64) ([]SubRunView, error) {
	var out []SubRunView
	err := subRunViews(s.db.WithContext(ctx)).Where("e.parent_id = ?", parentID).
		Order("e.parent_seq, e.id").Scan(&out).Error
	return out, wrap("admin sub-runs", err)
}
