package models

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// The admin store methods (models/admin*.go) are the only queries that are not
// scoped by a user: every user's data is theirs to read. They are named
// Admin… and are called from the admin handlers only.

// Sort orders of the admin exchange list, each most first.
const (
	AdminSortActivity = "activity" // last activity
	AdminSortSize     = "size"     // stored bytes
	AdminSortTurns    = "turns"    // user messages
)

// AdminSorts lists the sort orders, the default first.
var AdminSorts = []string{AdminSortActivity, AdminSortSize, AdminSortTurns}

// AdminCursor is a keyset position in the admin exchange list: the sort it
// belongs to, the sort key of the last row shown (UnixMicro of the activity,
// or the size or turn count) and its id.
type AdminCursor struct {
	Sort string
	Key  int64
	ID   int64
}

// String encodes the cursor as an opaque token.
func (c AdminCursor) String() string {
	raw := c.Sort + "." + strconv.FormatInt(c.Key, 10) + "." + strconv.FormatInt(c.ID, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// ParseAdminCursor decodes a token made by AdminCursor.String.
func ParseAdminCursor(token string) (AdminCursor, error) {
	bad := fmt.Errorf("%w: %q", ErrBadCursor, token)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return AdminCursor{}, bad
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 3 || !slices.Contains(AdminSorts, parts[0]) {
		return AdminCursor{}, bad
	}
	key, err1 := strconv.ParseInt(parts[1], 10, 64)
	id, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || id <= 0 {
		return AdminCursor{}, bad
	}
	return AdminCursor{Sort: parts[0], Key: key, ID: id}, nil
}

// AdminExchangeFilter selects one batch (by keyset) of every user's
// exchanges.
// The filters combine; zero values do not filter.
type AdminExchangeFilter struct {
	UserID           int64
	Scope            string
	Agent            string     // the agent used last
	ActiveFrom       *time.Time // last activity at or after
	ActiveBefore     *time.Time // last activity before
	NegativeFeedback bool       // has a reply rated down
	HasErrors        bool       // has an error row
	Title            string     // text in the title (case-insensitive for ASCII on SQLite)
	Family           int64      // only the family of this exchange: its root and all its forks
	Project          int64      // only the chats in this project (by number: its name is the owner's)
	Sort             string     // AdminSort…; "" is by activity
	After            *AdminCursor
	Limit            int
}

// AdminExchangeRow is an exchange as the admin list shows it, with its owner,
// its page and what its log holds.
type AdminExchangeRow struct {
	Exchange
	Username    string
	PageTitle   *string // page exchanges
	PageDeleted bool    // the page is in the bin (an orphan)
	// ParentTitle is the title of the exchange this one was forked from
	// (Exchange.ForkedFromID), for "branch of …"; Forks counts the
	// exchanges forked from this one.
	ParentTitle *string
	Forks       int64
	Messages    int64
	AdminExchangeFacts
}

// AdminExchangeFacts are the counts the admin list shows for an exchange.
// A proposal (an assistant message with an edit_mode) is accepted when a page
// revision names it, rejected when only a rejection does, else open.
type AdminExchangeFacts struct {
	FeedbackUp        int64
	FeedbackDown      int64
	Errors            int64
	ProposalsAccepted int64
	ProposalsRejected int64
	ProposalsOpen     int64
}

// SortKey is the row's key in the given sort order.
func (r *AdminExchangeRow) SortKey(sort string) int64 {
	switch sort {
	case AdminSortSize:
		return r.StoredBytes
	case AdminSortTurns:
		return r.TurnCount
	}
	return r.UpdatedAt.UnixMicro()
}

// adminSortColumn is the column a sort order reads.
func adminSortColumn(sort string) (string, error) {
	switch sort {
	case "", AdminSortActivity:
		return "e.updated_at", nil
	case AdminSortSize:
		return "e.stored_bytes", nil
	case AdminSortTurns:
		return "e.turn_count", nil
	}
	return "", fmt.Errorf("unknown sort %q", sort)
}

// adminExchangeWhere applies the filter's conditions to a query over
// exchanges e.
func (s *Store) adminExchangeWhere(tx *gorm.DB, f AdminExchangeFilter) *gorm.DB {
	if f.UserID != 0 {
		tx = tx.Where("e.user_id = ?", f.UserID)
	}
	if f.Scope != "" {
		tx = tx.Where("e.scope = ?", f.Scope)
	} else {
		// Sub-runs are listed under their parent (AdminSubRuns).
		tx = tx.Where("e.scope <> ?", ScopeSubRun)
	}
	if f.Agent != "" {
		tx = tx.Where("e.agent_type = ?", f.Agent)
	}
	if f.ActiveFrom != nil {
		tx = tx.Where("e.updated_at >= ?", f.ActiveFrom.UTC())
	}
	if f.ActiveBefore != nil {
		tx = tx.Where("e.updated_at < ?", f.ActiveBefore.UTC())
	}
	// Literal 0 and 'error' (not parameters) so that the partial index on
	// rated-down messages and the role index can serve the EXISTS.
	if f.NegativeFeedback {
		tx = tx.Where("EXISTS (SELECT 1 FROM messages m WHERE m.exchange_id = e.id AND m.feedback = 0)")
	}
	if f.HasErrors {
		tx = tx.Where("EXISTS (SELECT 1 FROM messages m WHERE m.exchange_id = e.id AND m.role = 'error')")
	}
	if f.Family != 0 {
		tx = tx.Where("e.id IN (?)", familyMembers(tx, f.Family))
	}
	if f.Project != 0 {
		tx = tx.Where("e.project_id = ?", f.Project)
	}
	if f.Title != "" {
		like := "LIKE" // case-insensitive for ASCII on SQLite
		if s.dialect == "postgres" {
			like = "ILIKE"
		}
		tx = tx.Where("e.title "+like+" ? ESCAPE '\\'", "%"+likeEscape(f.Title)+"%")
	}
	return tx
}

// adminFamilyDepth bounds the walks up and down a family's forks: no data
// can make them loop.
const adminFamilyDepth = 1000

// familyMembers selects the ids of id's family: up to its root, then down
// to every fork of it.
func familyMembers(tx *gorm.DB, id int64) *gorm.DB {
	return tx.Session(&gorm.Session{NewDB: true}).Raw(`WITH RECURSIVE up(id, parent, depth) AS (
			SELECT id, forked_from_id, 0 FROM exchanges WHERE id = ?
			UNION ALL
			SELECT x.id, x.forked_from_id, up.depth + 1 FROM exchanges x JOIN up ON x.id = up.parent WHERE up.depth < ?
		), down(id, depth) AS (
			SELECT id, 0 FROM up WHERE parent IS NULL
			UNION
			SELECT x.id, down.depth + 1 FROM down `+orderedJoin(tx.Dialector.Name())+` exchanges x ON x.forked_from_id = down.id WHERE down.depth < ?
		) SELECT id FROM down`, id, adminFamilyDepth, adminFamilyDepth)
}

// likeEscape makes s match itself in a LIKE pattern with ESCAPE '\'.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// AdminListExchanges returns one batch (by keyset) of every user's exchanges
// that match the filter, in the filter's sort order (then id), most first,
// and the cursor of the next batch (nil at the end). Two queries whatever
// the batch size: the batch (over the sort's index), then the counts of its
// exchanges.
func (s *Store) AdminListExchanges(ctx context.Context, f AdminExchangeFilter) ([]AdminExchangeRow, *AdminCursor, error) {
	col, err := adminSortColumn(f.Sort)
	if err != nil {
		return nil, nil, fmt.Errorf("admin list exchanges: %w", err)
	}
	if f.Sort == "" {
		f.Sort = AdminSortActivity
	}
	if f.Limit <= 0 {
		f.Limit = 50
	}
	db := s.db.WithContext(ctx)
	tx := db.Table("exchanges AS e").
		Select("e.*, u.username, p.title AS page_title, p.deleted_at IS NOT NULL AS page_deleted, f.title AS parent_title, " +
			"(SELECT COUNT(*) FROM exchanges c WHERE c.forked_from_id = e.id) AS forks").
		Joins("JOIN users u ON u.id = e.user_id").
		Joins("LEFT JOIN pages p ON p.id = e.page_id").
		Joins("LEFT JOIN exchanges f ON f.id = e.forked_from_id")
	tx = s.adminExchangeWhere(tx, f)
	if c := f.After; c != nil {
		if c.Sort != f.Sort {
			return nil, nil, fmt.Errorf("admin list exchanges: a %s cursor for a list by %s: %w", c.Sort, f.Sort, ErrBadCursor)
		}
		var key any = c.Key
		if f.Sort == AdminSortActivity {
			key = time.UnixMicro(c.Key).UTC() // as stored: UTC, microseconds
		}
		tx = tx.Where("("+col+" < ? OR ("+col+" = ? AND e.id < ?))", key, key, c.ID)
	}
	var rows []AdminExchangeRow
	// One more than a batch says whether there is a next one.
	if err := tx.Order(col + " DESC, e.id DESC").Limit(f.Limit + 1).Scan(&rows).Error; err != nil {
		return nil, nil, wrap("admin list exchanges", err)
	}
	var next *AdminCursor
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		last := &rows[len(rows)-1]
		next = &AdminCursor{Sort: f.Sort, Key: last.SortKey(f.Sort), ID: last.ID}
	}
	if err := s.adminFacts(ctx, rows); err != nil {
		return nil, nil, err
	}
	return rows, next, nil
}

// AdminCountExchanges counts every user's exchanges that match the filter
// (its sort and cursor aside).
func (s *Store) AdminCountExchanges(ctx context.Context, f AdminExchangeFilter) (int64, error) {
	var n int64
	tx := s.adminExchangeWhere(s.db.WithContext(ctx).Table("exchanges AS e"), f)
	err := tx.Count(&n).Error
	return n, wrap("admin count exchanges", err)
}

// adminFacts fills in the counts of a batch of rows, in one query grouped by
// exchange over the messages' exchange index.
func (s *Store) adminFacts(ctx context.Context, rows []AdminExchangeRow) error {
	if len(rows) == 0 {
		return nil
	}
	ids := make([]int64, len(rows))
	index := make(map[int64]*AdminExchangeRow, len(rows))
	for i := range rows {
		ids[i] = rows[i].ID
		index[rows[i].ID] = &rows[i]
	}
	var facts []struct {
		ExchangeID int64
		Messages   int64
		AdminExchangeFacts
		Proposals int64
	}
	err := s.db.WithContext(ctx).Raw(`
		SELECT m.exchange_id,
			COUNT(*) AS messages,
			SUM(CASE WHEN m.role = 'assistant' AND m.feedback = 1 THEN 1 ELSE 0 END) AS feedback_up,
			SUM(CASE WHEN m.role = 'assistant' AND m.feedback = 0 THEN 1 ELSE 0 END) AS feedback_down,
			SUM(CASE WHEN m.role = 'error' THEN 1 ELSE 0 END) AS errors,
			SUM(CASE WHEN m.edit_mode IS NOT NULL THEN 1 ELSE 0 END) AS proposals,
			SUM(CASE WHEN m.edit_mode IS NOT NULL
				AND EXISTS (SELECT 1 FROM page_revisions r WHERE r.message_id = m.id) THEN 1 ELSE 0 END) AS proposals_accepted,
			SUM(CASE WHEN m.edit_mode IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM page_revisions r WHERE r.message_id = m.id)
				AND EXISTS (SELECT 1 FROM proposal_rejections j WHERE j.message_id = m.id) THEN 1 ELSE 0 END) AS proposals_rejected
		FROM messages m
		WHERE m.exchange_id IN ?
		GROUP BY m.exchange_id`, ids).Scan(&facts).Error
	if err != nil {
		return wrap("admin list exchanges: counts", err)
	}
	for _, f := range facts {
		r := index[f.ExchangeID]
		r.Messages = f.Messages
		r.AdminExchangeFacts = f.AdminExchangeFacts
		r.ProposalsOpen = f.Proposals - f.ProposalsAccepted - f.ProposalsRejected
	}
	return nil
}

// AdminExchange loads any user's exchange with its owner, page and counts.
func (s *Store) AdminExchange(ctx context.Context, id int64) (*AdminExchangeRow, error) {
	var rows []AdminExchangeRow
	err := s.db.WithContext(ctx).Table("exchanges AS e").
		Select("e.*, u.username, p.title AS page_title, p.deleted_at IS NOT NULL AS page_deleted, f.title AS parent_title, "+
			"(SELECT COUNT(*) FROM exchanges c WHERE c.forked_from_id = e.id) AS forks").
		Joins("JOIN users u ON u.id = e.user_id").
		Joins("LEFT JOIN pages p ON p.id = e.page_id").
		Joins("LEFT JOIN exchanges f ON f.id = e.forked_from_id").
		Where("e.id = ?", id).Limit(1).Scan(&rows).Error
	if err != nil {
		return nil, wrap("admin exchange", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("admin exchange %d: %w", id, ErrNotFound)
	}
	if err := s.adminFacts(ctx, rows); err != nil {
		return nil, err
	}
	return &rows[0], nil
}

// AdminAgentTypes lists the agents exchanges were last used with, for the
// admin list's agent filter.
func (s *Store) AdminAgentTypes(ctx context.Context) ([]string, error) {
	var agents []string
	err := s.db.WithContext(ctx).Model(&Exchange{}).Distinct("agent_type").
		Where("agent_type <> ''").Order("agent_type").Pluck("agent_type", &agents).Error
	return agents, wrap("admin agent types", err)
}

// Proposal states, as the admin log names them.
const (
	ProposalAccepted = "accepted"
	ProposalRejected = "rejected"
	ProposalOpen     = "open"
)

// AdminProposalStates says what became of each of the given proposals
// (assistant messages with an edit_mode): accepted when a page revision
// names it, rejected when only a rejection does, open otherwise.
func (s *Store) AdminProposalStates(ctx context.Context, messageIDs []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(messageIDs))
	if len(messageIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ID    int64
		State string
	}
	err := s.db.WithContext(ctx).Raw(`
		SELECT m.id,
			CASE WHEN EXISTS (SELECT 1 FROM page_revisions r WHERE r.message_id = m.id) THEN 'accepted'
				WHEN EXISTS (SELECT 1 FROM proposal_rejections j WHERE j.message_id = m.id) THEN 'rejected'
				ELSE 'open' END AS state
		FROM messages m
		WHERE m.id IN ? AND m.edit_mode IS NOT NULL`, messageIDs).Scan(&rows).Error
	if err != nil {
		return nil, wrap("admin proposal states", err)
	}
	for _, r := range rows {
		out[r.ID] = r.State
	}
	return out, nil
}
