package handlers

import "github.com/gofiber/fiber/v2"

// Placeholders, replaced by the chat pages.
func (h *Handlers) chatCurrent(c *fiber.Ctx) error  { return fiber.ErrNotImplemented }
func (h *Handlers) chatHistory(c *fiber.Ctx) error  { return fiber.ErrNotImplemented }
func (h *Handlers) chatNew(c *fiber.Ctx) error      { return fiber.ErrNotImplemented }
func (h *Handlers) chatSend(c *fiber.Ctx) error     { return fiber.ErrNotImplemented }
func (h *Handlers) chatClear(c *fiber.Ctx) error    { return fiber.ErrNotImplemented }
func (h *Handlers) chatFeedback(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
func (h *Handlers) chatOpen(c *fiber.Ctx) error     { return fiber.ErrNotImplemented }
func (h *Handlers) chatRename(c *fiber.Ctx) error   { return fiber.ErrNotImplemented }
func (h *Handlers) chatDelete(c *fiber.Ctx) error   { return fiber.ErrNotImplemented }
