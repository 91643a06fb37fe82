package handlers

import (
	"fmt"
	"math"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
)

// apiMessagesMax bounds a window of a log (?limit=).
const apiMessagesMax = 1000

// apiMessages returns an exchange's log in order, error rows included (the
// whole log, as Galaxy answers); with ?at=SEQ, the log as it stood when
// entry SEQ was written; with ?limit=N (and ?before_seq=SEQ), a window for
// clients that read a long log in parts: the last N entries before SEQ (the
// end of the log without it) and the error rows among them. The next window
// back asks before the first entry's seq.
func (h *Handlers) apiMessages(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	at, err := apiQueryInt(c, "at", 0, math.MaxInt64, "a seq: an integer of at least 0")
	if err != nil {
		return err
	}
	limit, err := apiQueryInt(c, "limit", 1, apiMessagesMax, fmt.Sprintf("an integer from 1 to %d", apiMessagesMax))
	if err != nil {
		return err
	}
	before, err := apiQueryInt(c, "before_seq", 0, math.MaxInt64, "a seq: an integer of at least 0")
	if err != nil {
		return err
	}
	if at != nil && (limit != nil || before != nil) {
		return fiber.NewError(fiber.StatusBadRequest, "at shows the log as it was; it does not page: leave out limit and before_seq")
	}
	var msgs []models.Message
	if limit != nil || before != nil {
		n := apiMessagesMax
		if limit != nil {
			n = int(*limit)
		}
		msgs, err = h.store.MessagesBefore(c.UserContext(), currentUser(c).ID, id, before, n)
	} else {
		msgs, err = h.store.Messages(c.UserContext(), currentUser(c).ID, id, at)
	}
	if err != nil {
		return err
	}
	items := make([]apiMessage, len(msgs)) // never null: [] when empty
	states := models.ToolCallState(msgs)   // a call's state as of the latest entry about it
	for i := range msgs {
		items[i] = newAPIMessage(&msgs[i])
		if m := &msgs[i]; m.Role == models.RoleToolCall && m.Tool != nil {
			items[i].AgentResponse = toolMetadata(m, states[m.Tool.CallID])
		}
	}
	return c.JSON(items)
}
