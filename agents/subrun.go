package agents

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"unicode/utf8"

	"palaver/models"
)

// SubRun is a delegation being run: one agent's work for another, kept as
// a conversation of its own (Exchange, of scope "subrun") that the sub-agent
// writes with Log.
type SubRun struct {
	Exchange *models.Exchange
	svc      *Service
}

// Log commits one entry to the sub-run's log (and tells a tab that watches
// the sub-run). It fails once the sub-run's lease is lost.
func (r *SubRun) Log(ctx context.Context, m *models.Message) error {
	if _, err := r.svc.store.AppendEntry(context.WithoutCancel(ctx), r.Exchange.ID, r.svc.owner, m); err != nil {
		return err
	}
	r.svc.publishEntry(r.Exchange, m)
	return nil
}

// subResultLength bounds the short result a sub-run's record keeps.
const subResultLength = 200

// RunSub runs fn as agent's recorded sub-run of the parent exchange,
// spawned by the entry at seq of the parent's log; task is what it is
// asked (the sub-run's first entry). Every delegation from one agent to
// another goes through here, so each leaves the same record: the sub-run's
// own log, and a row with the agent, its start and end, and how it ended —
// ok with fn's short result, or failed with the reason (also an error row
// in its log). fn's failure is the sub-run's, not RunSub's: the record says
// so and the caller reads Status; RunSub's error is the store's (or the
// parent being gone). While fn runs, the sub-run's lease is renewed as a
// turn's is, and ctx ending (the parent turn stopped) ends fn.
func (s *Service) RunSub(ctx context.Context, parent *models.Exchange, seq int64, agent, task string,
	fn func(ctx context.Context, sub *SubRun) (result string, err error)) (*models.SubRun, error) {
	db := context.WithoutCancel(ctx)
	ex, _, err := s.store.StartSubRun(db, models.SubRunStart{
		UserID: parent.UserID, ParentID: parent.ID, ParentSeq: seq, Agent: agent, Task: task, Owner: s.owner,
	})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := s.heartbeat(runCtx, ex.ID, func(error) { cancel(errLeaseLost) })
	result, err := s.runGuarded(runCtx, &SubRun{Exchange: ex, svc: s}, fn)
	stop()
	// Ended from outside (the parent stopped, the lease lost): that is the
	// reason, whatever fn made of its context ending.
	if cause := context.Cause(runCtx); cause != nil && cause != context.Canceled && (err == nil || errors.Is(err, context.Canceled)) {
		err = cause
	}
	status, entries := models.SubRunOK, []*models.Message(nil)
	if err != nil {
		status = models.SubRunFailed
		result = err.Error()
		var fe *FailureError
		if errors.As(err, &fe) {
			result = fe.Reason
		}
		entries = append(entries, &models.Message{Role: models.RoleError, Content: result})
		s.opts.Logger.Warn("sub-run failed", "exchange", ex.ID, "parent", parent.ID, "agent", agent, "err", err)
	}
	run, err := s.store.FinishSubRun(db, ex.ID, s.owner, status, bound(result, subResultLength), entries...)
	if err != nil {
		return nil, err
	}
	for _, m := range entries {
		s.publishEntry(ex, m)
	}
	return run, nil
}

// runGuarded is fn, with a panic (a sub-agent's bug) turned into the
// sub-run's failure.
func (s *Service) runGuarded(ctx context.Context, sub *SubRun,
	fn func(ctx context.Context, sub *SubRun) (string, error)) (result string, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.opts.Logger.Error("sub-run panicked", "exchange", sub.Exchange.ID, "panic", p, "stack", string(debug.Stack()))
			err = &FailureError{Reason: "The sub-agent failed unexpectedly.", Err: fmt.Errorf("panic: %v", p)}
		}
	}()
	return fn(ctx, sub)
}

// bound cuts s to at most n characters, marking the cut.
func bound(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
