package handlers

import (
	"fmt"

	"github.com/gofiber/fiber/v2"

	"palaver/accounts"
	"palaver/paths"
	"palaver/views"
)

// adminUserPromote makes an account an administrator.
func (h *Handlers) adminUserPromote(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	u, err := h.store.AdminSetAdmin(c.UserContext(), currentUser(c).ID, id, true)
	if err != nil {
		return h.adminRefuse(c, err, paths.AdminUsers)
	}
	return h.adminUserDone(c, u.ID, u.Username+" is now an administrator.")
}

// adminUserDemote revokes an account's administrator rights; never the last
// administrator's. Stepping down oneself is confirmed first.
func (h *Handlers) adminUserDemote(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	self := id == currentUser(c).ID
	if self && !confirmed(c) {
		return h.adminConfirm(c, "Give up your administrator rights?",
			"You will lose access to the admin area at once. Another administrator can give it back.",
			paths.AdminUserDemote(id), "Give up admin rights")
	}
	u, err := h.store.AdminSetAdmin(c.UserContext(), currentUser(c).ID, id, false)
	if err != nil {
		return h.adminRefuse(c, err, paths.AdminUsers)
	}
	if self {
		return redirect(c, paths.ChatHome) // the admin area is closed to them now
	}
	return h.adminUserDone(c, u.ID, u.Username+" is no longer an administrator.")
}

// adminUserDisable disables an account once confirmed: its sessions end and
// its API keys stop working.
func (h *Handlers) adminUserDisable(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	if !confirmed(c) {
		target, err := h.store.AdminUser(c.UserContext(), id)
		if err != nil {
			return err
		}
		return h.adminConfirm(c, "Disable "+target.Username+"?",
			"Their sessions end at once and their API keys stop working until the account is enabled again; they will have to sign in again.",
			paths.AdminUserDisable(id), "Disable")
	}
	u, err := h.store.AdminSetDisabled(c.UserContext(), currentUser(c).ID, id, true)
	if err != nil {
		return h.adminRefuse(c, err, paths.AdminUsers)
	}
	return h.adminUserDone(c, u.ID, u.Username+" is disabled: their sessions ended and their API keys are refused.")
}

// adminUserEnable lets a disabled account sign in again.
func (h *Handlers) adminUserEnable(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	u, err := h.store.AdminSetDisabled(c.UserContext(), currentUser(c).ID, id, false)
	if err != nil {
		return h.adminRefuse(c, err, paths.AdminUsers)
	}
	return h.adminUserDone(c, u.ID, u.Username+" can sign in again.")
}

// adminUserPassword sets a new password for an account and ends its
// sessions (an administrator resetting their own stays signed in here); with
// the revoke_keys box ticked, its API keys go too, in the same transaction.
func (h *Handlers) adminUserPassword(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	password := c.FormValue("password")
	if err := accounts.ValidatePassword(password); err != nil {
		return h.adminRefuse(c, fiber.NewError(fiber.StatusUnprocessableEntity, err.Error()), paths.AdminUsers)
	}
	hash, err := accounts.HashPassword(password)
	if err != nil {
		return err
	}
	revokeKeys := c.FormValue("revoke_keys") == "1"
	u, revoked, err := h.store.AdminSetPassword(c.UserContext(), currentUser(c).ID, id, hash, revokeKeys)
	if err != nil {
		return h.adminRefuse(c, err, paths.AdminUsers)
	}
	if u.ID == currentUser(c).ID {
		if err := h.signIn(c, u); err != nil {
			return err
		}
	}
	msg := "New password set for " + u.Username + "; their sessions ended."
	if revokeKeys {
		msg = fmt.Sprintf("New password set for %s; their sessions ended and %s revoked.", u.Username,
			views.Plural(revoked, "API key was", "API keys were"))
	}
	return h.adminUserDone(c, u.ID, msg)
}

// adminUserDelete deletes an account and everything it owns, once
// confirmed, and says what went.
func (h *Handlers) adminUserDelete(c *fiber.Ctx) error {
	id, err := adminIDParam(c)
	if err != nil {
		return err
	}
	if !confirmed(c) {
		target, err := h.store.AdminUser(c.UserContext(), id)
		if err != nil {
			return err
		}
		return h.adminConfirm(c, "Delete "+target.Username+"?",
			fmt.Sprintf("The account and everything it owns will be deleted: %s, %s, its pages and API keys. The audit log keeps its name. This cannot be undone.",
				views.Plural(target.Exchanges, "conversation", "conversations"), views.Plural(target.Messages, "message", "messages")),
			paths.AdminUserDelete(id), "Delete account")
	}
	d, err := h.store.AdminDeleteUser(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return h.adminRefuse(c, err, paths.AdminUsers)
	}
	return h.adminDone(c, paths.AdminUsers, fmt.Sprintf("Deleted %s with %s, %s, %s and %s.", d.Username,
		views.Plural(d.Exchanges, "conversation", "conversations"), views.Plural(d.Messages, "message", "messages"),
		views.Plural(d.Pages, "page", "pages"), views.Plural(d.APIKeys, "API key", "API keys")), nil)
}

// adminUserDone answers a user action: htmx gets the account's row again;
// a plain form goes back to the list with a message.
func (h *Handlers) adminUserDone(c *fiber.Ctx, id int64, msg string) error {
	return h.adminDone(c, adminBackTo(c, paths.AdminUsers), msg, func() error {
		row, err := h.screens.AdminUserRow(c.UserContext(), h.viewer(c), id)
		if err != nil {
			return err
		}
		return render(c, fiber.StatusOK, views.AdminUserRow(row))
	})
}

// adminRefuse answers an admin action the store or the input refused (the
// last admin, one's own account, a bad value): htmx gets the alert, a plain
// form goes back with the reason. Anything else is an error as usual.
func (h *Handlers) adminRefuse(c *fiber.Ctx, err error, back string) error {
	status, msg := classify(err)
	if status != fiber.StatusConflict && status != fiber.StatusUnprocessableEntity {
		return err
	}
	return h.adminDone(c, adminBackTo(c, back), "!"+msg, func() error { return err })
}

// adminConfirm asks before a destructive admin action, for browsers without
// JavaScript (htmx asks with the browser's dialog and sends confirmed=1).
func (h *Handlers) adminConfirm(c *fiber.Ctx, heading, message, action, confirm string) error {
	return h.adminConfirmAt(c, heading, message, action, confirm, adminBackTo(c, paths.AdminUsers))
}
