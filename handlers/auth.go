package handlers

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/crypto/bcrypt"

	"palaver/models"
	"palaver/views"
)

// HashAPIKey is how API keys are stored: a SHA-256 of the key. Keys are long
// random strings, so a fast hash is enough and lets a request find its key.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// HashPassword hashes a password with bcrypt.
func HashPassword(pw string) (string, error) {
	b, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.DefaultCost)
	return string(b), err
}

// ValidateCredentials checks a new account's name and password and says what
// is wrong in words a person can act on.
func ValidateCredentials(username, password string) string {
	switch {
	case username == "":
		return "Choose a username."
	case utf8.RuneCountInString(username) > maxUsername:
		return "A username can be at most 64 characters."
	case strings.ContainsAny(username, " \t\r\n"):
		return "A username cannot contain spaces."
	case utf8.RuneCountInString(password) < minPassword:
		return "The password is too short: use at least 8 characters."
	case len(password) > 72:
		return "The password is too long: use at most 72 bytes."
	}
	return ""
}

func (h *Handlers) authForm(c *fiber.Ctx, register bool) views.AuthForm {
	title := "Sign in"
	if register {
		title = "Create account"
	}
	return views.AuthForm{
		Base: h.base(c, title, ""), Register: register,
		CanRegister: h.cfg.AllowRegistration, MinPassword: minPassword,
	}
}

// noSuchUserHash is a bcrypt hash no password matches in practice, compared
// against when the username is unknown so the answer takes the same time.
const noSuchUserHash = "$2a$10$7EqJtq98hPqEX7fNZaFWoOhi5BWX4Z8ZqJ0L1G9a3uY9T1m5Q3d6e"

// loginPage shows the sign-in form (or the chat, for someone signed in).
func (h *Handlers) loginPage(c *fiber.Ctx) error {
	if currentUser(c) != nil {
		return redirect(c, "/chat")
	}
	return render(c, fiber.StatusOK, views.Auth(h.authForm(c, false)))
}

// login checks the password and starts a session.
func (h *Handlers) login(c *fiber.Ctx) error {
	username, password := strings.TrimSpace(c.FormValue("username")), c.FormValue("password")
	u, err := h.store.UserByUsername(c.UserContext(), username)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return err
	}
	hash := []byte(noSuchUserHash) // compare anyway: an unknown name takes as long
	if err == nil {
		hash = []byte(u.PasswordHash)
	}
	if bcrypt.CompareHashAndPassword(hash, []byte(password)) != nil || err != nil {
		f := h.authForm(c, false)
		f.Username, f.Error = username, "Wrong username or password."
		return render(c, fiber.StatusUnauthorized, views.Auth(f))
	}
	if u.Disabled { // said only to whoever knows the password
		f := h.authForm(c, false)
		f.Username, f.Error = username, "This account is disabled. Ask an administrator to enable it."
		return render(c, fiber.StatusForbidden, views.Auth(f))
	}
	if err := h.signIn(c, u); err != nil {
		return err
	}
	return redirect(c, "/chat")
}

// registerPage shows the form to create an account.
func (h *Handlers) registerPage(c *fiber.Ctx) error {
	if currentUser(c) != nil {
		return redirect(c, "/chat")
	}
	return render(c, fiber.StatusOK, views.Auth(h.authForm(c, true)))
}

// register creates an account (the first one is admin) and signs it in.
func (h *Handlers) register(c *fiber.Ctx) error {
	f := h.authForm(c, true)
	if !h.cfg.AllowRegistration {
		return render(c, fiber.StatusForbidden, views.Auth(f))
	}
	username, password := strings.TrimSpace(c.FormValue("username")), c.FormValue("password")
	f.Username = username
	if msg := ValidateCredentials(username, password); msg != "" {
		f.Error = msg
		return render(c, fiber.StatusUnprocessableEntity, views.Auth(f))
	}
	hash, err := HashPassword(password)
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
	return redirect(c, "/chat")
}

// logout ends the session and renews its token.
func (h *Handlers) logout(c *fiber.Ctx) error {
	ctx := c.UserContext()
	if err := h.sessions.Clear(ctx); err != nil {
		return err
	}
	if err := h.sessions.RenewToken(ctx); err != nil {
		return err
	}
	return redirect(c, "/login")
}

// apiAuth authenticates a JSON API call by x-api-key, or by the session (and
// then an unsafe method must carry the X-CSRF-Token header).
func (h *Handlers) apiAuth(c *fiber.Ctx) error {
	if key := c.Get("x-api-key"); key != "" {
		u, err := h.store.UserByAPIKey(c.UserContext(), HashAPIKey(key))
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
