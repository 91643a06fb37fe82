package agents

// The hub's side of wake-ups across processes (wake.go).

// EventResync tells a subscriber to re-read what it shows from the
// database: the process may have missed events (its listening connection
// was lost). The subscription is marked lagging before it is sent.
const EventResync EventKind = 100

// PublishRemote sends an event heard from another process to this
// process's subscribers (it is not passed on again).
func (h *Hub) PublishRemote(e Event) { h.fanout(e) }

// SetRelay makes f hear every delta published on the hub from now on.
// Call it before the hub is used.
func (h *Hub) SetRelay(f func(Event)) { h.relay = f }

// Resync marks every subscription lagging and wakes it, so that each
// catches up from the database (nothing missed; what it has is not sent
// again), and has each check its principal again: an account's end may be
// among what was missed.
func (h *Hub) Resync() {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for userID, set := range h.subs {
		for s := range set {
			s.recheck()
			s.mu.Lock()
			s.lagged = true
			s.mu.Unlock()
			select {
			case s.C <- Event{Kind: EventResync, UserID: userID}:
			default: // full: it will find itself lagging at the next one
			}
		}
	}
}

// Watched says whether any subscriber of the user is open here.
func (h *Hub) Watched(userID int64) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.subs[userID]) > 0
}
