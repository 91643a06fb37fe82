package bench

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"palaver/handlers"
)

// usageReplies is how many replies the usage figure's person has had.
const usageReplies = 100_000

// usageModels is how many models their replies came from.
var usageModels = []string{"builtin", "gpt-4o", "gpt-4o-mini", "claude-sonnet", "claude-haiku", "llama-70b", "mistral-large", "qwen-72b"}

// usageFigures: GET /api/account/usage (the report the account page and
// the API give) for a person with a year of usage rows behind
// usageReplies replies, seeded as the turns' commits write them (one row
// per day and model).
func usageFigures(ctx context.Context, e *env, r report) error {
	u, err := e.store.CreateUser(ctx, "bench-usage", "x", false)
	if err != nil {
		return err
	}
	key := randHex(16)
	if _, err := e.store.CreateAPIKey(ctx, u.ID, "bench", handlers.HashAPIKey(key)); err != nil {
		return err
	}
	now := time.Now().UTC()
	const days = 365
	rows := days * len(usageModels)
	tx, err := e.raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, e.rebind(`INSERT INTO usage_daily (user_id, day, model, input_tokens, output_tokens, cached_tokens, cost, replies) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return err
	}
	seeded := 0
	for d := range days {
		day := now.AddDate(0, 0, -d).Format(time.DateOnly)
		for i, model := range usageModels {
			n := usageReplies / rows
			if d*len(usageModels)+i < usageReplies%rows {
				n++
			}
			seeded += n
			if _, err := st.ExecContext(ctx, u.ID, day, model, n*900, n*350, n*100, float64(n)*0.002, n); err != nil {
				return err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if seeded != usageReplies {
		return fmt.Errorf("seeded %d replies' usage, not %d", seeded, usageReplies)
	}
	url := "http://" + e.addr + "/api/account/usage?month=" + now.Format("2006-01")
	var ds []time.Duration
	for range max(e.size.HistSamples, 20) {
		d, status, body, err := e.getTimed(ctx, url, key)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("GET /api/account/usage: %d %s", status, body)
		}
		ds = append(ds, d)
	}
	r.line("usage_report_p50_ms", ms(percentile(ds, 0.5)), fmt.Sprintf("≤ 10; a month of usage, %d replies over a year of rows", usageReplies))
	return nil
}
