package models

import (
	"context"
	"errors"

	"gorm.io/gorm"
)

// Who may speak as an account (issue 22). A request proves it anew each
// time (its session's user and epoch, or its key); an open websocket or
// event stream proved it once, when it opened. So every store method that
// ends an account's sessions or keys (a deletion, a disable, a password
// change or reset, a key revoked) tells OnAccountChanged once it commits,
// and the sockets and streams of that account check again (PrincipalValid).
// Other processes hear of it from the database: PostgreSQL's migration
// 00017 notifies (NotifyAccount) in the committing transaction.

// OnAccountChanged makes f hear, from now on, each account whose sessions
// or keys a committed change may have ended. One listener: a later call
// replaces it. f must not block.
func (s *Store) OnAccountChanged(f func(userID int64)) { s.onAccount.Store(&f) }

// tellAccount passes a committed change of an account to the listener.
func (s *Store) tellAccount(userID int64) {
	if f := s.onAccount.Load(); f != nil {
		(*f)(userID)
	}
}

// PrincipalValid says whether something that opened as userID may still
// speak as it: the account exists and is not disabled, and either it is
// still at session epoch epoch (a session's socket or stream; keyHash "")
// or it still holds the key of hash keyHash (a stream opened with that
// x-api-key, whatever the epoch: a password change keeps keys). It only
// reads: a key's last use is noted by the requests that use it.
func (s *Store) PrincipalValid(ctx context.Context, userID, epoch int64, keyHash string) (bool, error) {
	var u User
	err := s.db.WithContext(ctx).Select("id", "disabled", "session_epoch").Take(&u, userID).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		return false, nil
	case err != nil:
		return false, wrap("principal valid", err)
	case u.Disabled:
		return false, nil
	case keyHash == "":
		return u.SessionEpoch == epoch, nil
	}
	var n int64
	err = s.db.WithContext(ctx).Model(&APIKey{}).Where("key_hash = ? AND user_id = ?", keyHash, userID).Count(&n).Error
	return n > 0, wrap("principal valid", err)
}
