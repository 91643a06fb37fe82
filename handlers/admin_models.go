package handlers

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// adminModels shows the connections and their models.
func (h *Handlers) adminModels(c *fiber.Ctx) error {
	p, err := h.screens.AdminModels(c.UserContext(), h.adminChrome(c, "Models", views.AdminModelsSection))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.AdminModels(p))
}

// adminUsage shows a month's usage per person, model and day.
func (h *Handlers) adminUsage(c *fiber.Ctx) error {
	month := c.Query("month", time.Now().UTC().Format("2006-01"))
	if !monthRE.MatchString(month) {
		return refuse(fiber.StatusBadRequest, "month must be YYYY-MM")
	}
	p, err := h.screens.AdminUsage(c.UserContext(), h.adminChrome(c, "Usage", views.AdminUsageSection), month)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.AdminUsage(p))
}

// connectionForm reads and checks a connection's form; kind is read only
// when the connection is new.
func connectionForm(c *fiber.Ctx, isNew bool) (name, kind, baseURL, key string, err error) {
	name, baseURL, key = strings.TrimSpace(c.FormValue("name")), strings.TrimSpace(c.FormValue("base_url")), c.FormValue("api_key")
	switch {
	case name == "" || len(name) > 100:
		return "", "", "", "", refuse(fiber.StatusUnprocessableEntity, "A connection needs a name of at most 100 characters.")
	case !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://"):
		return "", "", "", "", refuse(fiber.StatusUnprocessableEntity, "The base URL must be an http:// or https:// URL.")
	}
	if isNew {
		kind = c.FormValue("kind")
		if kind != models.KindOpenAI && kind != models.KindAnthropic {
			return "", "", "", "", refuse(fiber.StatusUnprocessableEntity, `The kind must be "openai" or "anthropic".`)
		}
	}
	return name, kind, baseURL, key, nil
}

// inputRefusal turns an agents.InputError (a server's refusal when its
// models are listed) into a refusal the admin page shows.
func inputRefusal(err error) error {
	var in *agents.InputError
	if errors.As(err, &in) {
		return refuse(fiber.StatusBadRequest, in.Msg).because(err)
	}
	return err
}

// adminConnectionCreate adds a connection once its server has listed its
// models (a refusal is shown as the server said it); the key is sealed.
func (h *Handlers) adminConnectionCreate(c *fiber.Ctx) error {
	name, kind, baseURL, key, err := connectionForm(c, true)
	if err != nil {
		return h.adminRefuse(c, err, paths.AdminModels)
	}
	cat := h.agents.Catalog()
	if cat == nil {
		return h.adminRefuse(c, refuse(fiber.StatusConflict, "This server has no model catalog."), paths.AdminModels)
	}
	list, err := agents.ListModels(c.UserContext(), kind, baseURL, key)
	if err != nil {
		return h.adminRefuse(c, inputRefusal(err), paths.AdminModels)
	}
	sealed, err := cat.SealKey(key)
	if err != nil {
		return err
	}
	conn := &models.LLMConnection{Name: name, Kind: kind, BaseURL: baseURL, APIKeyEnc: sealed}
	if err := h.store.CreateConnection(c.UserContext(), conn, list); err != nil {
		return h.adminRefuse(c, err, paths.AdminModels)
	}
	cat.Forget()
	h.log.Info("model connection added", "connection", conn.ID, "name", conn.Name, "kind", conn.Kind, "models", len(list))
	return h.adminDone(c, paths.AdminModels, fmt.Sprintf("Connection %s added with %s; enable the ones people may pick.",
		name, views.Plural(int64(len(list)), "model", "models")), nil)
}

// adminConnectionUpdate renames a connection, moves it or replaces its key
// (an empty key field keeps the stored one).
func (h *Handlers) adminConnectionUpdate(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	if _, err := h.store.Connection(c.UserContext(), id); err != nil {
		return err
	}
	name, _, baseURL, key, err := connectionForm(c, false)
	if err != nil {
		return h.adminRefuse(c, err, paths.AdminModels)
	}
	patch := models.ConnectionPatch{Name: name, BaseURL: baseURL}
	if cat := h.agents.Catalog(); cat != nil && key != "" {
		sealed, err := cat.SealKey(key)
		if err != nil {
			return err
		}
		patch.APIKeyEnc = &sealed
	}
	if err := h.store.UpdateConnection(c.UserContext(), id, patch); err != nil {
		return h.adminRefuse(c, err, paths.AdminModels)
	}
	h.forgetCatalog()
	return h.adminDone(c, paths.AdminModels, "Connection "+name+" saved.", nil)
}

// adminConnectionTest lists a connection's models from its server now,
// adding the new ones (disabled); the server's refusal is shown as it said.
func (h *Handlers) adminConnectionTest(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	conn, err := h.store.Connection(c.UserContext(), id)
	if err != nil {
		return err
	}
	cat := h.agents.Catalog()
	if cat == nil {
		return h.adminRefuse(c, refuse(fiber.StatusConflict, "This server has no model catalog."), paths.AdminModels)
	}
	list, err := cat.ListStored(c.UserContext(), *conn)
	if err != nil {
		return h.adminRefuse(c, inputRefusal(err), paths.AdminModels)
	}
	added, err := h.store.AddListedModels(c.UserContext(), id, list)
	if err != nil {
		return err
	}
	cat.Forget()
	return h.adminDone(c, paths.AdminModels, fmt.Sprintf("Connection %s answered: it lists %s (%d new).",
		conn.Name, views.Plural(int64(len(list)), "model", "models"), added), nil)
}

// adminConnectionDelete removes a connection and its models.
func (h *Handlers) adminConnectionDelete(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	conn, err := h.store.Connection(c.UserContext(), id)
	if err != nil {
		return err
	}
	if err := h.store.DeleteConnection(c.UserContext(), id); err != nil {
		return h.adminRefuse(c, err, paths.AdminModels)
	}
	h.forgetCatalog()
	return h.adminDone(c, paths.AdminModels, "Connection "+conn.Name+" deleted with its models.", nil)
}

// adminModelUpdate saves a model's row: display name, prices, enabled and
// default. An empty price field means unpriced (cost 0).
func (h *Handlers) adminModelUpdate(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(c.FormValue("name"))
	if name == "" || len(name) > 200 {
		return h.adminRefuse(c, refuse(fiber.StatusUnprocessableEntity, "A model's name must be 1 to 200 characters."), paths.AdminModels)
	}
	in, okIn := formPrice(c.FormValue("input_price"))
	out, okOut := formPrice(c.FormValue("output_price"))
	if !okIn || !okOut {
		return h.adminRefuse(c, refuse(fiber.StatusUnprocessableEntity, "A price is a number of dollars per million tokens, 0 or more, or empty."), paths.AdminModels)
	}
	enabled, isDefault := c.FormValue("enabled") == "1", c.FormValue("default") == "1"
	m, err := h.store.UpdateLLMModel(c.UserContext(), id, models.ModelPatch{Enabled: &enabled, Name: &name,
		InputPrice: in, OutputPrice: out, ClearPrices: true, Default: &isDefault})
	if err != nil {
		return err
	}
	h.forgetCatalog()
	return h.adminDone(c, paths.AdminModels, "Model "+m.Name+" saved.", nil)
}

// formPrice reads a price field: empty is no price; otherwise a number of
// at least 0.
func formPrice(v string) (*float64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil, true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > 1e9 {
		return nil, false
	}
	return &f, true
}

func (h *Handlers) forgetCatalog() {
	if cat := h.agents.Catalog(); cat != nil {
		cat.Forget()
	}
}
