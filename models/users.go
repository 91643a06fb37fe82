package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// CreateUser adds an account. The first account becomes admin whatever admin
// says; later ones are admin only when asked.
func (s *Store) CreateUser(ctx context.Context, username, passwordHash string, admin bool) (*User, error) {
	u := &User{Username: username, PasswordHash: passwordHash, CreatedAt: now()}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Count and insert must be one step, or two first registrations at
		// once both become admin. SQLite's transactions begin IMMEDIATE and
		// so already run one at a time; Postgres's READ COMMITTED does not,
		// so take a lock that holds back other writers of users (only
		// registrations) but not readers.
		if s.dialect == "postgres" {
			if err := tx.Exec("LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE").Error; err != nil {
				return err
			}
		}
		var n int64
		if err := tx.Model(&User{}).Count(&n).Error; err != nil {
			return err
		}
		u.IsAdmin = admin || n == 0
		return tx.Create(u).Error
	})
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return nil, ErrUsernameTaken
	}
	return u, wrap("create user", err)
}

// UserByID loads an account.
func (s *Store) UserByID(ctx context.Context, id int64) (*User, error) {
	var u User
	err := s.db.WithContext(ctx).Take(&u, id).Error
	return &u, wrap("user by id", err)
}

// UserByUsername loads an account by its name.
func (s *Store) UserByUsername(ctx context.Context, username string) (*User, error) {
	var u User
	err := s.db.WithContext(ctx).Where("username = ?", username).Take(&u).Error
	return &u, wrap("user by username", err)
}

// CreateAPIKey stores the hash of a new key for the user, under a name.
func (s *Store) CreateAPIKey(ctx context.Context, userID int64, name, keyHash string) (*APIKey, error) {
	k := &APIKey{UserID: userID, Name: name, KeyHash: keyHash, CreatedAt: now()}
	err := s.db.WithContext(ctx).Create(k).Error
	return k, wrap("create api key", err)
}

// APIKeys lists the user's keys, oldest first.
func (s *Store) APIKeys(ctx context.Context, userID int64) ([]APIKey, error) {
	var keys []APIKey
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("created_at, id").Find(&keys).Error
	return keys, wrap("list api keys", err)
}

// DeleteAPIKey revokes one of the user's keys; another user's key is not
// found, exactly like a missing one.
func (s *Store) DeleteAPIKey(ctx context.Context, userID, id int64) error {
	res := s.db.WithContext(ctx).Where("id = ? AND user_id = ?", id, userID).Delete(&APIKey{})
	if res.Error != nil {
		return wrap("delete api key", res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("delete api key %d: %w", id, ErrNotFound)
	}
	return nil
}

// apiKeyTouchEvery bounds how often a key's last_used_at is written, so that a
// script calling the API in a loop does not turn every read into a write.
const apiKeyTouchEvery = time.Minute

// UserByAPIKey finds the owner of a key by its hash and notes its use, at
// most once per apiKeyTouchEvery: the condition is in the UPDATE, so that
// concurrent calls with one key write once, not once each.
func (s *Store) UserByAPIKey(ctx context.Context, keyHash string) (*User, error) {
	var k APIKey
	db := s.db.WithContext(ctx)
	if err := db.Where("key_hash = ?", keyHash).Take(&k).Error; err != nil {
		return nil, wrap("user by api key", err)
	}
	t := now()
	err := db.Model(&APIKey{}).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", k.ID, t.Add(-apiKeyTouchEvery)).
		Update("last_used_at", t).Error
	if err != nil {
		return nil, fmt.Errorf("user by api key: touch: %w", err)
	}
	return s.UserByID(ctx, k.UserID)
}
