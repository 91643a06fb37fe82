package handlers

import (
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/views"
)

// adminUsers lists every account with what it stores.
func (h *Handlers) adminUsers(c *fiber.Ctx) error {
	rows, err := h.store.AdminListUsers(c.UserContext())
	if err != nil {
		return err
	}
	p := views.AdminUsersPage{AdminChrome: h.adminChrome(c, "Users", views.AdminUsersSection)}
	for i := range rows {
		p.Users = append(p.Users, h.adminUserItem(c, &rows[i]))
	}
	return render(c, fiber.StatusOK, views.AdminUsers(p))
}

// adminUserItem maps an account and its counts to its row.
func (h *Handlers) adminUserItem(c *fiber.Ctx, u *models.AdminUserRow) views.AdminUserItem {
	it := views.AdminUserItem{
		ID: u.ID, Name: u.Username, IsAdmin: u.IsAdmin, Disabled: u.Disabled,
		Self: u.ID == currentUser(c).ID, Created: u.CreatedAt.Local().Format("Jan 2, 2006"),
		ListURL: "/admin/exchanges?user=" + strconv.FormatInt(u.ID, 10), LastActive: "never",
		CSRF: h.csrfToken(c), MinPassword: minPassword,
	}
	it.Exchanges, it.Messages, it.APIKeys = u.Exchanges, u.Messages, u.APIKeys
	if u.LastActive != nil {
		it.LastActive = views.RelativeTime(*u.LastActive, time.Now())
	}
	return it
}
