package handlers

import (
	"github.com/gofiber/fiber/v2"

	"palaver/paths"
)

// routes registers every route, grouped by surface.
func (h *Handlers) routes(app *fiber.App) {
	// Infrastructure: no session, no user.
	app.Get("/healthz", h.healthz)
	app.Get("/static/:name", h.staticFile)
	app.Get("/api/openapi.json", h.apiOpenAPI) // the JSON API's reference: public

	app.Use(h.session, h.loadUser)

	// JSON API: x-api-key or session (+ X-CSRF-Token on unsafe methods).
	api := app.Group("/api", h.apiAuth)
	api.Post("/chat", h.apiChat)
	api.Get("/chat/history", h.apiHistory)
	api.Delete("/chat/history", h.apiClearHistory)
	api.Get("/chat/exchange/:id/messages", h.apiMessages)
	api.Get("/chat/exchange/:id/stream", h.apiStream)
	api.Post("/chat/exchange/:id/stop", h.apiStop)
	api.Post("/chat/exchange/:id/retry", h.apiRetry)
	// Turns that wait: the calls a paused turn waits on, and their answers.
	api.Get("/chat/exchange/:id/pending", h.apiPending)
	api.Post("/chat/exchange/:id/tool_results", h.apiToolResults)
	api.Get("/account/tools", h.apiAccountTools)
	api.Put("/account/tools", h.apiAccountToolsUpdate)
	api.Post("/chat/exchange/:id/fork", h.apiFork)
	api.Post("/chat/exchange/:id/regenerate", h.apiRegenerate)
	api.Get("/chat/exchange/:id/branches", h.apiBranches)
	api.Get("/chat/exchange/:id/export", h.apiExchangeExport)
	api.Get("/export", h.apiExport)
	api.Post("/import", h.apiImport) // its body streams, up to 256 MiB (handlers/import_upload.go)
	api.Put("/chat/exchange/:id/feedback", h.apiExchangeFeedback)
	api.Get("/chat/search", h.apiSearch)
	api.Patch("/chat/exchange/:id", h.apiExchangeUpdate)
	api.Delete("/chat/exchange/:id", h.apiDeleteExchange)
	api.Put("/chat/exchanges/batch/delete", h.apiBatchDelete)
	api.Put("/chat/message/:id/feedback", h.apiMessageFeedback)
	api.Put("/chat/:job_id/feedback", h.apiJobFeedback) // Galaxy's job chats: no fixed route has this shape
	api.Get("/chat/page/:page_id/history", h.apiPageHistory)
	api.Delete("/chat/page/:page_id/history", h.apiPageClearHistory)
	api.Post("/pages", h.apiPageCreate)
	api.Get("/pages/:id", h.apiPage)
	api.Put("/pages/:id", h.apiPageUpdate)
	api.Delete("/pages/:id", h.apiPageDelete)
	api.Get("/pages/:id/revisions", h.apiPageRevisions)
	api.Post("/pages/:id/proposals/:message_id/accept", h.apiProposalAccept)
	api.Get("/keys", h.apiKeys)
	api.Post("/keys", h.apiKeyCreate)
	api.Delete("/keys/:id", h.apiKeyDelete)
	// Models, usage and budgets (issue 29): the picker's list, Galaxy's
	// agent list, a person's usage; the administrators' connections.
	api.Get("/models", h.apiModels)
	api.Get("/ai/agents", h.apiAIAgents)
	api.Get("/account/usage", h.apiAccountUsage)
	api.Put("/account/budget", h.apiAccountBudget)
	apiAdmin := api.Group("/admin", h.requireAdmin)
	apiAdmin.Get("/connections", h.apiAdminConnections)
	apiAdmin.Post("/connections", h.apiAdminConnectionCreate)
	apiAdmin.Delete("/connections/:id", h.apiAdminConnectionDelete)
	apiAdmin.Put("/models/:id", h.apiAdminModelUpdate)
	apiAdmin.Put("/quotas", h.apiAdminQuotas)
	api.Use(h.apiNotFound)

	// The account page's import form streams its file (up to 256 MiB): it
	// checks the CSRF token itself, from the header or the form's field
	// before the file, since checkCSRF would read the whole form first.
	app.Post(paths.AccountImport, h.requireUser, h.accountImport)

	// HTML: every unsafe request carries the session's CSRF token.
	app.Use(h.checkCSRF)

	// Accounts.
	app.Get("/", h.home)
	app.Get("/login", h.loginScreen)
	app.Post("/login", h.login)
	app.Get("/register", h.registerScreen)
	app.Post("/register", h.register)
	app.Post("/logout", h.logout)

	// Chat: the transcript, the composer and the history sidebar.
	chat := app.Group("/chat", h.requireUser)
	chat.Get("/", h.chatCurrent)
	chat.Get("/history", h.chatHistory)
	chat.Get("/search", h.chatSearch)
	chat.Get("/archived", h.chatArchived)
	chat.Post("/new", h.chatNew)
	chat.Post("/send", h.chatSend)
	chat.Post("/clear", h.chatClear)
	chat.Post("/message/:id/feedback", h.chatFeedback)
	// Branches: an edited message or a new answer is a fork (chat_edit.go,
	// chat_regenerate.go).
	chat.Get("/message/:id/edit", h.chatEditForm)
	chat.Post("/message/:id/edit", h.chatEdit)
	chat.Get("/message/:id/regenerate", h.chatRegenerateConfirm)
	chat.Post("/message/:id/regenerate", h.chatRegenerate)
	chat.Get("/:id", h.chatOpen)
	chat.Get("/:id/subruns/:sub", h.chatSubRun)
	chat.Get("/:id/messages", h.chatMessages) // a window of a long transcript (htmx)
	chat.Get("/:id/branches", h.chatBranches)
	chat.Get("/:id/compare", h.chatCompareChoose)
	chat.Get("/:id/compare/:other", h.chatCompare)
	chat.Post("/:id/continue", h.chatContinue) // time travel's "Continue from here"
	chat.Post("/:id/rename", h.chatRename)
	chat.Post("/:id/delete", h.chatDelete)
	chat.Post("/:id/pin", h.chatPin)
	chat.Post("/:id/archive", h.chatArchive)
	chat.Post("/:id/stop", h.chatStop)
	chat.Post("/:id/retry", h.chatRetry)
	chat.Post("/:id/tools", h.chatTools) // a waiting tool call's card: approve, deny, the editor's text

	// The account page: password, API keys, data, deleting the account.
	account := app.Group("/account", h.requireUser)
	account.Get("/", h.account)
	account.Post("/password", h.accountPassword)
	account.Post("/keys", h.accountKeyCreate)
	account.Post("/keys/:id/revoke", h.accountKeyRevoke)
	account.Post("/delete", h.accountDelete)
	account.Post("/tools", h.accountTools) // the tool permissions (issue 25)

	// Live updates: one websocket per tab, the user resolved from the session
	// before the upgrade (handlers/live.go).
	app.Get("/live", h.liveUpgrade, h.liveSocket())

	// Pages: the list, the editor with its chat panel, and the proposal
	// cards of the page assistant.
	pages := app.Group("/pages", h.requireUser)
	pages.Get("/", h.pagesList)
	pages.Post("/", h.pageCreate)
	pages.Get("/:id", h.pageOpen)
	pages.Get("/:id/edit", h.pageEdit)
	pages.Post("/:id/save", h.pageSave)
	pages.Post("/:id/preview", h.pagePreview)
	pages.Post("/:id/delete", h.pageDelete)
	pages.Post("/:id/panel", h.pagePanelToggle)
	pages.Get("/:id/revisions/:rev", h.pageRevision)
	pages.Post("/:id/revisions/:rev/restore", h.pageRestore)
	pages.Post("/:id/chat", h.pageChatSend)
	pages.Post("/:id/chat/new", h.pageChatNew)
	pages.Post("/:id/chat/clear", h.pageChatClear)
	pages.Get("/:id/chat/:ex", h.pageChatOpen)
	pages.Post("/:id/chat/:ex/delete", h.pageChatDelete)
	pages.Post("/:id/proposals/:msg/accept", h.proposalDecide(true))
	pages.Post("/:id/proposals/:msg/reject", h.proposalDecide(false))

	// Admin: every user's conversations (opening one is audited), the
	// dashboard, accounts and housekeeping. Anyone but an administrator gets
	// the 404 of a page that does not exist; visitors go to the login page.
	admin := app.Group("/admin", h.requireAdmin)
	admin.Get("/", h.adminOverview)
	admin.Get("/exchanges", h.adminExchanges)
	admin.Get("/exchanges/:id", h.adminExchangeGate)
	admin.Post("/exchanges/:id", h.adminExchangeOpen)
	admin.Get("/audit", h.adminAudit)
	admin.Get("/users", h.adminUsers)
	admin.Post("/users/:id/promote", h.adminUserSwitched(adminPromote))
	admin.Post("/users/:id/demote", h.adminUserSwitched(adminDemote))
	admin.Post("/users/:id/disable", h.adminUserSwitched(adminDisable))
	admin.Post("/users/:id/enable", h.adminUserSwitched(adminEnable))
	admin.Post("/users/:id/password", h.adminUserPassword)
	admin.Post("/users/:id/delete", h.adminUserDelete)
	admin.Get("/housekeeping", h.adminHousekeeping)
	admin.Post("/housekeeping/vacuum", h.adminVacuum)
	admin.Post("/housekeeping/orphans", h.adminPurgeOrphans)
	admin.Post("/housekeeping/retention", h.adminRetentionSave)
	admin.Post("/housekeeping/retention/dry-run", h.adminRetentionDryRun)
	admin.Post("/housekeeping/retention/run", h.adminRetentionRun)
}
