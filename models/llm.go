package models

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Connection kinds: the API a connection's server speaks.
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
	KindBuiltin   = "builtin" // the offline agent, when no --llm-* flags are given
)

// OfflineConnection is the connection `palaver serve` defines without
// --llm-* flags, and its one model: the builtin offline agent.
func OfflineConnection() (LLMConnection, string) {
	return LLMConnection{Name: "offline", Kind: KindBuiltin}, "builtin"
}

// Connection sources: who manages a connection.
const (
	SourceAdmin = "admin"
	SourceFlags = "flags" // defined by --llm-* flags: read-only
)

// ErrReadOnly means the row is defined by the command line, not the admin.
var ErrReadOnly = errors.New("this connection is defined by the --llm-* flags and cannot be changed here")

// ErrNameTaken means another connection has that name.
var ErrNameTaken = errors.New("a connection with that name exists")

// LLMConnection is an administrator's connection to a model server. The API
// key is stored encrypted (APIKeyEnc); the clear key never leaves agents.
type LLMConnection struct {
	ID        int64     `gorm:"primaryKey" json:"id"`
	Name      string    `gorm:"not null" json:"name"`
	Kind      string    `gorm:"not null" json:"kind"`
	BaseURL   string    `gorm:"not null" json:"base_url"`
	APIKeyEnc string    `gorm:"not null" json:"-"`
	Source    string    `gorm:"not null" json:"source"`
	CreatedAt time.Time `gorm:"not null" json:"created_at"`
	UpdatedAt time.Time `gorm:"not null" json:"updated_at"`
}

// TableName is llm_connections.
func (LLMConnection) TableName() string { return "llm_connections" }

// LLMModel is one model of a connection, as the administrator set it up.
type LLMModel struct {
	ID           int64     `gorm:"primaryKey" json:"id"`
	ConnectionID int64     `gorm:"not null" json:"connection_id"`
	Model        string    `gorm:"not null" json:"model"`
	Name         string    `gorm:"not null" json:"name"`
	Enabled      bool      `gorm:"not null" json:"enabled"`
	InputPrice   *float64  `json:"input_price"`  // per million tokens
	OutputPrice  *float64  `json:"output_price"` // per million tokens
	IsDefault    bool      `gorm:"not null" json:"default"`
	UpdatedAt    time.Time `gorm:"not null" json:"updated_at"`
}

// TableName is llm_models.
func (LLMModel) TableName() string { return "llm_models" }

// Cost is what tokens cost at the model's prices (0 when unpriced).
func (m *LLMModel) Cost(in, out int64) float64 {
	c := 0.0
	if m.InputPrice != nil {
		c += float64(in) * *m.InputPrice / 1e6
	}
	if m.OutputPrice != nil {
		c += float64(out) * *m.OutputPrice / 1e6
	}
	return c
}

// UsageDaily is one person's use of one model on one day (UTC).
type UsageDaily struct {
	ID           int64   `gorm:"primaryKey"`
	UserID       int64   `gorm:"not null"`
	Day          string  `gorm:"not null"`
	Model        string  `gorm:"not null"`
	InputTokens  int64   `gorm:"not null"`
	OutputTokens int64   `gorm:"not null"`
	CachedTokens int64   `gorm:"not null"`
	Cost         float64 `gorm:"not null"`
	Replies      int64   `gorm:"not null"`
}

// TableName is usage_daily.
func (UsageDaily) TableName() string { return "usage_daily" }

// TokenBudget is a daily and monthly token budget (0: none) for a subject:
// BudgetDefault, "user:ID" (an administrator's override) or "self:ID".
type TokenBudget struct {
	ID            int64  `gorm:"primaryKey"`
	Subject       string `gorm:"not null"`
	UserID        *int64
	DailyTokens   int64     `gorm:"not null"`
	MonthlyTokens int64     `gorm:"not null"`
	UpdatedAt     time.Time `gorm:"not null"`
}

// budgetRowsStmt reads the budgets that bound one person: the default,
// the administrators' override and the person's own cap.
var budgetRowsStmt = newStmt(`SELECT subject, daily_tokens, monthly_tokens FROM token_budgets WHERE subject IN (?, ?, ?)`)

// BudgetDefault is the subject of the default budget.
const BudgetDefault = "default"

// BudgetOverride and BudgetSelf name a person's budgets.
func BudgetOverride(userID int64) string { return "user:" + strconv.FormatInt(userID, 10) }
func BudgetSelf(userID int64) string     { return "self:" + strconv.FormatInt(userID, 10) }

// Connections lists every connection, oldest first.
func (s *Store) Connections(ctx context.Context) ([]LLMConnection, error) {
	var out []LLMConnection
	err := s.db.WithContext(ctx).Order("id").Find(&out).Error
	return out, wrap("connections", err)
}

// CreateConnection stores a connection and its listed models (disabled; the
// first model of a store without a default becomes it, enabled).
func (s *Store) CreateConnection(ctx context.Context, c *LLMConnection, modelIDs []string) error {
	at := now()
	c.CreatedAt, c.UpdatedAt = at, at
	if c.Source == "" {
		c.Source = SourceAdmin
	}
	err := s.transact(ctx, func(tx *gorm.DB) error {
		var n int64
		if err := tx.Model(&LLMConnection{}).Where("name = ?", c.Name).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return ErrNameTaken
		}
		c.ID = 0
		if err := tx.Create(c).Error; err != nil {
			return err
		}
		return addModels(tx, c.ID, modelIDs, at)
	})
	return wrap("create connection", err)
}

// addModels adds the models a connection lists; with no default model yet,
// the first becomes it.
func addModels(tx *gorm.DB, connID int64, modelIDs []string, at time.Time) error {
	var defaults int64
	if err := tx.Model(&LLMModel{}).Where("is_default").Count(&defaults).Error; err != nil {
		return err
	}
	for i, id := range modelIDs {
		m := LLMModel{ConnectionID: connID, Model: id, Name: id, UpdatedAt: at}
		if i == 0 && defaults == 0 {
			m.Enabled, m.IsDefault = true, true
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&m).Error; err != nil {
			return err
		}
	}
	return nil
}

// DeleteConnection removes an administrator's connection and its models.
func (s *Store) DeleteConnection(ctx context.Context, id int64) error {
	err := s.transact(ctx, func(tx *gorm.DB) error {
		var c LLMConnection
		if err := tx.Take(&c, id).Error; err != nil {
			return err
		}
		if c.Source == SourceFlags {
			return ErrReadOnly
		}
		if err := tx.Where("connection_id = ?", id).Delete(&LLMModel{}).Error; err != nil {
			return err
		}
		return tx.Delete(&LLMConnection{}, id).Error
	})
	return wrap("delete connection", err)
}

// EnsureFlagConnection makes the --llm-* flags' connection exist, as they
// say now, with its model enabled (the default when none is).
func (s *Store) EnsureFlagConnection(ctx context.Context, c LLMConnection, model string) error {
	at := now()
	err := s.transact(ctx, func(tx *gorm.DB) error {
		var cur LLMConnection
		err := tx.Where("source = ?", SourceFlags).Take(&cur).Error
		switch {
		case errors.Is(err, gorm.ErrRecordNotFound):
			c.ID, c.Source, c.CreatedAt, c.UpdatedAt = 0, SourceFlags, at, at
			if err := tx.Create(&c).Error; err != nil {
				return err
			}
			cur = c
		case err != nil:
			return err
		default:
			if err := tx.Model(&cur).Updates(map[string]any{"name": c.Name, "kind": c.Kind, "base_url": c.BaseURL,
				"api_key_enc": c.APIKeyEnc, "updated_at": at}).Error; err != nil {
				return err
			}
		}
		if err := addModels(tx, cur.ID, []string{model}, at); err != nil {
			return err
		}
		// The flags name one model: the connection offers that one only.
		return tx.Model(&LLMModel{}).Where("connection_id = ?", cur.ID).
			Update("enabled", gorm.Expr("model = ?", model)).Error
	})
	return wrap("ensure flag connection", err)
}

// LLMModels lists every model, by connection then name.
func (s *Store) LLMModels(ctx context.Context) ([]LLMModel, error) {
	var out []LLMModel
	err := s.db.WithContext(ctx).Order("connection_id, name, id").Find(&out).Error
	return out, wrap("models", err)
}

// ModelPatch is an administrator's change of a model; nil fields stay.
type ModelPatch struct {
	Enabled     *bool
	Name        *string
	InputPrice  *float64
	OutputPrice *float64
	Default     *bool
	ClearPrices bool // a nil price is set to none (the admin page's empty field)
}

// UpdateLLMModel applies a patch; a new default takes the mark from the
// old one and is enabled.
func (s *Store) UpdateLLMModel(ctx context.Context, id int64, p ModelPatch) (*LLMModel, error) {
	var m LLMModel
	err := s.transact(ctx, func(tx *gorm.DB) error {
		if err := tx.Take(&m, id).Error; err != nil {
			return err
		}
		set := map[string]any{"updated_at": now()}
		if p.Enabled != nil {
			set["enabled"] = *p.Enabled
		}
		if p.Name != nil {
			set["name"] = *p.Name
		}
		if p.InputPrice != nil || p.ClearPrices {
			set["input_price"] = p.InputPrice
		}
		if p.OutputPrice != nil || p.ClearPrices {
			set["output_price"] = p.OutputPrice
		}
		if p.Default != nil && *p.Default {
			if err := tx.Model(&LLMModel{}).Where("is_default AND id <> ?", id).Update("is_default", false).Error; err != nil {
				return err
			}
			set["is_default"], set["enabled"] = true, true
		} else if p.Default != nil {
			set["is_default"] = false
		}
		if err := tx.Model(&m).Updates(set).Error; err != nil {
			return err
		}
		return tx.Take(&m, id).Error
	})
	if err != nil {
		return nil, wrap("update model", err)
	}
	return &m, nil
}

// Usage is a reply's tokens and cost, kept with the turn that wrote it.
type Usage struct {
	Model        string
	InputTokens  int64
	OutputTokens int64
	CachedTokens int64
	Cost         float64
}

// addUsage adds a reply's usage to its person's row of the day.
func addUsage(tx *gorm.DB, userID int64, at time.Time, u Usage) error {
	// By hand: every reply runs it (gorm's upsert building was most of
	// its cost).
	_, err := tx.Statement.ConnPool.ExecContext(ctxOf(tx), addUsageStmt.in(tx.Dialector.Name()),
		userID, at.UTC().Format(time.DateOnly), u.Model, u.InputTokens, u.OutputTokens, u.CachedTokens, u.Cost)
	return translate(tx, err)
}

// addUsageStmt adds a reply's usage to its person's row of the day and
// model, making it if needed.
var addUsageStmt = newStmt(`INSERT INTO usage_daily (user_id, day, model, input_tokens, output_tokens, cached_tokens, cost, replies)
	VALUES (?, ?, ?, ?, ?, ?, ?, 1)
	ON CONFLICT (user_id, day, model) DO UPDATE SET
		input_tokens = usage_daily.input_tokens + excluded.input_tokens,
		output_tokens = usage_daily.output_tokens + excluded.output_tokens,
		cached_tokens = usage_daily.cached_tokens + excluded.cached_tokens,
		cost = usage_daily.cost + excluded.cost,
		replies = usage_daily.replies + 1`)

// UsageByModel is a month's use of one model.
type UsageByModel struct {
	Model        string  `json:"model"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Cost         float64 `json:"cost"`
}

// MonthUsage sums the user's usage rows of a month ("YYYY-MM") by model.
func (s *Store) MonthUsage(ctx context.Context, userID int64, month string) ([]UsageByModel, error) {
	out := []UsageByModel{}
	err := s.db.WithContext(ctx).Model(&UsageDaily{}).
		Select("model, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens, SUM(cost) AS cost").
		Where("user_id = ? AND day LIKE ?", userID, month+"-%").Group("model").Order("model").Scan(&out).Error
	return out, wrap("month usage", err)
}

// UsageDay is one day's tokens (in and out, every model) and cost.
type UsageDay struct {
	Day    string // YYYY-MM-DD (UTC)
	Tokens int64
	Cost   float64
}

// MonthUsageByDay sums the user's usage rows of a month ("YYYY-MM") by
// day, oldest first; a day without replies has no entry.
func (s *Store) MonthUsageByDay(ctx context.Context, userID int64, month string) ([]UsageDay, error) {
	out := []UsageDay{}
	err := s.db.WithContext(ctx).Model(&UsageDaily{}).
		Select("day, SUM(input_tokens + output_tokens) AS tokens, SUM(cost) AS cost").
		Where("user_id = ? AND day LIKE ?", userID, month+"-%").Group("day").Order("day").Scan(&out).Error
	return out, wrap("month usage by day", err)
}

// TokensUsed is the user's tokens (in and out) of a day and of its month.
func (s *Store) TokensUsed(ctx context.Context, userID int64, day time.Time) (today, month int64, err error) {
	d := day.UTC().Format(time.DateOnly)
	var r struct{ Today, Month int64 }
	err = s.db.WithContext(ctx).Model(&UsageDaily{}).
		Select("COALESCE(SUM(CASE WHEN day = ? THEN input_tokens + output_tokens ELSE 0 END), 0) AS today, "+
			"COALESCE(SUM(input_tokens + output_tokens), 0) AS month", d).
		Where("user_id = ? AND day LIKE ?", userID, d[:7]+"-%").Scan(&r).Error
	return r.Today, r.Month, wrap("tokens used", err)
}

// SetBudget sets a subject's budget (0: no limit).
func (s *Store) SetBudget(ctx context.Context, subject string, userID *int64, daily, monthly int64) error {
	row := TokenBudget{Subject: subject, UserID: userID, DailyTokens: daily, MonthlyTokens: monthly, UpdatedAt: now()}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "subject"}},
		DoUpdates: clause.AssignmentColumns([]string{"daily_tokens", "monthly_tokens", "updated_at"}),
	}).Create(&row).Error
	return wrap("set budget", err)
}

// Budget is the budget a person is held to: the administrator's override,
// or else the default, lowered by the person's own cap.
type Budget struct {
	Daily, Monthly int64 // 0: none
}

// BudgetOf reads the budget the user is held to.
func (s *Store) BudgetOf(ctx context.Context, userID int64) (Budget, error) {
	// By hand: every turn reads it (gorm's IN list and reflection were
	// most of its cost).
	sqlDB, err := s.db.DB()
	if err != nil {
		return Budget{}, wrap("budget", err)
	}
	return budgetOf(ctx, sqlDB, s.dialect, userID)
}

// budgetOf reads it on q: the pool, or a transaction's connection.
func budgetOf(ctx context.Context, q gorm.ConnPool, dialect string, userID int64) (Budget, error) {
	rows, err := q.QueryContext(ctx, budgetRowsStmt.in(dialect), BudgetDefault, BudgetOverride(userID), BudgetSelf(userID))
	if err != nil {
		return Budget{}, wrap("budget", err)
	}
	defer rows.Close()
	by := map[string]TokenBudget{}
	for rows.Next() {
		var r TokenBudget
		if err := rows.Scan(&r.Subject, &r.DailyTokens, &r.MonthlyTokens); err != nil {
			return Budget{}, wrap("budget", err)
		}
		by[r.Subject] = r
	}
	if err := rows.Err(); err != nil {
		return Budget{}, wrap("budget", err)
	}
	admin, ok := by[BudgetOverride(userID)]
	if !ok {
		admin = by[BudgetDefault]
	}
	b := Budget{Daily: admin.DailyTokens, Monthly: admin.MonthlyTokens}
	own := by[BudgetSelf(userID)]
	lower := func(cur, mine int64) int64 {
		if mine > 0 && (cur == 0 || mine < cur) {
			return mine
		}
		return cur
	}
	b.Daily, b.Monthly = lower(b.Daily, own.DailyTokens), lower(b.Monthly, own.MonthlyTokens)
	return b, nil
}

// usageOf reads a reply's usage from its metadata: the token counts the
// provider reported and the cost the turn priced (agents put them there).
func usageOf(m *Message) (Usage, bool) {
	if m.Role != RoleAssistant || m.AgentResponse == nil {
		return Usage{}, false
	}
	md := m.AgentResponse.Metadata
	num := func(k string) float64 { return metaNumber(md[k]) }
	model, _ := md["model"].(string)
	u := Usage{Model: model, InputTokens: int64(num("prompt_tokens")), OutputTokens: int64(num("completion_tokens")),
		CachedTokens: int64(num("cached_tokens")), Cost: num("cost")}
	if u.Model == "" || u.InputTokens+u.OutputTokens == 0 {
		return Usage{}, false
	}
	return u, true
}

// String is the budget as a person reads it.
func (b Budget) String() string {
	return fmt.Sprintf("daily %d, monthly %d tokens", b.Daily, b.Monthly)
}

// BudgetStatus is where a person stands against their budget: Spent
// refuses their turns; Near warns before it (90% used); Message says it.
type BudgetStatus struct {
	Spent, Near bool
	Message     string
}

// nearShare is the share of a budget past which the composer warns.
const nearShare = 0.9

// Status says where tokens used today and this month (UTC, as of at)
// stand against the budget, naming the budget and when it resets.
func (b Budget) Status(today, month int64, at time.Time) BudgetStatus {
	at = at.UTC()
	dayReset := at.Truncate(24 * time.Hour).Add(24 * time.Hour).Format("2006-01-02 15:04 UTC")
	monthReset := time.Date(at.Year(), at.Month()+1, 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
	switch {
	case b.Daily > 0 && today >= b.Daily:
		return BudgetStatus{Spent: true, Message: fmt.Sprintf("Your daily token budget (%d tokens) is spent; it resets at %s.", b.Daily, dayReset)}
	case b.Monthly > 0 && month >= b.Monthly:
		return BudgetStatus{Spent: true, Message: fmt.Sprintf("Your monthly token budget (%d tokens) is spent; it resets on %s.", b.Monthly, monthReset)}
	case b.Daily > 0 && float64(today) >= nearShare*float64(b.Daily):
		return BudgetStatus{Near: true, Message: fmt.Sprintf("You have used %d of your %d daily tokens; the budget resets at %s.", today, b.Daily, dayReset)}
	case b.Monthly > 0 && float64(month) >= nearShare*float64(b.Monthly):
		return BudgetStatus{Near: true, Message: fmt.Sprintf("You have used %d of your %d monthly tokens; the budget resets on %s.", month, b.Monthly, monthReset)}
	}
	return BudgetStatus{}
}

// BudgetStatusOf reads where the user stands against their budget now.
func (s *Store) BudgetStatusOf(ctx context.Context, userID int64, at time.Time) (BudgetStatus, error) {
	b, err := s.BudgetOf(ctx, userID)
	if err != nil || b.Daily == 0 && b.Monthly == 0 {
		return BudgetStatus{}, err
	}
	today, month, err := s.TokensUsed(ctx, userID, at)
	if err != nil {
		return BudgetStatus{}, err
	}
	return b.Status(today, month, at), nil
}
