package models

import (
	"context"
	"io"
	"reflect"
	"slices"
	"testing"

	"palaver/migrations"
)

// wantSummariesRight checks every history item of the user against its
// log, read the long way (the first user message, the first reply and the
// latest reply's rating among the exchange's messages): the ids the
// exchange's row keeps (migration 00011) must name exactly those.
func wantSummariesRight(t *testing.T, s *Store, userID int64, step string) {
	t.Helper()
	ctx := context.Background()
	sums, err := s.ListExchanges(ctx, userID, ExchangeQuery{Scope: ScopeGeneral, Limit: 200})
	if err != nil {
		t.Fatalf("%s: list: %v", step, err)
	}
	for _, sum := range sums {
		msgs := mustMessages(t, s, userID, sum.ID)
		var query, response string
		var resp *AgentResponse
		var feedback *int64
		seenReply := false
		for _, m := range msgs {
			switch {
			case m.Role == RoleUser && query == "":
				query = m.Content
			case m.Role == RoleAssistant:
				if !seenReply {
					seenReply, response, resp = true, m.Content, m.AgentResponse
				}
				feedback = m.Feedback
			}
		}
		if sum.Query != query || sum.Response != response {
			t.Errorf("%s: exchange %d lists query %q, response %q; its log has %q, %q", step, sum.ID, sum.Query, sum.Response, query, response)
		}
		if !reflect.DeepEqual(resp, sum.AgentResponse) {
			t.Errorf("%s: exchange %d lists agent_response %+v, its log %+v", step, sum.ID, sum.AgentResponse, resp)
		}
		wantListedHeader(t, s, sum.Exchange, step)
		if !slices.Equal(ptrSlice(feedback), ptrSlice(sum.Feedback)) {
			t.Errorf("%s: exchange %d lists feedback %v, its latest reply has %v", step, sum.ID, ptrSlice(sum.Feedback), ptrSlice(feedback))
		}
		one, err := s.Summary(ctx, userID, sum.ID)
		if err != nil {
			t.Fatalf("%s: summary: %v", step, err)
		}
		if !reflect.DeepEqual(one, &sum) {
			t.Errorf("%s: Summary of %d differs from its history item:\n%+v\n%+v", step, sum.ID, one, sum)
		}
	}
}

// wantListedHeader checks the header fields a history item carries (the
// ones the lists show, as HistorySQL reads them) against the exchange's
// row.
func wantListedHeader(t *testing.T, s *Store, got Exchange, step string) {
	t.Helper()
	e := reload(t, s, got.ID)
	listed := Exchange{ID: e.ID, UserID: e.UserID, Scope: e.Scope, PageID: e.PageID, JobID: e.JobID, Title: e.Title,
		AgentType: e.AgentType, ForkedFromID: e.ForkedFromID, ForkedAtSeq: e.ForkedAtSeq, Pinned: e.Pinned,
		Archived: e.Archived, TurnCount: e.TurnCount, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, TurnStatus: e.TurnStatus}
	if !reflect.DeepEqual(got, listed) {
		t.Errorf("%s: exchange %d is listed with header\n%+v\nits row has\n%+v", step, got.ID, got, listed)
	}
}

func ptrSlice(p *int64) []int64 {
	if p == nil {
		return nil
	}
	return []int64{*p}
}

// TestHistoryItemsFollowEveryWrite: the history item's first turn, reply
// and rating stay right through turns (tool entries, failures, ratings),
// forks (of forks, edits), deletes of a family's members and imports.
func TestHistoryItemsFollowEveryWrite(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		empty, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "no reply yet"})
		wantSummariesRight(t, s, ann.ID, "a turn running")
		if _, err := s.FailTurn(ctx, empty.ID, *empty.TurnOwner, "it broke"); err != nil {
			t.Fatal(err)
		}
		wantSummariesRight(t, s, ann.ID, "a failed turn")

		ex, _, first := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "alpha question"}, "alpha answer")
		ex2, _ := mustStart(t, s, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Query: "beta question"})
		tool := &ToolFields{CallID: "c1", Name: "search"}
		if _, err := s.AppendEntry(ctx, ex.ID, *ex2.TurnOwner, &Message{Role: RoleToolCall, Content: "{}", Tool: tool}); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishTurn(ctx, ex.ID, *ex2.TurnOwner, assistant("beta answer")); err != nil {
			t.Fatal(err)
		}
		up, down := int64(1), int64(0)
		if _, err := s.SetFeedback(ctx, ann.ID, first.ID, &up, nil); err != nil {
			t.Fatal(err)
		}
		wantSummariesRight(t, s, ann.ID, "two turns, the first reply rated")
		msgs := mustMessages(t, s, ann.ID, ex.ID)
		last := msgs[len(msgs)-1]
		if _, err := s.SetFeedback(ctx, ann.ID, last.ID, &down, nil); err != nil {
			t.Fatal(err)
		}
		wantSummariesRight(t, s, ann.ID, "the latest reply rated")

		// Forks: at the first reply (its log: one user message), at the
		// end, an edit of the first message, a fork of a fork.
		early, err := s.Fork(ctx, ann.ID, ex.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := s.Fork(ctx, ann.ID, ex.ID, int64(len(msgs)))
		if err != nil {
			t.Fatal(err)
		}
		edit, _, err := s.StartFork(ctx, ForkStart{UserID: ann.ID, ExchangeID: ex.ID, Seq: 0, Query: "alpha edited", Owner: "owner-1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.FinishTurn(ctx, edit.ID, "owner-1", assistant("edited answer")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Fork(ctx, ann.ID, whole.ID, 2); err != nil {
			t.Fatal(err)
		}
		mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: early.ID, Query: "early follow-up"}, "early answer")
		wantSummariesRight(t, s, ann.ID, "forks")

		// Deleting the family's root promotes copies; every member stays.
		if _, err := s.DeleteExchange(ctx, ann.ID, ex.ID); err != nil {
			t.Fatal(err)
		}
		wantSummariesRight(t, s, ann.ID, "the root deleted")
		if _, err := s.DeleteExchange(ctx, ann.ID, whole.ID); err != nil {
			t.Fatal(err)
		}
		wantSummariesRight(t, s, ann.ID, "a middle member deleted")

		// An import of everything into another account.
		bob := mustUser(t, s, "bob")
		var items []*ImportItem
		if err := s.ExportExchanges(ctx, ann.ID, func(e *ExportedExchange) error {
			items = append(items, &ImportItem{Exchange: e})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Import(ctx, bob.ID, func() (*ImportItem, error) {
			if len(items) == 0 {
				return nil, io.EOF
			}
			it := items[0]
			items = items[1:]
			return it, nil
		}); err != nil {
			t.Fatal(err)
		}
		sums, err := s.ListExchanges(ctx, bob.ID, ExchangeQuery{Scope: ScopeGeneral, Limit: 200})
		if err != nil || len(sums) == 0 {
			t.Fatalf("imported history: %d items, %v", len(sums), err)
		}
		wantSummariesRight(t, s, bob.ID, "imported")
	})
}

// TestHistoryIDsMigration: exchanges written before migration 00011 get
// their first turn's ids from it, and go on from there.
func TestHistoryIDsMigration(t *testing.T) {
	eachEmptyDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		sqlDB, err := s.SQL()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := migrations.UpTo(ctx, sqlDB, s.dialect, 10); err != nil {
			t.Fatal(err)
		}
		at := now()
		var userID, exID, emptyID int64
		if err := s.db.Raw("INSERT INTO users (username, username_key, password_hash, is_admin, created_at) VALUES ('ann', 'ann', 'h', false, ?) RETURNING id", at).Scan(&userID).Error; err != nil {
			t.Fatal(err)
		}
		for _, id := range []*int64{&exID, &emptyID} {
			if err := s.db.Raw("INSERT INTO exchanges (user_id, scope, title, agent_type, turn_count, created_at, updated_at) VALUES (?, 'general', 'old', 'router', 1, ?, ?) RETURNING id",
				userID, at, at).Scan(id).Error; err != nil {
				t.Fatal(err)
			}
		}
		for seq, c := range []string{"old question", "old answer", "second question", "second answer"} {
			role := []string{RoleUser, RoleAssistant}[seq%2]
			if err := s.db.Exec("INSERT INTO messages (exchange_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)", exID, seq, role, c, at).Error; err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate to 00011: %v", err)
		}
		sum, err := s.Summary(ctx, userID, exID)
		if err != nil {
			t.Fatal(err)
		}
		if e := reload(t, s, exID); sum.Query != "old question" || sum.Response != "old answer" || e.LastReplyID == nil {
			t.Errorf("migrated exchange lists %q / %q (last reply %v)", sum.Query, sum.Response, e.LastReplyID)
		}
		if e := reload(t, s, emptyID); e.FirstQueryID != nil || e.FirstReplyID != nil || e.LastReplyID != nil {
			t.Errorf("an exchange without messages names %v %v %v", e.FirstQueryID, e.FirstReplyID, e.LastReplyID)
		}
		mustTurn(t, s, TurnStart{UserID: userID, ExchangeID: exID, Query: "new question"}, "new answer")
		wantSummariesRight(t, s, userID, "after the migration")
	})
}

// TestRecentContextKeepsToolFields: the agent's context, which RecentContext
// scans by hand, carries a tool entry's fields as stored, in log order.
func TestRecentContextKeepsToolFields(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		ex, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "look it up"})
		call := &ToolFields{CallID: "call_7", Name: "search_chats", Arguments: map[string]any{"query": "zebras"}}
		if _, err := s.AppendEntry(ctx, ex.ID, *ex.TurnOwner, &Message{Role: RoleToolCall, Content: "", Tool: call}); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishTurn(ctx, ex.ID, *ex.TurnOwner, assistant("found")); err != nil {
			t.Fatal(err)
		}
		got, err := s.RecentContext(ctx, ann.ID, ex.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0].Role != RoleUser || got[1].Role != RoleToolCall || got[2].Role != RoleAssistant {
			t.Fatalf("context %v", contents(got))
		}
		if tool := got[1].Tool; tool == nil || tool.CallID != "call_7" || tool.Name != "search_chats" || tool.Arguments["query"] != "zebras" {
			t.Fatalf("tool entry %+v", got[1].Tool)
		}
		if got[0].Tool != nil || got[2].Tool != nil || *got[2].Seq != 2 || got[2].ExchangeID != ex.ID {
			t.Fatalf("plain entries %+v / %+v", got[0], got[2])
		}
	})
}
