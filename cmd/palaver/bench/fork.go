package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"palaver/models"
)

// forkSamples is how many forks are timed.
const forkSamples = 9

// forkFigures: the p50 of forking a big exchange (size.AppendBig messages)
// through the store, at the end of its log: the whole log is copied. The
// target is set for messages of the append figures' size (a line or two);
// the same with replies of a realistic length (about 1.2 KB each with their
// stored agent response) is printed beside it, as the copy's cost grows
// with the bytes it copies.
func forkFigures(ctx context.Context, e *env, r report) error {
	short, raw, err := e.forkP50(ctx, "bench-fork", false)
	if err != nil {
		return err
	}
	long, _, err := e.forkP50(ctx, "bench-fork-long", true)
	if err != nil {
		return err
	}
	r.line("fork_p50_ms", ms(short), "≤ 50")
	r.anchor("raw_copy_p50_ms", ms(raw), "the fork's copy by hand: the same rows INSERT … SELECT into a new exchange, one commit, "+
		"timed between the forks")
	r.anchor("fork_floor_ratio", float64(short)/float64(raw), "= fork_p50_ms / raw_copy_p50_ms: the fork over its own copy")
	r.anchor("fork_p50_ms_long_replies", ms(long), "replies of ~1.2 KB, no target: the copy grows with the bytes")
	return nil
}

// forkP50 seeds an exchange of size.AppendBig messages for a new user,
// then times Store.Fork of its whole log, alternating between forking it
// and forking the previous fork (a family grows both ways). For the short
// messages the same parents are then copied by hand (rawCopies), whose
// median is raw.
func (e *env) forkP50(ctx context.Context, name string, long bool) (fork, raw time.Duration, err error) {
	n := e.size.AppendBig
	u, err := e.store.CreateUser(ctx, name, "x", false)
	if err != nil {
		return 0, 0, err
	}
	id, err := e.seedForkLog(ctx, u.ID, n, long)
	if err != nil {
		return 0, 0, err
	}
	var ds []time.Duration
	parents := make([]int64, 0, forkSamples)
	parent := id
	for i := range forkSamples {
		parents = append(parents, parent)
		t0 := time.Now()
		f, err := e.store.Fork(ctx, u.ID, parent, int64(n))
		if err != nil {
			return 0, 0, err
		}
		ds = append(ds, time.Since(t0))
		if f.TurnCount != int64(n/2) {
			return 0, 0, fmt.Errorf("fork %d: %d turns, want %d", i, f.TurnCount, n/2)
		}
		if i%2 == 0 {
			parent = f.ID
		} else {
			parent = id
		}
	}
	if !long {
		raws, err := e.rawCopies(ctx, u.ID, parents, n)
		if err != nil {
			return 0, 0, fmt.Errorf("raw copy: %w", err)
		}
		raw = percentile(raws, 0.5)
	}
	return percentile(ds, 0.5), raw, nil
}

// rawCopies times what a fork must do at least, for each parent in turn,
// by hand through database/sql on one connection: in one transaction, a
// new exchange row and the parent's n entries copied into it by one
// INSERT … SELECT (each naming its original, with a uid made as the
// store makes a copy's), then the commit, its checkpoint left out as the
// store leaves a fork's (models/checkpoint.go). The messages' own indexes
// and triggers are the fork's; the store's reads of the parent, its
// family row, the attachments and the counters are not. The copies are
// deleted again afterwards, untimed.
func (e *env) rawCopies(ctx context.Context, userID int64, parents []int64, n int) (_ []time.Duration, err error) {
	db, err := e.store.SQL()
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	sqlite := e.store.Dialect() == "sqlite"
	if sqlite {
		if _, err := conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
			return nil, err
		}
	}
	var copies []int64
	defer func() {
		if sqlite {
			if _, perr := conn.ExecContext(context.Background(), "PRAGMA wal_autocheckpoint = 1000"); err == nil {
				err = perr
			}
		}
		for _, id := range copies {
			if _, derr := conn.ExecContext(context.Background(), e.rebind(`DELETE FROM exchanges WHERE id = ?`), id); err == nil {
				err = derr
			}
		}
	}()
	// The uid as the store makes a copy's: a prefix for the copy, then
	// the row's id in 12 hex digits.
	hexID := "printf('%012x', id)"
	if !sqlite {
		hexID = "lpad(to_hex(id), 12, '0')"
	}
	insert := e.rebind(`INSERT INTO messages (exchange_id, seq, role, content, agent_type, agent_response, tool,
			edit_mode, feedback, feedback_comment, created_at, copy_of, uid)
		SELECT ?, seq, role, content, agent_type, agent_response, tool,
			edit_mode, feedback, feedback_comment, created_at, COALESCE(copy_of, id), ? || ` + hexID + `
		FROM messages WHERE exchange_id = ? ORDER BY id`)
	ds := make([]time.Duration, 0, len(parents))
	for _, parent := range parents {
		t0 := time.Now()
		id, err := e.rawCopy(ctx, conn, insert, userID, parent, n)
		if id != 0 {
			copies = append(copies, id)
		}
		if err != nil {
			return nil, err
		}
		ds = append(ds, time.Since(t0))
	}
	return ds, nil
}

// rawCopy is one copy of rawCopies, committed on conn; it returns the new
// exchange's id once committed.
func (e *env) rawCopy(ctx context.Context, conn *sql.Conn, insert string, userID, parentID int64, n int) (int64, error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	id, err := e.benchExchange(ctx, tx, userID, "the bench copy", n/2)
	if err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, insert, id, fmt.Sprintf("%023x-", id), parentID)
	if err != nil {
		return 0, err
	}
	if copied, err := res.RowsAffected(); err != nil || copied != int64(n) {
		return 0, fmt.Errorf("copied %d rows (%v), want %d", copied, err, n)
	}
	return id, tx.Commit()
}

// benchExchange inserts a general chat of the user's with its title and
// turn count, in tx, and returns its id.
func (e *env) benchExchange(ctx context.Context, tx *sql.Tx, userID int64, title string, turns int) (int64, error) {
	at := time.Now().UTC().Truncate(time.Microsecond)
	var id int64
	err := tx.QueryRowContext(ctx, e.rebind(`INSERT INTO exchanges (user_id, scope, title, agent_type, turn_count, created_at, updated_at)
		VALUES (?, 'general', ?, 'router', ?, ?, ?) RETURNING id`), userID, title, turns, at, at).Scan(&id)
	return id, err
}

// seedForkLog makes an exchange of n messages, alternating user messages
// and replies, in one transaction, and returns its id. Short messages are
// the append figures' (seedLog); long replies carry their agent response
// as the service stores it.
func (e *env) seedForkLog(ctx context.Context, userID int64, n int, long bool) (int64, error) {
	db, err := e.store.SQL()
	if err != nil {
		return 0, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	id, err := e.benchExchange(ctx, tx, userID, "the bench fork", n/2)
	if err != nil {
		return 0, err
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	st, err := tx.PrepareContext(ctx, e.rebind(`INSERT INTO messages (exchange_id, seq, role, content, agent_type, agent_response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return 0, err
	}
	question := "How would you structure part %d of the report so that a reader new to the subject follows it?"
	answer := strings.Repeat("A reply of the length a person reads in a few breaths, with a list and a closing line. ", 6)
	for seq := range n {
		var err error
		switch {
		case !long:
			role, agent := "user", any(nil)
			if seq%2 == 1 {
				role, agent = "assistant", "router"
			}
			_, err = st.ExecContext(ctx, id, seq, role, fmt.Sprintf("seeded message %d of the bench exchange", seq), agent, nil, at)
		case seq%2 == 0:
			_, err = st.ExecContext(ctx, id, seq, "user", fmt.Sprintf(question, seq/2), nil, nil, at)
		default:
			content := fmt.Sprintf("%d: %s", seq, answer)
			resp, _ := json.Marshal(models.AgentResponse{Content: content, AgentType: "router", Confidence: "medium",
				Suggestions: []models.Suggestion{}, Metadata: map[string]any{"provider": "builtin"}})
			_, err = st.ExecContext(ctx, id, seq, "assistant", content, "router", string(resp), at)
		}
		if err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	// Indexed for search now, as the seed's own cost (the store indexes in
	// batches after the commit: models/search_index.go).
	return id, e.store.CatchUpSearch(ctx)
}
