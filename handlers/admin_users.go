package handlers

import (
	"net/url"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/accounts"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// adminUsers lists the accounts with what each stores, a page at a time
// (keyset on the name: ?after= the last name of the page before).
func (h *Handlers) adminUsers(c *fiber.Ctx) error {
	after := c.Query("after") // the last name of the page before
	if utf8.RuneCountInString(after) > maxUsername {
		return fiber.NewError(fiber.StatusBadRequest, "after must be a user name")
	}
	rows, more, err := h.store.AdminListUsers(c.UserContext(), after, adminUsersListed)
	if err != nil {
		return err
	}
	p := views.AdminUsersScreen{AdminChrome: h.adminChrome(c, "Users", views.AdminUsersSection), Paged: after != ""}
	for i := range rows {
		p.Users = append(p.Users, h.adminUserItem(c, &rows[i]))
	}
	if more {
		p.NextURL = paths.WithQuery(paths.AdminUsers, url.Values{"after": {rows[len(rows)-1].Username}})
	}
	return render(c, fiber.StatusOK, views.AdminUsers(p))
}

// adminUsersListed is how many accounts one page of the list shows.
const adminUsersListed = 100

// adminUserItem maps an account and its counts to its row.
func (h *Handlers) adminUserItem(c *fiber.Ctx, u *models.AdminUserRow) views.AdminUserItem {
	it := views.AdminUserItem{
		ID: u.ID, Name: u.Username, IsAdmin: u.IsAdmin, Disabled: u.Disabled,
		Self: u.ID == currentUser(c).ID, Created: u.CreatedAt.Local().Format("Jan 2, 2006"),
		ListURL: paths.AdminExchangesOf(u.ID), LastActive: "never",
		CSRF: h.csrfToken(c), MinPassword: accounts.MinPassword,
	}
	it.Exchanges, it.Messages, it.APIKeys = u.Exchanges, u.Messages, u.APIKeys
	if u.LastActive != nil {
		it.LastActive = views.RelativeTime(*u.LastActive, time.Now())
	}
	return it
}
