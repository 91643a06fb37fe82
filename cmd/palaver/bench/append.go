package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"palaver/agents"
)

// appendFigures: the p50 of a turn appended to a big exchange over the same
// at a small one, through agents.Service.Send (no HTTP).
func appendFigures(ctx context.Context, e *env, r report) error {
	small, big, err := e.appendP50s(ctx)
	if err != nil {
		return err
	}
	r.line("append_p50_ms_small", ms(small), "≤ 1.0")
	r.line("append_p50_ms_big", ms(big), "≤ 1.3 × append_p50_ms_small")
	r.line("append_ratio", float64(big)/float64(small), "≤ 1.3")
	return nil
}

// appendP50s is the median time to append one turn through the agent
// service to an exchange of size.appendSmall messages and to one of
// size.appendBig. Both exchanges are seeded first and the turns alternate
// between them, so that both meet the same database (its full-text index
// merging what the seeding wrote, the disk's mood): only the exchange's
// size differs.
func (e *env) appendP50s(ctx context.Context) (small, big time.Duration, err error) {
	sizes := []int{e.size.AppendSmall, e.size.AppendBig}
	ids := make([]int64, len(sizes))
	for i, n := range sizes {
		first, err := e.svc.Send(ctx, agents.SendRequest{UserID: e.userID, AgentType: agents.AgentAuto, Query: "start the bench exchange"})
		if err != nil {
			return 0, 0, err
		}
		if first.Failed {
			return 0, 0, errors.New("the first turn failed")
		}
		ids[i] = first.Exchange.ID
		if n > 2 {
			if err := e.seedLog(ctx, ids[i], 2, n); err != nil {
				return 0, 0, err
			}
		}
	}
	ds := make([][]time.Duration, len(sizes))
	for turn := range e.size.AppendTurns {
		for i, id := range ids {
			t0 := time.Now()
			res, err := e.svc.Send(ctx, agents.SendRequest{UserID: e.userID, ExchangeID: id, AgentType: agents.AgentAuto, Query: fmt.Sprintf("append turn %d", turn)})
			if err != nil {
				return 0, 0, err
			}
			ds[i] = append(ds[i], time.Since(t0))
			if res.Failed {
				return 0, 0, errors.New("a bench turn failed")
			}
		}
	}
	return percentile(ds[0], 0.5), percentile(ds[1], 0.5), nil
}
