package handlers

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/paths"
)

// chatTools answers a waiting tool call from its card: decision approve or
// deny, or the editor's text (content, and the selection when the script
// sends it) for read_editor. htmx tabs follow the resumed turn live (the
// card leaves every tab); a plain form waits for it and goes back.
func (h *Handlers) chatTools(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	ex, err := h.store.Exchange(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	answer, err := toolFormAnswer(c)
	if err != nil {
		return err
	}
	turn, err := h.agents.AnswerTools(c.UserContext(), currentUser(c).ID, id, []agents.ToolResult{answer})
	if err != nil {
		return err
	}
	if _, err := h.awaitTurn(c, turn); err != nil {
		return err
	}
	back := paths.Chat(id)
	if ex.Scope == models.ScopePage && ex.PageID != nil {
		back = paths.PageEdit(*ex.PageID)
	}
	return done(c, chatBackTo(c, back), unchanged(c))
}

// toolFormAnswer reads an approval card's form.
func toolFormAnswer(c *fiber.Ctx) (agents.ToolResult, error) {
	r := agents.ToolResult{CallID: c.FormValue("call_id")}
	if r.CallID == "" {
		return r, fiber.NewError(fiber.StatusBadRequest, "Which tool call? The form lacks its call_id.")
	}
	switch d := c.FormValue("decision"); d {
	case "approve", "deny":
		ok := d == "approve"
		r.Approved = &ok
		return r, nil
	case "":
	default:
		return r, fiber.NewError(fiber.StatusBadRequest, "decision must be approve or deny")
	}
	if !c.Request().PostArgs().Has("content") {
		return r, fiber.NewError(fiber.StatusBadRequest, "Send a decision (approve or deny) or the editor's content.")
	}
	out := map[string]any{"content": c.FormValue("content")}
	for _, k := range []string{"selection_start", "selection_end"} {
		if v := c.FormValue(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return r, fiber.NewError(fiber.StatusBadRequest, k+" must be a number of at least 0")
			}
			out[k] = n
		}
	}
	r.Output = out
	return r, nil
}
