package screens

import (
	"context"
	"sync"
	"time"

	"palaver/models"
)

// eventMemo shares one event's lookups among the tabs it reaches. Every
// open tab of a user hears each event: the sidebar item of a turn's header
// needs the family's heads, and a new entry's cell needs the transcript's
// tail (its files, its branch switchers); one lookup per event, not one
// per tab (docs/PERFORMANCE.md says what one per tab cost at 200 tabs).
// An event's header is one *models.Exchange shared by all its subscribers,
// so the memo is keyed by that pointer (and by what the tab asks, K): a
// later event is another pointer and reads afresh, so nothing stale is
// ever shown. It holds the latest memoEvents events: a turn publishes two
// headers (started, finished) within a millisecond, and tabs that fall
// behind hear the first while others already hear the second; holding the
// latest one only, each tab that went back and forth between them would
// make the lookup again.
type eventMemo[K comparable, V any] struct {
	mu     sync.Mutex
	events [memoEvents]memoEvent[K, V] // a ring, the oldest overwritten
	next   int
}

// memoEvents is how many recent events a memo holds.
const memoEvents = 8

// memoEvent is one event's lookups.
type memoEvent[K comparable, V any] struct {
	event *models.Exchange
	at    time.Time // when its first tab asked
	made  map[K]*memoLookup[V]
}

// memoFresh is how long an event's lookup serves its tabs. A header is
// published once per change, but should one be published again as it was
// (a turn whose finished header could not be read), what changed
// meanwhile is read afresh.
const memoFresh = 2 * time.Second

// memoLookup is one lookup, made once for every tab that asks.
type memoLookup[V any] struct {
	once sync.Once
	v    V
	err  error
}

// get returns make() for the event ex and the question key, made once per
// event and current; the value is shared by the event's tabs, and only
// read. A failed lookup (the first tab's connection went, say) is not
// shared: each tab then asks for itself.
func (m *eventMemo[K, V]) get(ex *models.Exchange, key K, make func() (V, error)) (V, error) {
	m.mu.Lock()
	now := time.Now()
	var ev *memoEvent[K, V]
	for i := range m.events {
		if m.events[i].event == ex && now.Sub(m.events[i].at) < memoFresh {
			ev = &m.events[i]
			break
		}
	}
	if ev == nil {
		for i := range m.events {
			if m.events[i].event == ex {
				m.events[i] = memoEvent[K, V]{} // gone stale
			}
		}
		ev = &m.events[m.next]
		m.next = (m.next + 1) % memoEvents
		*ev = memoEvent[K, V]{event: ex, at: now, made: map[K]*memoLookup[V]{}}
	}
	l := ev.made[key]
	if l == nil {
		l = &memoLookup[V]{}
		ev.made[key] = l
	}
	m.mu.Unlock()
	l.once.Do(func() { l.v, l.err = make() })
	if l.err != nil {
		return make()
	}
	return l.v, nil
}

// eventFamilyHeads returns s.heads.FamilyHeads(ids) for the event ex, made
// once per event and the exchange the tab shows (current); the map is
// shared by the event's tabs, and only read (FamilyItem).
func (s *Screens) eventFamilyHeads(ctx context.Context, userID int64, ex *models.Exchange, current int64, ids []int64) (map[int64]models.FamilyHead, error) {
	return s.families.get(ex, current, func() (map[int64]models.FamilyHead, error) {
		return s.heads.FamilyHeads(ctx, userID, ids)
	})
}
