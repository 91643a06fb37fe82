package models

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestConnectionsModelsAndDefault(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		c := &LLMConnection{Name: "ollama", Kind: KindOpenAI, BaseURL: "http://127.0.0.1:11434/v1", APIKeyEnc: "enc"}
		if err := s.CreateConnection(ctx, c, []string{"llama3", "qwen3"}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateConnection(ctx, &LLMConnection{Name: "ollama", Kind: KindOpenAI}, nil); !errors.Is(err, ErrNameTaken) {
			t.Fatalf("duplicate name: %v", err)
		}
		ms, err := s.LLMModels(ctx)
		if err != nil || len(ms) != 2 || !ms[0].IsDefault || !ms[0].Enabled || ms[1].Enabled {
			t.Fatalf("models %+v, %v", ms, err)
		}
		on, price := true, 2.5
		m, err := s.UpdateLLMModel(ctx, ms[1].ID, ModelPatch{Default: &on, InputPrice: &price})
		if err != nil || !m.IsDefault || !m.Enabled || *m.InputPrice != 2.5 {
			t.Fatalf("updated %+v, %v", m, err)
		}
		ms, _ = s.LLMModels(ctx)
		if ms[0].IsDefault {
			t.Fatal("two defaults")
		}
		if err := s.EnsureFlagConnection(ctx, LLMConnection{Name: "flags", Kind: KindAnthropic, BaseURL: "x"}, "claude"); err != nil {
			t.Fatal(err)
		}
		if err := s.EnsureFlagConnection(ctx, LLMConnection{Name: "flags", Kind: KindAnthropic, BaseURL: "y"}, "claude"); err != nil {
			t.Fatal(err)
		}
		cs, _ := s.Connections(ctx)
		if len(cs) != 2 || cs[1].Source != SourceFlags || cs[1].BaseURL != "y" {
			t.Fatalf("connections %+v", cs)
		}
		if err := s.DeleteConnection(ctx, cs[1].ID); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("deleting the flags' connection: %v", err)
		}
		if err := s.DeleteConnection(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		if ms, _ = s.LLMModels(ctx); len(ms) != 1 || ms[0].Model != "claude" {
			t.Fatalf("after delete %+v", ms)
		}
	})
}

func TestUsageIsKeptByTheTurnAndBudgetsCombine(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		u := mustUser(t, s, "ann")
		for i := 0; i < 2; i++ {
			ex, _ := mustStart(t, s, TurnStart{UserID: u.ID, Query: "hi"})
			a := assistant("hello")
			a.AgentResponse.Metadata["model"] = "gpt-x"
			a.AgentResponse.Metadata["prompt_tokens"] = 10
			a.AgentResponse.Metadata["completion_tokens"] = int64(5)
			a.AgentResponse.Metadata["cost"] = 0.25
			if err := s.FinishTurn(ctx, ex.ID, *ex.TurnOwner, a); err != nil {
				t.Fatal(err)
			}
		}
		month := time.Now().UTC().Format("2006-01")
		got, err := s.MonthUsage(ctx, u.ID, month)
		if err != nil || len(got) != 1 || got[0] != (UsageByModel{Model: "gpt-x", InputTokens: 20, OutputTokens: 10, Cost: 0.5}) {
			t.Fatalf("usage %+v, %v", got, err)
		}
		// A day before (the 1st: a day of the same month), another model:
		// the days are summed over models.
		day := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
		if day[:7] != month {
			day = month + "-28"
		}
		if err := s.db.Create(&UsageDaily{UserID: u.ID, Day: day, Model: "other", InputTokens: 7, OutputTokens: 1, Cost: 0.1}).Error; err != nil {
			t.Fatal(err)
		}
		byDay, err := s.MonthUsageByDay(ctx, u.ID, month)
		if err != nil || len(byDay) != 2 || byDay[0].Day > byDay[1].Day {
			t.Fatalf("by day %+v, %v", byDay, err)
		}
		for _, d := range byDay {
			if d.Day == day && (d.Tokens != 8 || d.Cost != 0.1) || d.Day != day && (d.Tokens != 30 || d.Cost != 0.5) {
				t.Fatalf("by day %+v", byDay)
			}
		}
		if err := s.db.Where("model = ?", "other").Delete(&UsageDaily{}).Error; err != nil {
			t.Fatal(err)
		}
		today, m, err := s.TokensUsed(ctx, u.ID, time.Now())
		if err != nil || today != 30 || m != 30 {
			t.Fatalf("used %d %d %v", today, m, err)
		}
		if n := count(t, s, "usage_daily", "user_id = ?", u.ID); n != 1 {
			t.Fatalf("%d usage rows", n)
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(s.SetBudget(ctx, BudgetDefault, nil, 100, 1000))
		if b, _ := s.BudgetOf(ctx, u.ID); b != (Budget{100, 1000}) {
			t.Fatalf("default %+v", b)
		}
		must(s.SetBudget(ctx, BudgetOverride(u.ID), &u.ID, 500, 0))
		must(s.SetBudget(ctx, BudgetSelf(u.ID), &u.ID, 50, 0))
		if b, _ := s.BudgetOf(ctx, u.ID); b != (Budget{50, 0}) {
			t.Fatalf("override and own cap %+v", b)
		}
		must(s.SetBudget(ctx, BudgetSelf(u.ID), &u.ID, 900, 0))
		if b, _ := s.BudgetOf(ctx, u.ID); b != (Budget{500, 0}) {
			t.Fatalf("own cap above the override %+v", b)
		}
	})
}
