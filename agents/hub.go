package agents

import (
	"sync"

	"palaver/models"
)

// EventKind says what an Event reports.
type EventKind int

// Kinds of events.
const (
	// EventEntry: an entry was committed to an exchange's log (a user
	// message, a reply, a tool call or result, an error row).
	EventEntry EventKind = iota + 1
	// EventDelta: a piece of a reply being written; never stored.
	EventDelta
	// EventTurn: an exchange's turn started, finished, failed or was renamed
	// or deleted; Exchange is its header after the change (nil if deleted).
	EventTurn
	// EventPage: a page's content changed (a save, an accepted proposal).
	EventPage
	// EventRead: the user's unread marks changed: ExchangeID's, or (0)
	// any number of them (issue 28).
	EventRead
	// EventProjects: the user's projects changed (one made, renamed,
	// moved or deleted, issue 27): tabs draw their sidebar again.
	EventProjects
	// EventReasoning: a piece of the reasoning (thinking) a model streams
	// before or while it writes a reply, in Delta; never stored as it
	// comes (the reply keeps all of it). Shown to this process's tabs and
	// streams only: a tab of another process sees it with the reply.
	EventReasoning
)

// Event is something that happened to a user's data that their open tabs
// should show. Events are pointers to committed facts, plus the ephemeral
// deltas: a subscriber that misses some catches up from the database.
type Event struct {
	Kind       EventKind
	UserID     int64
	ExchangeID int64
	PageID     int64
	Exchange   *models.Exchange // the header, for EventEntry and EventTurn
	Entry      *models.Message  // for EventEntry
	Delta      string           // for EventDelta
	// Heir and Family are, for the EventTurn of a deleted exchange that
	// was a branch, the member that stands for its family now and the
	// family's root before (the key the sidebar knew it by); see
	// models.Deletion. Nil and 0 otherwise.
	Heir   *models.Exchange
	Family int64
	// Regroup says, for an EventTurn, that the exchange changed its place
	// among the sidebar's lists (pinned or unpinned, archived or brought
	// back): tabs draw their lists again rather than the item in place.
	Regroup bool
	// Offset is, for EventDelta, how many bytes of the reply came before
	// Delta: a subscriber that joined late, or lost pieces, takes the text
	// so far from Service.ReplySoFar and lets through only what follows it.
	Offset int
	// Unread is, for an EventTurn or EventRead of a general chat, the
	// user's unread exchanges as the event left them, read once for every
	// tab and only read (nil: each tab reads them).
	Unread map[int64]bool
}

// subscriberBuffer is how many events a subscriber may fall behind before it
// is marked lagging and must catch up from the database.
const subscriberBuffer = 512

// Hub fans events out to the subscribers of each user (one per open tab or
// stream). Publishing never blocks: a subscriber that cannot keep up loses
// events and is told so, and re-reads what it missed from the database.
type Hub struct {
	mu   sync.RWMutex
	subs map[int64]map[*Subscription]struct{}
	// relay hears the deltas and reasoning published here, to pass them on to other
	// processes (wake.go, PostgreSQL only); set before the first Publish.
	relay func(Event)
	// watching counts, per user and exchange, the subscriptions here that
	// show it (Subscription.Watch): a reply that finishes in front of one
	// is not unread.
	watching map[int64]map[int64]int
}

// NewHub makes an empty hub.
func NewHub() *Hub {
	return &Hub{subs: map[int64]map[*Subscription]struct{}{}, watching: map[int64]map[int64]int{}}
}

// Subscription receives one user's events on C until Close.
type Subscription struct {
	C chan Event
	// Check is signalled when whoever holds the subscription must check
	// again that it may still speak as the user (Recheck). It is apart
	// from C so that it is never lost behind events: one signal waits
	// however many are sent before it is taken.
	Check  chan struct{}
	hub    *Hub
	userID int64
	mu     sync.Mutex
	lagged bool
	shows  int64 // the exchange its tab shows (Watch); 0: none; under hub.mu
}

// Subscribe starts receiving the user's events.
func (h *Hub) Subscribe(userID int64) *Subscription {
	s := &Subscription{C: make(chan Event, subscriberBuffer), Check: make(chan struct{}, 1), hub: h, userID: userID}
	h.mu.Lock()
	if h.subs[userID] == nil {
		h.subs[userID] = map[*Subscription]struct{}{}
	}
	h.subs[userID][s] = struct{}{}
	h.mu.Unlock()
	return s
}

// Close stops the subscription. It is safe to call more than once.
func (s *Subscription) Close() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	h.setShows(s, 0)
	if set, ok := h.subs[s.userID]; ok {
		delete(set, s)
		if len(set) == 0 {
			delete(h.subs, s.userID)
		}
	}
}

// Lagged reports (and clears) whether events were dropped since the last
// call: the subscriber must then re-read its exchange from the database.
func (s *Subscription) Lagged() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lagged
	s.lagged = false
	return l
}

// Publish sends e to every subscriber of its user without blocking.
func (h *Hub) Publish(e Event) {
	if (e.Kind == EventDelta || e.Kind == EventReasoning) && h.relay != nil {
		h.relay(e) // hook: other processes' tabs see the reply typed, and thought (wake.go)
	}
	h.fanout(e)
}

// fanout sends e to this process's subscribers of its user.
func (h *Hub) fanout(e Event) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for s := range h.subs[e.UserID] {
		select {
		case s.C <- e:
		default:
			s.mu.Lock()
			s.lagged = true
			s.mu.Unlock()
		}
	}
}

// Recheck tells every subscription of the user here to check again whether
// it may still speak as them: the account was deleted or disabled, its
// sessions moved to a new epoch, or one of its keys was revoked. A socket
// or stream that may not ends itself.
func (h *Hub) Recheck(userID int64) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for s := range h.subs[userID] {
		s.recheck()
	}
}

func (s *Subscription) recheck() {
	select {
	case s.Check <- struct{}{}:
	default: // one is waiting already
	}
}

// Subscribers counts the open subscriptions (for the tests).
func (h *Hub) Subscribers() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	n := 0
	for _, set := range h.subs {
		n += len(set)
	}
	return n
}

// Watch says which exchange the subscription's tab shows (0: none).
func (s *Subscription) Watch(exchangeID int64) {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, open := h.subs[s.userID][s]; open {
		h.setShows(s, exchangeID)
	}
}

// setShows moves s's count in watching to exchangeID; h.mu is held.
func (h *Hub) setShows(s *Subscription, exchangeID int64) {
	if s.shows != 0 {
		w := h.watching[s.userID]
		if w[s.shows]--; w[s.shows] <= 0 {
			delete(w, s.shows)
		}
		if len(w) == 0 {
			delete(h.watching, s.userID)
		}
	}
	s.shows = exchangeID
	if exchangeID != 0 {
		if h.watching[s.userID] == nil {
			h.watching[s.userID] = map[int64]int{}
		}
		h.watching[s.userID][exchangeID]++
	}
}

// Subscribed says whether the user has a subscription here (a tab, a
// stream): an event's extras read for the tabs (Event.Unread) need not be
// read without one.
func (h *Hub) Subscribed(userID int64) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.subs[userID]) > 0
}

// Watching says whether a tab of the user here shows the exchange.
func (h *Hub) Watching(userID, exchangeID int64) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.watching[userID][exchangeID] > 0
}
