package agents

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"palaver/internal/pgtest"
	"palaver/models"
)

// A branch deleted through one process reaches the tabs held by another
// (PostgreSQL): first as the deletion with the family's root and its heir
// read as it now stands, then the deletion's own notification, bare. This
// process's own deletions reach its tabs from the store, once.
func TestBranchDeletionsReachOtherProcesses(t *testing.T) {
	here, _ := newPostgresStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ann := newUser(t, here, "ann")
	there, err := models.Open(pgtest.DSN(t), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer there.Close()
	local := New(here, &Builtin{}, Options{Logger: quiet})
	remote := New(there, &Builtin{}, Options{Logger: quiet})
	w := StartWaker(ctx, remote, there, pgtest.DSN(t))
	for deadline := time.Now().Add(10 * time.Second); w.connects.Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waker never listened")
		}
	}
	root, _, err := here.StartTurn(ctx, models.TurnStart{UserID: ann, Scope: models.ScopeGeneral, AgentType: AgentRouter, Query: "q", Owner: "me"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := here.FailTurn(ctx, root.ID, "me", "no"); err != nil {
		t.Fatal(err)
	}
	fork, err := here.Fork(ctx, ann, root.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	subHere, subThere := local.Hub().Subscribe(ann), remote.Hub().Subscribe(ann)
	defer subHere.Close()
	defer subThere.Close()
	// The other process may still be reading the notices of the failed
	// turn and the fork: one it reads after the delete finds the root gone
	// and says so like a bare deletion. Notices arrive in order, so once it
	// has heard a marker sent now, it has read them all.
	const marker = 987_654
	payload, _ := json.Marshal(models.Notice{Kind: models.NotifyPage, User: ann, Page: marker, Origin: "the test"})
	if err := here.Notify(ctx, string(payload)); err != nil {
		t.Fatal(err)
	}
	for deadline := time.After(10 * time.Second); ; {
		select {
		case e := <-subThere.C:
			if e.Kind != EventPage || e.PageID != marker {
				continue
			}
		case <-deadline:
			t.Fatal("the other process never heard the marker")
		}
		break
	}
	for len(subHere.C) > 0 {
		<-subHere.C
	}

	if _, err := here.DeleteExchange(ctx, ann, root.ID); err != nil {
		t.Fatal(err)
	}
	deletions := func(sub *Subscription, want int) []Event {
		var got []Event
		deadline := time.After(5 * time.Second)
		for len(got) < want {
			select {
			case e := <-sub.C:
				if e.Kind == EventTurn && e.Exchange == nil {
					got = append(got, e)
				}
			case <-deadline:
				return got
			}
		}
		select { // and nothing more
		case e := <-sub.C:
			if e.Kind == EventTurn && e.Exchange == nil {
				got = append(got, e)
			}
		case <-time.After(300 * time.Millisecond):
		}
		return got
	}
	got := deletions(subThere, 2)
	if len(got) != 2 {
		t.Fatalf("the other process heard %d deletion events, want the family's and the deletion's own: %+v", len(got), got)
	}
	if e := got[0]; e.ExchangeID != root.ID || e.Family != root.ID || e.Heir == nil || e.Heir.ID != fork.ID || e.Heir.ForkedFromID != nil {
		t.Fatalf("first event %+v (heir %+v), want the root's deletion with the fork as heir, now a root", e, e.Heir)
	}
	if e := got[1]; e.ExchangeID != root.ID || e.Heir != nil {
		t.Fatalf("second event %+v, want the bare deletion", e)
	}
	got = deletions(subHere, 1)
	if len(got) != 1 || got[0].Heir == nil || got[0].Heir.ID != fork.ID || got[0].Family != root.ID {
		t.Fatalf("this process heard %+v, want the deletion once, with its heir", got)
	}
}
