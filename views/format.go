package views

import (
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

func itoa(n int) string { return strconv.Itoa(n) }

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// sentence starts a message with a capital, as a sentence a person reads:
// some refusals carry an error's own words ("a reply is still being
// written…").
func sentence(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// History groups, newest first.
const (
	GroupToday     = "Today"
	GroupYesterday = "Yesterday"
	GroupWeek      = "Previous 7 days"
	GroupOlder     = "Older"
)

// day is the start of t's calendar day in now's time zone.
func day(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

// daysBefore says how many calendar days t lies before now, in now's time
// zone (0: the same day; negative: in the future).
func daysBefore(t, now time.Time) int {
	loc := now.Location()
	// Dates, not durations: a day with a DST change is still one day.
	a, b := day(t, loc), day(now, loc)
	ya, ma, da := a.Date()
	yb, mb, db := b.Date()
	return int(time.Date(yb, mb, db, 12, 0, 0, 0, time.UTC).Sub(time.Date(ya, ma, da, 12, 0, 0, 0, time.UTC)).Hours() / 24)
}

// HistoryGroup names the history group of an exchange last active at t, by
// the calendar days of now's time zone: Today, Yesterday, Previous 7 days or
// Older.
func HistoryGroup(t, now time.Time) string {
	switch d := daysBefore(t, now); {
	case d <= 0:
		return GroupToday
	case d == 1:
		return GroupYesterday
	case d <= 7:
		return GroupWeek
	default:
		return GroupOlder
	}
}

// RelativeTime says when t was, as the history shows it: "just now",
// "5 min ago", "3 h ago" (earlier today), "yesterday", then the date
// ("3 Mar", with the year when it is not this one's), written the way
// the transcript writes a message's date (MessageTime).
func RelativeTime(t, now time.Time) string {
	ago := now.Sub(t)
	days := daysBefore(t, now)
	switch {
	case ago < time.Minute:
		return "just now"
	case ago < time.Hour:
		return strconv.Itoa(int(ago/time.Minute)) + " min ago"
	case days <= 0:
		return strconv.Itoa(int(ago/time.Hour)) + " h ago"
	case days == 1:
		return "yesterday"
	case t.In(now.Location()).Year() == now.Year():
		return t.In(now.Location()).Format("2 Jan")
	default:
		return t.In(now.Location()).Format("2 Jan 2006")
	}
}

// MessageTime says when a message was written, as the transcript shows
// it: the time for one of today ("14:02"), "Yesterday 14:02", then the
// date ("20 Oct 02:22", with the year when it is not this one's); and the
// full date and time for its tooltip.
func MessageTime(t, now time.Time) (short, full string) {
	t = t.In(now.Location())
	full = t.Format("Monday 2 January 2006, 15:04:05 MST")
	switch days := daysBefore(t, now); {
	case days <= 0:
		return t.Format("15:04"), full
	case days == 1:
		return "Yesterday " + t.Format("15:04"), full
	case t.Year() == now.Year():
		return t.Format("2 Jan 15:04"), full
	default:
		return t.Format("2 Jan 2006 15:04"), full
	}
}

// Conversations says how many conversations there are as a person counts
// them, a family once, with the branches when there are more: "6
// conversations (11 branches)".
func Conversations(conversations, branches int64) string {
	s := Plural(conversations, "conversation", "conversations")
	if branches > conversations {
		s += " (" + Plural(branches, "branch", "branches") + ")"
	}
	return s
}

// Plural is "1 turn", "3 turns".
func Plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
