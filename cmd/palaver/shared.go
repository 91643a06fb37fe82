package main

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"palaver/agents"
	"palaver/models"
	"palaver/throttle"
)

// sharedState is what the processes serving one database must count
// together: each user's slots (running turns, websockets, streams) and the
// sign-in throttle. On SQLite one process serves the database and counts in
// its memory; on PostgreSQL they are counted in the database (migration
// 00012), so that the limits hold however many processes share it. close
// gives back this process's slots: call it after the turns have ended.
func sharedState(ctx context.Context, store *models.Store, db *sql.DB, log *slog.Logger) (agents.Slots, throttle.Throttle, func(), error) {
	if store.Dialect() != "postgres" {
		return agents.NewMemorySlots(), throttle.NewMemory(nil, 0), func() {}, nil
	}
	slots, err := agents.NewPostgresSlots(ctx, db, log)
	if err != nil {
		return nil, nil, nil, err
	}
	return slots, throttle.NewPostgres(db, nil), func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := slots.Close(cctx); err != nil {
			log.Warn("slots not given back: they stop counting when this process's lease runs out", "err", err)
		}
	}, nil
}
