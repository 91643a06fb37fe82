package models

import (
	"context"

	"gorm.io/gorm"
)

// Connection reads one connection.
func (s *Store) Connection(ctx context.Context, id int64) (*LLMConnection, error) {
	var c LLMConnection
	if err := s.db.WithContext(ctx).Take(&c, id).Error; err != nil {
		return nil, wrap("connection", err)
	}
	return &c, nil
}

// ConnectionPatch is an administrator's change of a connection; a nil key
// keeps the stored one.
type ConnectionPatch struct {
	Name, BaseURL string
	APIKeyEnc     *string
}

// UpdateConnection renames a connection, moves its base URL or replaces
// its key; the flags' connection is read-only.
func (s *Store) UpdateConnection(ctx context.Context, id int64, p ConnectionPatch) error {
	err := s.transact(ctx, func(tx *gorm.DB) error {
		var c LLMConnection
		if err := tx.Take(&c, id).Error; err != nil {
			return err
		}
		if c.Source == SourceFlags {
			return ErrReadOnly
		}
		var n int64
		if err := tx.Model(&LLMConnection{}).Where("name = ? AND id <> ?", p.Name, id).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return ErrNameTaken
		}
		set := map[string]any{"name": p.Name, "base_url": p.BaseURL, "updated_at": now()}
		if p.APIKeyEnc != nil {
			set["api_key_enc"] = *p.APIKeyEnc
		}
		return tx.Model(&c).Updates(set).Error
	})
	return wrap("update connection", err)
}

// AddListedModels adds the models a connection's server lists now that it
// does not have yet (disabled); it says how many were new.
func (s *Store) AddListedModels(ctx context.Context, connID int64, modelIDs []string) (int64, error) {
	var added int64
	err := s.transact(ctx, func(tx *gorm.DB) error {
		var before, after int64
		if err := tx.Model(&LLMModel{}).Where("connection_id = ?", connID).Count(&before).Error; err != nil {
			return err
		}
		if err := addModels(tx, connID, modelIDs, now()); err != nil {
			return err
		}
		if err := tx.Model(&LLMModel{}).Where("connection_id = ?", connID).Count(&after).Error; err != nil {
			return err
		}
		added = after - before
		return nil
	})
	return added, wrap("add listed models", err)
}

// UsageRow is one person's use of one model on one day, for the
// administrators' overview.
type UsageRow struct {
	UserID       int64
	Username     string
	Day          string
	Model        string
	InputTokens  int64
	OutputTokens int64
	Cost         float64
	Replies      int64
}

// AdminUsage lists every person's usage rows of a month ("YYYY-MM"), by
// day (newest first), person and model: read from the rows the turns
// kept, never from the messages.
func (s *Store) AdminUsage(ctx context.Context, month string) ([]UsageRow, error) {
	out := []UsageRow{}
	err := s.db.WithContext(ctx).Table("usage_daily u").
		Select("u.user_id, COALESCE(us.username, '') AS username, u.day, u.model, u.input_tokens, u.output_tokens, u.cost, u.replies").
		Joins("LEFT JOIN users us ON us.id = u.user_id").
		Where("u.day LIKE ?", month+"-%").Order("u.day DESC, username, u.model").Scan(&out).Error
	return out, wrap("admin usage", err)
}
