package models

import (
	"context"

	"gorm.io/gorm"
)

// exportBatch is how many exchanges or pages an export reads at a time: what
// an export holds in memory is one batch of headers and one exchange's log.
const exportBatch = 200

// ExportedPage is one of a user's pages as an export writes it, with its
// revisions oldest first.
type ExportedPage struct {
	Page
	Revisions []ExportedRevision `gorm:"-"`
}

// ExportedRevision is a page revision with the uid of the proposal it
// applied, for agent revisions.
type ExportedRevision struct {
	PageRevision
	MessageUID *string
}

// ExportedExchange is one of a user's exchanges as an export writes it: its
// header, the uids of its page and of the exchange it was forked from, and
// its whole log in order, error rows in their place.
type ExportedExchange struct {
	Exchange
	PageUID   *string
	ParentUID *string
	Messages  []Message `gorm:"-"`
}

// ExportPages calls fn for each of the user's pages (not deleted ones),
// oldest first, a batch at a time; it stops at fn's first error.
func (s *Store) ExportPages(ctx context.Context, userID int64, fn func(*ExportedPage) error) error {
	db := s.db.WithContext(ctx)
	var after int64
	for {
		var pages []Page
		if err := db.Where("user_id = ? AND deleted_at IS NULL AND id > ?", userID, after).
			Order("id").Limit(exportBatch).Find(&pages).Error; err != nil {
			return wrap("export pages", err)
		}
		for i := range pages {
			p := &ExportedPage{Page: pages[i]}
			err := db.Raw(`SELECT r.*, m.uid AS message_uid FROM page_revisions r
				LEFT JOIN messages m ON m.id = r.message_id WHERE r.page_id = ? ORDER BY r.id`, p.ID).
				Scan(&p.Revisions).Error
			if err != nil {
				return wrap("export page revisions", err)
			}
			if err := fn(p); err != nil {
				return err
			}
		}
		if len(pages) < exportBatch {
			return nil
		}
		after = pages[len(pages)-1].ID
	}
}

// ExportExchanges calls fn for each of the user's exchanges, oldest first,
// with its whole log; sub-runs, which belong to the exchange that spawned
// them, are left out. It stops at fn's first error.
func (s *Store) ExportExchanges(ctx context.Context, userID int64, fn func(*ExportedExchange) error) error {
	db := s.db.WithContext(ctx)
	var after int64
	for {
		var batch []ExportedExchange
		err := exportedExchanges(db, userID).Where("e.id > ?", after).Order("e.id").Limit(exportBatch).Scan(&batch).Error
		if err != nil {
			return wrap("export exchanges", err)
		}
		for i := range batch {
			ex := &batch[i]
			if err := s.exportLog(db, ex); err != nil {
				return err
			}
			if err := fn(ex); err != nil {
				return err
			}
			ex.Messages = nil // done with: the batch holds one log at a time
		}
		if len(batch) < exportBatch {
			return nil
		}
		after = batch[len(batch)-1].ID
	}
}

// ExportExchange is one of the user's exchanges with its whole log, for a
// download of that conversation.
func (s *Store) ExportExchange(ctx context.Context, userID, id int64) (*ExportedExchange, error) {
	db := s.db.WithContext(ctx)
	var ex ExportedExchange
	res := exportedExchanges(db, userID).Where("e.id = ?", id).Scan(&ex)
	if res.Error != nil {
		return nil, wrap("export exchange", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, wrap("export exchange", ErrNotFound)
	}
	return &ex, s.exportLog(db, &ex)
}

// exportedExchanges selects the user's exchanges (sub-runs, which belong to
// the exchange that spawned them, left out) with the uids of their page and
// of the exchange they were forked from.
func exportedExchanges(db *gorm.DB, userID int64) *gorm.DB {
	return db.Table("exchanges AS e").Select("e.*, p.uid AS page_uid, f.uid AS parent_uid").
		Joins("LEFT JOIN pages p ON p.id = e.page_id").Joins("LEFT JOIN exchanges f ON f.id = e.forked_from_id").
		Where("e.user_id = ? AND e.scope <> ?", userID, ScopeSubRun)
}

// exportLog reads an exchange's whole log, in write order.
func (s *Store) exportLog(db *gorm.DB, ex *ExportedExchange) error {
	return wrap("export log", db.Where("exchange_id = ?", ex.ID).Order("id").Find(&ex.Messages).Error)
}
