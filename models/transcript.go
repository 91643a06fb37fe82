package models

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// A long log read a window at a time for the transcript (issue 16). A
// window holds entries with a seq, and each error row goes with the entry
// before it (the user message whose turn failed): MessagesBefore and
// MessagesAfter cut the log at the same places, so a transcript that grows
// both ways from any window shows every error row exactly once, in its
// place.

// MessagesAfter returns a window of an exchange's log, in order: the first
// limit entries with a seq after afterSeq, and the error rows that follow
// them up to the next entry (at the end of the log: every one after them).
// The error rows between the entry at afterSeq and the window's first
// entry belong to the window before (MessagesBefore gives them).
func (s *Store) MessagesAfter(ctx context.Context, userID, exchangeID, afterSeq int64, limit int) ([]Message, error) {
	if _, err := s.Exchange(ctx, userID, exchangeID); err != nil {
		return nil, fmt.Errorf("messages after: %w", err)
	}
	db := s.db.WithContext(ctx)
	var page []Message
	if err := db.Where("exchange_id = ? AND seq > ?", exchangeID, afterSeq).
		Order("seq").Limit(limit + 1).Find(&page).Error; err != nil {
		return nil, wrap("messages after", err)
	}
	if len(page) == 0 {
		return page, nil
	}
	cut := int64(1) << 62
	if len(page) > limit {
		cut = page[limit].ID // the next window's first entry
		page = page[:limit]
	}
	var errs []Message
	if err := db.Where("exchange_id = ? AND seq IS NULL AND id > ? AND id < ?", exchangeID, page[0].ID, cut).
		Find(&errs).Error; err != nil {
		return nil, wrap("messages after", err)
	}
	page = append(page, errs...)
	slices.SortFunc(page, func(a, b Message) int { return cmp.Compare(a.ID, b.ID) })
	return page, nil
}

// LastSeq returns the seq of the last entry of the user's exchange's log,
// -1 when it has none.
func (s *Store) LastSeq(ctx context.Context, userID, exchangeID int64) (int64, error) {
	if _, err := s.Exchange(ctx, userID, exchangeID); err != nil {
		return 0, fmt.Errorf("last seq: %w", err)
	}
	var last int64
	err := s.db.WithContext(ctx).Model(&Message{}).Select("COALESCE(MAX(seq), -1)").
		Where("exchange_id = ?", exchangeID).Scan(&last).Error
	return last, wrap("last seq", err)
}
