package handlers

import "github.com/gofiber/fiber/v2"

// Placeholders, replaced by the JSON API.
func (h *Handlers) apiChat(c *fiber.Ctx) error             { return fiber.ErrNotImplemented }
func (h *Handlers) apiHistory(c *fiber.Ctx) error          { return fiber.ErrNotImplemented }
func (h *Handlers) apiClearHistory(c *fiber.Ctx) error     { return fiber.ErrNotImplemented }
func (h *Handlers) apiMessages(c *fiber.Ctx) error         { return fiber.ErrNotImplemented }
func (h *Handlers) apiExchangeFeedback(c *fiber.Ctx) error { return fiber.ErrNotImplemented }
func (h *Handlers) apiDeleteExchange(c *fiber.Ctx) error   { return fiber.ErrNotImplemented }
func (h *Handlers) apiBatchDelete(c *fiber.Ctx) error      { return fiber.ErrNotImplemented }
func (h *Handlers) apiMessageFeedback(c *fiber.Ctx) error  { return fiber.ErrNotImplemented }
