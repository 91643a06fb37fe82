package models

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestProjects(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		work, err := s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr("Work"), Instructions: ptr("Be brief.")})
		if err != nil || work.UID == "" || !work.Memory {
			t.Fatalf("create: %+v, %v", work, err)
		}
		_, err = s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr("Work")})
		wantErr(t, err, ErrProjectNameTaken, "duplicate name")
		if _, err := s.CreateProject(ctx, bob.ID, ProjectInput{Name: ptr("Work")}); err != nil {
			t.Fatalf("another person's same name: %v", err)
		}
		sub, err := s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr("Work"), ParentID: &work.ID})
		if err != nil {
			t.Fatalf("same name under a parent: %v", err)
		}
		var inv *InvalidError
		if _, err := s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr("deep"), ParentID: &sub.ID}); !errors.As(err, &inv) {
			t.Errorf("two levels deep: %v", err)
		}
		if _, err := s.UpdateProject(ctx, ann.ID, work.ID, ProjectInput{ParentID: &sub.ID}); !errors.As(err, &inv) {
			t.Errorf("a cycle: %v", err)
		}
		if _, err := s.UpdateProject(ctx, ann.ID, work.ID, ProjectInput{ParentID: &work.ID}); !errors.As(err, &inv) {
			t.Errorf("inside itself: %v", err)
		}
		if _, err := s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr(strings.Repeat("n", MaxProjectName+1))}); !errors.As(err, &inv) {
			t.Errorf("long name: %v", err)
		}
		if _, err := s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr("x"), Instructions: ptr(strings.Repeat("i", MaxInstructions+1))}); !errors.As(err, &inv) {
			t.Errorf("long instructions: %v", err)
		}
		_, err = s.Project(ctx, bob.ID, work.ID)
		wantErr(t, err, ErrNotFound, "another person's project")

		// A chat started in it, a fork of it, a temporary chat.
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "hello", Owner: "t", ProjectID: &work.ID}, "hi")
		_, _, err = s.StartTurn(ctx, TurnStart{UserID: bob.ID, Scope: ScopeGeneral, Query: "x", Owner: "t", ProjectID: &work.ID})
		wantErr(t, err, ErrNotFound, "a chat in another person's project")
		fork, err := s.Fork(ctx, ann.ID, ex.ID, 1)
		if err != nil || fork.ProjectID == nil || *fork.ProjectID != work.ID {
			t.Fatalf("fork: %+v, %v", fork, err)
		}
		tmp, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "secret", Owner: "t", Temporary: true}, "ok")
		other, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "outside", Owner: "t"}, "ok")

		got, err := s.Project(ctx, ann.ID, work.ID)
		if err != nil || got.ExchangeCount != 2 {
			t.Errorf("count: %+v, %v", got, err)
		}
		in, err := s.ListExchanges(ctx, ann.ID, ExchangeQuery{Scope: ScopeGeneral, ProjectID: &work.ID, Limit: 10})
		if err != nil || len(in) != 2 || in[0].ProjectID == nil {
			t.Errorf("history of the project: %d items, %v", len(in), err)
		}
		all, _ := s.ListExchanges(ctx, ann.ID, ExchangeQuery{Scope: ScopeGeneral, Limit: 10})
		for _, e := range all {
			if e.ID == tmp.ID {
				t.Error("a temporary chat in the history")
			}
		}
		hits, err := s.Search(ctx, ann.ID, SearchQuery{Terms: ParseSearch("secret"), Limit: 10})
		if err != nil || len(hits) != 0 {
			t.Errorf("search found a temporary chat: %v, %v", hits, err)
		}
		hits, _ = s.Search(ctx, ann.ID, SearchQuery{Terms: ParseSearch("outside"), ProjectID: &work.ID, Limit: 10})
		if len(hits) != 0 {
			t.Errorf("scoped search found a chat outside: %v", hits)
		}

		// Move in and out, a family at a time.
		if _, err := s.MoveToProject(ctx, ann.ID, other.ID, &work.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.MoveToProject(ctx, bob.ID, other.ID, nil); !errors.Is(err, ErrNotFound) {
			t.Errorf("bob moves ann's chat: %v", err)
		}
		bobs, _ := s.CreateProject(ctx, bob.ID, ProjectInput{Name: ptr("Mine")})
		_, err = s.MoveToProject(ctx, ann.ID, other.ID, &bobs.ID)
		wantErr(t, err, ErrNotFound, "into another person's project")
		if e, _ := s.MoveToProject(ctx, ann.ID, fork.ID, nil); e.ProjectID != nil || reload(t, s, ex.ID).ProjectID != nil {
			t.Error("moving a fork out left its family in")
		}
		if _, err := s.MoveToProject(ctx, ann.ID, ex.ID, &sub.ID); err != nil {
			t.Fatal(err)
		}

		// Delete, keeping the chats; delete the other with them.
		moved, deleted, err := s.DeleteProject(ctx, ann.ID, work.ID, false)
		if err != nil || moved != 3 || deleted != 0 {
			t.Errorf("delete keeping: moved %d deleted %d, %v", moved, deleted, err)
		}
		if n := count(t, s, "projects", "user_id = ?", ann.ID); n != 0 {
			t.Errorf("%d projects left", n)
		}
		p2, _ := s.CreateProject(ctx, ann.ID, ProjectInput{Name: ptr("Scratch")})
		s.MoveToProject(ctx, ann.ID, other.ID, &p2.ID)
		moved, deleted, err = s.DeleteProject(ctx, ann.ID, p2.ID, true)
		if err != nil || moved != 0 || deleted != 1 || count(t, s, "exchanges", "id = ?", other.ID) != 0 {
			t.Errorf("delete with chats: moved %d deleted %d, %v", moved, deleted, err)
		}
		_, _, err = s.DeleteProject(ctx, ann.ID, bobs.ID, true)
		wantErr(t, err, ErrNotFound, "deleting another person's project")
	})
}

func TestTemporaryChats(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		old, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "a", Owner: "t", Temporary: true}, "ok")
		fresh, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "b", Owner: "t", Temporary: true}, "ok")
		kept, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "c", Owner: "t", Temporary: true}, "ok")
		clock := time.Now().UTC()
		setUpdatedAt(t, s, old.ID, clock.Add(-25*time.Hour))
		setUpdatedAt(t, s, kept.ID, clock.Add(-25*time.Hour))
		if _, err := s.KeepExchange(ctx, ann.ID, kept.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddMemory(ctx, ann.ID, "likes tea", &fresh.ID); err == nil {
			t.Error("a temporary chat wrote memory")
		}
		n, err := s.PurgeTemporary(ctx, clock)
		if err != nil || n != 1 {
			t.Fatalf("purge: %d, %v", n, err)
		}
		if count(t, s, "exchanges", "id = ?", old.ID) != 0 || count(t, s, "exchanges", "id IN (?, ?)", fresh.ID, kept.ID) != 2 {
			t.Error("purge took the wrong chats")
		}
		if n, _ := s.PurgeTemporary(ctx, clock.Add(25*time.Hour)); n != 1 {
			t.Errorf("a day later: purged %d, want the fresh one", n)
		}
	})
}

func TestInstructionsAndMemories(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		ai, err := s.Instructions(ctx, ann.ID)
		if err != nil || ai.About != "" || !ai.Memory {
			t.Fatalf("none saved: %+v, %v", ai, err)
		}
		if _, err := s.SetInstructions(ctx, ann.ID, "I garden.", "Short answers.", false); err != nil {
			t.Fatal(err)
		}
		if ai, _ := s.SetInstructions(ctx, ann.ID, "I garden.", "Shorter.", true); ai.Style != "Shorter." || !ai.Memory {
			t.Errorf("saved twice: %+v", ai)
		}
		ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeGeneral, Query: "a", Owner: "t"}, "ok")
		m, err := s.AddMemory(ctx, ann.ID, "  likes tea ", &ex.ID)
		if err != nil || m.Content != "likes tea" || m.Source != MemoryExchange || *m.ExchangeID != ex.ID {
			t.Fatalf("add: %+v, %v", m, err)
		}
		if _, err := s.AddMemory(ctx, bob.ID, "x", &ex.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("from another person's chat: %v", err)
		}
		var inv *InvalidError
		if _, err := s.AddMemory(ctx, ann.ID, strings.Repeat("m", MaxMemory+1), nil); !errors.As(err, &inv) {
			t.Errorf("too long: %v", err)
		}
		if _, err := s.UpdateMemory(ctx, bob.ID, m.ID, "mine"); !errors.Is(err, ErrNotFound) {
			t.Errorf("bob edits ann's: %v", err)
		}
		if m, err := s.UpdateMemory(ctx, ann.ID, m.ID, "likes green tea"); err != nil || m.Content != "likes green tea" {
			t.Errorf("edit: %+v, %v", m, err)
		}
		for i := 1; i < MaxMemories; i++ {
			s.db.Create(&Memory{UserID: ann.ID, Content: "x", Source: MemoryManual, CreatedAt: now(), UpdatedAt: now()})
		}
		_, err = s.AddMemory(ctx, ann.ID, "one more", nil)
		wantErr(t, err, ErrMemoryFull, "the 1,001st")
		if err := s.DeleteMemory(ctx, bob.ID, m.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("bob deletes ann's: %v", err)
		}
		if err := s.DeleteMemory(ctx, ann.ID, m.ID); err != nil {
			t.Error(err)
		}
	})
}
