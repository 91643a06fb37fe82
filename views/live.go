package views

// Turn states of an exchange, as the history and the composer show them
// (the same words as models.TurnIdle, TurnRunning and TurnFailed).
const (
	TurnIdle    = "idle"
	TurnRunning = "running"
	TurnFailed  = "failed"
	TurnPaused  = "paused" // the turn waits for the person or the browser (tool calls)
)

// Element ids the live updates address.
const (
	transcriptID      = "transcript"
	transcriptPending = "transcript-pending" // holds the pending reply, after the transcript
	// pendingReasoningID is the pending reply's Thinking section, and
	// pendingReasoningTextID the text in it.
	pendingReasoningID     = "pending-reasoning"
	pendingReasoningTextID = "pending-reasoning-text"
	pendingReplyID         = "pending-reply"
	pendingTextID          = "pending-reply-text"
)

// TurnControl is the composer's view of the turn running on its exchange:
// while one runs, a Stop button (a real form posting to /chat/{id}/stop).
type TurnControl struct {
	ExchangeID int64
	Status     string // TurnIdle, TurnRunning or TurnFailed; "" is idle
	CSRF       string
}

// Running says whether a turn runs on the exchange.
func (t TurnControl) Running() bool { return t.ExchangeID != 0 && t.Status == TurnRunning }

// LiveUpdate is one message of the live connection: what changed, as the
// out-of-band swaps that show it. Empty parts send nothing.
type LiveUpdate struct {
	Entries []ChatMessage // appended to the transcript, in log order
	// Answered are tool calls that waited and are answered now: each
	// replaces its card (in every tab that shows it) by its plain entry.
	Answered []ChatMessage
	// Switchers are the new switchers of entries the tab shows already,
	// each swapped into its entry alone (an edit form open on it stays).
	Switchers []Switcher
	// PageEntries are a page chat's entries (a proposal with its card),
	// appended to the panel's transcript, in log order.
	PageEntries []PageEntry
	// Page is the shown page's new state (its editor and the cards).
	Page *PageSaved
	// CloseReply removes the pending reply cell: the reply arrived or the
	// turn ended.
	CloseReply bool
	// OpenReply, when set, opens the pending reply cell answering the entry
	// with this id (the tab drops it if it has one already).
	OpenReply *int64
	// ReplyText, when set, is the whole reply written so far: it replaces
	// the pending cell's text (a tab that started watching mid-reply, or
	// lost pieces); Delta then follows it.
	ReplyText *string
	Delta     string // text appended to the pending reply cell
	// Reasoning is reasoning appended to the pending cell's Thinking
	// section; ReasoningStart opens that section first.
	Reasoning      string
	ReasoningStart bool
	Turn           *TurnControl // the composer's turn state, replaced
	// Heading is the shown conversation's new name (a rename): the title
	// above it, the browser tab's, the composer's "Continuing".
	Heading *ChatHeading
	// History is the exchange's sidebar item: moved to the top (Moved, on new
	// activity) or replaced where it is.
	History *HistoryItem
	Moved   bool
	Removed int64 // a deleted exchange whose sidebar item goes (after History)
	// Sidebar, when set, is the tab's sidebar lists drawn again (an
	// exchange moved among them: pinned, archived, brought back).
	Sidebar *Sidebar
	// UnreadCount, when set, is how many conversations are unread now (the
	// tab's title).
	UnreadCount *int
	// Projects, when set, are the sidebar's projects drawn again: a
	// project's count of unread conversations changed.
	Projects *[]ProjectLink
	// Gone says the conversation the tab shows was deleted (in another tab,
	// or through the API): the composer says so, and sends to a new chat.
	Gone bool
	// Adopted, when set, is the exchange the tab now follows: another tab
	// started it in the chat this tab shows (the page's panel). The
	// composer sends there next.
	Adopted int64
	// Budget, when set, is the composer's budget warning drawn again: a
	// reply ended, and may have spent what was left.
	Budget *BudgetWarning
}
