// Package throttle counts events per key within a sliding window (failed
// sign-ins per username and per address, registrations per address) and says
// when a key has had its share. The handlers depend on the Throttle
// interface; Memory keeps the counts in one process, and a store shared by
// several processes can stand in for it.
package throttle

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// Limit is one rule: at most Max events per key within Window.
type Limit struct {
	Name   string // tells the limits apart: the same ID under two limits is two counters
	Max    int
	Window time.Duration
}

// Key is one counter: a limit and what it counts for (a username, an address).
type Key struct {
	Limit Limit
	ID    string
}

// Throttle counts events against keys.
type Throttle interface {
	// Take counts one event against every key at once, unless one of them
	// has had Max events within its window: then it counts nothing and
	// returns how long until every such key lets the next event in.
	Take(ctx context.Context, keys ...Key) (wait time.Duration, err error)
	// Undo takes back each key's latest event: what Take counted turned out
	// not to count (the password was right).
	Undo(ctx context.Context, keys ...Key) error
	// Reset forgets every event of each key.
	Reset(ctx context.Context, keys ...Key) error
}

// DefaultMaxKeys bounds the keys a Memory tracks: 100,000 keys of at most 20
// events is a few tens of MiB at worst.
const DefaultMaxKeys = 100_000

// Memory is a Throttle in this process's memory. Its memory is bounded: keys
// whose events have all left their window are dropped as they are met and by
// a sweep at most once a minute, and beyond MaxKeys the key used least
// recently is dropped (forgetting a stale counter is the lesser harm than
// refusing everyone or growing without end).
type Memory struct {
	now     func() time.Time
	maxKeys int

	mu        sync.Mutex
	keys      map[string]*list.Element // of *counter
	lru       *list.List               // least recently used first
	lastSweep time.Time
}

// counter is one key's events, oldest first, never more than its limit's Max.
type counter struct {
	key    string
	window time.Duration
	events []time.Time
}

// NewMemory makes an empty Memory. now is its clock (nil: time.Now);
// maxKeys bounds the keys it tracks (0: DefaultMaxKeys).
func NewMemory(now func() time.Time, maxKeys int) *Memory {
	if now == nil {
		now = time.Now
	}
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	return &Memory{now: now, maxKeys: maxKeys, keys: map[string]*list.Element{}, lru: list.New()}
}

func mapKey(k Key) string { return k.Limit.Name + "\x00" + k.ID }

// Take implements Throttle.
func (m *Memory) Take(_ context.Context, keys ...Key) (time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.sweep(now)
	var wait time.Duration
	for _, k := range keys {
		c := m.live(k, now)
		if c != nil && len(c.events) >= k.Limit.Max {
			wait = max(wait, c.events[len(c.events)-k.Limit.Max].Add(k.Limit.Window).Sub(now))
		}
	}
	if wait > 0 {
		return wait, nil
	}
	for _, k := range keys {
		c := m.live(k, now)
		if c == nil {
			c = m.add(k)
		}
		c.events = append(c.events, now)
		if over := len(c.events) - k.Limit.Max; over > 0 { // Max shrank since
			c.events = c.events[over:]
		}
		m.lru.MoveToBack(m.keys[c.key])
	}
	return 0, nil
}

// Undo implements Throttle.
func (m *Memory) Undo(_ context.Context, keys ...Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if e, ok := m.keys[mapKey(k)]; ok {
			c := e.Value.(*counter)
			if len(c.events) > 0 {
				c.events = c.events[:len(c.events)-1]
			}
			if len(c.events) == 0 {
				m.drop(e)
			}
		}
	}
	return nil
}

// Reset implements Throttle.
func (m *Memory) Reset(_ context.Context, keys ...Key) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if e, ok := m.keys[mapKey(k)]; ok {
			m.drop(e)
		}
	}
	return nil
}

// Len is how many keys are tracked.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.keys)
}

// live is k's counter with the events that left the window dropped, or nil
// when none is left.
func (m *Memory) live(k Key, now time.Time) *counter {
	e, ok := m.keys[mapKey(k)]
	if !ok {
		return nil
	}
	c := e.Value.(*counter)
	c.window = k.Limit.Window
	if c.expire(now); len(c.events) == 0 {
		m.drop(e)
		return nil
	}
	return c
}

// add starts a counter for k, dropping the least recently used beyond maxKeys.
func (m *Memory) add(k Key) *counter {
	for len(m.keys) >= m.maxKeys {
		m.drop(m.lru.Front())
	}
	c := &counter{key: mapKey(k), window: k.Limit.Window}
	m.keys[c.key] = m.lru.PushBack(c)
	return c
}

func (m *Memory) drop(e *list.Element) {
	delete(m.keys, e.Value.(*counter).key)
	m.lru.Remove(e)
}

// sweepEvery is how often Take looks through every key for expired ones.
const sweepEvery = time.Minute

// sweep drops the keys whose events have all expired, at most once per
// sweepEvery: keys met by no later request would otherwise stay until
// pushed out by maxKeys.
func (m *Memory) sweep(now time.Time) {
	if now.Sub(m.lastSweep) < sweepEvery {
		return
	}
	m.lastSweep = now
	for e := m.lru.Front(); e != nil; {
		next := e.Next()
		c := e.Value.(*counter)
		if c.expire(now); len(c.events) == 0 {
			m.drop(e)
		}
		e = next
	}
}

// expire drops the events older than the window.
func (c *counter) expire(now time.Time) {
	i := 0
	for i < len(c.events) && !c.events[i].Add(c.window).After(now) {
		i++
	}
	c.events = c.events[i:]
}
