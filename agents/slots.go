package agents

import (
	"context"
	"errors"
	"sync"
)

// Per-user limits of API.md ("Limits and headers"): what one user may hold
// at once.
const (
	MaxTurnsPerUser   = 4  // replies being written
	MaxSocketsPerUser = 32 // live websockets (/live)
	MaxStreamsPerUser = 32 // event streams (GET /api/chat/exchange/{id}/stream)
)

// SlotKind names a kind of thing a user holds a bounded number of.
type SlotKind string

// The kinds of slots.
const (
	SlotTurn   SlotKind = "turn"
	SlotSocket SlotKind = "socket"
	SlotStream SlotKind = "stream"
)

// The errors of a user at a limit; each answers 429.
var (
	ErrTooManyTurns   = errors.New("4 replies are already being written for you; wait for one to finish, or stop one, and send again")
	ErrTooManySockets = errors.New("too many live connections are open for you (32); close some tabs")
	ErrTooManyStreams = errors.New("too many event streams are open for you (32); close one first")
)

// Slots counts what each user holds at once. Acquire takes one of the
// user's slots of a kind, or fails with the kind's ErrTooMany… error; the
// release it returns gives the slot back and may be called more than once.
// The in-process MemorySlots serves one server; several servers sharing a
// database count in it instead (issue 13).
type Slots interface {
	Acquire(ctx context.Context, kind SlotKind, userID int64) (release func(), err error)
}

// MemorySlots counts slots in this process's memory.
type MemorySlots struct {
	limits map[SlotKind]int
	mu     sync.Mutex
	held   map[slotKey]int
}

type slotKey struct {
	kind   SlotKind
	userID int64
}

// NewMemorySlots counts slots in memory with API.md's limits.
func NewMemorySlots() *MemorySlots {
	return NewMemorySlotsWithLimits(map[SlotKind]int{
		SlotTurn: MaxTurnsPerUser, SlotSocket: MaxSocketsPerUser, SlotStream: MaxStreamsPerUser,
	})
}

// NewMemorySlotsWithLimits counts slots in memory with other limits (a kind
// left out has none): for the bench, which measures what the machine can
// carry, not what one person is allowed.
func NewMemorySlotsWithLimits(limits map[SlotKind]int) *MemorySlots {
	return &MemorySlots{held: map[slotKey]int{}, limits: limits}
}

// Acquire takes a slot of kind for userID, or refuses at the limit.
func (m *MemorySlots) Acquire(_ context.Context, kind SlotKind, userID int64) (func(), error) {
	key := slotKey{kind, userID}
	m.mu.Lock()
	defer m.mu.Unlock()
	if limit, ok := m.limits[kind]; ok && m.held[key] >= limit {
		return nil, tooMany(kind)
	}
	m.held[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.held[key]--; m.held[key] <= 0 {
				delete(m.held, key)
			}
		})
	}, nil
}

// Held says how many slots of kind userID holds now.
func (m *MemorySlots) Held(kind SlotKind, userID int64) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held[slotKey{kind, userID}]
}

func tooMany(kind SlotKind) error {
	switch kind {
	case SlotTurn:
		return ErrTooManyTurns
	case SlotSocket:
		return ErrTooManySockets
	default:
		return ErrTooManyStreams
	}
}
