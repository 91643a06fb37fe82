package throttle_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"palaver/throttle"
)

// clock is a settable time for the throttle under test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var (
	perName = throttle.Limit{Name: "name", Max: 3, Window: 10 * time.Minute}
	perAddr = throttle.Limit{Name: "addr", Max: 5, Window: 10 * time.Minute}
)

func take(t *testing.T, m throttle.Throttle, keys ...throttle.Key) time.Duration {
	t.Helper()
	wait, err := m.Take(context.Background(), keys...)
	if err != nil {
		t.Fatal(err)
	}
	return wait
}

// newThrottle makes an empty throttle of one kind on a clock.
type newThrottle func(t *testing.T, now func() time.Time) throttle.Throttle

func memory(_ *testing.T, now func() time.Time) throttle.Throttle { return throttle.NewMemory(now, 0) }

func TestMemoryWindow(t *testing.T) { testWindow(t, memory) }

func testWindow(t *testing.T, newT newThrottle) {
	clk := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	m := newT(t, clk.now)
	ann := throttle.Key{Limit: perName, ID: "ann"}
	for i := range 3 {
		if w := take(t, m, ann); w != 0 {
			t.Fatalf("event %d refused (wait %v)", i+1, w)
		}
		clk.t = clk.t.Add(time.Minute)
	}
	// Events at 12:00, 12:01, 12:02; now 12:03: the first leaves at 12:10.
	if w := take(t, m, ann); w != 7*time.Minute {
		t.Fatalf("4th event: wait %v, want 7m", w)
	}
	clk.t = clk.t.Add(7 * time.Minute)
	if w := take(t, m, ann); w != 0 {
		t.Fatalf("after the window: wait %v, want 0", w)
	}
	// Undo takes back the last event, Reset all of them.
	if err := m.Undo(context.Background(), ann); err != nil {
		t.Fatal(err)
	}
	if w := take(t, m, ann); w != 0 {
		t.Fatalf("after Undo: wait %v", w)
	}
	if w := take(t, m, ann); w == 0 {
		t.Fatal("a 4th event in the window was let in")
	}
	m.Reset(context.Background(), ann)
	if w := take(t, m, ann); w != 0 {
		t.Fatalf("after Reset: wait %v", w)
	}
}

// TestMemoryKeysTogether: a refused Take counts nothing against any key, and
// one key's limit does not touch another's.
func TestMemoryKeysTogether(t *testing.T) { testKeysTogether(t, memory) }

func testKeysTogether(t *testing.T, newT newThrottle) {
	clk := &clock{t: time.Now()}
	m := newT(t, clk.now)
	addr := throttle.Key{Limit: perAddr, ID: "10.0.0.1"}
	ann := throttle.Key{Limit: perName, ID: "ann"}
	for range 3 {
		take(t, m, ann, addr)
	}
	if w := take(t, m, ann, addr); w == 0 {
		t.Fatal("ann's 4th let in")
	}
	bob := throttle.Key{Limit: perName, ID: "bob"}
	take(t, m, bob, addr) // addr: 4
	take(t, m, bob, addr) // addr: 5
	if w := take(t, m, bob, addr); w == 0 {
		t.Fatal("the address's 6th let in")
	}
	// bob had 2: the refused Take did not count a 3rd.
	if w := take(t, m, bob); w != 0 {
		t.Fatal("bob's 3rd refused: a refused Take counted")
	}
	// The same ID under another limit is another counter.
	if w := take(t, m, throttle.Key{Limit: perAddr, ID: "ann"}); w != 0 {
		t.Fatal("ann under another limit was refused")
	}
}

// TestMemoryBounded: beyond maxKeys the least recently used key goes, and
// expired keys are swept.
func TestMemoryBounded(t *testing.T) {
	clk := &clock{t: time.Now()}
	m := throttle.NewMemory(clk.now, 100)
	for i := range 1000 {
		take(t, m, throttle.Key{Limit: perName, ID: fmt.Sprint(i)})
	}
	if n := m.Len(); n != 100 {
		t.Fatalf("%d keys tracked, want the cap of 100", n)
	}
	clk.t = clk.t.Add(time.Hour)
	take(t, m, throttle.Key{Limit: perName, ID: "new"})
	if n := m.Len(); n != 1 {
		t.Fatalf("%d keys tracked after every other expired, want 1", n)
	}
}
