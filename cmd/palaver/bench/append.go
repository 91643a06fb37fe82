package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"palaver/agents"
	"palaver/models"
)

// appendFigures: the p50 of a turn appended to a big exchange over the same
// at a small one, through agents.Service.Send (no HTTP).
func appendFigures(ctx context.Context, e *env, r report) error {
	small, big, floor, err := e.appendP50s(ctx)
	if err != nil {
		return err
	}
	r.line("append_p50_ms_small", ms(small), "≤ 1.0")
	r.line("append_p50_ms_big", ms(big), "≤ 1.3 × append_p50_ms_small")
	r.line("append_ratio", float64(big)/float64(small), "≤ 1.3")
	if floor > 0 {
		r.anchor("raw_floor_p50_ms", ms(floor), "the SQL a turn needs (raw_floor_cpu_us_per_turn's), by hand on one connection, "+
			"timed after the same turns: its two durable commits are two of this disk's syncs")
		r.anchor("append_floor_ratio", float64(small)/float64(floor), "= append_p50_ms_small / raw_floor_p50_ms: the turn over its own SQL")
	}
	return nil
}

// appendP50s is the median time to append one turn through the agent
// service to an exchange of size.appendSmall messages and to one of
// size.appendBig. Both exchanges are seeded first and the turns alternate
// between them, so that both meet the same database (its full-text index
// merging what the seeding wrote, the disk's mood): only the exchange's
// size differs.
// On SQLite the same turn's SQL by hand (rawFloorTurn) is timed after
// them, as many times, on an exchange of its own: floor is its median (0
// on PostgreSQL).
func (e *env) appendP50s(ctx context.Context) (small, big, floor time.Duration, err error) {
	sizes := []int{e.size.AppendSmall, e.size.AppendBig}
	ids := make([]int64, len(sizes))
	var sample *models.Message
	for i, n := range sizes {
		first, err := e.svc.Send(ctx, agents.SendRequest{UserID: e.userID, AgentType: agents.AgentAuto, Query: "start the bench exchange"})
		if err != nil {
			return 0, 0, 0, err
		}
		if first.Failed {
			return 0, 0, 0, errors.New("the first turn failed")
		}
		ids[i], sample = first.Exchange.ID, first.Reply
		if n > 2 {
			if err := e.seedLog(ctx, ids[i], 2, n); err != nil {
				return 0, 0, 0, err
			}
		}
	}
	var floorTurn func(turn int) error
	if e.store.Dialect() == "sqlite" {
		var done func()
		if floorTurn, done, err = e.floorTurns(ctx, sample); err != nil {
			return 0, 0, 0, err
		}
		defer done()
	}
	ds := make([][]time.Duration, len(sizes))
	for turn := range e.size.AppendTurns {
		for i, id := range ids {
			t0 := time.Now()
			res, err := e.svc.Send(ctx, agents.SendRequest{UserID: e.userID, ExchangeID: id, AgentType: agents.AgentAuto, Query: fmt.Sprintf("append turn %d", turn)})
			if err != nil {
				return 0, 0, 0, err
			}
			ds[i] = append(ds[i], time.Since(t0))
			if res.Failed {
				return 0, 0, 0, errors.New("a bench turn failed")
			}
		}
	}
	// After the turns, not between them: each connection's commits empty
	// the other's page cache, which would slow both.
	if floorTurn != nil {
		floors := make([]time.Duration, 0, e.size.AppendTurns)
		for turn := range e.size.AppendTurns {
			t0 := time.Now()
			if err := floorTurn(turn); err != nil {
				return 0, 0, 0, fmt.Errorf("raw floor: %w", err)
			}
			floors = append(floors, time.Since(t0))
		}
		floor = percentile(floors, 0.5)
	}
	return percentile(ds[0], 0.5), percentile(ds[1], 0.5), floor, nil
}
