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

	// Share links (issue 28): a snapshot for anyone the link is for, signed
	// in or not; the JSON one before the API's authentication, which would
	// refuse visitors (an API key still counts: shareAPIUser).
	app.Get("/api/s/:token", h.shareAPIUser, h.apiShareOpen)

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
	api.Post("/chat/exchange/:id/shares", h.apiShareCreate)
	api.Get("/shares", h.apiShares)
	api.Patch("/shares/:id", h.apiShareUpdate)
	api.Delete("/shares/:id", h.apiShareDelete)
	api.Post("/s/:token/continue", h.apiShareContinue)
	api.Post("/chat/exchange/:id/read", h.apiRead)
	api.Post("/chat/exchange/:id/unread", h.apiUnread)
	api.Get("/keys", h.apiKeys)
	api.Post("/keys", h.apiKeyCreate)
	api.Delete("/keys/:id", h.apiKeyDelete)
	// Files (issue 26): an upload streams, up to the file limit (api_files.go).
	api.Get("/files", h.apiFiles)
	api.Post("/files", h.apiFileUpload)
	api.Get("/files/:id", h.apiFile)
	api.Get("/files/:id/thumbnail", h.apiFileThumbnail)
	api.Delete("/files/:id", h.apiFileDelete)
	// Projects, the person's instructions and memory (issue 27).
	api.Get("/projects", h.apiProjects)
	api.Post("/projects", h.apiProjectCreate)
	api.Get("/projects/:id", h.apiProject)
	api.Patch("/projects/:id", h.apiProjectUpdate)
	api.Delete("/projects/:id", h.apiProjectDelete)
	api.Get("/projects/:id/files", h.apiProjectFiles)
	api.Post("/projects/:id/files", h.apiProjectFileAdd)
	api.Delete("/projects/:id/files/:file", h.apiProjectFileDelete)
	api.Get("/account/instructions", h.apiAccountInstructions)
	api.Put("/account/instructions", h.apiAccountInstructionsPut)
	api.Get("/memories", h.apiMemories)
	api.Post("/memories", h.apiMemoryCreate)
	api.Patch("/memories/:id", h.apiMemoryUpdate)
	api.Delete("/memories/:id", h.apiMemoryDelete)
	api.Get("/chat/message/:id/instructions", h.apiMessageInstructions)
	// Models, usage and budgets (issue 29): the picker's list, Galaxy's
	// agent list, a person's usage; the administrators' connections.
	api.Get("/models", h.apiModels)
	api.Put("/models/favourites", h.apiModelFavourite)
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
	// Single sign-on: the flow's start and the provider's callback (auth_oidc.go).
	app.Get("/auth/oidc/:name", h.oidcStart)
	app.Get("/auth/oidc/:name/callback", h.oidcCallback)

	// A share link's page, and continuing it as one's own (share_page.go).
	app.Get("/s/:token", h.sharePage)
	app.Get("/s/:token/files/:n", h.shareFile)
	app.Get("/s/:token/files/:n/thumbnail", h.shareFileThumbnail)
	app.Post("/s/:token/continue", h.requireUser, h.shareContinue)

	// Chat: the transcript, the composer and the history sidebar.
	chat := app.Group("/chat", h.requireUser)
	chat.Get("/", h.chatCurrent)
	chat.Get("/history", h.chatHistory)
	chat.Get("/search", h.chatSearch)
	chat.Get("/archived", h.chatArchived)
	chat.Post("/new", h.chatNew)
	chat.Post("/send", h.chatSend)
	chat.Post("/clear", h.chatClear)
	chat.Post("/read-all", h.chatReadAll)
	chat.Post("/message/:id/feedback", h.chatFeedback)
	// Branches: an edited message or a new answer is a fork (chat_edit.go,
	// chat_regenerate.go).
	chat.Get("/message/:id/edit", h.chatEditForm)
	chat.Post("/message/:id/edit", h.chatEdit)
	chat.Get("/message/:id/regenerate", h.chatRegenerateConfirm)
	chat.Post("/message/:id/regenerate", h.chatRegenerate)
	chat.Get("/message/:id/instructions", h.chatTold) // what the agent was told (projects.go)
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
	chat.Post("/:id/read", h.chatRead)
	chat.Post("/:id/unread", h.chatUnread)
	chat.Get("/:id/share", h.chatShareForm)
	chat.Post("/:id/share", h.chatShareCreate)
	chat.Post("/:id/tools", h.chatTools)     // a waiting tool call's card: approve, deny, the editor's text
	chat.Get("/:id/project", h.chatMoveForm) // move to a project (projects.go)
	chat.Post("/:id/project", h.chatMove)
	chat.Post("/:id/keep", h.chatKeep) // a temporary chat kept

	// The account page: password, API keys, data, deleting the account.
	account := app.Group("/account", h.requireUser)
	account.Get("/", h.account)
	account.Post("/password", h.accountPassword)
	account.Post("/keys", h.accountKeyCreate)
	account.Post("/keys/:id/revoke", h.accountKeyRevoke)
	account.Post("/delete", h.accountDelete)
	account.Post("/oidc/link", h.accountOIDCLink)
	account.Post("/identities/:id/unlink", h.accountIdentityUnlink)
	account.Post("/shares/:id/update", h.accountShareUpdate)
	account.Post("/shares/:id/revoke", h.accountShareRevoke)
	account.Post("/tools", h.accountTools)                     // the tool permissions (issue 25)
	account.Post("/model", h.accountModel)                     // the default model (issue 29)
	account.Post("/models/favourite", h.accountModelFavourite) // the picker's star, the account's list
	account.Post("/search-reasoning", h.accountSearchReasoning)
	account.Post("/instructions", h.accountInstructions) // About me / How to answer (issue 27)
	account.Post("/memories", h.accountMemoryAdd)
	account.Post("/memories/:id", h.accountMemoryEdit)
	account.Post("/memories/:id/delete", h.accountMemoryDelete)

	// Projects: the list, a project's page, a new chat in it (projects.go).
	projects := app.Group("/projects", h.requireUser)
	projects.Get("/", h.projects)
	projects.Post("/", h.projectCreate)
	projects.Get("/:id", h.project)
	projects.Post("/:id/instructions", h.projectInstructions)
	projects.Post("/:id/delete", h.projectDelete)
	projects.Post("/:id/chat", h.projectChat)
	projects.Post("/:id/model", h.projectModel)
	projects.Post("/:id/files", h.projectFileAdd)
	projects.Post("/:id/files/:file/delete", h.projectFileDelete)

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
	admin.Post("/housekeeping/blobs", h.adminPurgeBlobs)
	admin.Post("/housekeeping/retention", h.adminRetentionSave)
	admin.Post("/housekeeping/retention/dry-run", h.adminRetentionDryRun)
	admin.Post("/housekeeping/retention/run", h.adminRetentionRun)
	admin.Get("/shares", h.adminShares)
	admin.Post("/shares/:id/revoke", h.adminShareRevoke)
	// Models (issue 29): connections, their models, everyone's usage.
	admin.Get("/models", h.adminModels)
	admin.Post("/models/:id", h.adminModelUpdate)
	admin.Post("/connections", h.adminConnectionCreate)
	admin.Post("/connections/:id", h.adminConnectionUpdate)
	admin.Post("/connections/:id/test", h.adminConnectionTest)
	admin.Post("/connections/:id/delete", h.adminConnectionDelete)
	admin.Get("/usage", h.adminUsage)
}
