package handlers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/accounts"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// sessAccountFlash holds the message an account action leaves for /account.
const sessAccountFlash = "account_flash"

// sessDeleteChecked is when the password was last checked for deleting the
// account (Unix seconds): the confirmation page's form needs no password
// again within deleteCheckedFor.
const (
	sessDeleteChecked = "delete_checked"
	deleteCheckedFor  = 5 * time.Minute
	// An account with no password (it signs in through a provider) proves
	// itself by a sign-in this recent, and its name typed out.
	sessSignedInAt = "signed_in_at"
	freshSignInFor = 10 * time.Minute
)

// accountScreen is the account page's model with the user's keys.
func (h *Handlers) accountScreen(c *fiber.Ctx) (views.AccountScreen, error) {
	p := views.AccountScreen{Base: h.base(c, "Your account", ""), MinPassword: accounts.MinPassword}
	keys, err := h.store.APIKeys(c.UserContext(), currentUser(c).ID)
	if err != nil {
		return p, err
	}
	for _, k := range keys {
		last := "never"
		if k.LastUsedAt != nil {
			last = accountTime(*k.LastUsedAt)
		}
		p.Keys = append(p.Keys, views.AccountKey{ID: k.ID, Name: k.Name, Created: accountTime(k.CreatedAt), LastUsed: last})
	}
	files, err := h.accountFiles(c)
	if err != nil {
		return p, err
	}
	p.Files = files
	if p.Usage, err = h.accountUsage(c); err != nil {
		return p, err
	}
	if p.Memory, err = h.screens.AccountMemory(c.UserContext(), h.viewer(c)); err != nil {
		return p, err
	}
	tools, err := h.toolPermissions(c)
	if err != nil {
		return p, err
	}
	for _, t := range tools {
		p.Tools = append(p.Tools, views.AccountToolRow{Tool: t.Tool, Tier: t.Tier, Description: t.Description, Default: t.DefaultPolicy, Policy: t.Policy})
	}
	p.Shares, err = h.accountShares(c)
	if err != nil {
		return p, err
	}
	return p, h.accountIdentities(c, &p)
}

// accountIdentities fills the account page's single sign-on section.
func (h *Handlers) accountIdentities(c *fiber.Ctx, p *views.AccountScreen) error {
	u := currentUser(c)
	p.NoPassword = u.PasswordHash == ""
	if len(h.cfg.OIDC.Providers) == 0 && !p.NoPassword {
		return nil
	}
	ids, err := h.store.Identities(c.UserContext(), u.ID)
	if err != nil {
		return err
	}
	linked := map[string]bool{}
	for _, id := range ids {
		linked[id.Provider] = true
		p.Identities = append(p.Identities, views.AccountIdentity{ID: id.ID, Provider: id.Provider, Email: id.Email,
			Linked: accountTime(id.CreatedAt)})
	}
	for _, pr := range h.cfg.OIDC.Providers {
		if !linked[pr.Name()] {
			p.LinkProviders = append(p.LinkProviders, pr.Name())
		}
	}
	return nil
}

func accountTime(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04 UTC") }

// account shows /account, with the message the last action left.
func (h *Handlers) account(c *fiber.Ctx) error {
	p, err := h.accountScreen(c)
	if err != nil {
		return err
	}
	p.Notice = h.sessions.PopString(c.UserContext(), sessAccountFlash)
	return render(c, fiber.StatusOK, views.Account(p))
}

// accountRefused refuses an account form: without JavaScript, the account
// page again with the reason (and detail) where set puts them.
func (h *Handlers) accountRefused(c *fiber.Ctx, r *Refusal, set func(p *views.AccountScreen, r *Refusal)) error {
	return r.onPage(func(r *Refusal) error {
		p, err := h.accountScreen(c)
		if err != nil {
			return err
		}
		set(&p, r)
		return render(c, r.Status, views.Account(p))
	})
}

// accountDone goes back to /account with a message.
func (h *Handlers) accountDone(c *fiber.Ctx, msg string) error {
	h.sessions.Put(c.UserContext(), sessAccountFlash, msg)
	return redirect(c, paths.Account)
}

// ownPassword checks the signed-in user's password under the sign-in
// throttle (signInAttempt): a session cannot guess its way to the password
// through this page faster than through the sign-in form. It answers 0 when
// the password is right, else the status and message to show (wrong, or
// 429 with Retry-After once the name has had too many failures).
func (h *Handlers) ownPassword(c *fiber.Ctx, password, wrong string) (int, string, error) {
	_, err := h.signInAttempt(c, currentUser(c).Username, password)
	var wait *throttledError
	switch {
	case errors.As(err, &wait):
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(wait.seconds()))
		return fiber.StatusTooManyRequests, "Too many wrong passwords. Try again " + wait.in() + ".", nil
	case errors.Is(err, errBadCredentials):
		return fiber.StatusUnprocessableEntity, wrong, nil
	case err != nil:
		return 0, "", err
	}
	return 0, "", nil
}

// accountPassword changes the user's own password: the current one is
// required and the new one must follow the rules. The account's other
// sessions end; this one moves to the new epoch and stays signed in.
func (h *Handlers) accountPassword(c *fiber.Ctx) error {
	u := currentUser(c)
	current, password := formValue(c, "current"), formValue(c, "password")
	if status, msg, err := h.ownPassword(c, current, "Your current password is not right; the password was not changed."); err != nil {
		return err
	} else if status != 0 {
		return h.accountRefused(c, refuse(status, msg), func(p *views.AccountScreen, r *Refusal) { p.PasswordError = r.Reason })
	}
	if err := accounts.ValidatePassword(password); err != nil {
		return h.accountRefused(c, refuse(fiber.StatusUnprocessableEntity, err.Error()),
			func(p *views.AccountScreen, r *Refusal) { p.PasswordError = r.Reason })
	}
	hash, err := accounts.HashPassword(password)
	if err != nil {
		return err
	}
	nu, err := h.store.SetOwnPassword(c.UserContext(), u.ID, hash)
	if err != nil {
		return err
	}
	if err := h.signIn(c, nu); err != nil { // a new token, under the new epoch
		return err
	}
	return h.accountDone(c, "Your password is changed. Your other sessions are signed out; this one stays signed in.")
}

// accountKeyCreate makes an API key and shows it once, on the page itself
// (never kept in the session).
func (h *Handlers) accountKeyCreate(c *fiber.Ctx) error {
	name, ok := keyName(formValue(c, "name"))
	if !ok {
		return h.accountRefused(c, refuse(fiber.StatusUnprocessableEntity, fmt.Sprintf("Give the key a name of 1 to %d characters.", maxKeyName)),
			func(p *views.AccountScreen, r *Refusal) { p.KeyName, p.KeyError = name, r.Reason })
	}
	k, key, err := h.createKey(c, name)
	if err != nil {
		return err
	}
	p, err := h.accountScreen(c)
	if err != nil {
		return err
	}
	p.NewKey, p.NewKeyName = key, k.Name
	c.Set(fiber.HeaderCacheControl, "no-store")
	return render(c, fiber.StatusOK, views.Account(p))
}

// accountKeyRevoke revokes one of the user's keys; another user's key is
// not found, exactly like a missing one.
func (h *Handlers) accountKeyRevoke(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if err := h.store.DeleteAPIKey(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	return h.accountDone(c, "The key is revoked: it no longer works.")
}

// accountDelete deletes the user's own account once the password is right
// and the deletion confirmed: first the password (wrong: refused), then a
// page that says what will go (the password is not asked again for a few
// minutes), then everything in one transaction; the user is signed out and
// told what went.
func (h *Handlers) accountDelete(c *fiber.Ctx) error {
	ctx, u := c.UserContext(), currentUser(c)
	checked := h.sessions.GetInt64(ctx, sessDeleteChecked)
	recent := checked != 0 && time.Since(time.Unix(checked, 0)) < deleteCheckedFor
	if !confirmed(c) || !recent {
		if r, err := h.deletionProof(c, u); err != nil {
			return err
		} else if r != nil {
			return h.accountRefused(c, r, func(p *views.AccountScreen, r *Refusal) { p.DeleteError = r.Reason })
		}
	}
	if !confirmed(c) {
		h.sessions.Put(ctx, sessDeleteChecked, time.Now().Unix())
		n, err := h.store.OwnedCounts(ctx, u.ID)
		if err != nil {
			return err
		}
		return render(c, fiber.StatusOK, views.AccountDeleteConfirmScreen(views.AccountDeleteConfirm{
			Base: h.base(c, "Delete your account?", ""), Conversations: n.Conversations, Exchanges: n.Exchanges, Messages: n.Messages, Pages: n.Pages, APIKeys: n.APIKeys,
		}))
	}
	d, err := h.store.DeleteOwnAccount(ctx, u.ID)
	if errors.Is(err, models.ErrLastAdmin) {
		return h.accountRefused(c, refuse(fiber.StatusConflict, "You are the last administrator: make someone else an administrator first. Nothing was deleted.").because(err),
			func(p *views.AccountScreen, r *Refusal) { p.DeleteError = r.Reason })
	}
	if err != nil {
		return err
	}
	if err := h.sessions.Destroy(ctx); err != nil {
		return err
	}
	c.Locals(localUser, nil)
	return render(c, fiber.StatusOK, views.AccountDeletedScreen(views.AccountDeleted{
		Base: h.base(c, "Account deleted", ""), Username: d.Username, Conversations: d.Conversations,
		Exchanges: d.Exchanges, Messages: d.Messages, Pages: d.Pages, APIKeys: d.APIKeys,
	}))
}

// deletionProof checks that whoever asks to delete the account is its
// owner: the password, or for an account without one (it signs in through
// a provider) its name typed out and a sign-in within freshSignInFor. Nil:
// proven.
func (h *Handlers) deletionProof(c *fiber.Ctx, u *models.User) (*Refusal, error) {
	if u.PasswordHash != "" {
		status, msg, err := h.ownPassword(c, formValue(c, "password"), "That is not your password; nothing was deleted.")
		if err != nil || status == 0 {
			return nil, err
		}
		return refuse(status, msg), nil
	}
	if strings.TrimSpace(formValue(c, "username")) != u.Username {
		return refuse(fiber.StatusUnprocessableEntity, "Type your username, "+u.Username+", to delete the account; nothing was deleted."), nil
	}
	at := h.sessions.GetInt64(c.UserContext(), sessSignedInAt)
	if at == 0 || time.Since(time.Unix(at, 0)) > freshSignInFor {
		return refuse(fiber.StatusForbidden, "Sign out and sign in again with your organisation, then delete the account within 10 minutes; nothing was deleted."), nil
	}
	return nil, nil
}
