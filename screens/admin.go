package screens

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// AdminStore is what the admin screens read of models.Store: the only reads
// not scoped by a user, for the admin area's handlers alone.
type AdminStore interface {
	AdminOverview(ctx context.Context, days int, now time.Time) (*models.AdminOverview, error)
	AdminListExchanges(ctx context.Context, f models.AdminExchangeFilter) ([]models.AdminExchangeRow, *models.AdminCursor, error)
	AdminCountExchanges(ctx context.Context, f models.AdminExchangeFilter) (int64, error)
	AdminExchange(ctx context.Context, id int64) (*models.AdminExchangeRow, error)
	AdminAgentTypes(ctx context.Context) ([]string, error)
	AdminUsernames(ctx context.Context) ([]models.User, error)
	AdminProposalStates(ctx context.Context, messageIDs []int64) (map[int64]string, error)
	AdminSubRuns(ctx context.Context, parentID int64) ([]models.SubRunView, error)
	AdminAuditLog(ctx context.Context, q models.AuditQuery) ([]models.AuditEntry, int64, error)
	ExchangeAdminViews(ctx context.Context, userID, exchangeID int64) (models.AdminViews, error)
	AdminListUsers(ctx context.Context, after string, limit int) ([]models.AdminUserRow, bool, error)
	AdminUser(ctx context.Context, id int64) (*models.AdminUserRow, error)
	AdminOrphans(ctx context.Context, now time.Time, limit int) ([]models.Orphan, int64, error)
	CountBlobs(ctx context.Context) (models.BlobCounts, error)
	StorageByUser(ctx context.Context) (map[int64]int64, error)
	Settings(ctx context.Context) (*models.Settings, error)
	AdminRetentionCandidates(ctx context.Context, cutoff time.Time, limit int) ([]models.RetentionCandidate, error)
	AdminRetentionRuns(ctx context.Context, limit int) ([]models.RetentionRunRow, error)
	AdminDatabaseSize(ctx context.Context) (models.DatabaseSize, error)
	Dialect() string
}

// AdminTime formats a stored time for the admin screens: "Jun 10, 2026 14:05".
func AdminTime(t time.Time) string { return t.Local().Format("2 Jan 2006 15:04") }

// adminTimeFull is the precise form, for tooltips and datetime attributes.
func adminTimeFull(t time.Time) string { return t.Local().Format(time.RFC3339) }

// AdminAudit builds the audit log: who opened whose exchange, newest first,
// one batch by keyset (q), in the frame ch.
func (s *Screens) AdminAudit(ctx context.Context, ch views.AdminChrome, q models.AuditQuery) (views.AdminAuditScreen, error) {
	entries, next, err := s.admin.AdminAuditLog(ctx, q)
	if err != nil {
		return views.AdminAuditScreen{}, err
	}
	p := views.AdminAuditScreen{AdminChrome: ch, Exchange: q.ExchangeID}
	link := func(before int64) string {
		v := url.Values{}
		if q.ExchangeID != 0 {
			v.Set("exchange", strconv.FormatInt(q.ExchangeID, 10))
		}
		if before != 0 {
			v.Set("before", strconv.FormatInt(before, 10))
		}
		return paths.WithQuery(paths.AdminAudit, v)
	}
	if next != 0 {
		p.NextURL = link(next)
	}
	if q.BeforeID != 0 {
		p.FirstURL = link(0)
	}
	for _, e := range entries {
		it := views.AdminAuditItem{
			ID: e.ID, When: AdminTime(e.CreatedAt), WhenFull: adminTimeFull(e.CreatedAt),
			Admin: e.AdminName, Owner: e.OwnerName, Reason: e.Reason,
			Exchange: "#" + strconv.FormatInt(e.ExchangeRef, 10) + " (deleted)",
		}
		if e.AdminID == nil {
			it.Admin += " (deleted)"
		}
		if e.OwnerID == nil {
			it.Owner += " (deleted)"
		}
		if e.ExchangeID != nil && e.ExchangeTitle != nil {
			it.Exchange, it.URL = DisplayTitle(*e.ExchangeTitle), paths.AdminExchange(*e.ExchangeID)
		}
		p.Entries = append(p.Entries, it)
	}
	return p, nil
}
