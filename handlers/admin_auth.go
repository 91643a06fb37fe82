package handlers

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// AdminStore is what the admin area needs of models.Store: the only reads
// not scoped by a user (the Admin… methods, called from admin handlers only),
// plus the owner's view of the audit trail.
type AdminStore interface {
	AdminListExchanges(ctx context.Context, f models.AdminExchangeFilter) ([]models.AdminExchangeRow, *models.AdminCursor, error)
	AdminCountExchanges(ctx context.Context, f models.AdminExchangeFilter) (int64, error)
	AdminExchange(ctx context.Context, id int64) (*models.AdminExchangeRow, error)
	AdminAgentTypes(ctx context.Context) ([]string, error)
	AdminProposalStates(ctx context.Context, messageIDs []int64) (map[int64]string, error)
	AdminOpenExchange(ctx context.Context, adminID, exchangeID int64, reason string) (*models.AdminExchangeRow, []models.Message, *models.AdminAudit, error)
	AdminAuditLog(ctx context.Context, q models.AuditQuery) ([]models.AuditEntry, int64, error)
	ExchangeAdminViews(ctx context.Context, userID, exchangeID int64) (models.AdminViews, error)

	AdminOverview(ctx context.Context, days int, now time.Time) (*models.AdminOverview, error)

	AdminListUsers(ctx context.Context, after string, limit int) ([]models.AdminUserRow, bool, error)
	AdminUsernames(ctx context.Context) ([]models.User, error)
	AdminUser(ctx context.Context, id int64) (*models.AdminUserRow, error)
	AdminSetAdmin(ctx context.Context, actorID, userID int64, admin bool) (*models.User, error)
	AdminSetDisabled(ctx context.Context, actorID, userID int64, disabled bool) (*models.User, error)
	AdminSetPassword(ctx context.Context, actorID, userID int64, passwordHash string, revokeKeys bool) (*models.User, int64, error)
	AdminDeleteUser(ctx context.Context, actorID, userID int64) (models.UserDeletion, error)

	AdminOrphans(ctx context.Context, now time.Time, limit int) ([]models.Orphan, int64, error)
	AdminPurgeOrphans(ctx context.Context, now time.Time) (int64, int64, error)
	Settings(ctx context.Context) (*models.Settings, error)
	AdminSetRetention(ctx context.Context, enabled bool, days int64) (*models.Settings, error)
	RunRetention(ctx context.Context, r models.RetentionRequest) (*models.RetentionRun, error)
	AdminRetentionCandidates(ctx context.Context, cutoff time.Time, limit int) ([]models.RetentionCandidate, error)
	AdminRetentionRuns(ctx context.Context, limit int) ([]models.RetentionRunRow, error)
	AdminDatabaseSize(ctx context.Context) (models.DatabaseSize, error)
	AdminVacuum(ctx context.Context) (models.VacuumResult, error)
	Dialect() string
}

// sessAdminFlash holds the message an admin action leaves for the next page.
const sessAdminFlash = "admin_flash"

// requireAdmin guards every /admin route: visitors who are not signed in go
// to the login page; anyone else who is not an administrator gets the same
// 404 as a page that does not exist.
func (h *Handlers) requireAdmin(c *fiber.Ctx) error {
	u := currentUser(c)
	if u == nil {
		return redirect(c, paths.Login)
	}
	if !u.IsAdmin {
		return fiber.ErrNotFound
	}
	return c.Next()
}

// adminChrome is the frame of an admin page, with the message the last
// action left (taken from the session: it shows once).
func (h *Handlers) adminChrome(c *fiber.Ctx, title, section string) views.AdminChrome {
	ch := views.AdminChrome{Base: h.base(c, title, "admin"), Section: section}
	msg := h.sessions.PopString(c.UserContext(), sessAdminFlash)
	if rest, ok := strings.CutPrefix(msg, "!"); ok {
		ch.Flash, ch.FlashError = rest, true
	} else {
		ch.Flash = msg
	}
	return ch
}

// adminFlash leaves a message for the next admin page ("!" marks a refusal).
func (h *Handlers) adminFlash(c *fiber.Ctx, msg string) {
	h.sessions.Put(c.UserContext(), sessAdminFlash, msg)
}

// adminDone ends an admin action as done does, with msg for the admin page
// the browser goes to; a fragment shows the outcome itself, and leaves none
// (it would wait for whichever admin page comes next).
func (h *Handlers) adminDone(c *fiber.Ctx, back, msg string, fragment func() error) error {
	if !inPlace(c, fragment) {
		h.adminFlash(c, msg)
	}
	return done(c, back, fragment)
}

// adminIDParam reads the :id of an admin route; anything but a positive
// integer names nothing: 404.
func adminIDParam(c *fiber.Ctx) (int64, error) {
	return pathID(c, "id")
}

// adminBackPath matches the admin pages an action may send the browser back to.
var adminBackPath = regexp.MustCompile(`^/admin(/(users|housekeeping|exchanges|audit))?/?$`)

// adminBackTo is where a plain admin form goes when done: the admin page it
// was posted from (the Referer, if it is one, with its query), else fallback.
func adminBackTo(c *fiber.Ctx, fallback string) string {
	ref, err := url.Parse(c.Get(fiber.HeaderReferer))
	if err != nil || !adminBackPath.MatchString(ref.Path) || (ref.Host != "" && ref.Host != c.Hostname()) {
		return fallback
	}
	if ref.RawQuery != "" {
		return ref.Path + "?" + ref.RawQuery
	}
	return ref.Path
}
