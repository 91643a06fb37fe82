package handlers

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
)

// apiToolResultsPayload is the body of POST …/tool_results.
type apiToolResultsPayload struct {
	Results []struct {
		CallID   string          `json:"call_id"`
		Approved *bool           `json:"approved"`
		Output   json.RawMessage `json:"output"`
		Error    *string         `json:"error"`
	} `json:"results"`
}

// apiToolResults answers waiting tool calls of an exchange; once none waits
// the turn resumes here and the answer is POST /api/chat's.
func (h *Handlers) apiToolResults(c *fiber.Ctx) error {
	start := time.Now()
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	var p apiToolResultsPayload
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	results := make([]agents.ToolResult, 0, len(p.Results))
	for i, r := range p.Results {
		if r.CallID == "" {
			return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("results[%d].call_id is required", i))
		}
		res := agents.ToolResult{CallID: r.CallID, Approved: r.Approved, Error: r.Error}
		if len(r.Output) > 0 && string(r.Output) != "null" {
			if err := json.Unmarshal(r.Output, &res.Output); err != nil {
				return apiBadJSON(err)
			}
			if _, ok := res.Output.(string); !ok {
				if _, ok := res.Output.(map[string]any); !ok {
					return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("results[%d].output must be a string or an object", i))
				}
			}
		}
		results = append(results, res)
	}
	if len(results) == 0 {
		return fiber.NewError(fiber.StatusBadRequest, "results must list at least one answer")
	}
	turn, err := h.agents.AnswerTools(c.UserContext(), currentUser(c).ID, id, results)
	if err != nil {
		return err
	}
	return h.apiTurnAnswer(c, turn, start)
}

// apiPending lists the calls waiting in an exchange ([] when none).
func (h *Handlers) apiPending(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	pending, err := h.agents.PendingCalls(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	return c.JSON(pending)
}

// apiToolPermission is one tool as the account's permissions show it.
type apiToolPermission struct {
	Tool          string `json:"tool"`
	Tier          string `json:"tier"`
	Description   string `json:"description"`
	DefaultPolicy string `json:"default_policy"`
	Policy        string `json:"policy"`
}

// apiAccountTools lists every tool with the user's policy for it.
func (h *Handlers) apiAccountTools(c *fiber.Ctx) error {
	list, err := h.toolPermissions(c)
	if err != nil {
		return err
	}
	return c.JSON(list)
}

// apiAccountToolsUpdate sets policies: {TOOL: "auto" | "confirm" | "never"}.
func (h *Handlers) apiAccountToolsUpdate(c *fiber.Ctx) error {
	var p map[string]string
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	if err := h.setToolPolicies(c, p); err != nil {
		return err
	}
	return h.apiAccountTools(c)
}

// toolPermissions lists the registry's tools with the user's choices.
func (h *Handlers) toolPermissions(c *fiber.Ctx) ([]apiToolPermission, error) {
	chosen, err := h.store.ToolPolicies(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return nil, err
	}
	tools := h.agents.Tools().All()
	out := make([]apiToolPermission, 0, len(tools))
	for _, t := range tools {
		p := apiToolPermission{Tool: t.Name, Tier: t.Tier, Description: t.Description, DefaultPolicy: t.Policy, Policy: t.Policy}
		if v, ok := chosen[t.Name]; ok {
			p.Policy = v
		}
		out = append(out, p)
	}
	return out, nil
}

// setToolPolicies checks and records policies; an unknown tool or policy
// is a 400 and nothing is recorded.
func (h *Handlers) setToolPolicies(c *fiber.Ctx, p map[string]string) error {
	for tool, policy := range p {
		if _, ok := h.agents.Tools().Lookup(tool); !ok {
			return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("There is no tool named %q", clipText(tool, 80)))
		}
		switch policy {
		case models.ToolAuto, models.ToolConfirm, models.ToolNever:
		default:
			return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("The policy of %s must be auto, confirm or never", tool))
		}
	}
	return h.store.SetToolPolicies(c.UserContext(), currentUser(c).ID, p)
}

// clipText cuts s to n characters for a message.
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// accountTools saves the account page's tool permissions (one choice per
// tool) and goes back to the page.
func (h *Handlers) accountTools(c *fiber.Ctx) error {
	p := map[string]string{}
	for _, t := range h.agents.Tools().All() {
		if v := c.FormValue(t.Name); v != "" {
			p[t.Name] = v
		}
	}
	if err := h.setToolPolicies(c, p); err != nil {
		return err
	}
	return h.accountDone(c, "Tool permissions saved.")
}
