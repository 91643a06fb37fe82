package screens

import (
	"context"
	"maps"
	"sync"

	"palaver/models"
)

// familyMemo shares one event's family lookup among the tabs it reaches.
// Every open tab of a user hears each turn event and shows the exchange's
// sidebar item, which needs the family's heads: without the memo, 200 tabs
// made 200 identical pairs of queries per event, and a message took
// seconds to reach the last of them. An event's header is one
// *models.Exchange shared by all its subscribers, so the memo is keyed by
// that pointer (and the exchange the tab shows): a later event is another
// pointer and reads afresh, so nothing stale is ever shown. It holds the
// latest event only.
type familyMemo struct {
	mu    sync.Mutex
	event *models.Exchange
	heads map[int64]*familyHeads // by the exchange the tab shows
}

// familyHeads is one lookup, made once for every tab that asks.
type familyHeads struct {
	once  sync.Once
	heads map[int64]models.FamilyHead
	err   error
}

// eventFamilyHeads returns store.FamilyHeads(ids) for the event ex, made once
// per event and current; the caller gets its own copy of the map. A failed
// lookup (the first tab's connection went, say) is not shared: each tab
// then asks for itself.
func (s *Screens) eventFamilyHeads(ctx context.Context, userID int64, ex *models.Exchange, current int64, ids []int64) (map[int64]models.FamilyHead, error) {
	m := &s.families
	m.mu.Lock()
	if m.event != ex {
		m.event, m.heads = ex, map[int64]*familyHeads{}
	}
	f := m.heads[current]
	if f == nil {
		f = &familyHeads{}
		m.heads[current] = f
	}
	m.mu.Unlock()
	f.once.Do(func() { f.heads, f.err = s.store.FamilyHeads(ctx, userID, ids) })
	if f.err != nil {
		return s.store.FamilyHeads(ctx, userID, ids)
	}
	return maps.Clone(f.heads), nil
}
