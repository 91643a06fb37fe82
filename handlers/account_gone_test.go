package handlers_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"palaver/agents"
	"palaver/handlers"
	"palaver/models"
)

// withHeartbeat runs the app's agents on p with the given lease heartbeat.
func withHeartbeat(p agents.Provider, beat time.Duration) appOption {
	return func(d *handlers.Deps) {
		d.Agents = agents.New(d.Store, p, agents.Options{Logger: d.Logger, Hub: d.Hub, Heartbeat: beat})
	}
}

// TestAccountDeletedDuringATurnAnswers410: the POST /api/chat waiting for a
// reply when its account is deleted answers 410 (the conversation went with
// the account), not 500, whether the turn finds out at its commit or from
// its heartbeat.
func TestAccountDeletedDuringATurnAnswers410(t *testing.T) {
	for _, tc := range []struct {
		name string
		beat time.Duration
		pass bool // let the reply through after the deletion
	}{
		{"at the commit", time.Minute, true},
		{"at the heartbeat", 20 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gate := newGateProvider()
			logs := &syncBuffer{}
			a := newTestApp(t, withLog(logs), withHeartbeat(gate, tc.beat))
			defer func() {
				if t.Failed() {
					t.Log(logs.String())
				}
			}()
			a.register("root")
			bob := a.apiClient("bob")
			var wg sync.WaitGroup
			var status int
			var body []byte
			wg.Add(1)
			go func() {
				defer wg.Done()
				var res *http.Response
				res, body = bob.api(http.MethodPost, "/api/chat", map[string]any{"query": "hold on"})
				status = res.StatusCode
			}()
			gate.waitStarted(t, 1)
			if _, err := a.store.DeleteOwnAccount(context.Background(), bob.user.ID); err != nil {
				t.Fatal(err)
			}
			if tc.pass {
				gate.pass <- struct{}{}
			}
			wg.Wait()
			if status != http.StatusGone || !strings.Contains(string(body), "deleted") {
				t.Fatalf("the waiting POST /api/chat answered %d %s, want 410", status, body)
			}
			if n := a.apiCount("exchanges"); n != 0 {
				t.Fatalf("%d exchanges left", n)
			}
		})
	}
}

// The models' sentinel is what classify maps: a deleted exchange's lost
// lease is also a lost lease (what stops writing keeps stopping).
func TestExchangeGoneIsALostLease(t *testing.T) {
	if !errors.Is(models.ErrExchangeGone, models.ErrLeaseLost) {
		t.Fatal("ErrExchangeGone is not an ErrLeaseLost")
	}
}
