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
		CanRegister: h.cfg.AllowRegistration && !h.cfg.PasswordLoginOff, MinPassword: accounts.MinPassword,
		PasswordLogin: !h.cfg.PasswordLoginOff, Providers: h.oidcButtons(),
		Next: safeNext(c.Query("next", formValue(c, "next"))),
	}
}

// loginScreen shows the sign-in form (or the chat, for someone signed in).
func (h *Handlers) loginScreen(c *fiber.Ctx) error {
	if currentUser(c) != nil {
		return redirect(c, afterSignIn(c))
	}
	// ?local=1 keeps the form: the way to the password when the provider fails.
	if o := h.cfg.OIDC; o.AutoRedirect && len(o.Providers) > 0 && c.Query("local") == "" {
		return redirect(c, paths.OIDCStart(o.Providers[0].Name()))
	}
	return render(c, fiber.StatusOK, views.Auth(h.authForm(c, false)))
}

// login checks the password and starts a session. Failed attempts are
// throttled (signInAttempt): too many answer 429 until the window passes.
func (h *Handlers) login(c *fiber.Ctx) error {
	username, password := strings.TrimSpace(formValue(c, "username")), formValue(c, "password")
	if h.cfg.PasswordLoginOff {
		return h.authRefusal(c, false, "", refuse(fiber.StatusForbidden, "Password sign-in is turned off on this server."))
	}
	u, err := h.signInAttempt(c, username, password)
	var wait *throttledError
	switch {
	case errors.As(err, &wait):
		return h.authThrottled(c, false, username, wait, "Too many failed sign-ins. Try again "+wait.in()+".")
	case errors.Is(err, errBadCredentials):
		return h.authRefusal(c, false, username, refuse(fiber.StatusUnauthorized, "Wrong username or password.").because(err))
	case err != nil:
		return err
	}
	if u.Disabled { // said only to whoever knows the password
		return h.authRefusal(c, false, username, refuse(fiber.StatusForbidden, "This account is disabled. Ask an administrator to enable it."))
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
	if !h.authForm(c, true).CanRegister { // the form says registration is closed
		return h.authRefusal(c, true, "", refuse(fiber.StatusForbidden, "Registration is closed on this server."))
	}
	username, password := accounts.Username(formValue(c, "username")), formValue(c, "password")
	if err := accounts.ValidateCredentials(username, password); err != nil {
		return h.authRefusal(c, true, username, refuse(fiber.StatusUnprocessableEntity, err.Error()))
	}
	if wait, err := h.registrationAttempt(c); err != nil {
		return err
	} else if wait != nil {
		return h.authThrottled(c, true, username, wait, "Too many accounts were created from your address. Try again "+wait.in()+".")
	}
	hash, err := accounts.HashPassword(password)
	if err != nil {
		return err
	}
	u, err := h.store.CreateUser(c.UserContext(), username, hash, false)
	if errors.Is(err, models.ErrUsernameTaken) {
		return h.authRefusal(c, true, username, refuse(fiber.StatusConflict, "That username is taken. Choose another, or sign in.").because(err))
	}
	if err != nil {
		return err
	}
	if err := h.signIn(c, u); err != nil {
		return err
	}
	return redirect(c, afterSignIn(c))
}

// authRefusal refuses a sign-in or registration: the error handler answers
// it with the form again, the reason in it and the name typed kept, for
// htmx as without JavaScript.
func (h *Handlers) authRefusal(c *fiber.Ctx, register bool, username string, r *Refusal) *Refusal {
	show := func(r *Refusal) error {
		f := h.authForm(c, register)
		f.Username, f.Error = username, r.Reason
		return render(c, r.Status, views.Auth(f))
	}
	return r.onFragment(show).onPage(show)
}

// authThrottled refuses a throttled attempt: 429 with Retry-After.
func (h *Handlers) authThrottled(c *fiber.Ctx, register bool, username string, wait *throttledError, msg string) *Refusal {
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(wait.seconds()))
	return h.authRefusal(c, register, username, refuse(fiber.StatusTooManyRequests, msg).because(wait))
}

// logout ends the session: its row is deleted and its cookie expired (a
// visitor has no session; the CSRF cookie serves the login form). A session
// signed in through a provider with an end_session_endpoint goes on there,
// to sign out of the provider too.
func (h *Handlers) logout(c *fiber.Ctx) error {
	ctx := c.UserContext()
	if u := currentUser(c); u != nil {
		// A temporary chat also goes when its person signs out (issue 27).
		if _, err := h.store.DeleteTemporary(ctx, u.ID); err != nil {
			return err
		}
	}
	provider, idToken := h.sessions.GetString(ctx, sessOIDCProvider), h.sessions.GetString(ctx, sessOIDCIDToken)
	if err := h.sessions.Destroy(ctx); err != nil {
		return err
	}
	if u := currentUser(c); u != nil {
		h.hub.Recheck(u.ID) // this session's sockets and streams end (principal.go)
	}
	return redirect(c, h.oidcSignOut(c, provider, idToken))
}

// afterSignIn is where signing in or up lands: the share link the person
// came from (?next= or the form's next, safeNext), else the chat.
func afterSignIn(c *fiber.Ctx) string {
	if next := safeNext(c.Query("next", formValue(c, "next"))); next != "" {
		return next
	}
	return paths.ChatHome
}
