package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// The statements every API turn runs (the key's lookup, the entries'
// inserts) are written by hand on database/sql: gorm's statement building
// and reflection were a fifth of a turn's Go CPU, and the next seq is taken
// in the INSERT itself instead of a statement of its own. Each connection's
// statement cache (_stmt_cache_size) keeps them prepared.

// stmt is one statement in both dialects' placeholders.
type stmt struct{ sqlite, postgres string }

// newStmt takes a statement with ? placeholders and numbers them for
// PostgreSQL ($1, $2, …). The statements are ours: no ? inside a literal.
func newStmt(q string) stmt {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return stmt{sqlite: q, postgres: b.String()}
}

// in is the statement in the dialect named (gorm's Dialector.Name()).
func (q stmt) in(dialect string) string {
	if dialect == "postgres" {
		return q.postgres
	}
	return q.sqlite
}

var (
	// Subqueries, not a join: SQLite prepares a join with bound values
	// again on every run (five times the cost of the whole read).
	userByAPIKeyStmt = newStmt(`SELECT u.id, u.username, u.username_key, u.password_hash, u.is_admin,
		u.created_at, u.disabled, u.session_epoch, u.default_model_id, u.search_reasoning,
		(SELECT id FROM api_keys WHERE key_hash = ?),
		(SELECT last_used_at IS NULL OR last_used_at < ? FROM api_keys WHERE key_hash = ?)
		FROM users u WHERE u.id = (SELECT user_id FROM api_keys WHERE key_hash = ?)`)
	// An entry takes the exchange's next seq in the INSERT: one statement,
	// the same unique (exchange_id, seq) guarding a concurrent writer. On
	// SQLite the id is compared as ?+0: with a bare ? there, SQLite
	// prepares the whole INSERT (its triggers included) again on every run
	// (the bound value is marked as one the plan depends on, because of
	// the partial indexes on messages), which cost more than the insert.
	insertEntryStmt = stmt{
		sqlite:   insertEntrySQL("?+0"),
		postgres: newStmt(insertEntrySQL("?")).postgres,
	}
	// hasAttachmentsStmt: whether a message has attachments at all.
	hasAttachmentsStmt = newStmt(`SELECT EXISTS (SELECT 1 FROM message_attachments WHERE message_id = ?)`)
	insertErrorRowStmt = newStmt(`INSERT INTO messages (uid, exchange_id, seq, role, content, agent_type,
		agent_response, tool, edit_mode, feedback, feedback_comment, created_at, copy_of)
		VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id`)
)

func insertEntrySQL(exchangeID string) string {
	return `INSERT INTO messages (uid, exchange_id, seq, role, content, agent_type,
		agent_response, tool, edit_mode, feedback, feedback_comment, created_at, copy_of)
		VALUES (?, ?, (SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE exchange_id = ` + exchangeID + `),
		?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING id, seq`
}

// recentContextStmt reads the latest entries of the user's exchange, newest
// first. SQLite reads LIMIT ?+0: with a bare ? it prepares the statement
// again on every run (the plan depends on a bound LIMIT), four times the
// cost of the read itself.
var recentContextStmt = stmt{
	sqlite:   recentContextSQL("?+0"),
	postgres: newStmt(recentContextSQL("?")).postgres,
}

func recentContextSQL(limit string) string {
	return `SELECT id, seq, role, content, tool FROM messages
		WHERE exchange_id = (SELECT id FROM exchanges WHERE id = ? AND user_id = ?) AND seq IS NOT NULL
		ORDER BY seq DESC LIMIT ` + limit
}

// exchangeScopeStmt reads the scope of the user's exchange.
var exchangeScopeStmt = newStmt(`SELECT scope FROM exchanges WHERE id = ? AND user_id = ?`)

// The lease's UPDATEs, RETURNING the header. The statuses are literals:
// SQLite prepares a statement again on every run when a bound value meets
// the literal of a partial index (exchanges_running: turn_status =
// 'running').
var (
	startTurnStmt = newStmt(`UPDATE exchanges SET turn_status = '` + TurnRunning + `', turn_owner = ?,
		turn_heartbeat_at = ?, turn_attempts = 1, turn_count = turn_count + 1, updated_at = ?, agent_type = ?,
		title = CASE WHEN title = '' THEN ? ELSE title END
		WHERE id = ? AND user_id = ? AND turn_status <> '` + TurnRunning + `' RETURNING ` + exchangeColumns)
	finishTurnStmt = newStmt(`UPDATE exchanges SET turn_status = '` + TurnIdle + `', turn_owner = NULL,
		turn_heartbeat_at = NULL, updated_at = ?
		WHERE id = ? AND turn_status = '` + TurnRunning + `' AND turn_owner = ? RETURNING ` + exchangeColumns)
	// Turns that wait (tools.go): pausing releases the lease with calls
	// waiting; resuming takes it again once none waits; unpausing ends the
	// wait without a turn (a Stop, a new message).
	pauseTurnStmt = newStmt(`UPDATE exchanges SET turn_status = '` + TurnIdle + `', turn_owner = NULL,
		turn_heartbeat_at = NULL, turn_waiting = true, turn_active_ms = ?, updated_at = ?
		WHERE id = ? AND turn_status = '` + TurnRunning + `' AND turn_owner = ? RETURNING ` + exchangeColumns)
	resumeTurnStmt = newStmt(`UPDATE exchanges SET turn_status = '` + TurnRunning + `', turn_owner = ?,
		turn_heartbeat_at = ?, turn_waiting = false, turn_attempts = 1, updated_at = ?
		WHERE id = ? AND turn_waiting AND turn_status <> '` + TurnRunning + `' RETURNING ` + exchangeColumns)
	unpauseStmt = newStmt(`UPDATE exchanges SET turn_waiting = false, updated_at = ?
		WHERE id = ? RETURNING ` + exchangeColumns)
)

// returningExchange runs an UPDATE of one exchange RETURNING
// exchangeColumns and reads the row into ex. It says whether a row was
// updated.
func returningExchange(tx *gorm.DB, q stmt, ex *Exchange, args ...any) (bool, error) {
	rows, err := tx.Statement.ConnPool.QueryContext(ctxOf(tx), q.in(tx.Dialector.Name()), args...)
	if err != nil {
		return false, translate(tx, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return false, translate(tx, rows.Err())
	}
	// Scanned by hand, not by gorm's reflection: every turn returns the
	// header twice.
	if err := rows.Scan(exchangeFields(ex)...); err != nil {
		return false, err
	}
	return true, rows.Close()
}

// exchangeColumns are the header's columns the lease's statements return,
// in the order of exchangeFields.
const exchangeColumns = `id, uid, user_id, scope, page_id, job_id, title, agent_type, forked_from_id,
	forked_at_seq, pinned, archived, turn_count, created_at, updated_at, turn_status, turn_owner,
	turn_heartbeat_at, turn_attempts, turn_waiting, turn_active_ms, project_id, temporary,
	parent_id, parent_seq, stored_bytes, first_query_id, first_reply_id, last_reply_id`

// exchangeFields are where a row of exchangeColumns goes in ex.
func exchangeFields(ex *Exchange) []any {
	return []any{&ex.ID, &ex.UID, &ex.UserID, &ex.Scope, &ex.PageID, &ex.JobID, &ex.Title, &ex.AgentType, &ex.ForkedFromID,
		&ex.ForkedAtSeq, &ex.Pinned, &ex.Archived, &ex.TurnCount, &ex.CreatedAt, &ex.UpdatedAt, &ex.TurnStatus, &ex.TurnOwner,
		&ex.TurnHeartbeatAt, &ex.TurnAttempts, &ex.TurnWaiting, &ex.TurnActiveMS, &ex.ProjectID, &ex.Temporary,
		&ex.ParentID, &ex.ParentSeq, &ex.StoredBytes, &ex.FirstQueryID, &ex.FirstReplyID, &ex.LastReplyID}
}

// ctxOf is the context tx's statements run under.
func ctxOf(tx *gorm.DB) context.Context {
	if ctx := tx.Statement.Context; ctx != nil {
		return ctx
	}
	return context.Background()
}

// translate maps a driver's error to gorm's (a unique violation to
// gorm.ErrDuplicatedKey), as gorm's own statements do.
func translate(tx *gorm.DB, err error) error {
	if t, ok := tx.Dialector.(gorm.ErrorTranslator); ok && err != nil {
		return t.Translate(err)
	}
	return err
}

// userByAPIKey reads a key's owner and id in one statement, and whether
// the key was last used before touchBefore (or never).
func (s *Store) userByAPIKey(ctx context.Context, keyHash string, touchBefore time.Time) (*User, int64, bool, error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, 0, false, err
	}
	var u User
	var keyID int64
	var touch bool
	var usernameKey sql.NullString
	err = sqlDB.QueryRowContext(ctx, userByAPIKeyStmt.in(s.dialect), keyHash, touchBefore, keyHash, keyHash).Scan(
		&u.ID, &u.Username, &usernameKey, &u.PasswordHash, &u.IsAdmin,
		&u.CreatedAt, &u.Disabled, &u.SessionEpoch, &u.DefaultModelID, &u.SearchReasoning, &keyID, &touch)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, false, gorm.ErrRecordNotFound
	}
	if err != nil {
		return nil, 0, false, err
	}
	if usernameKey.Valid {
		u.UsernameKey = &usernameKey.String
	}
	return &u, keyID, touch, nil
}

// insertEntry inserts m, a new entry of exchangeID, at the log's next seq
// (an error row at none) and fills its id, uid and seq.
func insertEntry(tx *gorm.DB, exchangeID int64, m *Message) error {
	m.UID = orNewUID(m.UID)
	agentResponse, err := jsonColumn(m.AgentResponse)
	if err != nil {
		return err
	}
	tool, err := jsonColumn(m.Tool)
	if err != nil {
		return err
	}
	ctx := ctxOf(tx)
	dialect := tx.Dialector.Name()
	pool := tx.Statement.ConnPool
	var row *sql.Row
	if m.Role == RoleError {
		row = pool.QueryRowContext(ctx, insertErrorRowStmt.in(dialect),
			m.UID, exchangeID, m.Role, m.Content, m.AgentType, agentResponse, tool, m.EditMode,
			m.Feedback, m.FeedbackComment, m.CreatedAt, m.CopyOf)
		err = row.Scan(&m.ID)
	} else {
		var seq int64
		row = pool.QueryRowContext(ctx, insertEntryStmt.in(dialect),
			m.UID, exchangeID, exchangeID, m.Role, m.Content, m.AgentType, agentResponse, tool, m.EditMode,
			m.Feedback, m.FeedbackComment, m.CreatedAt, m.CopyOf)
		if err = row.Scan(&m.ID, &seq); err == nil {
			m.Seq = &seq
		}
	}
	return translate(tx, err)
}

// jsonColumn is v as its JSON column holds it: NULL for nil, as gorm's json
// serializer writes it.
func jsonColumn[T any](v *T) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return nil, nil
	}
	return string(b), nil
}
