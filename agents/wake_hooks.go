package agents

import (
	"context"

	"palaver/models"
)

// The service's hooks into the waker (wake.go): without one (SQLite, or a
// single process), each does what one process alone can.

// remoteReplySoFar is the text of a reply another process is writing.
func (s *Service) remoteReplySoFar(userID, exchangeID int64) string {
	if s.waker == nil {
		return ""
	}
	return s.waker.replySoFar(userID, exchangeID)
}

// stopElsewhere stops a turn this process does not run: through the
// database when there is a waker, else ErrNotHere.
func (s *Service) stopElsewhere(ctx context.Context, userID, exchangeID int64) (*TurnResult, error) {
	if s.waker == nil {
		return nil, ErrNotHere
	}
	return s.waker.stop(ctx, userID, exchangeID)
}

// ownerGone says whether a running turn's owner, on any host, is gone
// (beyond the pid check of ownerDead, which only sees this host).
func (s *Service) ownerGone(ctx context.Context, ex *models.Exchange) bool {
	if s.waker == nil {
		return false
	}
	return s.waker.ownerGone(ctx, ex)
}
