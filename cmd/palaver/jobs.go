package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"palaver/models"
)

// retainer applies the retention policy (models.Store does).
type retainer interface {
	RunRetention(ctx context.Context, r models.RetentionRequest) (*models.RetentionRun, error)
}

// retainPeriodically applies the retention policy at start and then every
// interval, for as long as ctx lives. The policy itself (off by default, set
// by an administrator) decides whether a run deletes anything; each run that
// happens is logged in the database, and here.
func retainPeriodically(ctx context.Context, store retainer, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		run, err := store.RunRetention(ctx, models.RetentionRequest{Source: models.RetentionScheduled, Now: time.Now()})
		switch {
		case errors.Is(err, models.ErrRetentionOff):
		case err != nil && ctx.Err() != nil: // stopped, not failed
			return
		case err != nil:
			log.Error("retention run failed", "err", err)
		case run.DeletedExchanges > 0:
			log.Info("retention deleted old conversations", "exchanges", run.DeletedExchanges,
				"messages", run.DeletedMessages, "days", run.Days)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// temporarySweeper deletes expired temporary chats (models.Store does).
type temporarySweeper interface {
	PurgeTemporary(ctx context.Context, at time.Time) (int64, error)
}

// TemporaryEvery is how often expired temporary chats are looked for: a
// chat goes within this of 24 hours after its last activity.
const TemporaryEvery = 5 * time.Minute

// sweepTemporary deletes the temporary chats whose last activity is 24
// hours before clock(), at start and then every interval, for as long as
// ctx lives. clock is injected so a test can move time.
func sweepTemporary(ctx context.Context, store temporarySweeper, every time.Duration, clock func() time.Time, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := store.PurgeTemporary(ctx, clock())
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.Error("deleting expired temporary chats failed", "err", err)
		case n > 0:
			log.Info("deleted expired temporary chats", "exchanges", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
