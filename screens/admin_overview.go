package screens

import (
	"context"
	"strings"
	"time"

	"palaver/models"
	"palaver/views"
)

// adminWindow is how many UTC days the dashboard covers, today included.
const adminWindow = 30

// AdminOverview builds the dashboard: the service's health over the last
// adminWindow days, as charts with their tables, in the frame ch.
func (s *Screens) AdminOverview(ctx context.Context, ch views.AdminChrome) (views.AdminOverviewScreen, error) {
	o, err := s.store.AdminOverview(ctx, adminWindow, time.Now())
	if err != nil {
		return views.AdminOverviewScreen{}, err
	}
	p := views.AdminOverviewScreen{
		AdminChrome: ch,
		Window: "The last " + views.Plural(adminWindow, "day", "days") + ": " +
			o.From.Format("2 Jan") + " – " + o.To.Format("2 Jan 2006") + " (UTC days).",
	}
	adminOverviewDays(&p, o)
	adminOverviewAgents(&p, o)
	return p, nil
}

// adminOverviewDays fills the daily charts, their tables and the cards.
func adminOverviewDays(p *views.AdminOverviewScreen, o *models.AdminOverview) {
	n := len(o.Days)
	days := make([]string, n)
	exs, msgs, users, rates := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	var totEx, totMsgs, totTurns, totErrs int64
	for i, d := range o.Days {
		days[i] = d.Day
		exs[i], msgs[i], users[i] = float64(d.Exchanges), float64(d.Messages), float64(d.ActiveUsers)
		rates[i] = views.Rate(d.Errors, d.Turns)
		totEx, totMsgs, totTurns, totErrs = totEx+d.Exchanges, totMsgs+d.Messages, totTurns+d.Turns, totErrs+d.Errors
		// The tables list the newest day first.
		p.Days = append([]views.AdminDayRow{{
			Day: d.Day, Exchanges: views.Count(d.Exchanges), Messages: views.Count(d.Messages),
			ActiveUsers: views.Count(d.ActiveUsers), Turns: views.Count(d.Turns), Errors: views.Count(d.Errors),
			ErrorRate: views.Percent(d.Errors, d.Turns),
		}}, p.Days...)
	}
	p.Activity = views.DayChart{
		ID: "chart-activity", Title: "Activity per day",
		Desc: "Bars per UTC day for the last " + views.Plural(int64(n), "day", "days") + ": " +
			views.Plural(totEx, "conversation", "conversations") + " started, " +
			views.Plural(totMsgs, "message", "messages") + " written in all.",
		Days: days,
		Series: []views.DaySeries{
			{Name: "Conversations started", Values: exs, Class: "fill-indigo-500"},
			{Name: "Messages", Values: msgs, Class: "fill-sky-500"},
			{Name: "Active users", Values: users, Class: "fill-emerald-500"},
		},
	}
	p.Errors = views.DayChart{
		ID: "chart-errors", Title: "Error rate per day",
		Desc: "Error rows per turn, per UTC day; " + views.Percent(totErrs, totTurns) + " over the period.",
		Days: days,
		Series: []views.DaySeries{
			{Name: "Error rows per turn", Unit: "%", Values: rates, Class: "fill-rose-500"},
		},
	}
	p.Cards = append(p.Cards,
		views.AdminCard{Label: "Conversations started", Value: views.Count(totEx)},
		views.AdminCard{Label: "Messages", Value: views.Count(totMsgs), Note: views.Plural(totTurns, "turn", "turns")},
		views.AdminCard{Label: "Error rate", Value: views.Percent(totErrs, totTurns), Note: views.Plural(totErrs, "error row", "error rows")},
	)
}

// adminOverviewAgents fills the per-agent and per-model charts and tables.
func adminOverviewAgents(p *views.AdminOverviewScreen, o *models.AdminOverview) {
	var replies, rated, up int64
	p.Feedback = views.StackChart{
		ID: "chart-feedback", Title: "Feedback by agent", Unit: "%",
		Keys: []views.StackKey{{Name: "Rated up", Class: "fill-emerald-500"}, {Name: "Rated down", Class: "fill-rose-500"}},
	}
	for _, f := range o.Feedback {
		replies, rated, up = replies+f.Replies, rated+f.Rated, up+f.Up
		agent := adminAgent(f.Agent)
		p.Feedback.Rows = append(p.Feedback.Rows, views.StackRow{Label: agent,
			Values: []float64{views.Rate(f.Up, f.Replies), views.Rate(f.Down, f.Replies)}})
		p.Agents = append(p.Agents, views.AdminFeedbackRow{
			Agent: agent, Replies: views.Count(f.Replies), RatedRate: views.Percent(f.Rated, f.Replies),
			Up: views.Count(f.Up), Down: views.Count(f.Down), UpShare: views.Percent(f.Up, f.Rated),
		})
	}
	p.Feedback.Desc = "Share of each agent's replies rated up and down; " + views.Percent(rated, replies) +
		" of all replies were rated, " + views.Percent(up, rated) + " of those up."

	var proposals, accepted, rejected int64
	p.Proposals = views.StackChart{
		ID: "chart-proposals", Title: "Proposal acceptance by agent",
		Keys: []views.StackKey{{Name: "Accepted", Class: "fill-emerald-500"}, {Name: "Rejected", Class: "fill-rose-500"},
			{Name: "Open", Class: "fill-slate-300"}},
	}
	for _, a := range o.Proposals {
		proposals, accepted, rejected = proposals+a.Proposals, accepted+a.Accepted, rejected+a.Rejected
		agent := adminAgent(a.Agent)
		p.Proposals.Rows = append(p.Proposals.Rows, views.StackRow{Label: agent,
			Values: []float64{float64(a.Accepted), float64(a.Rejected), float64(a.Open())}})
		p.Proposed = append(p.Proposed, views.AdminProposalRow{
			Agent: agent, Proposals: views.Count(a.Proposals), Accepted: views.Count(a.Accepted),
			Rejected: views.Count(a.Rejected), Open: views.Count(a.Open()),
			AcceptanceRate: views.Percent(a.Accepted, a.Accepted+a.Rejected),
		})
	}
	p.Proposals.Desc = "Page edit proposals per agent, by what became of them: " +
		views.Plural(proposals, "proposal", "proposals") + ", " + views.Percent(accepted, accepted+rejected) + " of those decided accepted."

	var tokens int64
	p.Tokens = views.StackChart{
		ID: "chart-tokens", Title: "Tokens by model",
		Keys: []views.StackKey{{Name: "Prompt", Class: "fill-violet-500"}, {Name: "Completion", Class: "fill-amber-500"},
			{Name: "Not split", Class: "fill-slate-400"}},
	}
	for _, m := range o.Tokens {
		tokens += m.TotalTokens
		model := m.Model
		if model == "" {
			model = "(not reported)"
		}
		unsplit := max(m.TotalTokens-m.PromptTokens-m.CompletionTokens, 0)
		p.Tokens.Rows = append(p.Tokens.Rows, views.StackRow{Label: model,
			Values: []float64{float64(m.PromptTokens), float64(m.CompletionTokens), float64(unsplit)}})
		p.Models = append(p.Models, views.AdminTokenRow{
			Model: model, Replies: views.Count(m.Replies), Prompt: views.Count(m.PromptTokens),
			Completion: views.Count(m.CompletionTokens), Total: views.Count(m.TotalTokens),
		})
	}
	p.Tokens.Desc = views.Count(tokens) + " tokens reported in all, by model."
	p.Cards = append(p.Cards,
		views.AdminCard{Label: "Replies rated", Value: views.Percent(rated, replies), Note: views.Percent(up, rated) + " of them up"},
	)
	if proposals > 0 {
		p.Cards = append(p.Cards, views.AdminCard{Label: "Proposals accepted", Value: views.Percent(accepted, accepted+rejected),
			Note: views.Plural(proposals, "proposal", "proposals")})
	}
	if tokens > 0 {
		p.Cards = append(p.Cards, views.AdminCard{Label: "Tokens", Value: views.Count(tokens)})
	}
}

// adminAgent names an agent in the dashboard.
func adminAgent(agent string) string {
	if strings.TrimSpace(agent) == "" {
		return "(none)"
	}
	return agent
}
