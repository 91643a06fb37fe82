package screens

import (
	"palaver/agents"
	"palaver/models"
)

// LiveFeed is what one subscriber (a tab's websocket, an SSE stream) has of
// one exchange's log. It subscribes to the hub before it reads the database,
// so an entry committed meanwhile comes both ways: the feed lets each entry
// through once, and catch-up and resume are the same read.
type LiveFeed struct {
	exchangeID int64
	floor      int64          // the client had every entry up to this id
	sent       map[int64]bool // entries past the floor sent since
	last       int64          // the newest entry the client has
}

// NewLiveFeed is a feed of exchangeID for a client that has every entry
// up to the id floor.
func NewLiveFeed(exchangeID, floor int64) *LiveFeed {
	return &LiveFeed{exchangeID: exchangeID, floor: floor, last: floor, sent: map[int64]bool{}}
}

// Take says whether m is new to the client, and counts it as sent.
func (f *LiveFeed) Take(m *models.Message) bool {
	if m.ID <= f.floor || f.sent[m.ID] {
		return false
	}
	f.sent[m.ID] = true
	f.last = max(f.last, m.ID)
	return true
}

// LiveFloor is the id past which the log is new to a client that has every
// entry up to seq since (-1: none): the id of the entry at since, or of the
// newest one before it. Error rows have no seq, so one written after that
// entry counts as new; a client that has it already gets it once more at
// most, and drops it by its element id.
func LiveFloor(msgs []models.Message, since int64) int64 {
	var floor int64
	for i := range msgs {
		if s := msgs[i].Seq; s != nil && *s <= since && msgs[i].ID > floor {
			floor = msgs[i].ID
		}
	}
	return floor
}

// IsReply says whether an entry ends the wait for a reply: the answer, or
// the error row of a turn that failed.
func IsReply(m *models.Message) bool {
	return m.Role == models.RoleAssistant || m.Role == models.RoleError
}

// ReplyView is how much of the reply being written a subscriber has shown,
// in bytes. A piece (agents.Event.Offset) that starts past it means pieces
// were missed, or the subscriber joined mid-reply: it then takes the text so
// far, which holds every piece published before it was read.
type ReplyView struct{ Shown int }

// Piece is what of the reply piece e the subscriber lacks: the part past
// what it has shown, or, when pieces were missed, the whole text so far
// (whole), from soFar. A process that is not writing the reply has no text
// so far to give: the piece is shown as it comes.
func (r *ReplyView) Piece(e agents.Event, soFar func() string) (text string, whole bool) {
	end := e.Offset + len(e.Delta)
	switch {
	case end <= r.Shown:
		return "", false
	case e.Offset <= r.Shown:
		text, r.Shown = e.Delta[r.Shown-e.Offset:], end
		return text, false
	}
	if text = soFar(); len(text) >= end {
		r.Shown = len(text)
		return text, true
	}
	r.Shown = end
	return e.Delta, false
}
