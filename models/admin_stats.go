package models

import (
	"context"
	"time"
)

// The dashboard's figures, over a window of whole UTC days ending today.
// They count what was written: a fork's copied entries (copy_of set) were
// written once, by the exchange they were copied from, and are left out.

// DayActivity is one UTC day of the service's use.
type DayActivity struct {
	Day         string // YYYY-MM-DD (UTC)
	Exchanges   int64  // exchanges created
	Messages    int64  // messages written, error rows included
	ActiveUsers int64  // accounts that sent a message
	Turns       int64  // user messages
	Errors      int64  // error rows
}

// AgentFeedback is how an agent's replies were rated.
type AgentFeedback struct {
	Agent   string // "" when a reply names none
	Replies int64
	Rated   int64
	Up      int64
	Down    int64
}

// AgentProposals is what became of an agent's page edit proposals. A
// proposal is accepted when a page revision names it, rejected when only a
// rejection does, and open otherwise.
type AgentProposals struct {
	Agent     string
	Proposals int64
	Accepted  int64
	Rejected  int64
}

// Open counts the proposals nobody has decided on yet.
func (p AgentProposals) Open() int64 { return p.Proposals - p.Accepted - p.Rejected }

// ModelTokens adds up the tokens replies report in agent_response.metadata
// (model, prompt_tokens, completion_tokens, total_tokens), by model.
type ModelTokens struct {
	Model            string // "" when replies name none
	Replies          int64
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64 // total_tokens, or prompt + completion when absent
}

// AdminOverview is the dashboard: the window [From, To) and its figures.
type AdminOverview struct {
	From, To  time.Time
	Days      []DayActivity // every day of the window, oldest first, idle days included
	Feedback  []AgentFeedback
	Proposals []AgentProposals
	Tokens    []ModelTokens
}

// AdminOverview gathers the dashboard's figures for the last days UTC days
// up to now.
func (s *Store) AdminOverview(ctx context.Context, days int, now time.Time) (*AdminOverview, error) {
	now = now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	o := &AdminOverview{From: today.AddDate(0, 0, 1-days), To: now}
	created, err := s.AdminDailyExchanges(ctx, o.From)
	if err != nil {
		return nil, err
	}
	written, err := s.AdminDailyMessages(ctx, o.From)
	if err != nil {
		return nil, err
	}
	byDay := map[string]DayActivity{}
	for _, d := range written {
		byDay[d.Day] = d
	}
	for _, d := range created {
		w := byDay[d.Day]
		w.Exchanges = d.Exchanges
		byDay[d.Day] = w
	}
	for d := o.From; !d.After(today); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		a := byDay[day]
		a.Day = day
		o.Days = append(o.Days, a)
	}
	if o.Feedback, err = s.AdminFeedbackByAgent(ctx, o.From); err != nil {
		return nil, err
	}
	if o.Proposals, err = s.AdminProposalsByAgent(ctx, o.From); err != nil {
		return nil, err
	}
	if o.Tokens, err = s.AdminTokensByModel(ctx, o.From); err != nil {
		return nil, err
	}
	return o, nil
}

// utcDay is the SQL for the UTC day (YYYY-MM-DD) of a time column.
func (s *Store) utcDay(col string) string {
	if s.dialect == "postgres" {
		return "to_char(" + col + " AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	return "date(" + col + ")" // SQLite's date() reads the stored offset
}

// AdminDailyExchanges counts the exchanges created each UTC day since from
// (days without any are left out), sub-runs aside: they are agents' work.
func (s *Store) AdminDailyExchanges(ctx context.Context, from time.Time) ([]DayActivity, error) {
	var out []DayActivity
	err := s.db.WithContext(ctx).Raw(`
		SELECT `+s.utcDay("created_at")+` AS day, COUNT(*) AS exchanges
		FROM exchanges WHERE created_at >= ? AND scope <> ?
		GROUP BY 1 ORDER BY 1`, from.UTC(), ScopeSubRun).Scan(&out).Error
	return out, wrap("admin daily exchanges", err)
}

// AdminDailyMessages counts the messages, turns, error rows and active
// accounts of each UTC day since from (days without any are left out).
func (s *Store) AdminDailyMessages(ctx context.Context, from time.Time) ([]DayActivity, error) {
	var out []DayActivity
	err := s.db.WithContext(ctx).Raw(`
		SELECT `+s.utcDay("m.created_at")+` AS day,
			COUNT(*) AS messages,
			SUM(CASE WHEN m.role = 'user' THEN 1 ELSE 0 END) AS turns,
			SUM(CASE WHEN m.role = 'error' THEN 1 ELSE 0 END) AS errors,
			COUNT(DISTINCT CASE WHEN m.role = 'user' THEN e.user_id END) AS active_users
		FROM messages m JOIN exchanges e ON e.id = m.exchange_id
		WHERE m.created_at >= ? AND m.copy_of IS NULL
		GROUP BY 1 ORDER BY 1`, from.UTC()).Scan(&out).Error
	return out, wrap("admin daily messages", err)
}

// AdminFeedbackByAgent counts the replies written since from, and how they
// were rated, by agent.
func (s *Store) AdminFeedbackByAgent(ctx context.Context, from time.Time) ([]AgentFeedback, error) {
	var out []AgentFeedback
	err := s.db.WithContext(ctx).Raw(`
		SELECT COALESCE(m.agent_type, '') AS agent,
			COUNT(*) AS replies,
			COUNT(m.feedback) AS rated,
			SUM(CASE WHEN m.feedback = 1 THEN 1 ELSE 0 END) AS up,
			SUM(CASE WHEN m.feedback = 0 THEN 1 ELSE 0 END) AS down
		FROM messages m
		WHERE m.role = 'assistant' AND m.created_at >= ? AND m.copy_of IS NULL
		GROUP BY 1 ORDER BY replies DESC, agent`, from.UTC()).Scan(&out).Error
	return out, wrap("admin feedback by agent", err)
}

// AdminProposalsByAgent counts the proposals made since from, and what
// became of them, by agent.
func (s *Store) AdminProposalsByAgent(ctx context.Context, from time.Time) ([]AgentProposals, error) {
	var out []AgentProposals
	err := s.db.WithContext(ctx).Raw(`
		SELECT COALESCE(m.agent_type, '') AS agent,
			COUNT(*) AS proposals,
			SUM(CASE WHEN EXISTS (SELECT 1 FROM page_revisions r WHERE r.message_id = m.id) THEN 1 ELSE 0 END) AS accepted,
			SUM(CASE WHEN NOT EXISTS (SELECT 1 FROM page_revisions r WHERE r.message_id = m.id)
				AND EXISTS (SELECT 1 FROM proposal_rejections j WHERE j.message_id = m.id) THEN 1 ELSE 0 END) AS rejected
		FROM messages m
		WHERE m.edit_mode IS NOT NULL AND m.created_at >= ? AND m.copy_of IS NULL
		GROUP BY 1 ORDER BY proposals DESC, agent`, from.UTC()).Scan(&out).Error
	return out, wrap("admin proposals by agent", err)
}

// AdminTokensByModel adds up the tokens of the replies written since from,
// by the model their metadata names. A count that is not a number counts 0.
func (s *Store) AdminTokensByModel(ctx context.Context, from time.Time) ([]ModelTokens, error) {
	// Each dialect reads the JSON its own way; the shape of the answer is
	// the same.
	q := `
		SELECT model, COUNT(*) AS replies, SUM(prompt) AS prompt_tokens,
			SUM(completion) AS completion_tokens, SUM(COALESCE(total, prompt + completion)) AS total_tokens
		FROM (
			SELECT COALESCE(CAST(json_extract(m.agent_response, '$.metadata.model') AS TEXT), '') AS model,
				` + sqliteTokens("prompt_tokens", "0") + ` AS prompt,
				` + sqliteTokens("completion_tokens", "0") + ` AS completion,
				` + sqliteTokens("total_tokens", "NULL") + ` AS total
			FROM messages m
			WHERE m.role = 'assistant' AND m.created_at >= ? AND m.copy_of IS NULL AND json_valid(m.agent_response)
		) t
		GROUP BY model ORDER BY total_tokens DESC, replies DESC, model`
	if s.dialect == "postgres" {
		q = `
		SELECT model, COUNT(*) AS replies, SUM(prompt)::bigint AS prompt_tokens,
			SUM(completion)::bigint AS completion_tokens, SUM(COALESCE(total, prompt + completion))::bigint AS total_tokens
		FROM (
			SELECT COALESCE(md ->> 'model', '') AS model,
				CASE WHEN jsonb_typeof(md -> 'prompt_tokens') = 'number' THEN (md ->> 'prompt_tokens')::numeric::bigint ELSE 0 END AS prompt,
				CASE WHEN jsonb_typeof(md -> 'completion_tokens') = 'number' THEN (md ->> 'completion_tokens')::numeric::bigint ELSE 0 END AS completion,
				CASE WHEN jsonb_typeof(md -> 'total_tokens') = 'number' THEN (md ->> 'total_tokens')::numeric::bigint END AS total
			FROM (
				SELECT m.agent_response::jsonb -> 'metadata' AS md
				FROM messages m
				WHERE m.role = 'assistant' AND m.created_at >= ? AND m.copy_of IS NULL AND m.agent_response IS NOT NULL
			) r
		) t
		GROUP BY model ORDER BY total_tokens DESC, replies DESC, model`
	}
	var out []ModelTokens
	err := s.db.WithContext(ctx).Raw(q, from.UTC()).Scan(&out).Error
	return out, wrap("admin tokens by model", err)
}

// sqliteTokens reads a token count from a reply's metadata on SQLite: the
// number, or otherwise (absent, a string) the SQL value otherwise.
func sqliteTokens(key, otherwise string) string {
	path := "'$.metadata." + key + "'"
	return "CASE WHEN json_type(m.agent_response, " + path + ") IN ('integer', 'real') " +
		"THEN CAST(json_extract(m.agent_response, " + path + ") AS INTEGER) ELSE " + otherwise + " END"
}
