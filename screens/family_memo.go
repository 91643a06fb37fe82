package screens

import (
	"context"
	"sync"
	"time"

	"palaver/models"
)

// familyMemo shares one event's family lookup among the tabs it reaches.
// Every open tab of a user hears each turn event and shows the exchange's
// sidebar item, which needs the family's heads: one lookup per event, not
// one per tab (docs/PERFORMANCE.md says what one per tab cost at 200 tabs).
// An event's header is one *models.Exchange shared by all its subscribers,
// so the memo is keyed by that pointer (and the exchange the tab shows): a
// later event is another pointer and reads afresh, so nothing stale is ever
// shown. It holds the latest familyEvents events: a turn publishes two
// headers (started, finished) within a millisecond, and tabs that fall
// behind hear the first while others already hear the second; holding the
// latest one only, each tab that went back and forth between them would
// make the lookup again.
type familyMemo struct {
	mu     sync.Mutex
	events [familyEvents]familyEvent // a ring, the oldest overwritten
	next   int
}

// familyEvents is how many recent events the memo holds.
const familyEvents = 8

// familyEvent is one event's lookups.
type familyEvent struct {
	event *models.Exchange
	at    time.Time              // when its first tab asked
	heads map[int64]*familyHeads // by the exchange the tab shows
}

// familyFresh is how long an event's lookup serves its tabs. A header is
// published once per change, but should one be published again as it was
// (a turn whose finished header could not be read), a family changed
// meanwhile is read afresh.
const familyFresh = 2 * time.Second

// familyHeads is one lookup, made once for every tab that asks.
type familyHeads struct {
	once  sync.Once
	heads map[int64]models.FamilyHead
	err   error
}

// eventFamilyHeads returns s.heads.FamilyHeads(ids) for the event ex, made once
// per event and current; the map is shared by the event's tabs, and only
// read (FamilyItem). A failed lookup (the first tab's connection went, say)
// is not shared: each tab then asks for itself.
func (s *Screens) eventFamilyHeads(ctx context.Context, userID int64, ex *models.Exchange, current int64, ids []int64) (map[int64]models.FamilyHead, error) {
	m := &s.families
	m.mu.Lock()
	now := time.Now()
	var ev *familyEvent
	for i := range m.events {
		if m.events[i].event == ex && now.Sub(m.events[i].at) < familyFresh {
			ev = &m.events[i]
			break
		}
	}
	if ev == nil {
		for i := range m.events {
			if m.events[i].event == ex {
				m.events[i] = familyEvent{} // gone stale
			}
		}
		ev = &m.events[m.next]
		m.next = (m.next + 1) % familyEvents
		*ev = familyEvent{event: ex, at: now, heads: map[int64]*familyHeads{}}
	}
	f := ev.heads[current]
	if f == nil {
		f = &familyHeads{}
		ev.heads[current] = f
	}
	m.mu.Unlock()
	f.once.Do(func() { f.heads, f.err = s.heads.FamilyHeads(ctx, userID, ids) })
	if f.err != nil {
		return s.heads.FamilyHeads(ctx, userID, ids)
	}
	return f.heads, nil
}
