package handlers

import (
	"context"
	"fmt"

	"github.com/gofiber/fiber/v2"

	"palaver/accounts"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// adminUserSwitch is one of the account's switches in the admin list
// (promote, demote, disable, enable): a confirmation first where the
// change is heavy, one flag set through the store, the account's row again.
type adminUserSwitch struct {
	path func(userID int64) string // the route, which a confirmation posts to
	// ask is the confirmation to show first (nil: none); self says the
	// administrator acts on their own account.
	ask func(h *Handlers, c *fiber.Ctx, id int64, self bool) (*adminQuestion, error)
	set func(h *Handlers, ctx context.Context, actorID, id int64) (*models.User, error)
	// done says what happened to the account named.
	done func(name string) string
	// selfLeaves: the change on one's own account closes the admin area, so
	// the answer is the chat rather than the row.
	selfLeaves bool
}

// adminQuestion is what a confirmation screen asks (adminConfirm).
type adminQuestion struct{ heading, message, confirm string }

// The switches. A demotion is never the last administrator's (the store
// refuses it), and stepping down oneself is confirmed first. Disabling
// ends the account's sessions and stops its API keys, once confirmed.
var (
	adminPromote = adminUserSwitch{
		path: paths.AdminUserPromote,
		set: func(h *Handlers, ctx context.Context, actorID, id int64) (*models.User, error) {
			return h.store.AdminSetAdmin(ctx, actorID, id, true)
		},
		done: func(name string) string { return name + " is now an administrator." },
	}
	adminDemote = adminUserSwitch{
		path: paths.AdminUserDemote,
		ask: func(_ *Handlers, _ *fiber.Ctx, _ int64, self bool) (*adminQuestion, error) {
			if !self {
				return nil, nil
			}
			return &adminQuestion{"Give up your administrator rights?",
				"You will lose access to the admin area at once. Another administrator can give it back.",
				"Give up admin rights"}, nil
		},
		set: func(h *Handlers, ctx context.Context, actorID, id int64) (*models.User, error) {
			return h.store.AdminSetAdmin(ctx, actorID, id, false)
		},
		done:       func(name string) string { return name + " is no longer an administrator." },
		selfLeaves: true,
	}
	adminDisable = adminUserSwitch{
		path: paths.AdminUserDisable,
		ask: func(h *Handlers, c *fiber.Ctx, id int64, _ bool) (*adminQuestion, error) {
			target, err := h.store.AdminUser(c.UserContext(), id)
			if err != nil {
				return nil, err
			}
			return &adminQuestion{"Disable " + target.Username + "?",
				"Their sessions end at once and their API keys stop working until the account is enabled again; they will have to sign in again.",
				"Disable"}, nil
		},
		set: func(h *Handlers, ctx context.Context, actorID, id int64) (*models.User, error) {
			return h.store.AdminSetDisabled(ctx, actorID, id, true)
		},
		done: func(name string) string {
			return name + " is disabled: their sessions ended and their API keys are refused."
		},
	}
	adminEnable = adminUserSwitch{
		path: paths.AdminUserEnable,
		set: func(h *Handlers, ctx context.Context, actorID, id int64) (*models.User, error) {
			return h.store.AdminSetDisabled(ctx, actorID, id, false)
		},
		done: func(name string) string { return name + " can sign in again." },
	}
)

// adminUserSwitched is the handler of one switch.
func (h *Handlers) adminUserSwitched(sw adminUserSwitch) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id, err := adminIDParam(c)
		if err != nil {
			return err
		}
		self := id == currentUser(c).ID
		if sw.ask != nil && !confirmed(c) {
			q, err := sw.ask(h, c, id, self)
			if err != nil {
				return err
			}
			if q != nil {
				return h.adminConfirm(c, q.heading, q.message, sw.path(id), q.confirm)
			}
		}
		u, err := sw.set(h, c.UserContext(), currentUser(c).ID, id)
		if err != nil {
			return h.adminRefuse(c, err, paths.AdminUsers)
		}
		if self && sw.selfLeaves {
			return redirect(c, paths.ChatHome) // the admin area is closed to them now
		}
		return h.adminUserDone(c, u.ID, sw.done(u.Username))
	}
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
		return h.adminRefuse(c, refuse(fiber.StatusUnprocessableEntity, err.Error()), paths.AdminUsers)
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

// adminRefuse refuses an admin action the store or the input refused (the
// last admin, one's own account, a bad value): htmx gets the alert, a plain
// form goes back with the reason as the flash. Any other err is returned as
// it is.
func (h *Handlers) adminRefuse(c *fiber.Ctx, err error, back string) error {
	r := refusalOf(err, fiber.StatusConflict, fiber.StatusUnprocessableEntity)
	if r == nil {
		return err
	}
	return r.onPage(func(r *Refusal) error {
		h.adminFlash(c, "!"+r.Reason)
		return redirect(c, adminBackTo(c, back))
	})
}

// adminConfirm asks before a destructive admin action, for browsers without
// JavaScript (htmx asks with the browser's dialog and sends confirmed=1).
func (h *Handlers) adminConfirm(c *fiber.Ctx, heading, message, action, confirm string) error {
	return h.adminConfirmAt(c, heading, message, action, confirm, adminBackTo(c, paths.AdminUsers))
}
