package models

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
)

// proposalTurn stores a page chat turn whose reply proposes an edit.
func proposalTurn(t *testing.T, s *Store, userID, pageID int64, mode, newContent string) *Message {
	t.Helper()
	ex, _ := mustStart(t, s, TurnStart{UserID: userID, Scope: ScopePage, PageID: &pageID, AgentType: "page_assistant", Query: "edit please"})
	agent := "page_assistant"
	m := &Message{Role: RoleAssistant, Content: "proposed", AgentType: &agent, EditMode: &mode,
		AgentResponse: &AgentResponse{Content: "proposed", AgentType: agent,
			Metadata: map[string]any{"edit_mode": mode, "content": newContent}}}
	if err := s.FinishTurn(context.Background(), ex.ID, *ex.TurnOwner, m); err != nil {
		t.Fatal(err)
	}
	return m
}

// replaceWith applies a full replacement unless the page is not base.
func replaceWith(base string) ApplyFunc {
	return func(content string, m *Message) (string, error) {
		if content != base {
			return "", ErrStale
		}
		return m.AgentResponse.Metadata["content"].(string), nil
	}
}

func TestAcceptProposal(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		p, _ := s.CreatePage(ctx, ann.ID, "P", "v1")
		other, _ := s.CreatePage(ctx, ann.ID, "Other", "o")
		m := proposalTurn(t, s, ann.ID, p.ID, EditFullReplacement, "v2")
		if m.EditMode == nil {
			t.Fatal("edit mode not stored")
		}
		stored, _ := s.Message(ctx, ann.ID, m.ID)
		if stored.EditMode == nil || *stored.EditMode != EditFullReplacement {
			t.Fatalf("stored edit mode %v", stored.EditMode)
		}

		// Refusals change nothing.
		for _, tc := range []struct {
			name           string
			user, page, id int64
			apply          ApplyFunc
			want           error
		}{
			{"another user", bob.ID, p.ID, m.ID, replaceWith("v1"), ErrNotFound},
			{"another page", ann.ID, other.ID, m.ID, replaceWith("o"), ErrNotFound},
			{"a missing message", ann.ID, p.ID, m.ID + 100, replaceWith("v1"), ErrNotFound},
			{"stale", ann.ID, p.ID, m.ID, replaceWith("v0"), ErrStale},
		} {
			if _, err := s.AcceptProposal(ctx, tc.user, tc.page, tc.id, tc.apply); !errors.Is(err, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
			}
		}
		// A user message of the page's chat is no proposal.
		var userMsg Message
		s.db.Where("exchange_id = ? AND role = ?", m.ExchangeID, RoleUser).Take(&userMsg)
		if _, err := s.AcceptProposal(ctx, ann.ID, p.ID, userMsg.ID, replaceWith("v1")); !errors.Is(err, ErrNotFound) {
			t.Errorf("a user message accepted: %v", err)
		}
		if n := count(t, s, "page_revisions", "page_id = ?", p.ID); n != 1 {
			t.Fatalf("refusals wrote %d revisions", n-1)
		}

		got, err := s.AcceptProposal(ctx, ann.ID, p.ID, m.ID, replaceWith("v1"))
		if err != nil || got.Content != "v2" {
			t.Fatalf("accept: %+v, %v", got, err)
		}
		revs, _ := s.Revisions(ctx, ann.ID, p.ID)
		last := revs[len(revs)-1]
		if len(revs) != 2 || last.EditSource != EditAgent || last.MessageID == nil || *last.MessageID != m.ID ||
			last.ExchangeID == nil || *last.ExchangeID != m.ExchangeID {
			t.Fatalf("revisions %+v", revs)
		}
		// Twice: already applied, even if the content matches again.
		if _, err := s.AcceptProposal(ctx, ann.ID, p.ID, m.ID, replaceWith("v2")); !errors.Is(err, ErrAlreadyApplied) {
			t.Fatalf("second accept: %v", err)
		}
		if n := count(t, s, "page_revisions", "page_id = ?", p.ID); n != 2 {
			t.Fatalf("a second accept wrote a revision")
		}
		applied, rejected, err := s.ProposalStates(ctx, ann.ID, p.ID, []int64{m.ID, m.ID + 1})
		if err != nil || !applied[m.ID] || len(applied) != 1 || len(rejected) != 0 {
			t.Fatalf("states %v %v %v", applied, rejected, err)
		}
	})
}

// Two accepts of one proposal at once: exactly one applies.
func TestAcceptProposalConcurrently(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		p, _ := s.CreatePage(ctx, ann.ID, "P", "v1")
		m := proposalTurn(t, s, ann.ID, p.ID, EditFullReplacement, "v2")
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = s.AcceptProposal(ctx, ann.ID, p.ID, m.ID, func(content string, m *Message) (string, error) {
					return content + "+", nil // applies to whatever it finds: only the lock prevents a double
				})
			}()
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, ErrAlreadyApplied):
				t.Fatalf("unexpected error %v", err)
			}
		}
		got, _ := s.Page(ctx, ann.ID, p.ID)
		if ok != 1 || got.Content != "v1+" || count(t, s, "page_revisions", "message_id = ?", m.ID) != 1 {
			t.Fatalf("%d accepts succeeded; content %q", ok, got.Content)
		}
	})
}

func TestRejectProposal(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		p, _ := s.CreatePage(ctx, ann.ID, "P", "v1")
		m := proposalTurn(t, s, ann.ID, p.ID, EditSectionPatch, "x")
		if err := s.RejectProposal(ctx, bob.ID, p.ID, m.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob rejects: %v", err)
		}
		for range 2 { // idempotent
			if err := s.RejectProposal(ctx, ann.ID, p.ID, m.ID); err != nil {
				t.Fatal(err)
			}
		}
		if n := count(t, s, "proposal_rejections", "message_id = ? AND user_id = ?", m.ID, ann.ID); n != 1 {
			t.Fatalf("%d rejection rows", n)
		}
		_, rejected, _ := s.ProposalStates(ctx, ann.ID, p.ID, []int64{m.ID})
		if !rejected[m.ID] {
			t.Fatal("rejection not reported")
		}
		if _, _, err := s.ProposalStates(ctx, bob.ID, p.ID, []int64{m.ID}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("bob reads states of ann's page: %v", err)
		}
		// The rejection goes with the chat when the page goes.
		if _, _, err := s.DeletePage(ctx, ann.ID, p.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "proposal_rejections", "message_id = ?", m.ID); n != 0 {
			t.Fatal("a rejection outlived its message")
		}
		if err := s.RejectProposal(ctx, ann.ID, p.ID, m.ID); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "reject proposal") {
			t.Fatalf("reject on a deleted page: %v", err)
		}
	})
}
