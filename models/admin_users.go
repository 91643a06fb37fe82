package models

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// ErrLastAdmin means the change would leave no administrator who can sign
// in (an admin account that is not disabled).
var ErrLastAdmin = errors.New("this would leave no administrator who can sign in: make someone else an administrator first")

// ErrOwnAccount means an administrator tried to disable or delete their own
// account, which would lock them out.
var ErrOwnAccount = errors.New("you cannot disable or delete your own account; ask another administrator")

// AdminUserRow is an account as the admin user list shows it.
type AdminUserRow struct {
	User
	Exchanges  int64
	Messages   int64
	APIKeys    int64
	LastActive *time.Time // the latest activity of its exchanges
}

// adminUserSQL reads accounts with what each stores, through the indexes on
// user_id and exchange_id.
const adminUserSQL = `
	SELECT u.*,
		(SELECT COUNT(*) FROM exchanges e WHERE e.user_id = u.id) AS exchanges,
		(SELECT COUNT(*) FROM messages m JOIN exchanges e ON e.id = m.exchange_id WHERE e.user_id = u.id) AS messages,
		(SELECT COUNT(*) FROM api_keys k WHERE k.user_id = u.id) AS api_keys,
		(SELECT MAX(e.updated_at) FROM exchanges e WHERE e.user_id = u.id) AS last_active
	FROM users u`

// adminUserRows runs adminUserSQL with a condition and order.
func (s *Store) adminUserRows(ctx context.Context, tail string, args ...any) ([]AdminUserRow, error) {
	var rows []struct {
		User
		Exchanges  int64
		Messages   int64
		APIKeys    int64
		LastActive nullTime
	}
	if err := s.db.WithContext(ctx).Raw(adminUserSQL+" "+tail, args...).Scan(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]AdminUserRow, len(rows))
	for i, r := range rows {
		out[i] = AdminUserRow{User: r.User, Exchanges: r.Exchanges, Messages: r.Messages, APIKeys: r.APIKeys, LastActive: r.LastActive.ptr()}
	}
	return out, nil
}

// AdminListUsers lists accounts by name with what each stores: up to limit
// of them after the name after ("" from the first), and whether more follow.
func (s *Store) AdminListUsers(ctx context.Context, after string, limit int) ([]AdminUserRow, bool, error) {
	// The limit written out (it is ours, an int): a bound LIMIT makes SQLite
	// prepare the statement again on every run.
	rows, err := s.adminUserRows(ctx, fmt.Sprintf("WHERE u.username > ? ORDER BY u.username LIMIT %d", limit+1), after)
	if err != nil {
		return nil, false, wrap("admin list users", err)
	}
	more := len(rows) > limit
	return rows[:min(len(rows), limit)], more, nil
}

// AdminUser loads one account with what it stores.
func (s *Store) AdminUser(ctx context.Context, id int64) (*AdminUserRow, error) {
	rows, err := s.adminUserRows(ctx, "WHERE u.id = ?", id)
	if err != nil {
		return nil, wrap("admin user", err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("admin user %d: %w", id, ErrNotFound)
	}
	return &rows[0], nil
}

// adminTx runs fn in a transaction that first checks that actorID is still
// an administrator who can sign in (else ErrNotFound, as the admin routes
// answer anyone else) and loads the target account. On PostgreSQL it locks
// the users table against other writers first, so that two administrators
// demoting each other at once cannot both pass the last-admin check (SQLite's
// transactions already run one at a time).
func (s *Store) adminTx(ctx context.Context, actorID, userID int64, fn func(tx *gorm.DB, target *User) error) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if s.dialect == "postgres" {
			if err := tx.Exec("LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE").Error; err != nil {
				return err
			}
		}
		var n int64
		if err := tx.Model(&User{}).Where("id = ? AND is_admin AND NOT disabled", actorID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("administrator %d: %w", actorID, ErrNotFound)
		}
		var target User
		if err := tx.Take(&target, userID).Error; err != nil {
			return err
		}
		return fn(tx, &target)
	})
}

// keepsAnAdmin fails with ErrLastAdmin unless an administrator who can sign
// in remains besides the account being changed.
func keepsAnAdmin(tx *gorm.DB, target *User) error {
	if !target.IsAdmin || target.Disabled {
		return nil // not one of the admins who count
	}
	var others int64
	if err := tx.Model(&User{}).Where("is_admin AND NOT disabled AND id <> ?", target.ID).Count(&others).Error; err != nil {
		return err
	}
	if others == 0 {
		return ErrLastAdmin
	}
	return nil
}

// AdminSetAdmin makes userID an administrator or revokes it, as actorID.
// An administrator may step down, but never the last one (ErrLastAdmin).
func (s *Store) AdminSetAdmin(ctx context.Context, actorID, userID int64, admin bool) (*User, error) {
	var out User
	err := s.adminTx(ctx, actorID, userID, func(tx *gorm.DB, target *User) error {
		if !admin {
			if err := keepsAnAdmin(tx, target); err != nil {
				return err
			}
		}
		if err := tx.Model(target).Update("is_admin", admin).Error; err != nil {
			return err
		}
		return tx.Take(&out, target.ID).Error
	})
	return &out, wrap("admin set admin", err)
}

// AdminSetDisabled disables or re-enables userID's account, as actorID. A
// disabled account's sessions end (its session epoch moves on, so even
// re-enabled it must sign in again) and its API keys are refused. Nobody can
// disable themselves (ErrOwnAccount) or the last administrator (ErrLastAdmin).
func (s *Store) AdminSetDisabled(ctx context.Context, actorID, userID int64, disabled bool) (*User, error) {
	var out User
	err := s.adminTx(ctx, actorID, userID, func(tx *gorm.DB, target *User) error {
		if disabled {
			if target.ID == actorID {
				return ErrOwnAccount
			}
			if err := keepsAnAdmin(tx, target); err != nil {
				return err
			}
		}
		updates := map[string]any{"disabled": disabled}
		if disabled && !target.Disabled {
			updates["session_epoch"] = gorm.Expr("session_epoch + 1")
		}
		if err := tx.Model(target).Updates(updates).Error; err != nil {
			return err
		}
		return tx.Take(&out, target.ID).Error
	})
	if err == nil && disabled {
		s.tellAccount(userID)
	}
	return &out, wrap("admin set disabled", err)
}

// AdminSetPassword sets userID's password hash, as actorID, and ends the
// account's sessions; with revokeKeys, it deletes the account's API keys in
// the same transaction and says how many went.
func (s *Store) AdminSetPassword(ctx context.Context, actorID, userID int64, passwordHash string, revokeKeys bool) (*User, int64, error) {
	var out User
	var revoked int64
	err := s.adminTx(ctx, actorID, userID, func(tx *gorm.DB, target *User) error {
		err := tx.Model(target).Updates(map[string]any{
			"password_hash": passwordHash, "session_epoch": gorm.Expr("session_epoch + 1"),
		}).Error
		if err != nil {
			return err
		}
		if revokeKeys {
			res := tx.Where("user_id = ?", target.ID).Delete(&APIKey{})
			if res.Error != nil {
				return res.Error
			}
			revoked = res.RowsAffected
		}
		return tx.Take(&out, target.ID).Error
	})
	if err == nil {
		s.tellAccount(userID)
	}
	return &out, revoked, wrap("admin set password", err)
}

// UserDeletion counts what deleting an account removed.
type UserDeletion struct {
	Username  string
	Exchanges int64
	// Conversations counts the exchanges that are no fork: the families
	// a person sees in the sidebar.
	Conversations int64
	Messages      int64
	Pages         int64
	APIKeys       int64
}

// AdminDeleteUser deletes userID's account and, by cascade, everything it
// owns (API keys, pages and their revisions, exchanges and their messages,
// proposal rejections), as actorID. Audit rows stay, naming the account.
// Nobody can delete themselves (ErrOwnAccount) or the last administrator
// (ErrLastAdmin).
func (s *Store) AdminDeleteUser(ctx context.Context, actorID, userID int64) (UserDeletion, error) {
	var d UserDeletion
	err := s.adminTx(ctx, actorID, userID, func(tx *gorm.DB, target *User) error {
		if target.ID == actorID {
			return ErrOwnAccount
		}
		if err := keepsAnAdmin(tx, target); err != nil {
			return err
		}
		var err error
		d, err = deleteUserTx(tx, target)
		return err
	})
	if err == nil {
		s.tellAccount(userID)
	}
	return d, wrap("admin delete user", err)
}

// DeleteOwnAccount deletes the user's own account and, by cascade,
// everything it owns, in one transaction (the body AdminDeleteUser shares),
// and says what went. The last administrator who can sign in cannot
// (ErrLastAdmin).
func (s *Store) DeleteOwnAccount(ctx context.Context, userID int64) (UserDeletion, error) {
	var d UserDeletion
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if s.dialect == "postgres" {
			if err := tx.Exec("LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE").Error; err != nil {
				return err
			}
		}
		var target User
		if err := tx.Take(&target, userID).Error; err != nil {
			return err
		}
		if err := keepsAnAdmin(tx, &target); err != nil {
			return err
		}
		var err error
		d, err = deleteUserTx(tx, &target)
		return err
	})
	if err == nil {
		s.tellAccount(userID)
	}
	return d, wrap("delete own account", err)
}

// deleteUserTx counts what the account owns and deletes it, with everything
// it owns by cascade, inside tx.
func deleteUserTx(tx *gorm.DB, target *User) (UserDeletion, error) {
	d := UserDeletion{Username: target.Username}
	if err := countOwned(tx, target.ID, &d); err != nil {
		return d, err
	}
	// The chats first: left to the account's cascade, a project's deletion
	// could set its chats' project_id to NULL before they go, and each
	// title would be indexed again on the way out (migration 00034).
	if err := tx.Exec("DELETE FROM exchanges WHERE user_id = ?", target.ID).Error; err != nil {
		return d, err
	}
	return d, tx.Delete(&User{}, target.ID).Error
}

// OwnedCounts counts what the user owns, as deleting the account would
// remove it.
func (s *Store) OwnedCounts(ctx context.Context, userID int64) (UserDeletion, error) {
	var d UserDeletion
	err := countOwned(s.db.WithContext(ctx), userID, &d)
	return d, wrap("owned counts", err)
}

// countOwned fills d's counts of what userID owns.
func countOwned(tx *gorm.DB, userID int64, d *UserDeletion) error {
	counts := []struct {
		n     *int64
		query string
	}{
		{&d.Exchanges, "SELECT COUNT(*) FROM exchanges WHERE user_id = ?"},
		{&d.Conversations, "SELECT COUNT(*) FROM exchanges WHERE user_id = ? AND forked_from_id IS NULL"},
		{&d.Messages, "SELECT COUNT(*) FROM messages WHERE exchange_id IN (SELECT id FROM exchanges WHERE user_id = ?)"},
		{&d.Pages, "SELECT COUNT(*) FROM pages WHERE user_id = ?"},
		{&d.APIKeys, "SELECT COUNT(*) FROM api_keys WHERE user_id = ?"},
	}
	for _, c := range counts {
		if err := tx.Raw(c.query, userID).Scan(c.n).Error; err != nil {
			return err
		}
	}
	return nil
}

// SetOwnPassword sets the user's own password hash and moves the account to
// a new session epoch, ending its sessions (the caller keeps its own by
// storing the returned epoch in it). API keys stay.
func (s *Store) SetOwnPassword(ctx context.Context, userID int64, passwordHash string) (*User, error) {
	var out User
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&User{}).Where("id = ?", userID).Updates(map[string]any{
			"password_hash": passwordHash, "session_epoch": gorm.Expr("session_epoch + 1"),
		})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return fmt.Errorf("user %d: %w", userID, ErrNotFound)
		}
		return tx.Take(&out, userID).Error
	})
	if err == nil {
		s.tellAccount(userID) // the caller's own session moves to the new epoch
	}
	return &out, wrap("set own password", err)
}

// AdminUsernames lists every account's id and name, by name, for the admin
// list's user filter.
func (s *Store) AdminUsernames(ctx context.Context) ([]User, error) {
	var out []User
	err := s.db.WithContext(ctx).Select("id, username").Order("username").Find(&out).Error
	return out, wrap("admin usernames", err)
}
