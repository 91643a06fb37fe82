package models

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Forks (issue 11). A fork is an exchange whose log begins with a copy of
// its parent's log before a seq: every entry before it, error rows included
// in their place (the log as Messages(at = seq-1) shows it), then entries of
// its own. The copy is one INSERT … SELECT; each copied row names in copy_of
// the original row (never a copy), which is what keeps a family's shared
// entry one entry: search indexes only originals, and deleting an original
// promotes its oldest copy (migration 00008). Because the rows are copies,
// every reader of a log (Messages, RecentContext, the history's first turn,
// the admin views, live catch-up) reads a fork like any other exchange, and
// deleting any member of a family leaves the others' logs as they were. A
// copy holds its original's attachments, copied with it.
//
// A fork has its parent's user, scope, page, title and agent. A job's chat
// is the one exchange of its job (unique per user and job), so its forks
// are general chats that point back to it (forked_from).

// forkLock is the PostgreSQL advisory lock forks hold shared while they
// copy and copy promotion takes exclusively (migration 00008).
const forkLock = 7265111

// ForkStart is a fork that starts a turn at once, in the fork's transaction.
type ForkStart struct {
	UserID     int64
	ExchangeID int64 // the parent
	Seq        int64 // the fork keeps the parent's entries before Seq
	// Query is the fork's first user message, at Seq (an edited message).
	// Empty, the turn answers the copied user message that ends the prefix
	// again (a regeneration): the entry at Seq-1 must be a user message.
	Query     string
	AgentType string // the turn's agent; "" keeps the parent's
	Owner     string // who holds the turn's lease
	// Attachments are the user's files the new message holds (issue 26).
	Attachments []int64
}

// Fork makes a fork of the user's exchange at seq, without a turn: a new
// exchange whose log is the parent's entries before seq. seq may be the
// log's next seq (a copy of the whole log). A seq outside 0…next gives
// ErrBadSeq, another user's exchange ErrNotFound; either way nothing is
// made. Error rows have no seq, so a seq never names one (API.md's "a fork
// at an error row"): a fork at seq keeps the error rows written before the
// entry at seq, in their place, as time travel to seq-1 shows them.
// Forking while the parent's turn runs is allowed: the fork copies what is
// committed.
func (s *Store) Fork(ctx context.Context, userID, exchangeID, seq int64) (*Exchange, error) {
	var ex *Exchange
	err := s.transactLarge(ctx, func(tx *gorm.DB) error {
		var err error
		ex, err = s.fork(tx, userID, exchangeID, seq, now())
		return err
	})
	if err != nil {
		return nil, wrap("fork", err)
	}
	return ex, nil
}

// StartFork makes a fork as Fork does and starts a turn on it in the same
// transaction: with Query, a new user message at Seq (an edit); without,
// the turn answers the copied user message at Seq-1 again (ErrBadSeq if
// that entry is not a user message). It returns the fork, with its lease
// taken, and the user message the turn answers.
func (s *Store) StartFork(ctx context.Context, f ForkStart) (*Exchange, *Message, error) {
	var ex *Exchange
	var msg *Message
	err := s.transactLarge(ctx, func(tx *gorm.DB) error {
		at := now()
		var err error
		if ex, err = s.fork(tx, f.UserID, f.ExchangeID, f.Seq, at); err != nil {
			return err
		}
		if f.Query != "" {
			if msg, err = appendEntry(tx, ex.ID, &Message{Role: RoleUser, Content: f.Query, CreatedAt: at}); err != nil {
				return err
			}
			if err := attachFiles(tx, f.UserID, msg.ID, f.Attachments); err != nil {
				return err
			}
			ex.TurnCount++
			if ex.Title == "" {
				ex.Title = TitleFrom(f.Query)
			}
		} else {
			msg = &Message{}
			err := tx.Where("exchange_id = ? AND seq = ?", ex.ID, f.Seq-1).Take(msg).Error
			if errors.Is(err, gorm.ErrRecordNotFound) || (err == nil && msg.Role != RoleUser) {
				return ErrBadSeq
			}
			if err != nil {
				return err
			}
		}
		owner := f.Owner
		ex.TurnStatus, ex.TurnOwner, ex.TurnHeartbeatAt, ex.TurnAttempts = TurnRunning, &owner, &at, 1
		if f.AgentType != "" {
			ex.AgentType = f.AgentType
		}
		return tx.Model(&Exchange{}).Where("id = ?", ex.ID).UpdateColumns(map[string]any{
			"turn_status": TurnRunning, "turn_owner": owner, "turn_heartbeat_at": at, "turn_attempts": 1,
			"turn_count": ex.TurnCount, "title": ex.Title, "agent_type": ex.AgentType,
		}).Error
	})
	if err != nil {
		return nil, nil, wrap("start fork", err)
	}
	return ex, msg, nil
}

// fork copies the parent's log before seq into a new exchange, in tx.
func (s *Store) fork(tx *gorm.DB, userID, parentID, seq int64, at time.Time) (*Exchange, error) {
	var parent Exchange
	q := tx.Where("id = ? AND user_id = ?", parentID, userID)
	if s.dialect == "postgres" {
		// The parent's row first, as the new row's foreign key would take
		// it: a delete of the parent that holds it finishes first (and the
		// fork finds nothing), instead of waiting for the advisory lock
		// while the fork waits for the row.
		q = q.Clauses(clause.Locking{Strength: "KEY SHARE"})
	}
	if err := q.Take(&parent).Error; err != nil {
		return nil, err
	}
	if parent.Scope == ScopeSubRun {
		// A sub-run is an agent's record, reached through its parent: it
		// takes no messages, so it has no branches either.
		return nil, fmt.Errorf("fork of sub-run %d: %w", parent.ID, ErrNotFound)
	}
	if s.dialect == "postgres" {
		if err := tx.Exec("SELECT pg_advisory_xact_lock_shared(?)", forkLock).Error; err != nil {
			return nil, err
		}
	}
	var next int64
	if err := tx.Model(&Message{}).Select("COALESCE(MAX(seq), -1) + 1").
		Where("exchange_id = ?", parentID).Scan(&next).Error; err != nil {
		return nil, err
	}
	if seq < 0 || seq > next {
		return nil, fmt.Errorf("%w: a fork at %d of a log of %d entries", ErrBadSeq, seq, next)
	}
	// Everything written before the entry at seq, error rows included; at
	// the end of the log, everything committed.
	cut := int64(math.MaxInt64)
	if seq < next {
		if err := tx.Model(&Message{}).Select("id").Where("exchange_id = ? AND seq = ?", parentID, seq).
			Scan(&cut).Error; err != nil {
			return nil, err
		}
	}
	ex := &Exchange{
		UserID: userID, Scope: parent.Scope, PageID: parent.PageID, JobID: parent.JobID,
		Title: parent.Title, AgentType: parent.AgentType, ForkedFromID: &parent.ID, ForkedAtSeq: &seq,
		ProjectID: parent.ProjectID, Temporary: parent.Temporary,
		CreatedAt: at, UpdatedAt: at, TurnStatus: TurnIdle,
	}
	if parent.Scope == ScopeJob {
		ex.Scope, ex.JobID = ScopeGeneral, nil
	}
	if err := tx.Create(ex).Error; err != nil {
		return nil, err
	}
	if err := joinFamily(tx, s.dialect, ex.ID, parent.ID); err != nil {
		return nil, err
	}
	// ORDER BY id: the copies take ids in the parent's order, so the
	// fork's log reads in the same order (every reader orders by id). The
	// seq bound matters on PostgreSQL only, where the parent's running
	// turn may commit an entry at seq after it was looked for above.
	// Each copy is an entry of its own: a uid of its own, made in SQL
	// (copyUIDSQL: random per fork, not per row).
	if err := tx.Exec(`INSERT INTO messages (exchange_id, seq, role, content, agent_type, agent_response, tool,
			edit_mode, feedback, feedback_comment, created_at, copy_of, uid)
		SELECT ?, seq, role, content, agent_type, agent_response, tool,
			edit_mode, feedback, feedback_comment, created_at, COALESCE(copy_of, id), `+s.copyUIDSQL()+`
		FROM messages WHERE exchange_id = ? AND id < ? AND (seq IS NULL OR seq < ?) ORDER BY id`,
		ex.ID, uidPrefix(), parentID, cut, seq).Error; err != nil {
		return nil, err
	}
	// A copy holds its original's attachments (issue 26): one statement
	// for the whole copy (migration 00033; a trigger per copied row was a
	// fifth of a long fork's time). A person without files has none to
	// copy, and the statement walks nothing.
	if err := tx.Exec(`INSERT INTO message_attachments (message_id, file_id, position)
		SELECT c.id, a.file_id, a.position FROM messages c JOIN message_attachments a ON a.message_id = c.copy_of
		WHERE c.exchange_id = ? AND c.copy_of IS NOT NULL AND EXISTS (SELECT 1 FROM files WHERE user_id = ?)`,
		ex.ID, userID).Error; err != nil {
		return nil, err
	}
	// The insert trigger leaves copies out of stored_bytes: add them once.
	// On SQLite, whose one writer holds the database for this whole
	// transaction, that is the parent's size less what was not copied (for
	// the usual fork near the end, next to nothing to read). On PostgreSQL
	// the parent may have grown since the copy's snapshot: sum the copies.
	bytes, args := `(SELECT stored_bytes FROM exchanges WHERE id = ?) - (SELECT COALESCE(SUM(
			length(CAST(content AS BLOB)) + COALESCE(length(CAST(agent_response AS BLOB)), 0) + COALESCE(length(CAST(tool AS BLOB)), 0)
		), 0) FROM messages WHERE exchange_id = ? AND id >= ?)`, []any{parentID, parentID, cut}
	if s.dialect == "postgres" {
		bytes, args = `stored_bytes + (SELECT COALESCE(SUM(
			octet_length(content) + COALESCE(octet_length(agent_response), 0) + COALESCE(octet_length(tool), 0)
		), 0) FROM messages WHERE exchange_id = ?)`, []any{ex.ID}
	}
	// The history's first turn and latest reply (migration 00011), which
	// the insert trigger leaves out for copies too: three index seeks.
	args = append(args, ex.ID, RoleUser, ex.ID, RoleUser, ex.ID, RoleAssistant, ex.ID, RoleAssistant, ex.ID)
	if err := tx.Exec(`UPDATE exchanges SET stored_bytes = `+bytes+`,
			turn_count = (SELECT COUNT(*) FROM messages WHERE exchange_id = ? AND role = ?),
			first_query_id = (SELECT MIN(id) FROM messages WHERE exchange_id = ? AND role = ?),
			first_reply_id = (SELECT MIN(id) FROM messages WHERE exchange_id = ? AND role = ?),
			last_reply_id = (SELECT MAX(id) FROM messages WHERE exchange_id = ? AND role = ?)
		WHERE id = ?`, args...).Error; err != nil {
		return nil, err
	}
	if err := tx.Select("turn_count", "stored_bytes", "first_query_id", "first_reply_id", "last_reply_id").Take(ex, ex.ID).Error; err != nil {
		return nil, err
	}
	return ex, nil
}

// RegenerateSeq is where a regeneration of the reply at seq forks: just
// after the user message that reply answers (so the fork's log ends with
// that message). seq names an assistant message; nil means the log's last
// one. Anything else gives ErrBadSeq.
func (s *Store) RegenerateSeq(ctx context.Context, userID, exchangeID int64, seq *int64) (int64, error) {
	if _, err := s.Exchange(ctx, userID, exchangeID); err != nil {
		return 0, fmt.Errorf("regenerate: %w", err)
	}
	db := s.db.WithContext(ctx)
	var reply Message
	q := db.Select("id, seq, role").Where("exchange_id = ? AND role = ?", exchangeID, RoleAssistant)
	if seq != nil {
		q = q.Where("seq = ?", *seq)
	}
	if err := q.Order("seq DESC").Take(&reply).Error; err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return 0, fmt.Errorf("regenerate: %w", ErrBadSeq)
		}
		return 0, wrap("regenerate", err)
	}
	var query Message
	err := db.Select("id, seq").Where("exchange_id = ? AND role = ? AND seq < ?", exchangeID, RoleUser, *reply.Seq).
		Order("seq DESC").Take(&query).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return 0, fmt.Errorf("regenerate: %w", ErrBadSeq)
	}
	if err != nil {
		return 0, wrap("regenerate", err)
	}
	return *query.Seq + 1, nil
}

// joinFamily records, on SQLite, that exchange id belongs to the family of
// parentID, of which it is a fork (migration 00016: the promotion of copies
// looks them up among the family's members). A root has no row: its own id
// is its family's. The exchanges already keyed by id (an import may link a
// fork's children before the fork itself) follow it into the family. On
// PostgreSQL copies are found by their own index: nothing to record.
func joinFamily(tx *gorm.DB, dialect string, id, parentID int64) error {
	if dialect != "sqlite" {
		return nil
	}
	if err := tx.Exec(`INSERT INTO fork_families (exchange_id, family_id)
		VALUES (?, COALESCE((SELECT family_id FROM fork_families WHERE exchange_id = ?), ?))
		ON CONFLICT (exchange_id) DO UPDATE SET family_id = excluded.family_id`, id, parentID, parentID).Error; err != nil {
		return err
	}
	return tx.Exec(`UPDATE fork_families SET family_id = (SELECT family_id FROM fork_families WHERE exchange_id = ?)
		WHERE family_id = ?`, id, id).Error
}

// copyUIDSQL is the SQL expression of the uid of a fork's copied entry: a
// prefix random for the whole fork (its one argument, uidPrefix), then the
// copied row's id in hex. The copies of one fork differ by the id, forks by
// the prefix; and a 10,000-entry fork no longer draws 10,000 random UUIDs
// in SQL and scatters them through the uid index (that was half its time).
func (s *Store) copyUIDSQL() string {
	if s.dialect == "postgres" {
		return "(? || lpad(to_hex(id), 12, '0'))"
	}
	return "(? || printf('%012x', id))"
}

// uidPrefix is a new UUID's first 24 characters (time-ordered, version 7,
// with its variant), for copyUIDSQL to end with 12 hex digits.
func uidPrefix() string { return newUID()[:24] }
