package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"

	"palaver/handlers"
	"palaver/models"
)

// historyFigures: GET /api/chat/history over a big table, against the bare
// SQL it runs.
func historyFigures(ctx context.Context, e *env, r report) error {
	apiP50, bareP50, err := e.history(ctx)
	if err != nil {
		return err
	}
	r.line("history_p50_ms", ms(apiP50), "≤ 2")
	r.line("history_bare_sql_p50_ms", ms(bareP50), "≤ 0.5")
	r.anchor("history_ratio", float64(apiP50)/float64(bareP50), "history_p50_ms / history_bare_sql_p50_ms, for scale")
	return nil
}

// history seeds a second user with size.histExchanges exchanges holding
// size.histMessages messages, then times GET /api/chat/history?limit=50
// against the statement models.ListExchanges runs, bare.
func (e *env) history(ctx context.Context) (api, bare time.Duration, err error) {
	u, err := e.store.CreateUser(ctx, "bench-history", "x", false)
	if err != nil {
		return 0, 0, err
	}
	key := randHex(16)
	if _, err := e.store.CreateAPIKey(ctx, u.ID, "bench", handlers.HashAPIKey(key)); err != nil {
		return 0, 0, err
	}
	if err := e.seedHistory(ctx, u.ID); err != nil {
		return 0, 0, err
	}
	e.histUser.id, e.histUser.apiKey = u.ID, key
	var apiDs, bareDs []time.Duration
	for range e.size.HistSamples {
		req, _ := http.NewRequest(http.MethodGet, "http://"+e.addr+"/api/chat/history?limit=50", nil)
		req.Header.Set("x-api-key", key)
		t0 := time.Now()
		res, err := e.http.Do(req)
		if err != nil {
			return 0, 0, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		apiDs = append(apiDs, time.Since(t0))
		if res.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("GET /api/chat/history: %d", res.StatusCode)
		}
		t0 = time.Now()
		if err := e.bareHistory(ctx, u.ID); err != nil {
			return 0, 0, err
		}
		bareDs = append(bareDs, time.Since(t0))
	}
	return percentile(apiDs, 0.5), percentile(bareDs, 0.5), nil
}

func (e *env) seedHistory(ctx context.Context, userID int64) error {
	perEx := max(e.size.HistMessages/e.size.HistExchanges, 2)
	var next int64
	if err := e.raw.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM exchanges`).Scan(&next); err != nil {
		return err
	}
	base := time.Now().UTC().Truncate(time.Microsecond)
	text := newTextGen(e.vocabulary(), 42)
	const batch = 2000 // exchanges per transaction
	for done := 0; done < e.size.HistExchanges; done += batch {
		err := func() error {
			tx, err := e.raw.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			// Rows get their uids as the store gives them (the export
			// figures export them).
			exSt, err := tx.PrepareContext(ctx, `INSERT INTO exchanges (id, uid, user_id, scope, title, agent_type, turn_count, created_at, updated_at) VALUES (?, ?, ?, 'general', ?, 'router', ?, ?, ?)`)
			if err != nil {
				return err
			}
			msgSt, err := tx.PrepareContext(ctx, `INSERT INTO messages (uid, exchange_id, seq, role, content, agent_type, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			for i := done; i < min(done+batch, e.size.HistExchanges); i++ {
				id := next + int64(i)
				at := base.Add(-time.Duration(e.size.HistExchanges-i) * time.Second)
				first := text.message(false)
				if _, err := exSt.ExecContext(ctx, id, uuid.Must(uuid.NewV7()).String(), userID, models.TitleFrom(first), perEx/2, at, at); err != nil {
					return err
				}
				for seq := range perEx {
					role, agent, content := "user", any(nil), first
					if seq%2 == 1 {
						role, agent, content = "assistant", "router", text.message(true)
					} else if seq > 0 {
						content = text.message(false)
					}
					if _, err := msgSt.ExecContext(ctx, uuid.Must(uuid.NewV7()).String(), id, seq, role, content, agent, at); err != nil {
						return err
					}
				}
			}
			return tx.Commit()
		}()
		if err != nil {
			return err
		}
	}
	// Indexed for search now, as the seed's own cost (the store indexes in
	// batches after the commit: models/search_index.go).
	if err := e.store.CatchUpSearch(ctx); err != nil {
		return err
	}
	if _, err := e.raw.ExecContext(ctx, `ANALYZE`); err != nil {
		return err
	}
	// The seed's write-ahead log (hundreds of MB at the full size) is
	// copied into the database now, not by whichever commit of a later
	// figure reaches the checkpoint first.
	_, err := e.raw.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}

// bareHistory runs the statement models.ListExchanges runs for the first
// batch (models.HistorySQL: a keyset batch of exchanges joined to the three
// messages each shows) through database/sql, reading every column.
func (e *env) bareHistory(ctx context.Context, userID int64) error {
	query, args := models.HistorySQL(userID, models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 50})
	rows, err := e.raw.QueryContext(ctx, e.rebind(query), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if want := min(50, e.size.HistExchanges); n != want {
		return fmt.Errorf("the bare history read %d items, not %d", n, want)
	}
	return nil
}
