package models

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// MemoryBudget bounds the characters of memory entries put in one turn's
// context: the newest entries that fit go in.
const MemoryBudget = 8_000

// InstructionText is a composed system text, kept once per person and
// hash so that a reply's record of it can be read back.
type InstructionText struct {
	ID        int64     `gorm:"primaryKey"`
	UserID    int64     `gorm:"not null"`
	Hash      string    `gorm:"not null"`
	Text      string    `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}

// Composed is the system text in force for a turn: the person's own
// instructions, the project's, then the memory entries, in that order.
type Composed struct {
	Text      string
	Hash      string // SHA-256 hex of Text
	ProjectID *int64
}

// Metadata is how a reply records it (agent_response.metadata.instructions).
func (c Composed) Metadata() map[string]any {
	return map[string]any{"project_id": c.ProjectID, "hash": c.Hash}
}

// ComposeInstructions builds the system text for a turn in the user's
// exchange and keeps it (InstructionText). Memory is left out when the
// account or the chat's project turns it off, and in a temporary chat.
func (s *Store) ComposeInstructions(ctx context.Context, userID, exchangeID int64) (Composed, error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return Composed{}, wrap("compose instructions", err)
	}
	db := s.db.WithContext(ctx)
	out, kept, err := s.composeInstructions(ctx, sqlDB, db, userID, exchangeID, true)
	if err != nil || kept {
		return out, err
	}
	err = db.Clauses(clause.OnConflict{DoNothing: true}).
		Create(&InstructionText{UserID: userID, Hash: out.Hash, Text: out.Text, CreatedAt: now()}).Error
	return out, wrap("keep instructions", err)
}

// composeInstructions composes the system text of ComposeInstructions on q
// (the pool, or a transaction's connection) and db (the same), and says
// whether the text is kept already. Without blobs, a project's files are
// not read (they may be on an S3 server): a project with files gives
// errReadLater.
func (s *Store) composeInstructions(ctx context.Context, q gorm.ConnPool, db *gorm.DB, userID, exchangeID int64, blobs bool) (out Composed, kept bool, err error) {
	dialect := s.dialect
	// Every turn runs this: its reads are statements by hand (gorm's
	// building and reflection were most of their cost), the exchange's
	// header and the account's instructions in one.
	var ex Exchange
	acct := AccountInstructions{UserID: userID}
	err = q.QueryRowContext(ctx, composeHeaderStmt.in(dialect), true, exchangeID, userID).
		Scan(&ex.ProjectID, &ex.Temporary, &acct.About, &acct.Style, &acct.Memory)
	if errors.Is(err, sql.ErrNoRows) {
		err = gorm.ErrRecordNotFound
	}
	if err != nil {
		return out, false, wrap("compose instructions", err)
	}
	var b strings.Builder
	section := func(head, body string) {
		if strings.TrimSpace(body) == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(head + "\n" + strings.TrimSpace(body))
	}
	section("About the person you are talking to:", acct.About)
	section("How the person wants you to answer:", acct.Style)
	memory := acct.Memory && !ex.Temporary
	if ex.ProjectID != nil {
		var p Project
		if err := db.Where("id = ? AND user_id = ?", *ex.ProjectID, userID).Take(&p).Error; err != nil {
			return out, false, wrap("compose instructions", err)
		}
		out.ProjectID = &p.ID
		section(fmt.Sprintf("Instructions of the project %q:", p.Name), p.Instructions)
		knowledge, err := s.projectKnowledge(db, userID, p.ID, blobs)
		if err != nil {
			return out, false, wrap("compose instructions", err)
		}
		if knowledge != "" {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(knowledge)
		}
		memory = memory && p.Memory
	}
	if memory {
		lines, err := memoryLines(ctx, q, dialect, userID)
		if err != nil {
			return out, false, wrap("compose instructions", err)
		}
		section("What you remember about the person:", strings.Join(lines, "\n"))
	}
	out.Text = b.String()
	sum := sha256.Sum256([]byte(out.Text))
	out.Hash = hex.EncodeToString(sum[:])
	// Kept already, as on almost every turn: a read, not a write. On
	// SQLite an INSERT that ON CONFLICT ignores still rewrites the
	// AUTOINCREMENT counter's page: a durable commit of its own per
	// turn, beside the turn's two, outside the group commit (it waited
	// for SQLite's writer, and each such commit empties every other
	// connection's page cache).
	if err := q.QueryRowContext(ctx, instructionTextKeptStmt.in(dialect), userID, out.Hash).Scan(&kept); err != nil {
		return out, false, wrap("keep instructions", err)
	}
	return out, kept, nil
}

// MessageInstructions is the system text one of the user's replies was
// given, as its metadata names it; a message without one is not found.
func (s *Store) MessageInstructions(ctx context.Context, userID, messageID int64) (*InstructionText, error) {
	var m Message
	err := s.db.WithContext(ctx).Where("id = ? AND exchange_id IN (?)", messageID,
		s.db.Model(&Exchange{}).Select("id").Where("user_id = ?", userID)).Take(&m).Error
	if err != nil {
		return nil, wrap("message instructions", err)
	}
	hash := recordedHash(m.AgentResponse)
	if hash == "" {
		return nil, fmt.Errorf("message instructions: %w", ErrNotFound)
	}
	var t InstructionText
	err = s.db.WithContext(ctx).Where("user_id = ? AND hash = ?", userID, hash).Take(&t).Error
	if err == gorm.ErrRecordNotFound && hash == emptyHash {
		return &InstructionText{UserID: userID, Hash: hash}, nil
	}
	return &t, wrap("message instructions", err)
}

// recordedHash is the hash of the instructions a reply records ("": none).
func recordedHash(r *AgentResponse) string {
	if r == nil {
		return ""
	}
	in, ok := r.Metadata["instructions"].(map[string]any)
	if !ok {
		return ""
	}
	hash, _ := in["hash"].(string)
	return hash
}

// InstructionsHash is the hash of the instructions a reply's turn was
// given, "" when it records none or they were empty (the agent was told
// nothing beyond the conversation).
func InstructionsHash(r *AgentResponse) string {
	if h := recordedHash(r); h != emptyHash {
		return h
	}
	return ""
}

// emptyHash is the SHA-256 of no text.
const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// The statements every turn's ComposeInstructions runs. The account's
// instructions are subqueries, not a join (SQLite prepares a join with
// bound values again on every run); a person without a row of them has
// the defaults: nothing said, memory on (the first argument).
var (
	composeHeaderStmt = newStmt(`SELECT e.project_id, e.temporary,
		COALESCE((SELECT about FROM account_instructions WHERE user_id = e.user_id), ''),
		COALESCE((SELECT style FROM account_instructions WHERE user_id = e.user_id), ''),
		COALESCE((SELECT memory FROM account_instructions WHERE user_id = e.user_id), ?)
		FROM exchanges e WHERE e.id = ? AND e.user_id = ?`)
	memoriesStmt = newStmt(`SELECT content FROM memories WHERE user_id = ? ORDER BY id DESC LIMIT ` +
		strconv.Itoa(MaxMemories))
	instructionTextKeptStmt = newStmt(`SELECT EXISTS (SELECT 1 FROM instruction_texts WHERE user_id = ? AND hash = ?)`)
)

// memoryLines are the person's memory entries as the system text lists
// them, oldest first: the newest that fit in MemoryBudget.
func memoryLines(ctx context.Context, db gorm.ConnPool, dialect string, userID int64) ([]string, error) {
	rows, err := db.QueryContext(ctx, memoriesStmt.in(dialect), userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var lines []string
	used := 0
	for rows.Next() { // newest first, while they fit
		var content string
		if err := rows.Scan(&content); err != nil {
			return nil, err
		}
		if used+len(content) > MemoryBudget {
			break
		}
		used += len(content)
		lines = append(lines, "- "+content)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Reverse(lines)
	return lines, nil
}
