package agents

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"palaver/internal/pgtest"
	"palaver/models"
)

// newPostgresStore takes the shared PostgreSQL database for the test, wiped
// and migrated (pgtest.Fresh), with a connection of its own to it; it skips
// the test without one.
func newPostgresStore(t *testing.T) (*models.Store, *pgx.Conn) {
	t.Helper()
	s := pgtest.Fresh(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return s, conn
}

// TestRecoveryFailsTurnsOfOwnersGoneOnOtherHosts: with a waker, a turn whose
// owner (on another host: no pid to check) has a late heartbeat and holds
// no liveness lock is failed at once, long before its lease is stale; one
// whose owner holds its lock, or whose heartbeat is recent (a listener
// reconnecting), is left running.
func TestRecoveryFailsTurnsOfOwnersGoneOnOtherHosts(t *testing.T) {
	s, conn := newPostgresStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ann := newUser(t, s, "ann")
	start := func(owner string) *models.Exchange {
		ex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: ann, Scope: models.ScopeGeneral, AgentType: AgentRouter, Query: "q " + owner, Owner: owner})
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	gone, alive, beating := start("elsewhere/1/dead"), start("elsewhere/2/live"), start("elsewhere/3/beating")
	// Two heartbeats late (the default beat is 5 s), well short of stale (30 s).
	if _, err := conn.Exec(ctx, "UPDATE exchanges SET turn_heartbeat_at = now() - interval '12 seconds' WHERE id = ANY($1)",
		[]int64{gone.ID, alive.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", models.LivenessKey("elsewhere/2/live")); err != nil {
		t.Fatal(err)
	}
	svc := New(s, &Builtin{}, Options{Logger: quiet, AutoRetries: 1})
	StartWaker(ctx, svc, s, pgtest.DSN(t))
	sub := svc.Hub().Subscribe(ann)
	defer sub.Close()
	if n, err := svc.RecoverStaleTurns(ctx); err != nil || n != 1 {
		t.Fatalf("recovered %d, %v; want only the gone owner's turn", n, err)
	}
	for id, want := range map[int64]string{alive.ID: models.TurnRunning, beating.ID: models.TurnRunning} {
		if ex, _ := s.Exchange(ctx, ann, id); ex.TurnStatus != want {
			t.Errorf("exchange %d: %s, want %s", id, ex.TurnStatus, want)
		}
	}
	// The failed turn is retried here, and this process's subscribers see
	// the error row, then the retried reply.
	var roles []string
	deadline := time.After(10 * time.Second)
	for len(roles) < 2 {
		select {
		case e := <-sub.C:
			if e.Kind == EventEntry && e.ExchangeID == gone.ID {
				roles = append(roles, e.Entry.Role)
			}
		case <-deadline:
			t.Fatalf("entries seen: %v; want the error row and the retried reply", roles)
		}
	}
	if roles[0] != models.RoleError || roles[1] != models.RoleAssistant {
		t.Fatalf("entries seen: %v; want the error row, then the retried reply", roles)
	}
}
