// Package handlers holds Palaver's HTTP surface: fiber handlers for the HTML
// pages and the JSON API, and the middleware around them (session, user,
// CSRF). A handler parses and authorises, makes one store, agent-service or
// screens call, and renders one view or redirects.
//
// Interfaces only where a test has a fake or there are several
// implementations: Observer (nobody, package metrics), and the agents.Slots
// and throttle.Throttle it is given (in memory, in PostgreSQL). The store,
// the agent service and the hub are concrete (*models.Store, …), so a new
// query is written once.
//
// A refused input is a *Refusal the handler returns (refusal.go); the error
// handler alone answers it as the request needs (JSON, an alert, the form's
// screen again) and logs it once.
package handlers

import (
	"crypto/rand"
	"log/slog"
	"net/netip"
	"time"

	"github.com/alexedwards/scs/v2"
	fws "github.com/fasthttp/websocket"
	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/screens"
	"palaver/static"
	"palaver/throttle"
	"palaver/views"
)

// Config holds the settings the handlers read.
type Config struct {
	// AllowRegistration lets visitors create accounts, by the form or by a
	// first sign-in through a provider (OIDC).
	AllowRegistration bool
	// PasswordLoginOff hides the password form and refuses password
	// sign-in and registration: people sign in through OIDC's providers.
	PasswordLoginOff bool
	// OIDC is single sign-on through OpenID providers (auth_oidc.go).
	OIDC OIDCConfig
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
	// MaxImportStored bounds the bytes one import may store, copies of
	// branches included (besides 10 times the file's size); 0 means 1 GiB.
	MaxImportStored int64
	// ImportDeadline bounds the time an upload may take, all of it (not
	// only between reads); 0 means 10 minutes.
	ImportDeadline time.Duration
	// DBDeadline bounds one request's database work; 0 means 15s
	// (db_deadline.go). Tests shorten it to show that a wait for a reply
	// is not cut short by it.
	DBDeadline time.Duration
	// Now is the clock of share links' expiry (tests); nil: the time.
	Now func() time.Time
	// MaxFileBytes, MaxFilesPerMessage and UserQuotaBytes bound files
	// (issue 26); 0 means 20 MiB, 10 and 1 GiB. UploadDeadline bounds the
	// time a file's upload may take; 0 means 2 minutes.
	MaxFileBytes       int64
	MaxFilesPerMessage int
	UserQuotaBytes     int64
	UploadDeadline     time.Duration
}

// Deps are everything the handlers use. Nothing is global.
type Deps struct {
	Store    *models.Store
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
	store    *models.Store
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
	csp       string // the Content-Security-Policy (headers.go)
	observer  Observer
	exports   *exportGate   // the full exports running (export_gate.go)
	storing   chan struct{} // the uploads held in memory to be checked and stored (api_files.go)

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
	if d.Config.DBDeadline <= 0 {
		d.Config.DBDeadline = requestDBTimeout
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
		throttle: d.Throttle, csrfKey: d.CSRFKey, observer: d.Observer, csp: policyWithForms(formActionOrigins(d.Config.OIDC)),
		exports: newExportGate(d.Config.ExportsPerUser, d.Config.ExportsAtOnce),
		storing: make(chan struct{}, fileStoringAtOnce),
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
	app.Use(h.securityHeaders) // first: every answer carries them (handlers/headers.go)
	app.Use(h.observe)         // the request id, the request log and metrics (handlers/observe.go)
	app.Use(h.limitQuery)      // before anything reads the query (handlers/limits.go)
	app.Use(h.dbDeadline)      // a database that does not answer is a 503, not a hang (handlers/db_deadline.go)
	app.Use(h.limitBody)       // before anything reads the body (handlers/limits.go)
	h.routes(app)
	return app
}
