package handlers

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
)

// localAPIKey holds the hash of the x-api-key a request was let in with.
const localAPIKey = "api_key"

// principal is who an open websocket or event stream speaks as, as it was
// let in: the user, and either the session (its token, and the epoch it
// signed in under) or the API key. A request is let in anew each time; a
// socket or stream only once, so it checks its principal again whenever
// the hub says the account changed (agents.Subscription.Check: a deletion,
// a disable, a password change, a key revoked, a sign-out here) and at
// each of its pings or keep-alives (what no one announces: a sign-out on
// another process, a session that expired).
type principal struct {
	userID  int64
	epoch   int64
	token   string // the scs session's token; "" for a key
	keyHash string // the key's hash; "" for a session
}

// principalOf is who the signed-in request speaks as.
func (h *Handlers) principalOf(c *fiber.Ctx) principal {
	u := currentUser(c)
	if k, ok := c.Locals(localAPIKey).(string); ok {
		return principal{userID: u.ID, keyHash: k}
	}
	// loadUser let the session in at the account's epoch.
	return principal{userID: u.ID, epoch: u.SessionEpoch, token: utils.CopyString(c.Cookies(h.sessions.Cookie.Name))}
}

// principalCheckWithin bounds a check: the socket or stream waits for it.
const principalCheckWithin = 5 * time.Second

// stillValid says whether p may still speak as its user: the account is
// there and enabled, and the key is still its own, or the session is still
// stored (not signed out or expired) at the account's epoch.
func (h *Handlers) stillValid(ctx context.Context, p principal) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, principalCheckWithin)
	defer cancel()
	ok, err := h.store.PrincipalValid(ctx, p.userID, p.epoch, p.keyHash)
	if err != nil || !ok || p.keyHash != "" {
		return ok, err
	}
	_, found, err := h.sessions.Store.Find(p.token) // scs's stores read without a context
	return found, err
}
