// Package handlers holds Palaver's HTTP surface: fiber handlers for the HTML
// pages and the JSON API, and the middleware around them (session, user,
// CSRF). A handler parses and authorises, makes one store or agent-service
// call, and renders one view or redirects.
package handlers

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/netip"
	"time"

	"github.com/alexedwards/scs/v2"
	fws "github.com/fasthttp/websocket"
	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/dataport"
	"palaver/models"
	"palaver/screens"
	"palaver/static"
	"palaver/throttle"
	"palaver/views"
)

// Store is what the handlers need of models.Store.
type Store interface {
	Ping(ctx context.Context) error
	CreateUser(ctx context.Context, username, passwordHash string, admin bool) (*models.User, error)
	UserByID(ctx context.Context, id int64) (*models.User, error)
	UserByUsername(ctx context.Context, username string) (*models.User, error)
	UserByAPIKey(ctx context.Context, keyHash string) (*models.User, error)
	APIKeys(ctx context.Context, userID int64) ([]models.APIKey, error)
	CreateAPIKey(ctx context.Context, userID int64, name, keyHash string) (*models.APIKey, error)
	DeleteAPIKey(ctx context.Context, userID, id int64) error
	SetOwnPassword(ctx context.Context, userID int64, passwordHash string) (*models.User, error)
	OwnedCounts(ctx context.Context, userID int64) (models.UserDeletion, error)
	DeleteOwnAccount(ctx context.Context, userID int64) (models.UserDeletion, error)

	screens.Store // what the screens read (package screens)

	RenameExchange(ctx context.Context, userID, id int64, title string) (*models.Exchange, error)
	UpdateExchange(ctx context.Context, userID, id int64, u models.ExchangeUpdate) (*models.Exchange, error)
	Summary(ctx context.Context, userID, id int64) (*models.ExchangeSummary, error)
	Search(ctx context.Context, userID int64, q models.SearchQuery) ([]models.SearchHit, error)
	Family(ctx context.Context, userID, exchangeID int64) ([]models.Exchange, error)
	dataport.Store    // the user's data, for exports
	dataport.Importer // and imports
	ExportExchange(ctx context.Context, userID, id int64) (*models.ExportedExchange, error)
	MessagesBefore(ctx context.Context, userID, exchangeID int64, beforeSeq *int64, limit int) ([]models.Message, error)
	DeleteExchange(ctx context.Context, userID, id int64) error
	DeleteExchanges(ctx context.Context, userID int64, ids []int64) (int64, error)
	ClearExchanges(ctx context.Context, userID int64, scope string, pageID int64) (int64, int64, error)

	Message(ctx context.Context, userID, messageID int64) (*models.Message, error)
	SetFeedback(ctx context.Context, userID, messageID int64, feedback *int64, comment *string) (*models.Message, error)
	SetExchangeFeedback(ctx context.Context, userID, exchangeID int64, feedback int64) (*models.Message, error)
	SetJobFeedback(ctx context.Context, userID int64, jobID string, feedback int64) (*models.Message, error)

	AdminStore // the admin area's reads and writes (handlers/admin_auth.go)

	CreatePage(ctx context.Context, userID int64, title, content string) (*models.Page, error)
	UpdatePage(ctx context.Context, userID, id int64, title *string, content string) (*models.Page, error)
	RestoreRevision(ctx context.Context, userID, pageID, revisionID int64) (*models.Page, error)
	DeletePage(ctx context.Context, userID, id int64) (int64, int64, error)
	AcceptProposal(ctx context.Context, userID, pageID, messageID int64, apply models.ApplyFunc) (*models.Page, error)
	RejectProposal(ctx context.Context, userID, pageID, messageID int64) error
}

// Config holds the settings the handlers read.
type Config struct {
	AllowRegistration bool
	// StreamKeepAlive is how often an idle event stream sends a comment
	// line, which is also how soon a client that went away is noticed and
	// its stream slot freed; 0 means 15s.
	StreamKeepAlive time.Duration
	// TrustedProxies are the peers whose X-Forwarded-* headers count (the
	// client's address, scheme and host); from anyone else they are ignored.
	TrustedProxies []netip.Prefix
	// ExportsPerUser and ExportsAtOnce bound the full exports running at
	// once, a user's and everyone's; 0 means 2 and 4 (export_gate.go).
	ExportsPerUser, ExportsAtOnce int
	// ExportWriteTimeout is the longest an export's write may wait on its
	// client before the export ends; 0 means 30s.
	ExportWriteTimeout time.Duration
	// MaxImportBytes is the largest file an import takes; 0 means 256 MiB.
	MaxImportBytes int64
}

// Deps are everything the handlers use. Nothing is global.
type Deps struct {
	Store    Store
	Sessions *scs.SessionManager
	Agents   *agents.Service
	Hub      *agents.Hub // live events for the user's open tabs and streams
	// Slots bounds each user's live websockets and event streams; nil
	// counts them in this process's memory.
	Slots  agents.Slots
	Assets *static.Assets
	Logger *slog.Logger
	Config Config
	// Throttle counts failed sign-ins and registrations (auth.go); nil: a
	// throttle.Memory in this process.
	Throttle throttle.Throttle
	// CSRFKey signs the CSRF tokens of visitors, who have no session
	// (session.go). Processes sharing a database share it
	// (models.Store.ServerSecret); nil: a random key for this process.
	CSRFKey []byte
	// Observer hears the requests and live connections (metrics); nil:
	// nobody.
	Observer Observer
}

// Handlers carries the dependencies into every handler.
type Handlers struct {
	store    Store
	sessions *scs.SessionManager
	agents   *agents.Service
	hub      *agents.Hub
	slots    agents.Slots
	assets   *static.Assets
	screens  *screens.Screens // the view models of the screens, for requests and the live connection
	// liveCache holds the live connections' fragments that many tabs
	// receive alike, rendered once.
	liveCache *views.LiveCache
	log       *slog.Logger
	cfg       Config
	throttle  throttle.Throttle
	csrfKey   []byte
	observer  Observer
	exports   *exportGate // the full exports running (export_gate.go)

	// liveFrames holds whole live messages many tabs receive alike,
	// framed once (live_frames.go).
	liveFrames *views.Memo[liveFrameKey, *fws.PreparedMessage]
}

// Limits of the HTTP surface.
const (
	bodyLimit      = 1 << 20 // 1 MiB
	maxUsername    = 64      // what an older account's name may have (accounts.MaxUsername for new ones)
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
	if d.Slots == nil {
		d.Slots = agents.NewMemorySlots()
	}
	if d.Config.StreamKeepAlive <= 0 {
		d.Config.StreamKeepAlive = 15 * time.Second
	}
	if d.Throttle == nil {
		d.Throttle = throttle.NewMemory(nil, 0)
	}
	if d.Config.ExportWriteTimeout <= 0 {
		d.Config.ExportWriteTimeout = exportWriteTimeout
	}
	if d.Observer == nil {
		d.Observer = noObserver{}
	}
	if d.CSRFKey == nil {
		d.CSRFKey = make([]byte, 32)
		_, _ = rand.Read(d.CSRFKey) // never fails (crypto/rand)
	}
	h := &Handlers{
		store: d.Store, sessions: d.Sessions, agents: d.Agents, hub: d.Hub, slots: d.Slots, assets: d.Assets,
		screens: screens.New(d.Store, d.Store, views.NewMarkdown()), liveCache: views.NewLiveCache(),
		liveFrames: views.NewMemo[liveFrameKey, *fws.PreparedMessage](liveFramesKept), log: d.Logger, cfg: d.Config,
		throttle: d.Throttle, csrfKey: d.CSRFKey, observer: d.Observer,
		exports: newExportGate(d.Config.ExportsPerUser, d.Config.ExportsAtOnce),
	}
	proxies := make([]string, len(d.Config.TrustedProxies))
	for i, p := range d.Config.TrustedProxies {
		proxies[i] = p.String()
	}
	app := fiber.New(fiber.Config{
		AppName:        "palaver",
		BodyLimit:      bodyLimit,
		ReadBufferSize: readBufferSize,
		ReadTimeout:    30 * time.Second,
		IdleTimeout:    2 * time.Minute,
		ErrorHandler:   h.errorHandler,
		// Bodies stream: limitBody holds every route but an import's to
		// bodyLimit (handlers/limits.go). Multipart forms are not read ahead
		// either, which would spool any size to temporary files before a
		// handler could refuse it.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		DisableStartupMessage:        true,

		// Forwarded headers count only from the trusted proxies (none by
		// default): otherwise any client could pick the scheme and host that
		// the websocket's origin check compares with (c.Protocol,
		// c.Hostname). The client's address is clientAddr's (client_addr.go).
		EnableTrustedProxyCheck: true,
		TrustedProxies:          proxies,
	})
	app.Use(securityHeaders) // first: every answer carries them (handlers/headers.go)
	app.Use(h.observe)       // the request id, the request log and metrics (handlers/observe.go)
	app.Use(h.limitQuery)    // before anything reads the query (handlers/limits.go)
	app.Use(dbDeadline)      // a database that does not answer is a 503, not a hang (handlers/db_deadline.go)
	app.Use(h.limitBody)     // before anything reads the body (handlers/limits.go)
	h.routes(app)
	return app
}
