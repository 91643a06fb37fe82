package models

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestFavouriteModels(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		c := &LLMConnection{Name: "ollama", Kind: KindOpenAI, BaseURL: "http://127.0.0.1:11434/v1"}
		if err := s.CreateConnection(ctx, c, []string{"llama3", "qwen3"}); err != nil {
			t.Fatal(err)
		}
		ms, err := s.LLMModels(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // twice is once
			if err := s.SetFavouriteModel(ctx, ann.ID, ms[1].ID, true); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SetFavouriteModel(ctx, ann.ID, ms[0].ID, true); err != nil {
			t.Fatal(err)
		}
		if got, err := s.FavouriteModels(ctx, ann.ID); err != nil || !slices.Equal(got, []int64{ms[1].ID, ms[0].ID}) {
			t.Fatalf("ann's favourites %v, %v", got, err)
		}
		if got, err := s.FavouriteModels(ctx, bob.ID); err != nil || len(got) != 0 {
			t.Fatalf("bob's favourites %v, %v", got, err)
		}
		if err := s.SetFavouriteModel(ctx, ann.ID, ms[1].ID, false); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.FavouriteModels(ctx, ann.ID); !slices.Equal(got, []int64{ms[0].ID}) {
			t.Fatalf("after unstarring: %v", got)
		}
		// A model gone with its connection leaves no favourite behind.
		if err := s.DeleteConnection(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if n := count(t, s, "model_favourites", "user_id = ?", ann.ID); n != 0 {
			t.Fatalf("%d favourites left after the connection went", n)
		}
	})
}

// TestSearchReasoningOptIn: a word only a reply's reasoning holds is found
// when the person opted in, and only then; a reply whose text matches too
// is one hit, on its text; deleting the chat takes it out of the index.
func TestSearchReasoningOptIn(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		think := func(u *User, query, text, reasoning string) (*Exchange, *Message) {
			ex, _ := mustStart(t, s, TurnStart{UserID: u.ID, Query: query})
			a := assistant(text)
			a.AgentResponse.Reasoning = reasoning
			if err := s.FinishTurn(ctx, ex.ID, *ex.TurnOwner, a); err != nil {
				t.Fatal(err)
			}
			return ex, a
		}
		ex, a := think(ann, "What is the capital?", "Paris, surely.", "Considering marmosets and geography first")
		_, both := think(ann, "Tell me of marmosets", "Marmosets are small monkeys.", "marmosets again")
		think(bob, "Bob's question", "Bob's answer", "marmosets for bob")
		// A NUL in reasoning (JSON's \u0000, which jsonb refuses) does not
		// stop the reply from being kept (on PostgreSQL it stays unindexed).
		think(ann, "odd", "Odd reply.", "a nul \x00 in thought")
		opted := func(q *SearchQuery) { q.Reasoning = true }
		if hits := search(t, s, ann.ID, "marmoset"); slices.ContainsFunc(hits, func(h SearchHit) bool { return h.InReasoning || h.MessageID != nil && *h.MessageID == a.ID }) {
			t.Fatalf("without the opt-in: %v", hitRoles(hits))
		}
		if hits := search(t, s, ann.ID, "geography"); len(hits) != 0 {
			t.Fatalf("a word of reasoning alone was found without the opt-in: %v", hitRoles(hits))
		}
		hits := search(t, s, ann.ID, "geography", opted)
		if len(hits) != 1 || *hits[0].MessageID != a.ID || !hits[0].InReasoning || hits[0].Snippet != "Considering marmosets and <mark>geography</mark> first" {
			t.Fatalf("with the opt-in: %+v", hits)
		}
		hits = search(t, s, ann.ID, "marmoset", opted)
		want := []string{fmt.Sprintf("assistant:%d", a.ID), fmt.Sprintf("assistant:%d", both.ID)}
		var got []string
		for _, h := range hits {
			if h.MessageID != nil && h.Role == RoleAssistant {
				got = append(got, fmt.Sprintf("assistant:%d", *h.MessageID))
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("marmoset with the opt-in: %v, want the replies %v once each", hitRoles(hits), want)
		}
		// The next batch after a reasoning hit reads its cursor back.
		if _, err := ParseSearchCursor(hits[0].Cursor.String()); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DeleteExchange(ctx, ann.ID, ex.ID); err != nil {
			t.Fatal(err)
		}
		if hits := search(t, s, ann.ID, "geography", opted); len(hits) != 0 {
			t.Fatalf("a deleted chat's reasoning is found: %v", hitRoles(hits))
		}
		if s.dialect == "sqlite" {
			if err := s.db.Exec("INSERT INTO messages_reasoning_fts (messages_reasoning_fts, rank) VALUES ('integrity-check', 1)").Error; err != nil {
				t.Fatalf("reasoning index: %v", err)
			}
		}
		if err := s.SetSearchReasoning(ctx, ann.ID, true); err != nil {
			t.Fatal(err)
		}
		if u, err := s.UserByID(ctx, ann.ID); err != nil || !u.SearchReasoning {
			t.Fatalf("opt-in not kept: %+v, %v", u, err)
		}
	})
}

// RecentConversationCosts: the person's conversations active since a
// time, newest first, each with its replies' cost; not another's, not a
// temporary chat, not one older.
func TestRecentConversationCosts(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		priced := func(u *User, ex *Exchange, cost float64) *Exchange {
			t.Helper()
			ts := TurnStart{UserID: u.ID, Query: "q"}
			if ex != nil {
				ts.ExchangeID = ex.ID
			}
			got, _ := mustStart(t, s, ts)
			a := assistant("a")
			a.AgentResponse.Metadata["cost"] = cost
			if err := s.FinishTurn(ctx, got.ID, *got.TurnOwner, a); err != nil {
				t.Fatal(err)
			}
			return got
		}
		since := time.Now().Add(-time.Minute)
		first := priced(ann, nil, 0.5)
		priced(ann, first, 0.25)
		second := priced(ann, nil, 1)
		priced(bob, nil, 9)
		tmp, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "temporary", Temporary: true})
		if err := s.FinishTurn(ctx, tmp.ID, *tmp.TurnOwner, assistant("gone soon")); err != nil {
			t.Fatal(err)
		}
		got, err := s.RecentConversationCosts(ctx, ann.ID, since, 5)
		if err != nil || len(got) != 2 || got[0].ID != second.ID || got[0].Cost != 1 || got[1].ID != first.ID || got[1].Cost != 0.75 {
			t.Fatalf("costs %+v, %v", got, err)
		}
		if got, err := s.RecentConversationCosts(ctx, ann.ID, time.Now().Add(time.Hour), 5); err != nil || len(got) != 0 {
			t.Fatalf("since later: %+v, %v", got, err)
		}
		if got, _ := s.RecentConversationCosts(ctx, ann.ID, since, 1); len(got) != 1 {
			t.Fatalf("limit 1: %+v", got)
		}
	})
}

// ExchangeCost: what the replies of one of the person's chats cost, only
// numbers counted (as replyCosts counts them, which RecentConversationCosts
// reads), a fork's copies included; another person's chat costs nothing
// to them; on SQLite a reply whose agent_response is not JSON is passed
// over.
func TestExchangeCost(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		var ex *Exchange
		for _, cost := range []any{0.5, 0.25, "3", true, 2} {
			ts := TurnStart{UserID: ann.ID, Query: "q"}
			if ex != nil {
				ts.ExchangeID = ex.ID
			}
			got, _ := mustStart(t, s, ts)
			ex = got
			a := assistant("a")
			a.AgentResponse.Metadata["cost"] = cost
			if err := s.FinishTurn(ctx, got.ID, *got.TurnOwner, a); err != nil {
				t.Fatal(err)
			}
		}
		want := 2.75
		costs, err := replyCosts(s.db, s.dialect, []int64{ex.ID})
		if err != nil || costs[ex.ID] != want {
			t.Fatalf("replyCosts = %v, %v; want %v", costs, err, want)
		}
		if got, err := s.ExchangeCost(ctx, ann.ID, ex.ID); err != nil || got != want {
			t.Fatalf("ExchangeCost = %v, %v; want %v", got, err, want)
		}
		fork, err := s.Fork(ctx, ann.ID, ex.ID, 4)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.ExchangeCost(ctx, ann.ID, fork.ID); err != nil || got != 0.75 {
			t.Fatalf("the fork's two first turns cost %v, %v; want 0.75", got, err)
		}
		if got, err := s.ExchangeCost(ctx, bob.ID, ex.ID); err != nil || got != 0 {
			t.Fatalf("ann's chat costs bob %v, %v; want 0", got, err)
		}
		if s.dialect == "sqlite" {
			if err := s.db.Exec(`UPDATE messages SET agent_response = '{"metadata": {"cost": 1' WHERE exchange_id = ? AND seq = 1`, ex.ID).Error; err != nil {
				t.Fatal(err)
			}
			if got, err := s.ExchangeCost(ctx, ann.ID, ex.ID); err != nil || got != want-0.5 {
				t.Fatalf("with a reply not JSON: %v, %v; want %v", got, err, want-0.5)
			}
		}
	})
}
