package models

import (
	"context"
	"slices"
	"testing"
	"time"
)

// A paused turn waits for its person's answer however long it takes:
// neither the retention policy nor the temporary chats' purge deletes it,
// while an idle exchange as old goes.
func TestRetentionSkipsPausedExchanges(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann := mustUser(t, s, "ann")
		idle, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "old and done"})
		if err := s.FinishTurn(ctx, idle.ID, *idle.TurnOwner, &Message{Role: RoleAssistant, Content: "ok"}); err != nil {
			t.Fatal(err)
		}
		paused, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "remember this: x"})
		if _, err := s.PauseTurn(ctx, paused.ID, *paused.TurnOwner, 0, waitingCall("c1")); err != nil {
			t.Fatal(err)
		}
		tempIdle, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "temporary", Temporary: true})
		if err := s.FinishTurn(ctx, tempIdle.ID, *tempIdle.TurnOwner, &Message{Role: RoleAssistant, Content: "ok"}); err != nil {
			t.Fatal(err)
		}
		tempPaused, _ := mustStart(t, s, TurnStart{UserID: ann.ID, Query: "remember this: y", Temporary: true})
		if _, err := s.PauseTurn(ctx, tempPaused.ID, *tempPaused.TurnOwner, 0, waitingCall("c2")); err != nil {
			t.Fatal(err)
		}
		later := time.Now().Add(400 * 24 * time.Hour)
		if _, err := s.AdminSetRetention(ctx, true, 30); err != nil {
			t.Fatal(err)
		}
		cands, err := s.AdminRetentionCandidates(ctx, RetentionCutoff(later, 30), 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cands {
			if c.ID == paused.ID || c.ID == tempPaused.ID {
				t.Fatalf("a paused exchange is a retention candidate: %+v", cands)
			}
		}
		n, err := s.PurgeTemporary(ctx, later)
		if err != nil || n != 1 {
			t.Fatalf("purged %d temporary chats, %v; want the idle one only", n, err)
		}
		run, err := s.RunRetention(ctx, RetentionRequest{Source: RetentionManual, Now: later})
		if err != nil || run.DeletedExchanges != 1 {
			t.Fatalf("retention %+v, %v; want the idle exchange only", run, err)
		}
		var left []int64
		if err := s.db.Model(&Exchange{}).Order("id").Pluck("id", &left).Error; err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(left, []int64{paused.ID, tempPaused.ID}) {
			t.Fatalf("left %v; want the paused ones %d and %d", left, paused.ID, tempPaused.ID)
		}
		// Still answerable.
		if _, _, _, err := s.AnswerTools(ctx, ToolAnswers{UserID: ann.ID, ExchangeID: paused.ID, Owner: "o", CallIDs: []string{"c1"},
			Entries: func(call *Message) ([]*Message, error) { return []*Message{CancelledResult(call.Tool, "test")}, nil }}); err != nil {
			t.Fatalf("answer after retention: %v", err)
		}
	})
}
