// Package handlers holds Palaver's HTTP surface: fiber handlers for the HTML
// pages and the JSON API, and the middleware around them (session, user,
// CSRF). A handler parses and authorises, makes one store or agent-service
// call, and renders one view or redirects.
package handlers

import (
	"context"
	"log/slog"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/static"
	"palaver/views"
)

// Store is what the handlers need of models.Store.
type Store interface {
	Ping(ctx context.Context) error
	CreateUser(ctx context.Context, username, passwordHash string, admin bool) (*models.User, error)
	UserByID(ctx context.Context, id int64) (*models.User, error)
	UserByUsername(ctx context.Context, username string) (*models.User, error)
	UserByAPIKey(ctx context.Context, keyHash string) (*models.User, error)

	Exchange(ctx context.Context, userID, id int64) (*models.Exchange, error)
	ListExchanges(ctx context.Context, userID int64, q models.ExchangeQuery) ([]models.ExchangeSummary, error)
	RenameExchange(ctx context.Context, userID, id int64, title string) (*models.Exchange, error)
	DeleteExchange(ctx context.Context, userID, id int64) error
	DeleteExchanges(ctx context.Context, userID int64, ids []int64) (int64, error)
	ClearExchanges(ctx context.Context, userID int64, scope string, pageID int64) (int64, int64, error)

	Messages(ctx context.Context, userID, exchangeID int64, at *int64) ([]models.Message, error)
	Message(ctx context.Context, userID, messageID int64) (*models.Message, error)
	SetFeedback(ctx context.Context, userID, messageID int64, feedback *int64, comment *string) (*models.Message, error)
	SetExchangeFeedback(ctx context.Context, userID, exchangeID int64, feedback int64) (*models.Message, error)
	SetJobFeedback(ctx context.Context, userID int64, jobID string, feedback int64) (*models.Message, error)

	AdminStore // the admin area's reads and writes (handlers/admin_auth.go)

	CreatePage(ctx context.Context, userID int64, title, content string) (*models.Page, error)
	Page(ctx context.Context, userID, id int64) (*models.Page, error)
	ListPages(ctx context.Context, userID int64) ([]models.PageSummary, error)
	UpdatePage(ctx context.Context, userID, id int64, title *string, content string) (*models.Page, error)
	RestoreRevision(ctx context.Context, userID, pageID, revisionID int64) (*models.Page, error)
	Revisions(ctx context.Context, userID, pageID int64) ([]models.RevisionSummary, error)
	DeletePage(ctx context.Context, userID, id int64) (int64, int64, error)
	AcceptProposal(ctx context.Context, userID, pageID, messageID int64, apply models.ApplyFunc) (*models.Page, error)
	RejectProposal(ctx context.Context, userID, pageID, messageID int64) error
	ProposalStates(ctx context.Context, userID, pageID int64, messageIDs []int64) (map[int64]bool, map[int64]bool, error)
}

// Config holds the settings the handlers read.
type Config struct {
	AllowRegistration bool
}

// Deps are everything the handlers use. Nothing is global.
type Deps struct {
	Store    Store
	Sessions *scs.SessionManager
	Agents   *agents.Service
	Hub      *agents.Hub // live events for the user's open tabs and streams
	Assets   *static.Assets
	Logger   *slog.Logger
	Config   Config
}

// Handlers carries the dependencies into every handler.
type Handlers struct {
	store    Store
	sessions *scs.SessionManager
	agents   *agents.Service
	hub      *agents.Hub
	assets   *static.Assets
	markdown *views.Markdown
	log      *slog.Logger
	cfg      Config
}

// Limits of the HTTP surface.
const (
	bodyLimit      = 1 << 20 // 1 MiB
	minPassword    = 8
	maxUsername    = 64
	maxTitleLength = 200
	maxComment     = 2000     // a feedback comment, in characters (HTML and API)
	readBufferSize = 16 << 10 // the request line and headers; long cursors and cookies fit
)

// New builds the fiber app with every route.
func New(d Deps) *fiber.App {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Hub == nil && d.Agents != nil {
		d.Hub = d.Agents.Hub() // where the turns publish
	}
	if d.Hub == nil {
		d.Hub = agents.NewHub() // nothing publishes: live views only catch up
	}
	h := &Handlers{
		store: d.Store, sessions: d.Sessions, agents: d.Agents, hub: d.Hub, assets: d.Assets,
		markdown: views.NewMarkdown(), log: d.Logger, cfg: d.Config,
	}
	app := fiber.New(fiber.Config{
		AppName:               "palaver",
		BodyLimit:             bodyLimit,
		ReadBufferSize:        readBufferSize,
		ReadTimeout:           30 * time.Second,
		IdleTimeout:           2 * time.Minute,
		ErrorHandler:          h.errorHandler,
		DisableStartupMessage: true,
	})
	app.Use(h.limitQuery) // before anything reads the query (handlers/limits.go)
	h.routes(app)
	return app
}
