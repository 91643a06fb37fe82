package handlers

import (
	"github.com/gofiber/fiber/v2"
)

// routes registers every route, grouped by surface.
func (h *Handlers) routes(app *fiber.App) {
	// Infrastructure: no session, no user.
	app.Get("/healthz", h.healthz)
	app.Get("/static/:name", h.staticFile)

	app.Use(h.session, h.loadUser)

	// JSON API: x-api-key or session (+ X-CSRF-Token on unsafe methods).
	api := app.Group("/api", h.apiAuth)
	api.Post("/chat", h.apiChat)
	api.Get("/chat/history", h.apiHistory)
	api.Delete("/chat/history", h.apiClearHistory)
	api.Get("/chat/exchange/:id/messages", h.apiMessages)
	api.Put("/chat/exchange/:id/feedback", h.apiExchangeFeedback)
	api.Delete("/chat/exchange/:id", h.apiDeleteExchange)
	api.Put("/chat/exchanges/batch/delete", h.apiBatchDelete)
	api.Put("/chat/message/:id/feedback", h.apiMessageFeedback)
	api.Use(h.apiNotFound)

	// HTML: every unsafe request carries the session's CSRF token.
	app.Use(h.checkCSRF)

	// Accounts.
	app.Get("/", h.home)
	app.Get("/login", h.loginPage)
	app.Post("/login", h.login)
	app.Get("/register", h.registerPage)
	app.Post("/register", h.register)
	app.Post("/logout", h.logout)

	// Chat: the transcript, the composer and the history sidebar.
	chat := app.Group("/chat", h.requireUser)
	chat.Get("/", h.chatCurrent)
	chat.Get("/history", h.chatHistory)
	chat.Post("/new", h.chatNew)
	chat.Post("/send", h.chatSend)
	chat.Post("/clear", h.chatClear)
	chat.Post("/message/:id/feedback", h.chatFeedback)
	chat.Get("/:id", h.chatOpen)
	chat.Post("/:id/rename", h.chatRename)
	chat.Post("/:id/delete", h.chatDelete)
}
