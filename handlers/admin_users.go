package handlers

import (
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/views"
)

// adminUsers lists the accounts with what each stores, a batch at a time
// (keyset on the name: ?after= the last name of the batch before).
func (h *Handlers) adminUsers(c *fiber.Ctx) error {
	after := c.Query("after") // the last name of the batch before
	if utf8.RuneCountInString(after) > maxUsername {
		return fiber.NewError(fiber.StatusBadRequest, "after must be a user name")
	}
	s, err := h.screens.AdminUsers(c.UserContext(), h.viewer(c), h.adminChrome(c, "Users", views.AdminUsersSection), after)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.AdminUsers(s))
}
