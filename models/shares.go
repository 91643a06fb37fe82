package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Share links (issue 28). A share is a snapshot of one exchange's log as of
// a seq: since the log is append-only, the entries up to AtSeq are the
// snapshot, and the share row keeps only the seq and the title as it stood.
// A viewer reads it by its token alone (ShareByToken, SharedMessages),
// never by the owner's ids; what a shared message carries is SharedMessage.

// Visibilities of a share.
const (
	ShareLink  = "link"  // anyone with the link
	ShareUsers = "users" // signed-in users of this Palaver only
)

// Share is one link to a snapshot of an exchange.
type Share struct {
	ID         int64  `gorm:"primaryKey"`
	UserID     int64  `gorm:"not null"`
	ExchangeID int64  `gorm:"not null"`
	Token      string `gorm:"not null"`
	Title      string `gorm:"not null"` // the exchange's title when the snapshot was taken
	AtSeq      int64  `gorm:"not null"`
	Visibility string `gorm:"not null"`
	ShowOwner  bool   `gorm:"not null"`
	ExpiresAt  *time.Time
	RevokedAt  *time.Time
	RevokedBy  *string   // "owner" or the administrator's name
	Views      int64     `gorm:"not null"`
	CreatedAt  time.Time `gorm:"not null"`
	UpdatedAt  time.Time `gorm:"not null"`
}

// Live says whether the share's link opens at t: not revoked, not expired.
func (sh *Share) Live(t time.Time) bool {
	return sh.RevokedAt == nil && (sh.ExpiresAt == nil || t.Before(*sh.ExpiresAt))
}

// SharedCopy marks an exchange continued from a share link.
type SharedCopy struct {
	ExchangeID int64     `gorm:"primaryKey;autoIncrement:false"`
	CreatedAt  time.Time `gorm:"not null"`
}

// ShareNew is a share to make of one of the user's exchanges.
type ShareNew struct {
	UserID, ExchangeID int64
	AtSeq              *int64 // nil: the log's last entry
	Visibility         string
	ShowOwner          bool
	ExpiresAt          *time.Time
	Token              string // the caller's random token
	At                 time.Time
}

// ErrNothingToShare refuses a share of a conversation with no entries yet.
var ErrNothingToShare = errors.New("this conversation has nothing to share yet")

// sharedRoles are the entries a share shows: the conversation itself, not
// the tool calls, error rows or anything a sub-run did.
var sharedRoles = []string{RoleUser, RoleAssistant}

// CreateShare makes a share of the user's exchange as of AtSeq (ErrBadSeq
// outside the log, ErrNotFound for another user's exchange or a sub-run).
func (s *Store) CreateShare(ctx context.Context, n ShareNew) (*Share, error) {
	ex, err := s.Exchange(ctx, n.UserID, n.ExchangeID)
	if err == nil && ex.Scope == ScopeSubRun {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("create share: %w", err)
	}
	last, err := s.LastSeq(ctx, n.UserID, n.ExchangeID)
	if err != nil {
		return nil, fmt.Errorf("create share: %w", err)
	}
	at := last
	if n.AtSeq != nil {
		at = *n.AtSeq
	}
	if last < 0 {
		return nil, fmt.Errorf("create share: %w", ErrNothingToShare)
	}
	if at < 0 || at > last {
		return nil, fmt.Errorf("create share: %w", ErrBadSeq)
	}
	sh := &Share{UserID: n.UserID, ExchangeID: n.ExchangeID, Token: n.Token, Title: ex.Title, AtSeq: at,
		Visibility: n.Visibility, ShowOwner: n.ShowOwner, ExpiresAt: n.ExpiresAt, CreatedAt: n.At, UpdatedAt: n.At}
	if err := s.db.WithContext(ctx).Create(sh).Error; err != nil {
		return nil, wrap("create share", err)
	}
	return sh, nil
}

// Shares lists the user's shares, live or not, newest first.
func (s *Store) Shares(ctx context.Context, userID int64) ([]Share, error) {
	var out []Share
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("id DESC").Find(&out).Error
	return out, wrap("shares", err)
}

// Share loads one of the user's shares.
func (s *Store) Share(ctx context.Context, userID, id int64) (*Share, error) {
	var sh Share
	err := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", id, userID).Take(&sh).Error
	return &sh, wrap("share", err)
}

// ShareUpdate changes a share: Resnapshot moves it to the log's last entry
// (and the title as it is now), keeping its token; SetExpiry sets ExpiresAt
// (nil: never).
type ShareUpdate struct {
	Resnapshot bool
	SetExpiry  bool
	ExpiresAt  *time.Time
	At         time.Time
}

// UpdateShare changes one of the user's live shares (a revoked one is
// ErrNotFound: its link is gone for good).
func (s *Store) UpdateShare(ctx context.Context, userID, id int64, u ShareUpdate) (*Share, error) {
	sh, err := s.Share(ctx, userID, id)
	if err == nil && sh.RevokedAt != nil {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("update share: %w", err)
	}
	set := map[string]any{"updated_at": u.At}
	if u.Resnapshot {
		ex, err := s.Exchange(ctx, userID, sh.ExchangeID)
		if err != nil {
			return nil, fmt.Errorf("update share: %w", err)
		}
		last, err := s.LastSeq(ctx, userID, sh.ExchangeID)
		if err != nil {
			return nil, fmt.Errorf("update share: %w", err)
		}
		set["at_seq"], set["title"] = last, ex.Title
	}
	if u.SetExpiry {
		set["expires_at"] = u.ExpiresAt
	}
	if err := s.db.WithContext(ctx).Model(&Share{}).Where("id = ? AND user_id = ?", id, userID).
		Updates(set).Error; err != nil {
		return nil, wrap("update share", err)
	}
	return s.Share(ctx, userID, id)
}

// RevokeShare ends one of the user's shares: its link answers 404 from now
// on. Revoking a revoked share changes nothing.
func (s *Store) RevokeShare(ctx context.Context, userID, id int64, at time.Time) error {
	if _, err := s.Share(ctx, userID, id); err != nil {
		return fmt.Errorf("revoke share: %w", err)
	}
	err := s.db.WithContext(ctx).Model(&Share{}).Where("id = ? AND user_id = ? AND revoked_at IS NULL", id, userID).
		Updates(map[string]any{"revoked_at": at, "revoked_by": "owner", "updated_at": at}).Error
	return wrap("revoke share", err)
}

// ShareByToken is the live share a link names at t, with its owner's
// display name; a token that is unknown, revoked or expired is ErrNotFound.
func (s *Store) ShareByToken(ctx context.Context, token string, t time.Time) (*Share, string, error) {
	var sh Share
	if err := s.db.WithContext(ctx).Where("token = ?", token).Take(&sh).Error; err != nil {
		return nil, "", wrap("share by token", err)
	}
	if !sh.Live(t) {
		return nil, "", wrap("share by token", ErrNotFound)
	}
	var owner User
	if err := s.db.WithContext(ctx).Select("username").Take(&owner, sh.UserID).Error; err != nil {
		return nil, "", wrap("share by token", err)
	}
	return &sh, owner.Username, nil
}

// CountShareView counts one open of a share's link.
func (s *Store) CountShareView(ctx context.Context, id int64) error {
	err := s.db.WithContext(ctx).Model(&Share{}).Where("id = ?", id).
		UpdateColumn("views", gorm.Expr("views + 1")).Error
	return wrap("count share view", err)
}

// SharedMessage is one entry of a share, with exactly what a viewer may
// see: no id of the owner's rows, no feedback, no tool or sub-run detail.
// Files are the entry's attachments, which a viewer reads through the
// share's own route (SharedFile), never the owner's.
type SharedMessage struct {
	Seq       int64
	Role      string
	Content   string
	CreatedAt time.Time
	Files     []File `gorm:"-"`
}

// SharedMessages reads a share's snapshot as of seq (a viewer's page may
// hold a seq from before an update): the exchange's user and assistant
// entries up to it, with their files. seq beyond the share's own is cut to
// it.
func (s *Store) SharedMessages(ctx context.Context, sh *Share, seq int64) ([]SharedMessage, error) {
	seq = min(seq, sh.AtSeq)
	var out []SharedMessage
	err := s.db.WithContext(ctx).Model(&Message{}).Select("seq, role, content, created_at").
		Where("exchange_id = ? AND seq IS NOT NULL AND seq <= ? AND role IN ?", sh.ExchangeID, seq, sharedRoles).
		Order("seq").Scan(&out).Error
	if err != nil {
		return nil, wrap("shared messages", err)
	}
	var rows []struct {
		EntrySeq int64
		File
	}
	// The snapshot's message ids stay in this query: only seqs come out.
	err = s.sharedAttachments(ctx, sh, seq).Select("m.seq AS entry_seq, f.*").
		Order("m.seq, a.position").Scan(&rows).Error
	if err != nil {
		return nil, wrap("shared messages", err)
	}
	at := make(map[int64]int, len(out))
	for i, m := range out {
		at[m.Seq] = i
	}
	for _, r := range rows {
		if i, ok := at[r.EntrySeq]; ok {
			out[i].Files = append(out[i].Files, r.File)
		}
	}
	return out, nil
}

// sharedAttachments are the attachments of a share's entries up to seq:
// message_attachments a, messages m, files f of the share's owner.
func (s *Store) sharedAttachments(ctx context.Context, sh *Share, seq int64) *gorm.DB {
	return s.db.WithContext(ctx).Table("message_attachments AS a").
		Joins("JOIN messages m ON m.id = a.message_id").Joins("JOIN files f ON f.id = a.file_id").
		Where("m.exchange_id = ? AND m.seq IS NOT NULL AND m.seq <= ? AND m.role IN ? AND f.user_id = ?",
			sh.ExchangeID, min(seq, sh.AtSeq), sharedRoles, sh.UserID)
}

// SharedFile gives a file of a share's snapshot and its bytes (or its
// thumbnail's): only a file an entry of the snapshot holds; any other id,
// the owner's other files included, is ErrNotFound like an unknown one.
func (s *Store) SharedFile(ctx context.Context, sh *Share, fileID int64, thumbnail bool) (*File, []byte, error) {
	var n int64
	if err := s.sharedAttachments(ctx, sh, sh.AtSeq).Where("a.file_id = ?", fileID).Count(&n).Error; err != nil {
		return nil, nil, wrap("shared file", err)
	}
	if n == 0 {
		return nil, nil, wrap("shared file", ErrNotFound)
	}
	return s.FileData(ctx, sh.UserID, fileID, thumbnail)
}

// ContinueShare copies a share's snapshot as of seq into a new general
// exchange of userID, marked as continued from a shared link. The copy
// names nothing of the owner's: no fork link, no copy_of, its entries
// numbered afresh; deleting the owner's exchange leaves it as it is.
func (s *Store) ContinueShare(ctx context.Context, userID int64, sh *Share, seq int64, at time.Time) (*Exchange, error) {
	seq = min(seq, sh.AtSeq)
	var ex *Exchange
	err := s.transactLarge(ctx, func(tx *gorm.DB) error {
		var agent string
		if err := tx.Model(&Exchange{}).Select("agent_type").Where("id = ?", sh.ExchangeID).Scan(&agent).Error; err != nil {
			return err
		}
		ex = &Exchange{UserID: userID, Scope: ScopeGeneral, Title: sh.Title, AgentType: agent,
			CreatedAt: at, UpdatedAt: at, TurnStatus: TurnIdle}
		if err := tx.Create(ex).Error; err != nil {
			return err
		}
		if err := tx.Create(&SharedCopy{ExchangeID: ex.ID, CreatedAt: at}).Error; err != nil {
			return err
		}
		// Entries are originals of the new exchange (copy_of NULL): the
		// insert triggers count them like any written entry.
		if err := tx.Exec(`INSERT INTO messages (exchange_id, seq, role, content, agent_type, created_at, uid)
			SELECT ?, ROW_NUMBER() OVER (ORDER BY seq) - 1, role, content, agent_type, created_at, `+s.sharedUIDSQL()+`
			FROM messages WHERE exchange_id = ? AND seq IS NOT NULL AND seq <= ? AND role IN ? ORDER BY seq`,
			ex.ID, uidPrefix(), sh.ExchangeID, seq, sharedRoles).Error; err != nil {
			return err
		}
		return tx.Exec(`UPDATE exchanges SET turn_count = (SELECT COUNT(*) FROM messages WHERE exchange_id = ? AND role = ?)
			WHERE id = ?`, ex.ID, RoleUser, ex.ID).Error
	})
	if err != nil {
		return nil, wrap("continue share", err)
	}
	if s.index != nil {
		s.index.wrote(1) // the copy's entries are found by search like any others
	}
	return s.Exchange(ctx, userID, ex.ID)
}

// SharedCopyOf says whether one of the user's exchanges was continued from
// a shared link.
func (s *Store) SharedCopyOf(ctx context.Context, userID, exchangeID int64) (bool, error) {
	var n int64
	err := s.db.WithContext(ctx).Model(&SharedCopy{}).
		Where("exchange_id = ? AND exchange_id IN (SELECT id FROM exchanges WHERE user_id = ?)", exchangeID, userID).
		Count(&n).Error
	return n > 0, wrap("shared copy", err)
}

// AdminShare is a share as the admin list shows it, with its owner.
type AdminShare struct {
	Share
	Username string
}

// AdminShares lists every share, newest first, one batch by keyset: at
// most limit of those with an id below beforeID (0: from the newest), and
// whether older ones follow.
func (s *Store) AdminShares(ctx context.Context, beforeID int64, limit int) ([]AdminShare, bool, error) {
	var out []AdminShare
	q := s.db.WithContext(ctx).Table("shares AS s").Select("s.*, u.username").
		Joins("JOIN users u ON u.id = s.user_id")
	if beforeID > 0 {
		q = q.Where("s.id < ?", beforeID)
	}
	if err := q.Order("s.id DESC").Limit(limit + 1).Scan(&out).Error; err != nil {
		return nil, false, wrap("admin shares", err)
	}
	return out[:min(len(out), limit)], len(out) > limit, nil
}

// AdminRevokeShare revokes anyone's share as the administrator adminID and
// records it in the audit log (reason "revoked share link N"), in one
// transaction.
func (s *Store) AdminRevokeShare(ctx context.Context, adminID, id int64, at time.Time) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var admin User
		if err := tx.Where("id = ? AND is_admin AND NOT disabled", adminID).Take(&admin).Error; err != nil {
			return fmt.Errorf("the administrator: %w", err)
		}
		var sh AdminShare
		if err := tx.Table("shares AS s").Select("s.*, u.username").Joins("JOIN users u ON u.id = s.user_id").
			Where("s.id = ?", id).Take(&sh).Error; err != nil {
			return err
		}
		if sh.RevokedAt != nil {
			return nil
		}
		if err := tx.Model(&Share{}).Where("id = ?", id).Updates(map[string]any{
			"revoked_at": at, "revoked_by": admin.Username, "updated_at": at,
		}).Error; err != nil {
			return err
		}
		owner, ex := sh.UserID, sh.ExchangeID
		return tx.Create(&AdminAudit{AdminID: &admin.ID, AdminName: admin.Username, ExchangeID: &ex, ExchangeRef: ex,
			OwnerID: &owner, OwnerName: sh.Username, Reason: fmt.Sprintf("revoked share link %d", id), CreatedAt: at}).Error
	})
	return wrap("admin revoke share", err)
}

// sharedUIDSQL is the uid of a continued copy's entry: a prefix random for
// the copy (its one argument), then the entry's place in the copy, never the
// owner's row id that copyUIDSQL would put there.
func (s *Store) sharedUIDSQL() string {
	if s.dialect == "postgres" {
		return "(? || lpad(to_hex(ROW_NUMBER() OVER (ORDER BY seq)), 12, '0'))"
	}
	return "(? || printf('%012x', ROW_NUMBER() OVER (ORDER BY seq)))"
}
