package handlers

import (
	"fmt"

	"github.com/gofiber/fiber/v2"
)

// apiMaxBatchDelete bounds the ids of one batch delete: it keeps the query under
// the database's parameter limits whatever the body size allows.
const apiMaxBatchDelete = 1000

// apiBatchDeletePayload is the body of PUT /api/chat/exchanges/batch/delete.
type apiBatchDeletePayload struct {
	IDs *[]int64 `json:"ids"` // nil: missing or null, which is an error
}

// apiDeleteExchange deletes one of the user's exchanges with its log.
func (h *Handlers) apiDeleteExchange(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.store.DeleteExchange(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	return c.JSON(apiNotice{Message: "Deleted"})
}

// apiBatchDelete deletes those of the listed exchanges that are the user's;
// other ids are skipped, not refused.
func (h *Handlers) apiBatchDelete(c *fiber.Ctx) error {
	var p apiBatchDeletePayload
	if err := apiDecode(c, &p); err != nil {
		return err
	}
	if p.IDs == nil {
		return fiber.NewError(fiber.StatusBadRequest, `"ids" must be a list of integers`)
	}
	if len(*p.IDs) > apiMaxBatchDelete {
		return fiber.NewError(fiber.StatusBadRequest, fmt.Sprintf("At most %d ids per call", apiMaxBatchDelete))
	}
	n, err := h.store.DeleteExchanges(c.UserContext(), currentUser(c).ID, *p.IDs)
	if err != nil {
		return err
	}
	return c.JSON(apiNotice{Message: fmt.Sprintf("Deleted %d exchanges", n)})
}
