package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"palaver/accounts"
)

// Identity is an account's identity at an OpenID provider (issue 30): the
// provider's (Issuer, Subject), never its email, unique across accounts.
// An account with no password (PasswordHash "", made by a first sign-in)
// signs in only through its identities.
type Identity struct {
	ID            int64     `gorm:"primaryKey"`
	UserID        int64     `gorm:"not null"`
	Provider      string    `gorm:"not null"` // the operator's name for the provider
	Issuer        string    `gorm:"not null"`
	Subject       string    `gorm:"not null"`
	Email         string    `gorm:"not null"` // as the provider said it last; "" when it says none
	EmailVerified bool      `gorm:"not null"`
	CreatedAt     time.Time `gorm:"not null"`
	LastUsedAt    *time.Time
}

// TableName names the table after what it holds: users' identities.
func (Identity) TableName() string { return "user_identities" }

// ErrIdentityTaken means the identity is linked to an account already.
var ErrIdentityTaken = errors.New("that identity is linked to another account")

// ErrLastSignIn means unlinking would leave the account no way to sign in.
var ErrLastSignIn = errors.New("it is the last way to sign in to this account")

// UserByIdentity finds the account an identity is linked to (ErrNotFound:
// none).
func (s *Store) UserByIdentity(ctx context.Context, issuer, subject string) (*User, *Identity, error) {
	var id Identity
	db := s.db.WithContext(ctx)
	if err := db.Where("issuer = ? AND subject = ?", issuer, subject).Take(&id).Error; err != nil {
		return nil, nil, wrap("user by identity", err)
	}
	var u User
	if err := db.Take(&u, id.UserID).Error; err != nil {
		return nil, nil, wrap("user by identity", err)
	}
	return &u, &id, nil
}

// TouchIdentity notes a sign-in through the identity, with the email the
// provider says now.
func (s *Store) TouchIdentity(ctx context.Context, id int64, email string, verified bool) error {
	err := s.db.WithContext(ctx).Model(&Identity{}).Where("id = ?", id).
		Updates(map[string]any{"last_used_at": now(), "email": email, "email_verified": verified}).Error
	return wrap("touch identity", err)
}

// CreateUserWithIdentity makes an account without a password, signed in
// through id, in one step: the first account becomes admin whatever admin
// says. ErrUsernameTaken: the name is another's (under accounts.Key);
// ErrIdentityTaken: the identity was linked meanwhile.
func (s *Store) CreateUserWithIdentity(ctx context.Context, username string, admin bool, id Identity) (*User, error) {
	key := accounts.Key(username)
	u := &User{Username: username, UsernameKey: &key, CreatedAt: now()}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.insertUser(tx, u, admin); errors.Is(err, gorm.ErrDuplicatedKey) {
			return ErrUsernameTaken
		} else if err != nil {
			return err
		}
		return insertIdentity(tx, u.ID, &id)
	})
	if err != nil {
		return nil, wrap("create user with identity", err)
	}
	return u, nil
}

// LinkIdentity links id to the account (ErrIdentityTaken: it is linked
// already, to this account or another).
func (s *Store) LinkIdentity(ctx context.Context, userID int64, id Identity) error {
	return wrap("link identity", insertIdentity(s.db.WithContext(ctx), userID, &id))
}

func insertIdentity(tx *gorm.DB, userID int64, id *Identity) error {
	id.ID, id.UserID, id.CreatedAt = 0, userID, now()
	t := id.CreatedAt
	id.LastUsedAt = &t
	if err := tx.Create(id).Error; errors.Is(err, gorm.ErrDuplicatedKey) {
		return ErrIdentityTaken
	} else if err != nil {
		return err
	}
	return nil
}

// Identities lists the account's identities, oldest first.
func (s *Store) Identities(ctx context.Context, userID int64) ([]Identity, error) {
	var out []Identity
	err := s.db.WithContext(ctx).Where("user_id = ?", userID).Order("id").Find(&out).Error
	return out, wrap("list identities", err)
}

// UnlinkIdentity removes one of the account's identities (another's is
// not found, like a missing one), unless it is the account's last way to
// sign in (ErrLastSignIn): its last identity, when the account has no
// password or passwords do not sign in (passwordCounts false).
func (s *Store) UnlinkIdentity(ctx context.Context, userID, id int64, passwordCounts bool) error {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var u User
		if err := tx.Take(&u, userID).Error; err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&Identity{}).Where("user_id = ?", userID).Count(&n).Error; err != nil {
			return err
		}
		var mine int64
		if err := tx.Model(&Identity{}).Where("id = ? AND user_id = ?", id, userID).Count(&mine).Error; err != nil {
			return err
		}
		if mine == 0 {
			return fmt.Errorf("identity %d: %w", id, ErrNotFound)
		}
		if n == 1 && (u.PasswordHash == "" || !passwordCounts) {
			return ErrLastSignIn
		}
		return tx.Where("id = ? AND user_id = ?", id, userID).Delete(&Identity{}).Error
	})
	return wrap("unlink identity", err)
}

// UsersByVerifiedEmail lists the accounts with an identity whose provider
// said this email, verified (compared without case). Accounts have no
// email of their own: this is the only email Palaver knows them by.
func (s *Store) UsersByVerifiedEmail(ctx context.Context, email string) ([]int64, error) {
	var ids []int64
	err := s.db.WithContext(ctx).Model(&Identity{}).Distinct("user_id").
		Where("LOWER(email) = ? AND email_verified", strings.ToLower(email)).Order("user_id").Pluck("user_id", &ids).Error
	return ids, wrap("users by verified email", err)
}

// SetAdminFromClaim makes the account an administrator or not, as its
// provider's claim says at sign-in; the last administrator who can sign in
// stays one (changed false), so that a provider's mistake cannot leave the
// server without one.
func (s *Store) SetAdminFromClaim(ctx context.Context, userID int64, admin bool) (u *User, changed bool, err error) {
	var out User
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Take(&out, userID).Error; err != nil {
			return err
		}
		if out.IsAdmin == admin {
			return nil
		}
		if !admin {
			if err := keepsAnAdmin(tx, &out); errors.Is(err, ErrLastAdmin) {
				return nil
			} else if err != nil {
				return err
			}
		}
		changed, out.IsAdmin = true, admin
		return tx.Model(&User{}).Where("id = ?", userID).Update("is_admin", admin).Error
	})
	return &out, changed, wrap("set admin from claim", err)
}
