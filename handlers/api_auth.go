package handlers

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
)

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
