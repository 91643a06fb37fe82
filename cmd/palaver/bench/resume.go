package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"palaver/agents"
	"palaver/models"
)

// resumeSamples is how many paused turns are answered and timed.
const resumeSamples = 15

// resumeFigures: the p50 of answering a paused turn (issue 25): the time
// from posting an approval (agents.Service.AnswerTools, as
// POST …/tool_results calls it) to the resumed turn's first committed
// entry, as a live subscriber hears of it.
func resumeFigures(ctx context.Context, e *env, r report) error {
	u, err := e.store.CreateUser(ctx, "bench-resume", "x", false)
	if err != nil {
		return err
	}
	sub := e.svc.Hub().Subscribe(u.ID)
	defer sub.Close()
	var ds []time.Duration
	for i := range resumeSamples {
		res, err := e.svc.Send(ctx, agents.SendRequest{UserID: u.ID, Query: fmt.Sprintf("remember this: bench note %d", i)})
		if err != nil {
			return err
		}
		if !res.Paused || len(res.Pending) != 1 {
			return errors.New("the turn did not pause for approval")
		}
		drain(sub)
		ok := true
		t0 := time.Now()
		turn, err := e.svc.AnswerTools(ctx, u.ID, res.Exchange.ID, []agents.ToolResult{{CallID: res.Pending[0].CallID, Approved: &ok}})
		if err != nil {
			return err
		}
		if err := firstResumedEntry(sub, res.Pending[0].CallID); err != nil {
			return err
		}
		ds = append(ds, time.Since(t0))
		if _, err := turn.Wait(ctx); err != nil {
			return err
		}
	}
	r.line("resume_p50_ms", ms(percentile(ds, 0.5)), "≤ 5")
	return nil
}

// drain empties a subscription of what came before.
func drain(sub *agents.Subscription) {
	for {
		select {
		case <-sub.C:
		default:
			return
		}
	}
}

// firstResumedEntry waits for the resumed turn's first entry: the result of
// the approved call (the approval's own entry comes before it).
func firstResumedEntry(sub *agents.Subscription, callID string) error {
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-sub.C:
			if m := ev.Entry; ev.Kind == agents.EventEntry && m != nil && m.Role == models.RoleToolResult && m.Tool != nil && m.Tool.CallID == callID {
				return nil
			}
		case <-deadline:
			return errors.New("the resumed turn wrote nothing within 10 s")
		}
	}
}
