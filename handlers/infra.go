package handlers

import (
	"context"
	"mime"
	"path"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/paths"
)

// healthz answers 200 when the database answers.
func (h *Handlers) healthz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "unavailable", "error": "database"})
	}
	return c.JSON(fiber.Map{"status": "ok"})
}

// staticFile serves an embedded asset. A URL that carries the current content
// hash can be cached for a year; any other must be revalidated.
func (h *Handlers) staticFile(c *fiber.Ctx) error {
	name := c.Params("name")
	b, ok := h.assets.Open(name)
	if !ok {
		return fiber.ErrNotFound
	}
	if ct := mime.TypeByExtension(path.Ext(name)); ct != "" {
		c.Set(fiber.HeaderContentType, ct)
	}
	if c.Query("v") == h.assets.Version(name) {
		c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	} else {
		c.Set(fiber.HeaderCacheControl, "no-cache")
	}
	return c.Send(b)
}

// home sends people to the chat, or to sign in.
func (h *Handlers) home(c *fiber.Ctx) error {
	if currentUser(c) == nil {
		return redirect(c, paths.Login)
	}
	return redirect(c, paths.ChatHome)
}

// apiNotFound answers API paths that match no route.
func (h *Handlers) apiNotFound(c *fiber.Ctx) error {
	return fiber.NewError(fiber.StatusNotFound, "Not found")
}
