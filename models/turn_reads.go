package models

import (
	"context"
	"errors"

	"gorm.io/gorm"
)

// TurnReads is what a turn's agent reads before it answers, read with the
// user message's commit (StartTurnReading). A part left nil or false is
// read by the turn itself, as a resumed or retried turn reads all of it.
type TurnReads struct {
	// Recent is the log's latest entries, oldest first, the user message
	// among them (RecentContext).
	Recent []Message
	// Composed is the instructions in force (ComposeInstructions), when
	// their text is kept already and the chat's project has no files.
	Composed *Composed
	// Prefs is the model preferences of the exchange (ModelPreferencesOf).
	Prefs ModelPreferences
	// Unlimited says the person has no token budget: nothing to check.
	Unlimited bool
	// Attached says the user message holds files (MessageFiles reads them).
	Attached bool
}

// errReadLater is a read that TurnReads leaves to the turn.
var errReadLater = errors.New("read by the turn")

// StartTurnReading is StartTurn that also reads what the turn's agent
// needs before it answers, with up to limit entries of context. On SQLite
// the reads run in the transaction that commits the user message, on the
// group commit's connection: its page cache is the one the turn's own
// writes keep warm, where a pooled connection's is emptied by every commit
// and read again from the log (a fifth of a turn's CPU). A read that fails
// there fails nothing: the message is committed all the same and the turn
// reads for itself (reads nil). On PostgreSQL, where a failed statement
// would abort the transaction and the message with it, reads is nil.
func (s *Store) StartTurnReading(ctx context.Context, t TurnStart, limit int) (*Exchange, *Message, *TurnReads, error) {
	return s.startTurn(ctx, t, limit)
}

// turnReads reads TurnReads for the turn on exchangeID in tx, which has
// just appended the user message. It says nil when any read fails or when
// tx is not SQLite's.
func (s *Store) turnReads(tx *gorm.DB, t TurnStart, exchangeID int64, limit int) *TurnReads {
	if s.dialect == "postgres" || limit <= 0 {
		return nil
	}
	ctx, q := ctxOf(tx), tx.Statement.ConnPool
	r := &TurnReads{Attached: len(t.Attachments) > 0}
	var err error
	if r.Recent, err = recentContext(ctx, q, s.dialect, t.UserID, exchangeID, limit); err != nil {
		return nil
	}
	out, kept, err := s.composeInstructions(ctx, q, tx, t.UserID, exchangeID, false)
	switch {
	case err == nil && kept:
		r.Composed = &out
	case err != nil && !errors.Is(err, errReadLater):
		return nil
	}
	if r.Prefs, err = turnModelPreferences(ctx, q, s.dialect, t.UserID, exchangeID); err != nil {
		return nil
	}
	b, err := budgetOf(ctx, q, s.dialect, t.UserID)
	if err != nil {
		return nil
	}
	r.Unlimited = b.Daily == 0 && b.Monthly == 0
	return r
}
