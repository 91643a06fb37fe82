package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// ModelPreferences are the models a turn without a picked model answers
// with, best first (0: none): the model the conversation's last reply
// used, the project's default, the person's default. The first of them
// still enabled wins; with none, the administrators' default answers.
type ModelPreferences struct {
	Last, Project, Person int64
}

// Order lists the preferences, best first, leaving out the unset ones.
func (p ModelPreferences) Order() []int64 {
	var out []int64
	for _, id := range []int64{p.Last, p.Project, p.Person} {
		if id != 0 {
			out = append(out, id)
		}
	}
	return out
}

// First is the first preference enabled says may be picked (0: none).
func (p ModelPreferences) First(enabled func(int64) bool) int64 {
	for _, id := range p.Order() {
		if enabled(id) {
			return id
		}
	}
	return 0
}

// ModelPreferencesOf reads the preferences of a turn in the user's
// exchange (0: a new chat, which may start in projectID).
func (s *Store) ModelPreferencesOf(ctx context.Context, userID, exchangeID int64, projectID *int64) (ModelPreferences, error) {
	var p ModelPreferences
	if exchangeID != 0 {
		return s.turnModelPreferences(ctx, userID, exchangeID)
	}
	db := s.db.WithContext(ctx)
	if projectID != nil {
		var pr Project
		err := db.Select("id", "default_model_id").Where("id = ? AND user_id = ?", *projectID, userID).Take(&pr).Error
		if err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
			return p, wrap("model preferences", err)
		}
		if pr.DefaultModelID != nil {
			p.Project = *pr.DefaultModelID
		}
	}
	var u User
	if err := db.Select("id", "default_model_id").Take(&u, userID).Error; err != nil {
		return p, wrap("model preferences", err)
	}
	if u.DefaultModelID != nil {
		p.Person = *u.DefaultModelID
	}
	return p, nil
}

// SetDefaultModel sets the model the person picks by default (0: the
// administrators' default). The caller checks it may be picked.
func (s *Store) SetDefaultModel(ctx context.Context, userID, modelID int64) error {
	err := s.db.WithContext(ctx).Model(&User{}).Where("id = ?", userID).Update("default_model_id", nullID(modelID)).Error
	return wrap("set default model", err)
}

// metaNumber reads a number of a reply's metadata, as stored (JSON: a
// float) or as set in this process.
func metaNumber(v any) float64 {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

// ExchangeCost is what the replies of the user's exchange cost, from the
// prices each reply was written at (its metadata's cost, kept with the
// usage row): the conversation as its log holds it, forks' copies included.
func (s *Store) ExchangeCost(ctx context.Context, userID, exchangeID int64) (float64, error) {
	db := s.db.WithContext(ctx).Joins("JOIN exchanges ON exchanges.id = messages.exchange_id AND exchanges.user_id = ?", userID)
	costs, err := replyCosts(db, s.dialect, []int64{exchangeID})
	return costs[exchangeID], wrap("exchange cost", err)
}

// replyCosts sums what the replies of these exchanges cost (their
// agent_response.metadata.cost), by exchange; only numbers count. Every
// opening of a chat asks it, so on SQLite the sum is SQL's (json_extract,
// added as floats by TOTAL, a response that is not JSON passed over):
// decoding every agent_response of a 5,000-reply log in Go was half the
// time of opening it (open_big_p50_ms).
func replyCosts(db *gorm.DB, dialect string, exchangeIDs []int64) (map[int64]float64, error) {
	replies := db.Model(&Message{}).
		Where("messages.exchange_id IN ? AND messages.role = ? AND messages.seq IS NOT NULL", exchangeIDs, RoleAssistant)
	if dialect == "sqlite" {
		var sums []struct {
			ExchangeID int64
			Cost       float64
		}
		err := replies.Select("messages.exchange_id, TOTAL(json_extract(messages.agent_response, '$.metadata.cost')) AS cost").
			Where(`CASE WHEN json_valid(messages.agent_response) THEN json_type(messages.agent_response, '$.metadata.cost') END IN ('integer', 'real')`).
			Group("messages.exchange_id").Scan(&sums).Error
		costs := make(map[int64]float64, len(sums))
		for _, r := range sums {
			costs[r.ExchangeID] = r.Cost
		}
		return costs, err
	}
	var rows []Message
	err := replies.Select("messages.id", "messages.exchange_id", "messages.role", "messages.agent_response").Find(&rows).Error
	if err != nil {
		return nil, err
	}
	costs := make(map[int64]float64, len(exchangeIDs))
	for i := range rows {
		if r := rows[i].AgentResponse; r != nil {
			costs[rows[i].ExchangeID] += metaNumber(r.Metadata["cost"])
		}
	}
	return costs, nil
}

// turnModelPreferences reads the preferences of a turn in the user's
// exchange in one statement by hand: every turn without a picked model
// reads them. Of the last reply's agent_response only metadata.model_id
// is decoded.
func (s *Store) turnModelPreferences(ctx context.Context, userID, exchangeID int64) (ModelPreferences, error) {
	sqlDB, err := s.db.DB()
	if err != nil {
		return ModelPreferences{}, wrap("model preferences", err)
	}
	return turnModelPreferences(ctx, sqlDB, s.dialect, userID, exchangeID)
}

// turnModelPreferences reads them on q: the pool, or a transaction's
// connection.
func turnModelPreferences(ctx context.Context, q gorm.ConnPool, dialect string, userID, exchangeID int64) (ModelPreferences, error) {
	var p ModelPreferences
	var project, person sql.NullInt64
	var last sql.NullString
	err := q.QueryRowContext(ctx, turnModelPreferencesStmt.in(dialect), exchangeID, userID).Scan(&project, &person, &last)
	if errors.Is(err, sql.ErrNoRows) {
		err = gorm.ErrRecordNotFound
	}
	if err != nil {
		return p, wrap("model preferences", err)
	}
	p.Project, p.Person = project.Int64, person.Int64
	if last.Valid && last.String != "" {
		var r struct {
			Metadata struct {
				ModelID float64 `json:"model_id"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(last.String), &r) == nil {
			p.Last = int64(r.Metadata.ModelID)
		}
	}
	return p, nil
}

var turnModelPreferencesStmt = newStmt(`SELECT
	(SELECT default_model_id FROM projects WHERE id = e.project_id AND user_id = e.user_id),
	(SELECT default_model_id FROM users WHERE id = e.user_id),
	(SELECT agent_response FROM messages WHERE exchange_id = e.id AND role = '` + RoleAssistant + `' AND seq IS NOT NULL
		ORDER BY seq DESC LIMIT 1)
	FROM exchanges e WHERE e.id = ? AND e.user_id = ?`)

// ModelFavourite is a model a person starred: the picker lists it first.
type ModelFavourite struct {
	ID        int64     `gorm:"primaryKey"`
	UserID    int64     `gorm:"not null"`
	ModelID   int64     `gorm:"not null"`
	CreatedAt time.Time `gorm:"not null"`
}

// TableName is model_favourites.
func (ModelFavourite) TableName() string { return "model_favourites" }

// FavouriteModels are the ids of the person's favourite models, in the
// order they were starred.
func (s *Store) FavouriteModels(ctx context.Context, userID int64) ([]int64, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Model(&ModelFavourite{}).Where("user_id = ?", userID).Order("id").Pluck("model_id", &ids).Error
	return ids, wrap("favourite models", err)
}

// SetFavouriteModel stars (on) or unstars the person's model; doing it
// twice is doing it once. The caller checks the model may be picked.
func (s *Store) SetFavouriteModel(ctx context.Context, userID, modelID int64, on bool) error {
	db := s.db.WithContext(ctx)
	var err error
	if on {
		err = db.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&ModelFavourite{UserID: userID, ModelID: modelID, CreatedAt: now()}).Error
	} else {
		err = db.Where("user_id = ? AND model_id = ?", userID, modelID).Delete(&ModelFavourite{}).Error
	}
	return wrap("set favourite model", err)
}

// SetSearchReasoning says whether the person's searches match replies'
// reasoning too.
func (s *Store) SetSearchReasoning(ctx context.Context, userID int64, on bool) error {
	err := s.db.WithContext(ctx).Model(&User{}).Where("id = ?", userID).Update("search_reasoning", on).Error
	return wrap("set search reasoning", err)
}

// ConversationCost is one of the person's conversations with what its
// replies cost.
type ConversationCost struct {
	Exchange
	Cost float64
}

// RecentConversationCosts are the person's general and page chats active
// since since, newest first (at most limit), each with what its replies
// cost (replyCosts), in two reads. It reads the replies of those
// conversations only; which conversations cost the most would need a
// total kept per conversation, which there is not.
func (s *Store) RecentConversationCosts(ctx context.Context, userID int64, since time.Time, limit int) ([]ConversationCost, error) {
	db := s.db.WithContext(ctx)
	var exs []Exchange
	err := db.Select("id", "user_id", "scope", "page_id", "title", "updated_at").
		Where("user_id = ? AND updated_at >= ? AND temporary = ? AND scope IN ?", userID, since.UTC(), false, []string{ScopeGeneral, ScopePage}).
		Order("updated_at DESC, id DESC").Limit(limit).Find(&exs).Error
	if err != nil || len(exs) == 0 {
		return nil, wrap("recent conversation costs", err)
	}
	ids := make([]int64, len(exs))
	for i := range exs {
		ids[i] = exs[i].ID
	}
	cost, err := replyCosts(db, s.dialect, ids)
	if err != nil {
		return nil, wrap("recent conversation costs", err)
	}
	out := make([]ConversationCost, len(exs))
	for i := range exs {
		out[i] = ConversationCost{Exchange: exs[i], Cost: cost[exs[i].ID]}
	}
	return out, nil
}
