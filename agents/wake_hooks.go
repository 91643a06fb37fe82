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

// announceFailed tells this process's subscribers of the turns it failed
// for dead processes: their error rows and headers. (The other processes
// hear of them from the database; this one skips its own commits.) Only
// with a waker: a lone process fails only its own earlier life's turns, at
// start-up, before anyone watches.
func (s *Service) announceFailed(ctx context.Context, failed []models.Exchange) {
	if s.waker == nil {
		return
	}
	for _, f := range failed {
		ex, err := s.store.Exchange(ctx, f.UserID, f.ID)
		if err != nil {
			continue // deleted meanwhile
		}
		msgs, err := s.waker.store.Messages(ctx, f.UserID, f.ID, nil)
		if err != nil {
			continue
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == models.RoleError {
				s.publishEntry(ex, &msgs[i])
				break
			}
		}
		s.publishTurn(ex)
	}
}
