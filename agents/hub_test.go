package agents

import "testing"

func TestHubFansOutPerUser(t *testing.T) {
	h := NewHub()
	a1, a2, b := h.Subscribe(1), h.Subscribe(1), h.Subscribe(2)
	h.Publish(Event{Kind: EventDelta, UserID: 1, ExchangeID: 7, Delta: "hi"})
	for _, s := range []*Subscription{a1, a2} {
		select {
		case e := <-s.C:
			if e.Delta != "hi" || e.ExchangeID != 7 {
				t.Fatalf("event %+v", e)
			}
		default:
			t.Fatal("a subscriber of user 1 got nothing")
		}
	}
	select {
	case e := <-b.C:
		t.Fatalf("user 2 got user 1's event %+v", e)
	default:
	}
	a1.Close()
	a1.Close() // twice is fine
	if n := h.Subscribers(); n != 2 {
		t.Fatalf("%d subscribers after a close, want 2", n)
	}
	b.Close()
	a2.Close()
	if n := h.Subscribers(); n != 0 {
		t.Fatalf("%d subscribers, want 0", n)
	}
}

func TestHubNeverBlocksAndMarksLaggards(t *testing.T) {
	h := NewHub()
	s := h.Subscribe(1)
	for i := 0; i < subscriberBuffer+10; i++ {
		h.Publish(Event{Kind: EventDelta, UserID: 1})
	}
	if len(s.C) != subscriberBuffer {
		t.Fatalf("buffer holds %d", len(s.C))
	}
	if !s.Lagged() {
		t.Fatal("a subscriber that lost events was not told")
	}
	if s.Lagged() {
		t.Fatal("Lagged did not clear")
	}
}

// TestHubSubscribed: a user is subscribed here while one of their
// subscriptions is open, and only then.
func TestHubSubscribed(t *testing.T) {
	h := NewHub()
	if h.Subscribed(1) {
		t.Fatal("subscribed before any subscription")
	}
	a, b := h.Subscribe(1), h.Subscribe(1)
	if !h.Subscribed(1) || h.Subscribed(2) {
		t.Fatalf("Subscribed(1) = %v, Subscribed(2) = %v; want true, false", h.Subscribed(1), h.Subscribed(2))
	}
	a.Close()
	if !h.Subscribed(1) {
		t.Fatal("not subscribed with one subscription still open")
	}
	b.Close()
	if h.Subscribed(1) {
		t.Fatal("subscribed after every subscription closed")
	}
}
