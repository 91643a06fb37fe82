package models

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// listenPostgres listens on Palaver's channel on a connection of its own.
func listenPostgres(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, os.Getenv(postgresEnv))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		t.Fatal(err)
	}
	return conn
}

// heard collects the notices that arrive until none comes for a moment.
func heard(t *testing.T, s *Store, conn *pgx.Conn) []Notice {
	t.Helper()
	var out []Notice
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		n, err := conn.WaitForNotification(ctx)
		cancel()
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return out
			}
			t.Fatal(err)
		}
		var notice Notice
		if err := json.Unmarshal([]byte(n.Payload), &notice); err != nil {
			t.Fatalf("payload %q: %v", n.Payload, err)
		}
		if notice.Origin != s.ProcessTag() || s.ProcessTag() == "" {
			t.Errorf("notice %+v: origin %q, want the store's %q", notice, notice.Origin, s.ProcessTag())
		}
		notice.Origin = ""
		out = append(out, notice)
	}
}

func wantNotices(t *testing.T, what string, got []Notice, want ...Notice) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: notices %+v, want %+v", what, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: notice %d is %+v, want %+v (all: %+v)", what, i, got[i], want[i], got)
		}
	}
}

// TestNotifications checks that the commits a live view shows notify, in
// commit order, with pointers only, and that a heartbeat does not.
func TestNotifications(t *testing.T) {
	s := newPostgres(t)
	ctx := context.Background()
	conn := listenPostgres(t)
	u := mustUser(t, s, "ann")

	ex, q, err := s.StartTurn(ctx, TurnStart{UserID: u.ID, Scope: ScopeGeneral, AgentType: "router", Query: "hello", Owner: "me"})
	if err != nil {
		t.Fatal(err)
	}
	// The entries first, then the exchange (its notice is sent at commit).
	wantNotices(t, "start", heard(t, s, conn),
		Notice{Kind: NotifyEntries, Exchange: ex.ID, User: u.ID, From: q.ID, To: q.ID},
		Notice{Kind: NotifyExchange, Exchange: ex.ID, User: u.ID, Status: TurnRunning})

	if err := s.Heartbeat(ctx, ex.ID, "me"); err != nil {
		t.Fatal(err)
	}
	wantNotices(t, "heartbeat", heard(t, s, conn))

	call, err := s.AppendEntry(ctx, ex.ID, "me", &Message{Role: RoleToolCall, Content: "{}"})
	if err != nil {
		t.Fatal(err)
	}
	// The header's byte count changes, which is not news.
	wantNotices(t, "append", heard(t, s, conn), Notice{Kind: NotifyEntries, Exchange: ex.ID, User: u.ID, From: call.ID, To: call.ID})
	reply := &Message{Role: RoleAssistant, Content: "hi"}
	if err := s.FinishTurn(ctx, ex.ID, "me", reply); err != nil {
		t.Fatal(err)
	}
	wantNotices(t, "finish", heard(t, s, conn),
		Notice{Kind: NotifyEntries, Exchange: ex.ID, User: u.ID, From: reply.ID, To: reply.ID},
		Notice{Kind: NotifyExchange, Exchange: ex.ID, User: u.ID, Status: TurnIdle})

	if _, err := s.RenameExchange(ctx, u.ID, ex.ID, "renamed"); err != nil {
		t.Fatal(err)
	}
	wantNotices(t, "rename", heard(t, s, conn), Notice{Kind: NotifyExchange, Exchange: ex.ID, User: u.ID, Status: TurnIdle})

	fork, err := s.Fork(ctx, u.ID, ex.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := heard(t, s, conn)
	if len(got) == 0 || got[len(got)-1] != (Notice{Kind: NotifyExchange, Exchange: fork.ID, User: u.ID, Status: TurnIdle}) {
		t.Fatalf("fork: %+v", got)
	}

	p := mustPage(t, s, u.ID, "notes")
	heard(t, s, conn)
	if _, err := s.UpdatePage(ctx, u.ID, p.ID, nil, "# new"); err != nil {
		t.Fatal(err)
	}
	wantNotices(t, "page saved", heard(t, s, conn), Notice{Kind: NotifyPage, Page: p.ID, User: u.ID})

	if _, err := s.DeleteExchange(ctx, u.ID, ex.ID); err != nil {
		t.Fatal(err)
	}
	got = heard(t, s, conn)
	if len(got) == 0 || got[len(got)-1] != (Notice{Kind: NotifyExchange, Exchange: ex.ID, User: u.ID, Status: TurnIdle}) {
		t.Fatalf("delete: %+v", got)
	}

	// A delta is sent as it is given.
	if err := s.Notify(ctx, `{"k":"d","x":7,"o":"`+s.ProcessTag()+`"}`); err != nil {
		t.Fatal(err)
	}
	wantNotices(t, "delta", heard(t, s, conn), Notice{Kind: NotifyDelta, Exchange: 7})
}

// TestStopRequests checks that a Stop is recorded only for a running turn of
// the user's, notifies its owner, and is taken once.
func TestStopRequests(t *testing.T) {
	s := newPostgres(t)
	ctx := context.Background()
	conn := listenPostgres(t)
	ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
	ex, _, err := s.StartTurn(ctx, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, AgentType: "router", Query: "hello", Owner: "host/1/a"})
	if err != nil {
		t.Fatal(err)
	}
	heard(t, s, conn)
	if ok, err := s.RequestStop(ctx, bob.ID, ex.ID); err != nil || ok {
		t.Fatalf("another user's stop: %v, %v; want nothing recorded", ok, err)
	}
	wantNotices(t, "refused stop", heard(t, s, conn))
	if ok, err := s.RequestStop(ctx, ann.ID, ex.ID); err != nil || !ok {
		t.Fatalf("stop: %v, %v", ok, err)
	}
	wantNotices(t, "stop", heard(t, s, conn), Notice{Kind: NotifyStop, Exchange: ex.ID, Owner: "host/1/a"})
	if ids, err := s.TakeStopRequests(ctx, "host/2/b"); err != nil || len(ids) != 0 {
		t.Fatalf("another owner takes %v, %v", ids, err)
	}
	if ids, err := s.TakeStopRequests(ctx, "host/1/a", ex.ID); err != nil || len(ids) != 1 || ids[0] != ex.ID {
		t.Fatalf("take: %v, %v", ids, err)
	}
	if ids, err := s.TakeStopRequests(ctx, "host/1/a"); err != nil || len(ids) != 0 {
		t.Fatalf("taken twice: %v, %v", ids, err)
	}
	if err := s.FinishTurn(ctx, ex.ID, "host/1/a"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.RequestStop(ctx, ann.ID, ex.ID); err != nil || ok {
		t.Fatalf("stop of an idle exchange: %v, %v", ok, err)
	}
}

// TestOwnerAlive checks the liveness lock: held by a session, the owner is
// alive; once that session ends, it is not.
func TestOwnerAlive(t *testing.T) {
	s := newPostgres(t)
	ctx := context.Background()
	conn := listenPostgres(t)
	if alive, err := s.OwnerAlive(ctx, "host/9/x"); err != nil || alive {
		t.Fatalf("nobody holds it: alive %v, %v", alive, err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", LivenessKey("host/9/x")); err != nil {
		t.Fatal(err)
	}
	if alive, err := s.OwnerAlive(ctx, "host/9/x"); err != nil || !alive {
		t.Fatalf("held: alive %v, %v", alive, err)
	}
	if alive, err := s.OwnerAlive(ctx, "host/9/y"); err != nil || alive {
		t.Fatalf("another owner: alive %v, %v", alive, err)
	}
	conn.Close(ctx)
	// The server lets the lock go as the session's backend exits, a
	// moment after the client hung up.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		alive, err := s.OwnerAlive(ctx, "host/9/x")
		if err != nil {
			t.Fatal(err)
		}
		if !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("its session ended 5 s ago, and the owner still looks alive")
		}
	}
}
