package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"palaver/accounts"
)

// CreateUser adds an account. The first account becomes admin whatever admin
// says; later ones are admin only when asked. A name that is another's under
// accounts.Key (another case, another Unicode form) is taken. The caller
// checks the name against the rules (accounts.ValidateUsername).
func (s *Store) CreateUser(ctx context.Context, username, passwordHash string, admin bool) (*User, error) {
	key := accounts.Key(username)
	u := &User{Username: username, UsernameKey: &key, PasswordHash: passwordHash, CreatedAt: now()}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error { return s.insertUser(tx, u, admin) })
	if errors.Is(err, gorm.ErrDuplicatedKey) {
		return nil, ErrUsernameTaken
	}
	return u, wrap("create user", err)
}

// insertUser inserts u in tx, admin when asked or when it is the first.
func (s *Store) insertUser(tx *gorm.DB, u *User, admin bool) error {
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
}

// UserByID loads an account.
func (s *Store) UserByID(ctx context.Context, id int64) (*User, error) {
	var u User
	err := s.db.WithContext(ctx).Take(&u, id).Error
	return &u, wrap("user by id", err)
}

// UserByUsername loads an account by its name, in any case or Unicode form
// (accounts.Key): "ADA" finds "ada". The exact name comes first, so each of
// two older accounts whose names clash under the key (UsernameClashes) is
// found by its own spelling.
func (s *Store) UserByUsername(ctx context.Context, username string) (*User, error) {
	var u User
	err := s.db.WithContext(ctx).Where("username = ? OR username_key = ?", username, accounts.Key(username)).
		Order(clause.Expr{SQL: "CASE WHEN username = ? THEN 0 ELSE 1 END", Vars: []any{username}}).
		Take(&u).Error
	return &u, wrap("user by username", err)
}

// fillUsernameKeys gives each account without a username key its key
// (migration 00004 adds the column; SQL cannot fold Unicode case), oldest
// account first. An account whose key another already holds keeps NULL: both
// stay usable, and UsernameClashes reports them. It only touches accounts
// without a key, so it is cheap once done, and safe to run from several
// processes at once.
func (s *Store) fillUsernameKeys(ctx context.Context) error {
	var users []User
	db := s.db.WithContext(ctx)
	if err := db.Where("username_key IS NULL").Order("id").Find(&users).Error; err != nil {
		return wrap("fill username keys", err)
	}
	for _, u := range users {
		key := accounts.Key(u.Username)
		err := db.Exec(`UPDATE users SET username_key = ? WHERE id = ? AND username_key IS NULL
			AND NOT EXISTS (SELECT 1 FROM users WHERE username_key = ?)`, key, u.ID, key).Error
		if err != nil && !errors.Is(err, gorm.ErrDuplicatedKey) { // another process took the key just now
			return wrap("fill username keys", err)
		}
	}
	return nil
}

// UsernameClash is an account whose name is another's under accounts.Key,
// both made before names were compared that way.
type UsernameClash struct {
	Username string // the account without a key: it signs in by this exact name
	SameAs   string // the account that holds the key
}

// UsernameClashes lists the accounts left without a username key because
// an older account's name is the same under accounts.Key. Both accounts
// work; an administrator may want to tell one of them to pick another name.
func (s *Store) UsernameClashes(ctx context.Context) ([]UsernameClash, error) {
	var users []User
	db := s.db.WithContext(ctx)
	if err := db.Where("username_key IS NULL").Order("id").Find(&users).Error; err != nil {
		return nil, wrap("username clashes", err)
	}
	var clashes []UsernameClash
	for _, u := range users {
		var holder User
		err := db.Select("username").Where("username_key = ?", accounts.Key(u.Username)).Take(&holder).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			continue // keyless for now (written by an older binary); the next Migrate fills it
		}
		if err != nil {
			return nil, wrap("username clashes", err)
		}
		clashes = append(clashes, UsernameClash{Username: u.Username, SameAs: holder.Username})
	}
	return clashes, nil
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
	s.tellAccount(userID)
	return nil
}

// apiKeyTouchEvery bounds how often a key's last_used_at is written, so that a
// script calling the API in a loop does not turn every read into a write.
const apiKeyTouchEvery = time.Minute

// UserByAPIKey finds the owner of a key by its hash and notes its use, at
// most once per apiKeyTouchEvery: the condition is in the UPDATE, so that
// concurrent calls with one key write once, not once each. A key noted
// recently is not even asked: on SQLite an UPDATE takes the write lock
// whether or not a row matches, and would queue behind the turns' commits.
func (s *Store) UserByAPIKey(ctx context.Context, keyHash string) (*User, error) {
	// One read of the key and its owner, by hand (every API call makes it).
	t := now()
	u, keyID, touch, err := s.userByAPIKey(ctx, keyHash, t.Add(-apiKeyTouchEvery))
	if err != nil {
		return nil, wrap("user by api key", err)
	}
	if touch {
		err := s.db.WithContext(ctx).Model(&APIKey{}).
			Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", keyID, t.Add(-apiKeyTouchEvery)).
			Update("last_used_at", t).Error
		// The key is good: a writer held elsewhere past the busy timeout
		// (an import's batch, a long delete) leaves its use to be noted
		// by a later request rather than failing this one.
		if err != nil && !busy(err) {
			return nil, fmt.Errorf("user by api key: touch: %w", err)
		}
	}
	return u, nil
}
