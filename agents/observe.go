package agents

import (
	"context"
	"log/slog"
	"time"
)

// Observer hears how turns go, for an operator's metrics (package metrics).
// Its methods are called on the turns' goroutines and must not block.
type Observer interface {
	TurnStarted()
	// TurnEnded: outcome is OutcomeFinished, OutcomeFailed or OutcomeStopped.
	TurnEnded(outcome string, took time.Duration)
}

// How a turn ended, as an Observer hears it.
const (
	OutcomeFinished = "finished"
	OutcomeFailed   = "failed"
	OutcomeStopped  = "stopped"
)

// noObserver is the Observer of a service nobody watches.
type noObserver struct{}

func (noObserver) TurnStarted()                    {}
func (noObserver) TurnEnded(string, time.Duration) {}

// requestIDKey carries the id of the request that started a turn.
type requestIDKey struct{}

// WithRequestID marks ctx with the id of the HTTP request it serves: the
// turns it starts log their lines with it, so an operator can follow a
// request into the turn it left running.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// turnLogger is the logger of a turn started under ctx: the service's,
// with the starting request's id when there is one.
func (s *Service) turnLogger(ctx context.Context) *slog.Logger {
	if id, _ := ctx.Value(requestIDKey{}).(string); id != "" {
		return s.opts.Logger.With("request_id", id)
	}
	return s.opts.Logger
}

// outcome names how a turn ended.
func outcome(res *TurnResult, err error) string {
	switch {
	case err != nil || res == nil || res.Failed:
		return OutcomeFailed
	case res.Stopped:
		return OutcomeStopped
	default:
		return OutcomeFinished
	}
}
