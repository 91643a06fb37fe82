package views

import "sync"

// memo remembers rendered HTML by its inputs, up to a bound: once full,
// each new entry takes the place of the oldest. Safe for concurrent use.
type memo[K comparable] struct {
	mu    sync.RWMutex // read by every tab an update goes to
	limit int
	cache map[K]string
	order []K // insertion order: a ring of limit entries
	next  int
}

func newMemo[K comparable](limit int) *memo[K] {
	return &memo[K]{limit: limit, cache: make(map[K]string, limit), order: make([]K, 0, limit)}
}

func (m *memo[K]) get(key K) (string, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	html, ok := m.cache[key]
	return html, ok
}

// put keeps html for key. A key is kept as given: a string key must not
// share memory with a buffer its caller reuses.
func (m *memo[K]) put(key K, html string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.cache[key]; ok {
		return // rendered meanwhile by another caller
	}
	if len(m.order) < m.limit {
		m.order = append(m.order, key)
	} else {
		delete(m.cache, m.order[m.next])
		m.order[m.next] = key
		m.next = (m.next + 1) % m.limit
	}
	m.cache[key] = html
}
