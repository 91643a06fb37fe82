package agents

import (
	"context"
	"errors"

	"palaver/models"
)

// Deletions reach the open tabs as the EventTurn of an exchange without a
// header (it is gone). When it was a branch of a family, the event carries
// the member that stands for the family now (Heir) and the family's root
// before (Family): the tabs show the family's sidebar item through it, one
// branch fewer, and take the branch off their switchers. This process hears
// its own deletions from the store (models.Store.OnDeleted); on PostgreSQL
// the others hear them through the waker (NotifyFamily).

// publishDeletions tells the users' tabs of committed deletions.
func (s *Service) publishDeletions(ds []models.Deletion) {
	for _, d := range ds {
		s.hub.Publish(deletionEvent(d.UserID, d.ExchangeID, d.PageID, d.Family, d.Heir))
	}
}

// deletionEvent is the event of a deleted exchange.
func deletionEvent(userID, exchangeID, pageID, family int64, heir *models.Exchange) Event {
	if heir != nil && heir.UserID != userID {
		heir = nil // never another user's header (a second lock on that door)
	}
	return Event{Kind: EventTurn, UserID: userID, ExchangeID: exchangeID, PageID: pageID, Heir: heir, Family: family}
}

// deleted fans out a deletion another process made of a branch: the heir
// is read as it now stands (the notification comes once the deletion is
// committed). The deletion's own notification follows, and finds nothing
// more to do.
func (w *Waker) deleted(ctx context.Context, n *models.Notice) error {
	var heir *models.Exchange
	if n.Heir != 0 {
		h, err := w.store.WakeExchange(ctx, n.Heir)
		switch {
		case errors.Is(err, models.ErrNotFound): // deleted since: its own notification follows
		case err != nil:
			return err
		default:
			heir = h
		}
	}
	w.closeReply(n.Exchange)
	w.hub.PublishRemote(deletionEvent(n.User, n.Exchange, n.Page, n.Root, heir))
	return nil
}
