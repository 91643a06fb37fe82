package screens

import (
	"context"
	"fmt"

	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// TranscriptPage is how many log entries (with a seq; error rows come
// along with the entry before them) the transcript shows at once: a long
// conversation opens on its latest entries and loads the rest as the person
// scrolls (issue 16).
const TranscriptPage = 50

// Window is the part of a log the chat screen opens on. The zero Window is
// the latest entries.
type Window struct {
	// At shows the log as it was when its entry at At was written (time
	// travel): read-only, its latest entries up to At. Beyond the log:
	// models.ErrBadSeq.
	At *int64
	// Before opens on the entries before this seq (the older
	// messages without JavaScript).
	Before *int64
	// Around opens on a window around this seq, its entry highlighted (a
	// search hit's). A seq the log does not hold opens the latest entries.
	Around *int64
}

// conversation loads a general exchange and the window of its log for the
// transcript (id 0: a new chat, empty), and time travel's bar when win is
// at a seq.
func (s *Screens) conversation(ctx context.Context, v Viewer, id int64, win Window) (views.Conversation, *views.TimeTravel, error) {
	if id == 0 {
		return views.Conversation{LastSeq: -1, Heading: Heading(v, nil)}, nil, nil
	}
	ex, err := s.GeneralExchange(ctx, v.UserID, id)
	if err != nil {
		return views.Conversation{}, nil, err
	}
	last, err := s.store.LastSeq(ctx, v.UserID, id)
	if err != nil {
		return views.Conversation{}, nil, err
	}
	end := last + 1 // the window ends before this seq
	at := int64(-1)
	if win.At != nil {
		if *win.At < 0 || *win.At > last {
			return views.Conversation{}, nil, fmt.Errorf("time travel to %d of a log of %d entries: %w", *win.At, last+1, models.ErrBadSeq)
		}
		at, end = *win.At, *win.At+1
	}
	before := end
	switch {
	case win.Before != nil:
		before = min(max(*win.Before, 1), end) // at least the first entry
	case win.Around != nil && *win.Around >= 0 && *win.Around <= last:
		before = min(*win.Around+TranscriptPage/2+1, end)
	}
	msgs, err := s.store.MessagesBefore(ctx, v.UserID, id, &before, TranscriptPage)
	if err != nil {
		return views.Conversation{}, nil, err
	}
	seen, err := s.store.ExchangeAdminViews(ctx, v.UserID, id)
	if err != nil {
		return views.Conversation{}, nil, err
	}
	fromShare, err := s.store.SharedCopyOf(ctx, v.UserID, id)
	if err != nil {
		return views.Conversation{}, nil, err
	}
	conv := views.Conversation{ID: id, Heading: Heading(v, ex), Messages: s.Messages(v, msgs),
		AdminViewed: AdminViewed(seen), TurnStatus: ex.TurnStatus, LastSeq: last, FromShare: fromShare, Temporary: ex.Temporary}
	first, lastShown := seqSpan(msgs)
	if first > 0 {
		conv.Older = &views.MoreLink{Fragment: paths.ChatMessagesBefore(id, first, at), Page: paths.ChatBefore(id, first, at)}
	}
	if lastShown < end-1 {
		conv.Newer = newerLink(id, lastShown, end, at)
	}
	if win.Around != nil {
		Highlight(conv.Messages, *win.Around)
	}
	var travel *views.TimeTravel
	if win.At != nil {
		travel = s.timeTravel(v, id, at, last)
		readOnly(conv.Messages)
		return conv, travel, nil
	}
	if conv.Newer == nil && len(msgs) > 0 {
		OfferRetry(v, conv.Messages, ex, msgs[len(msgs)-1].ID)
	}
	if err := s.WithBranches(ctx, v, ex, conv.Messages); err != nil { // the live log's controls and switchers
		return views.Conversation{}, nil, err
	}
	return conv, travel, nil
}

// newerLink loads the entries after lastShown of a window that ends before
// seq end (at: time travel's point, -1 without).
func newerLink(id, lastShown, end, at int64) *views.MoreLink {
	l := &views.MoreLink{Page: paths.Chat(id)}
	if at >= 0 {
		l.Page = paths.ChatAt(id, at)
	} else {
		l.Fragment = paths.ChatMessagesAfter(id, lastShown)
	}
	if next := lastShown + 1 + TranscriptPage; next < end {
		l.Page = paths.ChatBefore(id, next, at)
	}
	return l
}

// timeTravel is the bar of the log shown as it was at seq at.
func (s *Screens) timeTravel(v Viewer, id, at, last int64) *views.TimeTravel {
	t := &views.TimeTravel{ExchangeID: id, At: at, Last: last, Now: paths.Chat(id), Continue: paths.ChatContinue(id), CSRF: v.CSRF}
	if at > 0 {
		t.Prev = paths.ChatAt(id, at-1)
	}
	if at < last {
		t.Next = paths.ChatAt(id, at+1)
	}
	return t
}

// seqSpan is the first and last seq among msgs (-1, -1 when none has one).
func seqSpan(msgs []models.Message) (first, last int64) {
	first, last = -1, -1
	for i := range msgs {
		if q := msgs[i].Seq; q != nil {
			if first < 0 {
				first = *q
			}
			last = *q
		}
	}
	return first, last
}

// TranscriptMore loads a window of a general exchange's log for the
// transcript's sentinels: the entries before seq before, or after seq
// after (exactly one of the two is set), with the next sentinel when the
// log goes on. at >= 0 is time travel's point: entries before it are
// shown read-only.
func (s *Screens) TranscriptMore(ctx context.Context, v Viewer, id int64, before, after *int64, at int64) (views.TranscriptMore, error) {
	ex, err := s.GeneralExchange(ctx, v.UserID, id)
	if err != nil {
		return views.TranscriptMore{}, err
	}
	var out views.TranscriptMore
	if before != nil {
		msgs, err := s.store.MessagesBefore(ctx, v.UserID, id, before, TranscriptPage)
		if err != nil {
			return out, err
		}
		out.Messages = s.Messages(v, msgs)
		if at >= 0 {
			readOnly(out.Messages)
		} else if err := s.WithBranches(ctx, v, ex, out.Messages); err != nil {
			return out, err
		}
		if first, _ := seqSpan(msgs); first > 0 {
			out.Older = &views.MoreLink{Fragment: paths.ChatMessagesBefore(id, first, at), Page: paths.ChatBefore(id, first, at)}
		}
		return out, nil
	}
	last, err := s.store.LastSeq(ctx, v.UserID, id)
	if err != nil {
		return out, err
	}
	msgs, err := s.store.MessagesAfter(ctx, v.UserID, id, *after, TranscriptPage)
	if err != nil {
		return out, err
	}
	out.Messages = s.Messages(v, msgs)
	if err := s.WithBranches(ctx, v, ex, out.Messages); err != nil {
		return out, err
	}
	if _, lastShown := seqSpan(msgs); lastShown >= 0 && lastShown < last {
		out.Newer = newerLink(id, lastShown, last+1, -1)
	}
	return out, nil
}

// Tail maps entries new at the end of the user's general chat ex (the
// send answer's, a live tab's) as the chat screen maps its window: a
// failed turn's error row offers Retry, every entry its controls, and the
// switchers stand where SwitchPlaces puts them, which it returns for the
// entries the tab already shows. Both paths call it, so that a tab shows
// what a reload would.
func (s *Screens) Tail(ctx context.Context, v Viewer, ex *models.Exchange, msgs []models.Message) ([]views.ChatMessage, map[int64]views.BranchSwitch, error) {
	entries := s.Messages(v, msgs)
	if len(msgs) > 0 {
		OfferRetry(v, entries, ex, msgs[len(msgs)-1].ID)
	}
	WithControls(entries, ex.ID)
	if err := s.WithFiles(ctx, v, entries); err != nil {
		return nil, nil, err
	}
	places, err := s.SwitchPlaces(ctx, v, ex)
	if err != nil {
		return nil, nil, err
	}
	PlaceSwitches(entries, places)
	return entries, places, nil
}
