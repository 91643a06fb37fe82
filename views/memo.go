package views

import "sync"

// Memo remembers what was made of some inputs (rendered HTML, a framed
// live message) by those inputs, up to a bound: once full, each new entry
// takes the place of the oldest. Safe for concurrent use.
type Memo[K comparable, V any] struct {
	mu    sync.RWMutex // read by every tab an update goes to
	limit int
	cache map[K]V
	order []K // insertion order: a ring of limit entries
	next  int
}

// memo is Memo under a name of this package's own, for embedding without
// a field that the package exports (Markdown).
type memo[K comparable, V any] = Memo[K, V]

// NewMemo makes an empty memo of at most limit entries.
func NewMemo[K comparable, V any](limit int) *Memo[K, V] {
	return &Memo[K, V]{limit: limit, cache: make(map[K]V, limit), order: make([]K, 0, limit)}
}

// Get returns what is kept for key.
func (m *Memo[K, V]) Get(key K) (V, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.cache[key]
	return v, ok
}

// Put keeps v for key, unless one is kept already (made meanwhile by
// another caller). A key is kept as given: a string key must not share
// memory with a buffer its caller reuses.
func (m *Memo[K, V]) Put(key K, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.cache[key]; ok {
		return // made meanwhile by another caller
	}
	if len(m.order) < m.limit {
		m.order = append(m.order, key)
	} else {
		delete(m.cache, m.order[m.next])
		m.order[m.next] = key
		m.next = (m.next + 1) % m.limit
	}
	m.cache[key] = v
}
