package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/accounts"
	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// HashAPIKey is how API keys are stored: a SHA-256 of the key. Keys are long
// random strings, so a fast hash is enough and lets a request find its key.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func (h *Handlers) authForm(c *fiber.Ctx, register bool) views.AuthForm {
	title := "Sign in"
	if register {
		title = "Create account"
	}
	return views.AuthForm{
		Base: h.base(c, title, ""), Register: register,
		CanRegister: h.cfg.AllowRegistration, MinPassword: accounts.MinPassword,
		Next: safeNext(c.Query("next", formValue(c, "next"))),
	}
}

// loginScreen shows the sign-in form (or the chat, for someone signed in).
func (h *Handlers) loginScreen(c *fiber.Ctx) error {
	if currentUser(c) != nil {
		return redirect(c, afterSignIn(c))
	}
	return render(c, fiber.StatusOK, views.Auth(h.authForm(c, false)))
}

// login checks the password and starts a session. Failed attempts are
// throttled (signInAttempt): too many answer 429 until the window passes.
func (h *Handlers) login(c *fiber.Ctx) error {
	username, password := strings.TrimSpace(formValue(c, "username")), formValue(c, "password")
	u, err := h.signInAttempt(c, username, password)
	var wait *throttledError
	switch {
	case errors.As(err, &wait):
		return h.authRefused(c, false, username, wait, "Too many failed sign-ins. Try again "+wait.in()+".")
	case errors.Is(err, errBadCredentials):
		f := h.authForm(c, false)
		f.Username, f.Error = username, "Wrong username or password."
		return render(c, fiber.StatusUnauthorized, views.Auth(f))
	case err != nil:
		return err
	}
	if u.Disabled { // said only to whoever knows the password
		f := h.authForm(c, false)
		f.Username, f.Error = username, "This account is disabled. Ask an administrator to enable it."
		return render(c, fiber.StatusForbidden, views.Auth(f))
	}
	if err := h.signIn(c, u); err != nil {
		return err
	}
	return redirect(c, afterSignIn(c))
}

// registerScreen shows the form to create an account.
func (h *Handlers) registerScreen(c *fiber.Ctx) error {
	if currentUser(c) != nil {
		return redirect(c, afterSignIn(c))
	}
	return render(c, fiber.StatusOK, views.Auth(h.authForm(c, true)))
}

// register creates an account (the first one is admin) and signs it in. An
// address may register registerLimit.Max times an hour.
func (h *Handlers) register(c *fiber.Ctx) error {
	f := h.authForm(c, true)
	if !h.cfg.AllowRegistration {
		return render(c, fiber.StatusForbidden, views.Auth(f))
	}
	username, password := accounts.Username(formValue(c, "username")), formValue(c, "password")
	f.Username = username
	if err := accounts.ValidateCredentials(username, password); err != nil {
		f.Error = err.Error()
		return render(c, fiber.StatusUnprocessableEntity, views.Auth(f))
	}
	if wait, err := h.registrationAttempt(c); err != nil {
		return err
	} else if wait != nil {
		return h.authRefused(c, true, username, wait, "Too many accounts were created from your address. Try again "+wait.in()+".")
	}
	hash, err := accounts.HashPassword(password)
	if err != nil {
		return err
	}
	u, err := h.store.CreateUser(c.UserContext(), username, hash, false)
	if errors.Is(err, models.ErrUsernameTaken) {
		f.Error = "That username is taken. Choose another, or sign in."
		return render(c, fiber.StatusConflict, views.Auth(f))
	}
	if err != nil {
		return err
	}
	if err := h.signIn(c, u); err != nil {
		return err
	}
	return redirect(c, afterSignIn(c))
}

// authRefused re-renders the sign-in or registration form for a throttled
// attempt: 429 with Retry-After.
func (h *Handlers) authRefused(c *fiber.Ctx, register bool, username string, wait *throttledError, msg string) error {
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(wait.seconds()))
	f := h.authForm(c, register)
	f.Username, f.Error = username, msg
	return render(c, fiber.StatusTooManyRequests, views.Auth(f))
}

// logout ends the session: its row is deleted and its cookie expired (a
// visitor has no session; the CSRF cookie serves the login form).
func (h *Handlers) logout(c *fiber.Ctx) error {
	if err := h.sessions.Destroy(c.UserContext()); err != nil {
		return err
	}
	if u := currentUser(c); u != nil {
		h.hub.Recheck(u.ID) // this session's sockets and streams end (principal.go)
	}
	return redirect(c, paths.Login)
}

// apiAuth authenticates a JSON API call by x-api-key, or by the session (and
// then an unsafe method must carry the X-CSRF-Token header).
func (h *Handlers) apiAuth(c *fiber.Ctx) error {
	if key := c.Get("x-api-key"); key != "" {
		hash := HashAPIKey(key)
		u, err := h.store.UserByAPIKey(c.UserContext(), hash)
		if errors.Is(err, models.ErrNotFound) {
			return fiber.NewError(fiber.StatusUnauthorized, "Invalid API key")
		}
		if err != nil {
			return err
		}
		if u.Disabled {
			return fiber.NewError(fiber.StatusUnauthorized, "This account is disabled")
		}
		c.Locals(localUser, u)
		c.Locals(localAPIKey, hash) // what an event stream checks again (principal.go)
		return c.Next()
	}
	if currentUser(c) == nil {
		return fiber.NewError(fiber.StatusUnauthorized, "Authentication required: send an x-api-key header or sign in")
	}
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
	default:
		if !h.csrfMatches(c, c.Get("X-CSRF-Token")) {
			return fiber.NewError(fiber.StatusForbidden, "Missing or wrong X-CSRF-Token header")
		}
	}
	return c.Next()
}

// afterSignIn is where signing in or up lands: the share link the person
// came from (?next= or the form's next, safeNext), else the chat.
func afterSignIn(c *fiber.Ctx) string {
	if next := safeNext(c.Query("next", formValue(c, "next"))); next != "" {
		return next
	}
	return paths.ChatHome
}
