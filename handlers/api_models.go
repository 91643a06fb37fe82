package handlers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
)

// apiModels lists the models this person may pick.
func (h *Handlers) apiModels(c *fiber.Ctx) error {
	cat := h.agents.Catalog()
	if cat == nil {
		return c.JSON([]agents.Choice{})
	}
	choices, err := cat.Choices(c.UserContext())
	if err != nil {
		return err
	}
	// default marks the model a new chat of this person gets: their own
	// default when they chose one, else the administrators'.
	prefs, err := h.store.ModelPreferencesOf(c.UserContext(), currentUser(c).ID, 0, nil)
	if err != nil {
		return err
	}
	favs, err := h.store.FavouriteModels(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return err
	}
	mine := cat.Prefer(c.UserContext(), prefs)
	for i := range choices {
		if mine != 0 {
			choices[i].Default = choices[i].ID == mine
		}
		choices[i].Favourite = slices.Contains(favs, choices[i].ID)
	}
	return c.JSON(choices)
}

// apiModelFavourite stars ({"model": id, "favourite": true}) or unstars
// (false) a model the person may pick; any other model is a 400 naming
// the choices, and nothing changes.
func (h *Handlers) apiModelFavourite(c *fiber.Ctx) error {
	var p struct {
		Model     int64 `json:"model"`
		Favourite *bool `json:"favourite"`
	}
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	if p.Favourite == nil {
		return fiber.NewError(fiber.StatusBadRequest, "favourite (true or false) is required")
	}
	if err := h.checkFavourite(c, p.Model); err != nil {
		return err
	}
	if err := h.store.SetFavouriteModel(c.UserContext(), currentUser(c).ID, p.Model, *p.Favourite); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"model": p.Model, "favourite": *p.Favourite})
}

// apiAIAgent is one entry of Galaxy's agent list.
type apiAIAgent struct {
	AgentType   string `json:"agent_type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Model       string `json:"model"`
}

// apiAIAgents lists the agent types with the model each uses now (the
// default: an agent type has no model of its own).
func (h *Handlers) apiAIAgents(c *fiber.Ctx) error {
	model := "builtin"
	if cat := h.agents.Catalog(); cat != nil {
		choices, err := cat.Choices(c.UserContext())
		if err != nil {
			return err
		}
		for i, ch := range choices {
			if ch.Default || i == 0 && model == "builtin" {
				model = ch.Name
			}
		}
	}
	return c.JSON([]apiAIAgent{
		{agents.AgentRouter, "Router", "Answers general questions, searches your conversations and uses tools.", model},
		{agents.AgentPageAssistant, "Page assistant", "Answers about a page and proposes edits to it.", model},
	})
}

var monthRE = regexp.MustCompile(`^\d{4}-(0[1-9]|1[0-2])$`)

// apiUsageResponse is GET /api/account/usage.
type apiUsageResponse struct {
	Month     string                `json:"month"`
	ByModel   []models.UsageByModel `json:"by_model"`
	TotalCost float64               `json:"total_cost"`
	Budget    apiBudget             `json:"budget"`
}

type apiBudget struct {
	Daily     int64 `json:"daily"`
	Monthly   int64 `json:"monthly"`
	UsedToday int64 `json:"used_today"`
	UsedMonth int64 `json:"used_month"`
}

// apiAccountUsage reports the person's tokens and cost of a month by model,
// from the usage rows the turns kept, and their budget.
func (h *Handlers) apiAccountUsage(c *fiber.Ctx) error {
	ctx, u := c.UserContext(), currentUser(c)
	month := c.Query("month", time.Now().UTC().Format("2006-01"))
	if !monthRE.MatchString(month) {
		return fiber.NewError(fiber.StatusBadRequest, "month must be YYYY-MM")
	}
	by, err := h.store.MonthUsage(ctx, u.ID, month)
	if err != nil {
		return err
	}
	out := apiUsageResponse{Month: month, ByModel: by}
	for _, m := range by {
		out.TotalCost += m.Cost
	}
	b, err := h.store.BudgetOf(ctx, u.ID)
	if err != nil {
		return err
	}
	today, used, err := h.store.TokensUsed(ctx, u.ID, time.Now())
	if err != nil {
		return err
	}
	out.Budget = apiBudget{Daily: b.Daily, Monthly: b.Monthly, UsedToday: today, UsedMonth: used}
	return c.JSON(out)
}

// apiAccountBudget sets the person's own cap (lower than the admin's
// budget to matter; 0: none).
func (h *Handlers) apiAccountBudget(c *fiber.Ctx) error {
	var p struct {
		DailyTokens   int64 `json:"daily_tokens"`
		MonthlyTokens int64 `json:"monthly_tokens"`
	}
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	if p.DailyTokens < 0 || p.MonthlyTokens < 0 {
		return fiber.NewError(fiber.StatusBadRequest, "token caps cannot be negative")
	}
	u := currentUser(c)
	if err := h.store.SetBudget(c.UserContext(), models.BudgetSelf(u.ID), &u.ID, p.DailyTokens, p.MonthlyTokens); err != nil {
		return err
	}
	return h.apiAccountUsage(c)
}

// apiAdminConnections lists the connections; keys are never in the answer.
func (h *Handlers) apiAdminConnections(c *fiber.Ctx) error {
	cs, err := h.store.Connections(c.UserContext())
	if err != nil {
		return err
	}
	ms, err := h.store.LLMModels(c.UserContext())
	if err != nil {
		return err
	}
	type conn struct {
		models.LLMConnection
		HasKey bool              `json:"has_key"`
		Models []models.LLMModel `json:"models"`
	}
	out := make([]conn, 0, len(cs))
	for _, x := range cs {
		e := conn{LLMConnection: x, HasKey: x.APIKeyEnc != "", Models: []models.LLMModel{}}
		for _, m := range ms {
			if m.ConnectionID == x.ID {
				e.Models = append(e.Models, m)
			}
		}
		out = append(out, e)
	}
	return c.JSON(out)
}

// apiAdminConnectionCreate adds a connection: its models are listed from
// its server (a refusal is shown as the server said it), its key sealed.
func (h *Handlers) apiAdminConnectionCreate(c *fiber.Ctx) error {
	var p struct {
		Name    string `json:"name"`
		Kind    string `json:"kind"`
		BaseURL string `json:"base_url"`
		APIKey  string `json:"api_key"`
	}
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	p.Name, p.BaseURL = strings.TrimSpace(p.Name), strings.TrimSpace(p.BaseURL)
	if p.Name == "" || len(p.Name) > 100 {
		return fiber.NewError(fiber.StatusBadRequest, "name is required (at most 100 characters)")
	}
	if p.Kind != models.KindOpenAI && p.Kind != models.KindAnthropic {
		return fiber.NewError(fiber.StatusBadRequest, `kind must be "openai" or "anthropic"`)
	}
	if !strings.HasPrefix(p.BaseURL, "http://") && !strings.HasPrefix(p.BaseURL, "https://") {
		return fiber.NewError(fiber.StatusBadRequest, "base_url must be an http:// or https:// URL")
	}
	list, err := agents.ListModels(c.UserContext(), p.Kind, p.BaseURL, p.APIKey)
	if err != nil {
		return err
	}
	cat := h.agents.Catalog()
	if cat == nil {
		return fiber.NewError(fiber.StatusConflict, "this server has no model catalog")
	}
	sealed, err := cat.SealKey(p.APIKey)
	if err != nil {
		return err
	}
	conn := &models.LLMConnection{Name: p.Name, Kind: p.Kind, BaseURL: p.BaseURL, APIKeyEnc: sealed}
	if err := h.store.CreateConnection(c.UserContext(), conn, list); err != nil {
		return err
	}
	cat.Forget()
	h.log.Info("model connection added", "connection", conn.ID, "name", conn.Name, "kind", conn.Kind, "models", len(list))
	return c.Status(fiber.StatusCreated).JSON(conn)
}

// apiAdminConnectionDelete removes a connection and its models.
func (h *Handlers) apiAdminConnectionDelete(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.DeleteConnection(c.UserContext(), id); err != nil {
		return err
	}
	if cat := h.agents.Catalog(); cat != nil {
		cat.Forget()
	}
	return c.JSON(fiber.Map{"message": fmt.Sprintf("Connection %d deleted", id)})
}

// apiAdminModelUpdate enables, renames, prices or makes default a model.
func (h *Handlers) apiAdminModelUpdate(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p struct {
		Enabled     *bool    `json:"enabled"`
		Name        *string  `json:"name"`
		InputPrice  *float64 `json:"input_price"`
		OutputPrice *float64 `json:"output_price"`
		Default     *bool    `json:"default"`
	}
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	if p.Name != nil && (strings.TrimSpace(*p.Name) == "" || len(*p.Name) > 200) {
		return fiber.NewError(fiber.StatusBadRequest, "name must be 1 to 200 characters")
	}
	if p.InputPrice != nil && *p.InputPrice < 0 || p.OutputPrice != nil && *p.OutputPrice < 0 {
		return fiber.NewError(fiber.StatusBadRequest, "prices cannot be negative")
	}
	m, err := h.store.UpdateLLMModel(c.UserContext(), id, models.ModelPatch{
		Enabled: p.Enabled, Name: p.Name, InputPrice: p.InputPrice, OutputPrice: p.OutputPrice, Default: p.Default})
	if err != nil {
		return err
	}
	if cat := h.agents.Catalog(); cat != nil {
		cat.Forget()
	}
	return c.JSON(m)
}

// apiAdminQuotas sets the default token budget, or one person's override.
func (h *Handlers) apiAdminQuotas(c *fiber.Ctx) error {
	var p struct {
		DailyTokens   int64  `json:"daily_tokens"`
		MonthlyTokens int64  `json:"monthly_tokens"`
		UserID        *int64 `json:"user_id"`
	}
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	if p.DailyTokens < 0 || p.MonthlyTokens < 0 {
		return fiber.NewError(fiber.StatusBadRequest, "budgets cannot be negative (0: no limit)")
	}
	ctx, subject := c.UserContext(), models.BudgetDefault
	if p.UserID != nil {
		if _, err := h.store.UserByID(ctx, *p.UserID); err != nil {
			return err
		}
		subject = models.BudgetOverride(*p.UserID)
	}
	if err := h.store.SetBudget(ctx, subject, p.UserID, p.DailyTokens, p.MonthlyTokens); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"daily_tokens": p.DailyTokens, "monthly_tokens": p.MonthlyTokens, "user_id": p.UserID})
}
