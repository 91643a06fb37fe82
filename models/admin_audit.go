package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// AdminAudit records one time an administrator opened someone's exchange.
// It outlives the exchange (ExchangeID becomes nil; ExchangeRef keeps the
// number) and both accounts (their names are kept).
type AdminAudit struct {
	ID          int64 `gorm:"primaryKey"`
	AdminID     *int64
	AdminName   string `gorm:"not null"`
	ExchangeID  *int64
	ExchangeRef int64     `gorm:"not null"`
	OwnerID     *int64    // nil once the owner's account is deleted
	OwnerName   string    `gorm:"not null"`
	Reason      string    `gorm:"not null"`
	CreatedAt   time.Time `gorm:"not null"`
}

// TableName is the audit table's name.
func (AdminAudit) TableName() string { return "admin_audit" }

// MaxAuditReason bounds a reason, in characters; longer ones are cut.
const MaxAuditReason = 500

// AdminOpenExchange is the only way to read another user's log: it records
// that the administrator adminID opened the exchange (with reason, which may
// be empty) and returns the exchange and its whole log, error and tool rows
// included, in write order. Audit row and read are one transaction: no log
// is read without its row.
func (s *Store) AdminOpenExchange(ctx context.Context, adminID, exchangeID int64, reason string) (*AdminExchangeRow, []Message, *AdminAudit, error) {
	if r := []rune(reason); len(r) > MaxAuditReason {
		reason = string(r[:MaxAuditReason])
	}
	ex, err := s.AdminExchange(ctx, exchangeID)
	if err != nil {
		return nil, nil, nil, err
	}
	var msgs []Message
	var audit AdminAudit
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var admin User
		if err := tx.Where("id = ? AND is_admin AND NOT disabled", adminID).Take(&admin).Error; err != nil {
			return fmt.Errorf("the administrator: %w", err)
		}
		owner := ex.UserID
		audit = AdminAudit{
			AdminID: &admin.ID, AdminName: admin.Username, ExchangeID: &ex.ID, ExchangeRef: ex.ID,
			OwnerID: &owner, OwnerName: ex.Username, Reason: reason, CreatedAt: now(),
		}
		if err := tx.Create(&audit).Error; err != nil {
			return err
		}
		return tx.Where("exchange_id = ?", exchangeID).Order("id").Find(&msgs).Error
	})
	if err != nil {
		return nil, nil, nil, wrap("admin open exchange", err)
	}
	return ex, msgs, &audit, nil
}

// AuditQuery selects one batch (by keyset) of the audit log, newest first.
type AuditQuery struct {
	BeforeID   int64 // 0: from the newest
	ExchangeID int64 // 0: every exchange
	Limit      int
}

// AuditEntry is an audit row with the exchange's title while it exists.
type AuditEntry struct {
	AdminAudit
	ExchangeTitle *string // nil once the exchange is deleted
}

// AdminAuditLog returns one batch of the audit log and the id to pass as
// BeforeID for the next one (0 at the end).
func (s *Store) AdminAuditLog(ctx context.Context, q AuditQuery) ([]AuditEntry, int64, error) {
	if q.Limit <= 0 {
		q.Limit = 50
	}
	tx := s.db.WithContext(ctx).Table("admin_audit AS a").
		Select("a.*, e.title AS exchange_title").
		Joins("LEFT JOIN exchanges e ON e.id = a.exchange_id")
	if q.BeforeID > 0 {
		tx = tx.Where("a.id < ?", q.BeforeID)
	}
	if q.ExchangeID > 0 {
		tx = tx.Where("a.exchange_ref = ?", q.ExchangeID)
	}
	var out []AuditEntry
	if err := tx.Order("a.id DESC").Limit(q.Limit + 1).Scan(&out).Error; err != nil {
		return nil, 0, wrap("admin audit log", err)
	}
	var next int64
	if len(out) > q.Limit {
		out = out[:q.Limit]
		next = out[len(out)-1].ID
	}
	return out, next, nil
}

// AdminViews says how often administrators opened an exchange, and when last.
type AdminViews struct {
	Count int64
	Last  *time.Time
}

// ExchangeAdminViews tells the owner userID how often administrators opened
// their exchange and when last (Count 0 when never). It is scoped by the
// owner like every user's read.
func (s *Store) ExchangeAdminViews(ctx context.Context, userID, exchangeID int64) (AdminViews, error) {
	var v AdminViews
	var rows []AdminAudit
	err := s.db.WithContext(ctx).
		Where("exchange_id = ? AND owner_id = ?", exchangeID, userID).
		Order("id DESC").Limit(1).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return v, wrap("exchange admin views", err)
	}
	v.Last = &rows[0].CreatedAt
	err = s.db.WithContext(ctx).Model(&AdminAudit{}).
		Where("exchange_id = ? AND owner_id = ?", exchangeID, userID).Count(&v.Count).Error
	return v, wrap("exchange admin views", err)
}
