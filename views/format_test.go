package views

import (
	"strings"
	"testing"
	"time"
)

func TestRelativeTimeAndGroup(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	now := time.Date(2026, 3, 10, 15, 0, 0, 0, loc)
	for _, tc := range []struct {
		at          time.Time
		when, group string
	}{
		{now.Add(-20 * time.Second), "just now", GroupToday},
		{now.Add(-5 * time.Minute), "5 min ago", GroupToday},
		{now.Add(-3*time.Hour - 10*time.Minute), "3 h ago", GroupToday},
		{time.Date(2026, 3, 10, 0, 1, 0, 0, loc), "14 h ago", GroupToday},
		{time.Date(2026, 3, 9, 23, 59, 0, 0, loc), "yesterday", GroupYesterday},
		{time.Date(2026, 3, 9, 0, 0, 0, 0, loc), "yesterday", GroupYesterday},
		{time.Date(2026, 3, 8, 23, 0, 0, 0, loc), "8 Mar", GroupWeek},
		{time.Date(2026, 3, 3, 9, 0, 0, 0, loc), "3 Mar", GroupWeek},
		{time.Date(2026, 3, 2, 9, 0, 0, 0, loc), "2 Mar", GroupOlder},
		{time.Date(2025, 12, 24, 9, 0, 0, 0, loc), "24 Dec 2025", GroupOlder},
		// Stored times are UTC; the day boundaries are now's time zone's:
		// 23:30 UTC on the 9th is 01:30 on the 10th here.
		{time.Date(2026, 3, 9, 23, 30, 0, 0, time.UTC), "13 h ago", GroupToday},
		{now.Add(time.Minute), "just now", GroupToday}, // clock skew
	} {
		if got := RelativeTime(tc.at, now); got != tc.when {
			t.Errorf("RelativeTime(%v) = %q, want %q", tc.at, got, tc.when)
		}
		if got := HistoryGroup(tc.at, now); got != tc.group {
			t.Errorf("HistoryGroup(%v) = %q, want %q", tc.at, got, tc.group)
		}
	}
}

func TestPlural(t *testing.T) {
	if got := Plural(1, "turn", "turns"); got != "1 turn" {
		t.Fatal(got)
	}
	if got := Plural(0, "turn", "turns"); got != "0 turns" {
		t.Fatal(got)
	}
}

// A message's time says its date once it is not from today.
func TestMessageTime(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	now := time.Date(2026, 12, 4, 9, 30, 0, 0, loc)
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 12, 4, 0, 5, 0, 0, loc), "00:05"},
		{time.Date(2026, 12, 3, 14, 2, 0, 0, loc), "Yesterday 14:02"},
		{time.Date(2026, 10, 20, 2, 22, 0, 0, loc), "20 Oct 02:22"},
		{time.Date(2025, 10, 20, 2, 22, 0, 0, loc), "20 Oct 2025 02:22"},
		{time.Date(2026, 12, 3, 23, 30, 0, 0, time.UTC), "00:30"}, // today, where now is
	} {
		short, full := MessageTime(tc.at, now)
		if short != tc.want {
			t.Errorf("%s: %q, want %q", tc.at, short, tc.want)
		}
		if !strings.Contains(full, tc.at.In(loc).Format("2 January 2006, 15:04:05")) {
			t.Errorf("%s: the tooltip says %q", tc.at, full)
		}
	}
}

// The sidebar and the transcript write an older date the same way: a
// conversation listed "20 Oct 2025" opens on messages of "20 Oct 2025
// 02:22", not "Oct 20, 2025" beside "20 Oct 2025".
func TestRelativeTimeDateMatchesMessageTime(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	now := time.Date(2026, 3, 10, 15, 0, 0, 0, loc)
	for _, at := range []time.Time{time.Date(2026, 3, 2, 9, 0, 0, 0, loc), time.Date(2025, 10, 20, 2, 22, 0, 0, loc)} {
		side := RelativeTime(at, now)
		msg, _ := MessageTime(at, now)
		if !strings.HasPrefix(msg, side+" ") {
			t.Errorf("the sidebar says %q where the message says %q", side, msg)
		}
	}
}
