package handlers_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"palaver/accounts"
	"palaver/agents"
	"palaver/handlers"
	"palaver/internal/pgtest"
	"palaver/models"
	"palaver/static"
	"palaver/throttle"
)

// newProcess is the whole app as one `palaver serve` process on a
// PostgreSQL database that others may share (dsn): its own pool, session
// manager, agent service (answering through provider), slots and
// throttle, wired as serve wires them.
func newProcess(t *testing.T, dsn string, provider agents.Provider) *testApp {
	t.Helper()
	ctx := context.Background()
	store, err := models.Open(dsn, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	sqlDB, err := store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	slots, err := agents.NewPostgresSlots(ctx, sqlDB, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slots.Close(ctx) })
	csrfKey, err := store.ServerSecret(ctx, "csrf")
	if err != nil {
		t.Fatal(err)
	}
	assets, err := static.Load()
	if err != nil {
		t.Fatal(err)
	}
	svc := agents.New(store, provider, agents.Options{Logger: log, Slots: slots})
	t.Cleanup(func() { svc.Close(ctx) })
	d := handlers.Deps{
		Store:    store,
		Sessions: handlers.NewSessions(sqlDB, store.Dialect(), false, 0),
		Agents:   svc,
		Slots:    slots,
		Throttle: throttle.NewPostgres(sqlDB, nil),
		Assets:   assets,
		Logger:   log,
		Config:   handlers.Config{AllowRegistration: true},
		CSRFKey:  csrfKey,
	}
	return &testApp{t: t, app: handlers.New(d), store: store, hub: svc.Hub(), agents: d.Agents, sessions: d.Sessions}
}

// at is the same browser (its cookies) making its next requests to
// another process.
func (c *client) at(a *testApp) *client {
	moved := *c
	moved.a = a
	return &moved
}

// TestSharedStateAcrossProcesses: two processes on one PostgreSQL database
// count together: 5 failed sign-ins spread over both and the 6th on either
// is refused; 4 replies running over both and a 5th on either is refused; a
// session signed in on one is signed in on the other.
func TestSharedStateAcrossProcesses(t *testing.T) {
	pgtest.Fresh(t)
	gates := []*gateProvider{newGateProvider(), newGateProvider()}
	procs := []*testApp{newProcess(t, pgtest.DSN(t), gates[0]), newProcess(t, pgtest.DSN(t), gates[1])}
	ctx := context.Background()
	hash, err := accounts.HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ann", "bob"} {
		if _, err := procs[0].store.CreateUser(ctx, name, hash, false); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("sign-in throttle", func(t *testing.T) {
		for i := range 5 {
			res := procs[i%2].browserAt("").login("ann", "wrong")
			mustStatus(t, res, http.StatusUnauthorized)
		}
		for i, p := range procs {
			res := p.browserAt("").login("ann", "correct horse")
			if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
				t.Fatalf("6th sign-in on process %d: %d (Retry-After %q), want 429", i+1, res.StatusCode, res.Header.Get("Retry-After"))
			}
		}
		// Another name is not held back, on either.
		for _, p := range procs {
			if res := p.browserAt("").login("bob", "correct horse"); res.StatusCode != http.StatusSeeOther {
				t.Fatalf("bob's sign-in: %d", res.StatusCode)
			}
		}
	})

	t.Run("session", func(t *testing.T) {
		bob := procs[0].browserAt("")
		mustStatus(t, bob.login("bob", "correct horse"), http.StatusSeeOther)
		onB := bob.client.at(procs[1])
		res := onB.get("/chat")
		mustStatus(t, res, http.StatusOK)
		if !strings.Contains(bodyOf(res), `title="Signed in as bob"`) {
			t.Fatal("the chat page on the other process does not show bob signed in")
		}
		// Signed out on the second, signed out on the first.
		mustStatus(t, onB.postForm("/logout", nil), http.StatusSeeOther)
		if res := onB.at(procs[0]).get("/chat"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("after signing out on the other process: /chat answered %d, want a redirect to sign in", res.StatusCode)
		}
	})

	t.Run("running turns", func(t *testing.T) {
		api := procs[0].apiClient("cat")
		var wg sync.WaitGroup
		codes := make(chan int, agents.MaxTurnsPerUser)
		for i := range agents.MaxTurnsPerUser {
			c := api.at(procs[i%2])
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, _ := c.api(http.MethodPost, "/api/chat", map[string]any{"query": fmt.Sprintf("hold %d", i)})
				codes <- res.StatusCode
			}()
		}
		gates[0].waitStarted(t, 2)
		gates[1].waitStarted(t, 2)
		for i, p := range procs {
			res, body := api.at(p).api(http.MethodPost, "/api/chat", map[string]any{"query": "one too many"})
			if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "4 replies") {
				t.Fatalf("5th turn on process %d: %d %s", i+1, res.StatusCode, body)
			}
		}
		// One ends on the first: a new one is let in on the second.
		gates[0].pass <- struct{}{}
		if code := <-codes; code != http.StatusOK {
			t.Fatalf("a held turn answered %d", code)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := api.at(procs[1]).api(http.MethodPost, "/api/chat", map[string]any{"query": "hold again"})
			codes <- res.StatusCode
		}()
		gates[1].waitStarted(t, 1)
		gates[0].pass <- struct{}{}
		for range 3 {
			gates[1].pass <- struct{}{}
		}
		wg.Wait()
		close(codes)
		for code := range codes {
			if code != http.StatusOK {
				t.Fatalf("a held turn answered %d", code)
			}
		}
	})
}
