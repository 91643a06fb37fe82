package models

import (
	"context"
	"maps"
	"testing"
	"time"
)

// TestAdminOverview seeds activity over several days (and some before the
// window), then recomputes every figure in Go from the raw rows and compares.
func TestAdminOverview(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		sd := seedExchanges(t, s, adminSpecs())
		u := sd.users["ann"]
		// Replies that report tokens, one that reports nonsense, one without.
		for _, md := range []map[string]any{
			{"model": "gpt-x", "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
			{"model": "gpt-x", "prompt_tokens": 3, "completion_tokens": 4},
			{"model": "small", "total_tokens": "lots", "prompt_tokens": 2},
			{"provider": "none"},
		} {
			ex, _ := mustStart(t, s, TurnStart{UserID: u.ID, AgentType: "router", Query: "tokens?", Owner: "tok"})
			m := assistant("counted")
			m.AgentResponse.Metadata = md
			if err := s.FinishTurn(ctx, ex.ID, "tok", m); err != nil {
				t.Fatal(err)
			}
		}
		// Spread the seed over days: exchange i was created i%6 days ago (the
		// 7th 40 days ago, before the window), its messages an hour apart,
		// the first at the very end of a UTC day.
		var exs []Exchange
		if err := s.db.Order("id").Find(&exs).Error; err != nil {
			t.Fatal(err)
		}
		for i, e := range exs {
			day := adminBase.AddDate(0, 0, -(i % 6))
			if i == 6 {
				day = adminBase.AddDate(0, 0, -40)
			}
			created := time.Date(day.Year(), day.Month(), day.Day(), 23, 59, 59, 999999000, time.UTC).AddDate(0, 0, -1)
			if err := s.db.Exec("UPDATE exchanges SET created_at = ? WHERE id = ?", created, e.ID).Error; err != nil {
				t.Fatal(err)
			}
			var msgs []Message
			s.db.Where("exchange_id = ?", e.ID).Order("id").Find(&msgs)
			for j, m := range msgs {
				at := created.Add(time.Duration(j) * time.Hour)
				if err := s.db.Exec("UPDATE messages SET created_at = ? WHERE id = ?", at, m.ID).Error; err != nil {
					t.Fatal(err)
				}
			}
		}

		o, err := s.AdminOverview(ctx, 30, adminBase)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Days) != 30 || o.Days[29].Day != "2026-06-10" || o.Days[0].Day != "2026-05-12" {
			t.Fatalf("%d days from %s to %s", len(o.Days), o.Days[0].Day, o.Days[len(o.Days)-1].Day)
		}

		// The same figures, from the rows.
		var all []Message
		var exAll []Exchange
		s.db.Order("id").Find(&all)
		s.db.Find(&exAll)
		owner := map[int64]int64{}
		wantDays := map[string]DayActivity{}
		for _, e := range exAll {
			owner[e.ID] = e.UserID
			if !e.CreatedAt.Before(o.From) {
				d := wantDays[e.CreatedAt.UTC().Format(time.DateOnly)]
				d.Exchanges++
				wantDays[e.CreatedAt.UTC().Format(time.DateOnly)] = d
			}
		}
		active := map[string]map[int64]bool{}
		wantFeedback := map[string]AgentFeedback{}
		wantProposals := map[string]AgentProposals{}
		wantTokens := map[string]ModelTokens{}
		for _, m := range all {
			if m.CreatedAt.Before(o.From) {
				continue
			}
			day := m.CreatedAt.UTC().Format(time.DateOnly)
			d := wantDays[day]
			d.Messages++
			switch m.Role {
			case RoleUser:
				d.Turns++
				if active[day] == nil {
					active[day] = map[int64]bool{}
				}
				active[day][owner[m.ExchangeID]] = true
			case RoleError:
				d.Errors++
			}
			wantDays[day] = d
			if m.Role != RoleAssistant {
				continue
			}
			agent := ""
			if m.AgentType != nil {
				agent = *m.AgentType
			}
			f := wantFeedback[agent]
			f.Agent = agent
			f.Replies++
			if m.Feedback != nil {
				f.Rated++
				if *m.Feedback == FeedbackUp {
					f.Up++
				} else {
					f.Down++
				}
			}
			wantFeedback[agent] = f
			if m.EditMode != nil {
				p := wantProposals[agent]
				p.Agent = agent
				p.Proposals++
				if count(t, s, "page_revisions", "message_id = ?", m.ID) > 0 {
					p.Accepted++
				} else if count(t, s, "proposal_rejections", "message_id = ?", m.ID) > 0 {
					p.Rejected++
				}
				wantProposals[agent] = p
			}
			md := m.AgentResponse.Metadata
			model, _ := md["model"].(string)
			num := func(k string) (int64, bool) { f, ok := md[k].(float64); return int64(f), ok }
			tk := wantTokens[model]
			tk.Model = model
			tk.Replies++
			prompt, _ := num("prompt_tokens")
			completion, _ := num("completion_tokens")
			tk.PromptTokens += prompt
			tk.CompletionTokens += completion
			if total, ok := num("total_tokens"); ok {
				tk.TotalTokens += total
			} else {
				tk.TotalTokens += prompt + completion
			}
			wantTokens[model] = tk
		}
		for day, users := range active {
			d := wantDays[day]
			d.ActiveUsers = int64(len(users))
			wantDays[day] = d
		}
		nonEmpty := 0
		for _, d := range o.Days {
			want := wantDays[d.Day]
			want.Day = d.Day
			if d != want {
				t.Errorf("day %s: %+v, want %+v", d.Day, d, want)
			}
			if d.Messages > 0 {
				nonEmpty++
			}
		}
		if nonEmpty < 4 {
			t.Fatalf("only %d days with messages: the seed does not spread", nonEmpty)
		}
		gotFeedback := map[string]AgentFeedback{}
		for _, f := range o.Feedback {
			gotFeedback[f.Agent] = f
		}
		if !maps.Equal(gotFeedback, wantFeedback) {
			t.Errorf("feedback by agent:\n got %v\nwant %v", gotFeedback, wantFeedback)
		}
		gotProposals := map[string]AgentProposals{}
		for _, p := range o.Proposals {
			gotProposals[p.Agent] = p
		}
		if !maps.Equal(gotProposals, wantProposals) || gotProposals["page_assistant"].Open() != 1 {
			t.Errorf("proposals by agent:\n got %v\nwant %v", gotProposals, wantProposals)
		}
		gotTokens := map[string]ModelTokens{}
		for _, tk := range o.Tokens {
			gotTokens[tk.Model] = tk
		}
		if !maps.Equal(gotTokens, wantTokens) {
			t.Errorf("tokens by model:\n got %v\nwant %v", gotTokens, wantTokens)
		}
		if gotTokens["gpt-x"].TotalTokens != 22 || gotTokens["small"].TotalTokens != 2 {
			t.Errorf("gpt-x %+v, small %+v: want 22 and 2 tokens", gotTokens["gpt-x"], gotTokens["small"])
		}
		if o.Tokens[0].Model != "gpt-x" {
			t.Errorf("tokens not ordered by total: %v", o.Tokens)
		}
	})
}
