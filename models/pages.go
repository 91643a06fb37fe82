package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Where a page revision came from.
const (
	EditUser    = "user"    // saved in the editor or through the API
	EditAgent   = "agent"   // an accepted proposal (MessageID names it)
	EditRestore = "restore" // an earlier revision brought back
)

// PageSummary is a page as the pages list shows it.
type PageSummary struct {
	Page      `gorm:"embedded"`
	Revisions int64
}

// RevisionSummary is a page revision without its content, with the exchange
// of the proposal an agent revision came from.
type RevisionSummary struct {
	ID         int64
	PageID     int64
	EditSource string
	MessageID  *int64
	ExchangeID *int64 // the proposal's exchange, while the message exists
	CreatedAt  time.Time
}

// livePage scopes a query to the user's pages that are not deleted.
func livePage(tx *gorm.DB, userID, id int64) *gorm.DB {
	return tx.Where("id = ? AND user_id = ? AND deleted_at IS NULL", id, userID)
}

// CreatePage adds a page for the user with its first revision (edit source
// user), in one transaction.
func (s *Store) CreatePage(ctx context.Context, userID int64, title, content string) (*Page, error) {
	at := now()
	p := &Page{UserID: userID, Title: title, Content: content, CreatedAt: at, UpdatedAt: at}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(p).Error; err != nil {
			return err
		}
		return tx.Create(&PageRevision{PageID: p.ID, Content: content, EditSource: EditUser, CreatedAt: at}).Error
	})
	if err != nil {
		return nil, wrap("create page", err)
	}
	return p, nil
}

// Page loads one of the user's pages. A deleted page is not found.
func (s *Store) Page(ctx context.Context, userID, id int64) (*Page, error) {
	var p Page
	err := livePage(s.db.WithContext(ctx), userID, id).Take(&p).Error
	return &p, wrap("page", err)
}

// ListPages returns the user's pages, most recently updated first, with
// how many revisions each has.
func (s *Store) ListPages(ctx context.Context, userID int64) ([]PageSummary, error) {
	var out []PageSummary
	err := s.db.WithContext(ctx).Table("pages").
		Select("pages.*, (SELECT COUNT(*) FROM page_revisions r WHERE r.page_id = pages.id) AS revisions").
		Where("user_id = ? AND deleted_at IS NULL", userID).
		Order("updated_at DESC, id DESC").Scan(&out).Error
	return out, wrap("list pages", err)
}

// UpdatePage saves new content (and a new title, unless nil) for one of the
// user's pages, with a revision of edit source user, in one transaction.
func (s *Store) UpdatePage(ctx context.Context, userID, id int64, title *string, content string) (*Page, error) {
	var p *Page
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		p, err = s.setContent(tx, userID, id, title, content, PageRevision{EditSource: EditUser})
		return err
	})
	return p, wrap("update page", err)
}

// RestoreRevision makes an earlier revision of one of the user's pages its
// content again, recorded as a new revision of edit source restore.
func (s *Store) RestoreRevision(ctx context.Context, userID, pageID, revisionID int64) (*Page, error) {
	var p *Page
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := s.lockPage(tx, userID, pageID); err != nil {
			return err
		}
		var r PageRevision
		if err := tx.Where("id = ? AND page_id = ?", revisionID, pageID).Take(&r).Error; err != nil {
			return err
		}
		var err error
		p, err = s.setContent(tx, userID, pageID, nil, r.Content, PageRevision{EditSource: EditRestore})
		return err
	})
	return p, wrap("restore revision", err)
}

// Revision loads one revision of one of the user's pages, with its
// content.
func (s *Store) Revision(ctx context.Context, userID, pageID, revisionID int64) (*PageRevision, error) {
	if _, err := s.Page(ctx, userID, pageID); err != nil {
		return nil, fmt.Errorf("revision: %w", err)
	}
	var r PageRevision
	if err := s.db.WithContext(ctx).Where("id = ? AND page_id = ?", revisionID, pageID).Take(&r).Error; err != nil {
		return nil, wrap("revision", err)
	}
	return &r, nil
}

// lockPage loads a live page of the user's inside a transaction, locking
// its row on PostgreSQL so that concurrent writers of the page take turns
// (SQLite's transactions already run one at a time: they begin IMMEDIATE).
func (s *Store) lockPage(tx *gorm.DB, userID, id int64) (*Page, error) {
	q := livePage(tx, userID, id)
	if s.dialect == "postgres" {
		q = q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	var p Page
	if err := q.Take(&p).Error; err != nil {
		return nil, err
	}
	return &p, nil
}

// setContent writes a page's content (and title) and records the revision
// rev describes, inside a transaction.
func (s *Store) setContent(tx *gorm.DB, userID, id int64, title *string, content string, rev PageRevision) (*Page, error) {
	p, err := s.lockPage(tx, userID, id)
	if err != nil {
		return nil, err
	}
	at := now()
	p.Content, p.UpdatedAt = content, at
	if title != nil {
		p.Title = *title
	}
	if err := tx.Model(p).UpdateColumns(map[string]any{"title": p.Title, "content": content, "updated_at": at}).Error; err != nil {
		return nil, err
	}
	rev.PageID, rev.Content, rev.CreatedAt = id, content, at
	if err := tx.Create(&rev).Error; err != nil {
		return nil, err
	}
	return p, nil
}

// Revisions lists the revisions of one of the user's pages, oldest first,
// without their content.
func (s *Store) Revisions(ctx context.Context, userID, pageID int64) ([]RevisionSummary, error) {
	if _, err := s.Page(ctx, userID, pageID); err != nil {
		return nil, fmt.Errorf("revisions: %w", err)
	}
	var out []RevisionSummary
	err := s.db.WithContext(ctx).Table("page_revisions AS r").
		Select("r.id, r.page_id, r.edit_source, r.message_id, m.exchange_id, r.created_at").
		Joins("LEFT JOIN messages m ON m.id = r.message_id").
		Where("r.page_id = ?", pageID).Order("r.id").Scan(&out).Error
	return out, wrap("revisions", err)
}

// DeletePage deletes one of the user's pages: the page is soft-deleted (it
// answers not found from then on; its row keeps its id, never given again)
// with its title and text erased, its revisions and exchanges are deleted
// (the exchanges' messages by cascade), in one transaction. It says how many
// exchanges and messages went.
func (s *Store) DeletePage(ctx context.Context, userID, id int64) (exchanges, messages int64, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := livePage(tx.Model(&Page{}), userID, id).UpdateColumns(map[string]any{"deleted_at": now(), "title": "", "content": ""})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		chats := tx.Model(&Exchange{}).Select("id").Where("page_id = ?", id)
		if err := tx.Model(&Message{}).Where("exchange_id IN (?)", chats).Count(&messages).Error; err != nil {
			return err
		}
		// A GORM delete: the erase watcher truncates the log after it.
		if err := tx.Where("page_id = ?", id).Delete(&PageRevision{}).Error; err != nil {
			return err
		}
		res = tx.Where("page_id = ?", id).Delete(&Exchange{}) // messages go by cascade
		exchanges = res.RowsAffected
		return res.Error
	})
	return exchanges, messages, wrap("delete page", err)
}
