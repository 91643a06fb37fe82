package handlers

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"palaver/models"
)

// Session keys.
const (
	sessUserID   = "user_id"
	sessCSRF     = "csrf"
	sessExchange = "exchange" // the current general exchange; 0 = a new chat
	sessEpoch    = "epoch"    // the account's session epoch when it signed in
	sessSeen     = "seen"     // when the session was last used, in Unix seconds (sessionTouch)
)

// A session ends after sessionIdle without use (and in any case at the end
// of its lifetime, sessions.go). Its last use is written at most once per
// sessionTouch: scs's own IdleTimeout would rewrite the session row, and
// wait for the disk, on every request that carries the cookie.
const (
	sessionIdle  = 14 * 24 * time.Hour
	sessionTouch = time.Hour
)

// Locals keys.
const (
	localUser    = "user"
	localSession = "session" // set once the session is loaded
)

// session loads the scs session before the handler and commits it after,
// natively on fiber (scs's net/http LoadAndSave loses writes behind fiber's
// adaptor). Errors are rendered here, before the commit, so that what an
// error page put in the session (a fresh CSRF token) is kept.
func (h *Handlers) session(c *fiber.Ctx) error {
	sm := h.sessions
	// fiber strings alias fasthttp buffers that are reused; scs keeps the token.
	token := utils.CopyString(c.Cookies(sm.Cookie.Name))
	ctx, err := sm.Load(c.UserContext(), token)
	if err != nil {
		return err
	}
	if err := h.touchSession(ctx); err != nil {
		return err
	}
	c.SetUserContext(ctx)
	c.Locals(localSession, true)
	c.Vary(fiber.HeaderCookie)
	if err := c.Next(); err != nil {
		if err := c.App().Config().ErrorHandler(c, err); err != nil {
			return err
		}
	}
	switch sm.Status(ctx) {
	case scs.Modified:
		sm.Put(ctx, sessSeen, time.Now().Unix()) // written anyway
		tok, exp, err := sm.Commit(ctx)
		if err != nil {
			return err
		}
		c.Cookie(&fiber.Cookie{
			Name: sm.Cookie.Name, Value: tok, Path: "/", Expires: exp,
			MaxAge: int(time.Until(exp).Seconds() + 1), HTTPOnly: true,
			SameSite: fiber.CookieSameSiteLaxMode, Secure: sm.Cookie.Secure,
		})
		c.Set(fiber.HeaderCacheControl, `no-cache="Set-Cookie"`)
	case scs.Destroyed:
		c.Cookie(&fiber.Cookie{
			Name: sm.Cookie.Name, Path: "/", Expires: time.Unix(1, 0), MaxAge: -1,
			HTTPOnly: true, SameSite: fiber.CookieSameSiteLaxMode, Secure: sm.Cookie.Secure,
		})
	}
	return nil
}

// touchSession ends a stored session unused for sessionIdle, and marks one
// last used over sessionTouch ago as used now (to be written after the
// request). A session stored without a last use gets one.
func (h *Handlers) touchSession(ctx context.Context) error {
	sm := h.sessions
	if len(sm.Keys(ctx)) == 0 {
		return nil // new, or empty: nothing is stored
	}
	now := time.Now()
	seen := sm.GetInt64(ctx, sessSeen)
	switch age := now.Sub(time.Unix(seen, 0)); {
	case seen != 0 && age > sessionIdle:
		return sm.Destroy(ctx) // as if it had expired: a fresh session follows
	case age > sessionTouch: // also when seen is 0
		sm.Put(ctx, sessSeen, now.Unix())
	}
	return nil
}

// loadUser puts the signed-in user, if any, in Locals. A session whose user
// no longer exists, is disabled, or moved to another session epoch since the
// session signed in (disabled or its password reset by an administrator) is
// signed out: scs sessions are opaque, so they end here, on their next request.
func (h *Handlers) loadUser(c *fiber.Ctx) error {
	ctx := c.UserContext()
	id := h.sessions.GetInt64(ctx, sessUserID)
	if id == 0 {
		return c.Next()
	}
	u, err := h.store.UserByID(ctx, id)
	switch {
	case errors.Is(err, models.ErrNotFound):
		h.sessions.Remove(ctx, sessUserID)
	case err != nil:
		return err
	case u.Disabled || h.sessions.GetInt64(ctx, sessEpoch) != u.SessionEpoch:
		h.sessions.Remove(ctx, sessUserID)
		h.sessions.Remove(ctx, sessEpoch)
	default:
		c.Locals(localUser, u)
	}
	return c.Next()
}

// currentUser is the signed-in user, or nil.
func currentUser(c *fiber.Ctx) *models.User {
	u, _ := c.Locals(localUser).(*models.User)
	return u
}

// requireUser sends visitors who are not signed in to the login page.
func (h *Handlers) requireUser(c *fiber.Ctx) error {
	if currentUser(c) == nil {
		return redirect(c, "/login")
	}
	return c.Next()
}

// csrfToken returns the session's CSRF token, making one on first use. An
// error raised before the session loaded (an over-size body) has none.
func (h *Handlers) csrfToken(c *fiber.Ctx) string {
	if c.Locals(localSession) == nil {
		return ""
	}
	ctx := c.UserContext()
	if t := h.sessions.GetString(ctx, sessCSRF); t != "" {
		return t
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	t := base64.RawURLEncoding.EncodeToString(b)
	h.sessions.Put(ctx, sessCSRF, t)
	return t
}

// errCSRF is the answer to an unsafe request without the session's token.
var errCSRF = fiber.NewError(fiber.StatusForbidden, "The form has expired or did not come from Palaver. Reload the page and try again.")

// checkCSRF refuses unsafe requests that do not carry the session's CSRF
// token, in the X-CSRF-Token header or the csrf_token form field.
func (h *Handlers) checkCSRF(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	got := c.Get("X-CSRF-Token")
	if got == "" {
		got = c.FormValue("csrf_token")
	}
	if !h.csrfMatches(c, got) {
		return errCSRF
	}
	return c.Next()
}

// csrfMatches compares a presented token with the session's in constant time.
func (h *Handlers) csrfMatches(c *fiber.Ctx, got string) bool {
	want := h.sessions.GetString(c.UserContext(), sessCSRF)
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// signIn starts a signed-in session for u with a new token (no fixation).
func (h *Handlers) signIn(c *fiber.Ctx, u *models.User) error {
	ctx := c.UserContext()
	if err := h.sessions.RenewToken(ctx); err != nil {
		return err
	}
	h.sessions.Put(ctx, sessUserID, u.ID)
	h.sessions.Put(ctx, sessEpoch, u.SessionEpoch)
	h.sessions.Remove(ctx, sessCSRF) // a new token for the new identity
	return nil
}
