package screens

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"palaver/models"
)

// The memo makes a lookup once per event and question, for all the tabs
// that ask at once; another question or another event (another header)
// makes its own; a failed lookup is not shared.
func TestEventMemoOncePerEventAndKey(t *testing.T) {
	var m eventMemo[string, int]
	var made atomic.Int64
	lookup := func(v int) func() (int, error) {
		return func() (int, error) { made.Add(1); return v, nil }
	}
	first, second := &models.Exchange{ID: 1}, &models.Exchange{ID: 1}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if v, err := m.get(first, "a", lookup(7)); v != 7 || err != nil {
				t.Errorf("got %d, %v", v, err)
			}
		})
	}
	wg.Wait()
	if n := made.Load(); n != 1 {
		t.Fatalf("50 tabs asking one event made %d lookups, want 1", n)
	}
	if v, _ := m.get(first, "b", lookup(8)); v != 8 {
		t.Errorf("another question of the event: %d", v)
	}
	if v, _ := m.get(second, "a", lookup(9)); v != 9 {
		t.Errorf("a later event with an equal header: %d, want it read afresh", v)
	}
	if n := made.Load(); n != 3 {
		t.Errorf("%d lookups, want 3", n)
	}
	failed := errors.New("connection gone")
	third := &models.Exchange{ID: 1}
	if _, err := m.get(third, "a", func() (int, error) { return 0, failed }); !errors.Is(err, failed) {
		t.Fatalf("a failed lookup: %v", err)
	}
	if v, err := m.get(third, "a", lookup(10)); v != 10 || err != nil {
		t.Errorf("after a failed lookup, the next tab got %d, %v; want its own lookup", v, err)
	}
}
