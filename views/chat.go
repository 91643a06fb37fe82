package views

import (
	"encoding/json"

	"palaver/paths"
)

// ChatScreen is the /chat screen: the history sidebar, the open conversation
// and the composer under it.
type ChatScreen struct {
	Base
	Sidebar
	Conversation Conversation
	Composer     Composer
	// TimeTravel, when set, shows the conversation as it was at a seq,
	// read-only: its bar replaces the composer (views/branches.templ).
	TimeTravel *TimeTravel
}

// Sidebar is the conversations sidebar: the search box, the pinned
// conversations, then the others by last activity, a batch at a time.
type Sidebar struct {
	Projects []ProjectLink // above the day groups (issue 27)
	// Scope is the project of the open chat, which the search box
	// searches unless "All chats" is ticked; nil: no project.
	Scope   *SearchScope
	Pinned  []HistoryItem // every pinned conversation, most recent first
	History HistoryList   // the others (archived ones are in neither)
	// UnreadCount is how many conversations are unread: the tab's title
	// shows it (app.js).
	UnreadCount int
}

// Conversation is the open exchange as the transcript shows it.
type Conversation struct {
	TurnStatus string      // of its turn: running, idle or failed
	ID         int64       // 0: a new chat, not stored yet
	Heading    ChatHeading // its name, above it and on the composer
	Messages   []ChatMessage
	// AdminViewed says administrators opened it (nil: never).
	AdminViewed *AdminViewed
	// FromShare says it began as a copy of someone's share link.
	FromShare bool
	// Notice says why the tab is on this branch now ("You were answering
	// an earlier point…"); "": nothing to say.
	Notice string
	// Older and Newer load the entries before and after the ones shown
	// (a long log opens on its latest entries, or a window around a search
	// hit); nil at either end of the log.
	Older, Newer *MoreLink
	// LastSeq is the seq of the log's last entry (-1: none), which the
	// transcript may not show (a window): the live connection resumes
	// after it.
	LastSeq int64
	// Temporary says it is a temporary chat: the page says so, with
	// "Keep this chat".
	Temporary bool
}

// Message roles the transcript shows.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleError     = "error"
)

// ChatMessage is one entry of the transcript. It holds plain values only
// (no pointers, slices or maps): it is its own key in the live cache of
// rendered messages (LiveCache), so what is rendered and what is
// remembered cannot drift apart.
type ChatMessage struct {
	ID       int64
	Seq      int64 // its place in the log, when HasSeq
	HasSeq   bool  // false for error rows: they are shown but have no place in the log
	Role     string
	Text     string       // user and error text, shown as typed (escaped)
	HTML     string       // assistant replies: rendered and sanitised Markdown
	Time     string       // "15:04", "Yesterday 15:04", "20 Oct 15:04" (MessageTime), beside the message
	TimeFull string       // the datetime attribute (RFC 3339)
	TimeSays string       // the tooltip: the full date and time
	Feedback FeedbackView // assistant replies: the rating control, when Shown
	Retry    RetryView    // on the error row that ended a failed turn, when Shown
	Detail   string       // tool entries: the call's arguments or the result, as JSON
	// Highlight marks the entry a search hit opened (?seq=): app.js
	// scrolls it into view and flashes it.
	Highlight bool
	// SubRun, on the tool result of a delegation (a search of the user's
	// chats), is where the sub-run's own log is shown; "": none.
	SubRun string
	// Exchange, when set, is the general chat whose live transcript shows
	// the entry: a user message offers its edit, a reply its regeneration
	// (0: a read-only transcript, no controls).
	Exchange int64
	// Branch is the switcher between the family's branches that part at
	// this entry, when Shown.
	Branch BranchSwitch
	// SwapOOB renders the entry to replace its copy on the page out of
	// band (a live update of its switcher).
	SwapOOB bool
	// ReadOnly marks an entry shown for reading only (time travel, a
	// comparison of branches): it offers no controls.
	ReadOnly bool
	// Stopped marks a reply the person stopped: it holds what was written
	// until then (agent_response.metadata.stopped).
	Stopped bool
	// Call is a tool call that waits for the person or the browser: the
	// entry is then an approval card (Call.Waiting set).
	Call ToolCard
	// Files are the files a user message holds (issue 26), as JSON
	// (EncodeFiles): a string keeps ChatMessage a plain value.
	Files string
	// Reasoning is what the model thought before a reply (never sent back
	// to it), shown folded above the reply; ThoughtFor says how long.
	Reasoning  string
	ThoughtFor string
	// Model names the model that wrote a reply ("": unknown).
	Model string
	// Told, on a reply whose turn was given instructions or memory, is
	// where "What the agent was told" shows them ("": nothing beyond the
	// conversation).
	Told string
}

// ToldScreen is what the agent was told for one reply: the person's
// instructions, the project's and the memory entries, as composed.
type ToldScreen struct {
	Base
	Text string
	Hash string
}

// ToolCard is a waiting tool call as its card shows it.
type ToolCard struct {
	Waiting string // "approval" or "client"; "": the call waits for nothing
	CallID  string
	Tool    string
	Args    string // the arguments, readably: one "name: value" a line
	Action  string // where the card's forms post (paths.ChatTools)
	CSRF    string
	// Editor, for read_editor, is the page whose editor holds the text: its
	// no-JavaScript button submits the editor's form to Action.
	Editor int64
	// ExchangeID is the conversation the call waits in (the script answers
	// read_editor through the API).
	ExchangeID int64
}

// FileChip is one file in a message: an image shows its thumbnail, which
// opens it full size; any other file is a chip that downloads it.
type FileChip struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	Size          string `json:"size"` // "12 KB"
	Type          string `json:"type"`
	Image         bool   `json:"image,omitempty"`
	Width, Height int64  `json:",omitempty"`
	// Href and Thumb, when set, are where the file and its thumbnail open
	// instead of the owner's /api/files (a share link's own route).
	Href  string `json:"href,omitempty"`
	Thumb string `json:"thumb,omitempty"`
}

// URL is where the chip's file opens.
func (c FileChip) URL() string {
	if c.Href != "" {
		return c.Href
	}
	return paths.File(c.ID)
}

// ThumbURL is where the chip's image thumbnail is.
func (c FileChip) ThumbURL() string {
	if c.Thumb != "" {
		return c.Thumb
	}
	return paths.FileThumbnail(c.ID)
}

// EncodeFiles is a message's chips as ChatMessage.Files holds them.
func EncodeFiles(chips []FileChip) string {
	if len(chips) == 0 {
		return ""
	}
	b, _ := json.Marshal(chips) // plain fields: never fails
	return string(b)
}

// FileList is the message's chips (none when Files does not hold them).
func (m ChatMessage) FileList() []FileChip {
	var out []FileChip
	if m.Files != "" && json.Unmarshal([]byte(m.Files), &out) != nil {
		return nil
	}
	return out
}

// BranchSwitch is the "‹ 2 / 3 ›" switcher on an entry where branches of
// a family part: links to the previous and next branch at that point.
type BranchSwitch struct {
	Seq   int64 // where the branches part: the links open the sibling there
	Index int   // this branch's place among them, from 1
	Count int   // how many different entries the family has at Seq
	Prev  int64 // the branch before this one (0: none)
	Next  int64 // the branch after this one (0: none)
}

// Switcher is an entry's switcher as it now stands, sent live to the tabs
// that show the entry (BranchSwitchOOB); a zero Branch takes it away.
type Switcher struct {
	MessageID int64
	Branch    BranchSwitch
}

// editable says whether the entry offers its edit (a user message) or
// its regeneration (a reply): an entry of a live general chat's log.
func (m ChatMessage) editable() bool { return m.Exchange != 0 && m.HasSeq && !m.ReadOnly }

// Shown says whether the entry has a switcher.
func (b BranchSwitch) Shown() bool { return b.Count > 1 }

// SubRunScreen is the log of a sub-run: what an agent delegated, from the
// conversation that spawned it, read-only.
type SubRunScreen struct {
	Base
	Parent      string // the spawning conversation's address
	ParentTitle string
	Agent       string
	Status      string // running, ok or failed
	Result      string
	Started     string
	Finished    string // "" while it runs
	Messages    []ChatMessage
}

// RetryView is the Retry button under the error of a failed turn: it answers
// the preserved user message again.
type RetryView struct {
	Action string // /chat/{id}/retry; "": no button
	CSRF   string
}

// Shown says whether the error row offers Retry.
func (r RetryView) Shown() bool { return r.Action != "" }

// Tool entry roles, shown compactly between the messages.
const (
	RoleToolCall   = "tool_call"
	RoleToolResult = "tool_result"
)

// FeedbackView is the rating control under an assistant reply.
type FeedbackView struct {
	MessageID int64  // 0: no control (a read-only transcript)
	Value     string // "up", "down" or "" (not rated)
	Comment   string
	CSRF      string
}

// Shown says whether the reply has the rating control.
func (f FeedbackView) Shown() bool { return f.MessageID != 0 }

// Feedback values as the forms post them.
const (
	FeedbackUp   = "up"
	FeedbackDown = "down"
	FeedbackNone = "none"
)

// Composer is the message form under the transcript.
type Composer struct {
	ExchangeID int64  // where the next message goes; 0 starts a new exchange
	Query      string // the text kept when a send was refused
	Error      string // why it was refused
	MaxLength  int
	CSRF       string
	TurnStatus string // of the exchange's turn: TurnRunning shows the Stop button
	// AfterSeq is the last seq the transcript shows (-1: none), sent with
	// the message: if the log has moved on since, the message forks there
	// instead of landing after someone else's (app.js keeps it current).
	AfterSeq int64
	// Models are the models the person may pick (the picker shows when
	// there is more than one), by connection.
	Models []ModelChoice
	// Budget warns before sending: the person's token budget is nearly
	// spent, or spent.
	Budget BudgetWarning
	// Cost is what the conversation's replies cost ("" when nothing was
	// priced).
	Cost string
}

// BudgetWarning is the composer's warning that the person's token budget
// is nearly spent, or spent (Spent: a message would be refused at once);
// no Message: none.
type BudgetWarning struct {
	Message string
	Spent   bool
}

// ModelSearchFrom is how many models the picker lists before it offers a
// search field.
const ModelSearchFrom = 8

// ModelChoice is one model of the composer's picker.
type ModelChoice struct {
	ID         int64
	Name       string
	Connection string
	Default    bool
	Favourite  bool // the person starred it: the picker lists it first
}

// ModelGroup is one group of the picker: the favourites, or a connection's
// models.
type ModelGroup struct {
	Label  string
	Models []ModelChoice
}

// FavouritesLabel is the label of the picker's first group.
const FavouritesLabel = "Favourites"

// ModelGroups groups choices for the picker: the favourites first, then
// the others by connection, in order (a favourite is listed once).
func ModelGroups(ms []ModelChoice) []ModelGroup {
	var out []ModelGroup
	for _, m := range ms {
		if m.Favourite {
			if len(out) == 0 {
				out = append(out, ModelGroup{Label: FavouritesLabel})
			}
			out[0].Models = append(out[0].Models, m)
		}
	}
	favs := len(out)
	for _, m := range ms {
		if m.Favourite {
			continue
		}
		if n := len(out); n > favs && out[n-1].Label == m.Connection {
			out[n-1].Models = append(out[n-1].Models, m)
			continue
		}
		out = append(out, ModelGroup{Label: m.Connection, Models: []ModelChoice{m}})
	}
	return out
}

// chosenIsFavourite says whether the model the picker shows chosen (the
// one marked Default, else the first) is a favourite.
func chosenIsFavourite(ms []ModelChoice) bool {
	for _, g := range ModelGroups(ms) {
		for _, m := range g.Models {
			if m.Default {
				return m.Favourite
			}
		}
	}
	if gs := ModelGroups(ms); len(gs) > 0 {
		return gs[0].Models[0].Favourite
	}
	return false
}

// temporaryNotice is what a temporary chat's page says.
const temporaryNotice = "This is a temporary chat: it stays out of your history, search and memory, and is deleted 24 hours after its last message, or when you sign out."

// HistoryList is one batch of the history sidebar.
type HistoryList struct {
	Items []HistoryItem
	// Next is the cursor of the batch after this one, "" at the end.
	Next string
	// Partial says the list starts part-way (a ?before= screen without
	// JavaScript), so it links back to the newest conversations.
	Partial bool
}

// HistoryItem is one exchange in the history sidebar.
type HistoryItem struct {
	ID        int64
	Title     string // "Untitled" when it has none
	AgentType string // the agent's name, "" for the default one
	When      string // "5 min ago"
	WhenFull  string // RFC 3339, for datetime and the tooltip
	Turns     int64
	Current   bool   // the conversation on screen
	Group     string // the group header shown above it; "" when the group continues
	CSRF      string
	// TurnStatus marks a reply being written (TurnRunning) or a failed one
	// (TurnFailed); "" or TurnIdle shows nothing.
	TurnStatus string
	// Pinned shows the pin mark, and the control unpins.
	Pinned bool
	// Archived is an item of the archived list: its control unarchives.
	Archived bool
	// Unread marks a reply its owner has not seen yet (issue 28).
	Unread bool
	// SwapOOB renders the item to replace its copy on the page out of band
	// (a live update of an item that keeps its place).
	SwapOOB bool
	// Family is the root of the family the exchange belongs to: the
	// sidebar shows one item per family (0: unknown, a family of its own).
	Family int64
	// Branches is how many exchanges the family has (1: no branches).
	Branches int
	// SwapFamily, when set (and not SwapOOB), renders the item to replace
	// out of band the elements the selector finds: the family's item in a
	// list, whichever branch it showed (FamilyItemsOf), after one of its
	// branches was deleted.
	SwapFamily string
}

// FamilyKey is what the sidebar knows the item's family by.
func (it HistoryItem) FamilyKey() int64 {
	if it.Family != 0 {
		return it.Family
	}
	return it.ID
}

// SearchResults is one batch of a search of the user's conversations, as
// the sidebar's results region (and the results screen) shows it.
type SearchResults struct {
	Query string
	Hits  []SearchHit
	// Next is the address of the next batch of hits, "" at the end.
	Next string
	// More says this batch continues a list already shown: its hits are
	// appended, without the list around them.
	More bool
	// Error says why the query was refused (too long): shown instead of hits.
	Error string
	// Scope is the project searched; nil: all chats.
	Scope *SearchScope
}

// SearchScope is the project a search is limited to.
type SearchScope struct {
	ProjectID int64
	Name      string
}

// SearchHit is one message or title that matches.
type SearchHit struct {
	URL   string // opens the conversation on the message
	Title string
	// Snippet is HTML made by the store (models.SearchHit): the text around
	// the match, escaped, with <mark> around matched terms and no other
	// markup.
	Snippet  string
	Role     string // "You", "Assistant", "Assistant's thinking", "Tool" or "Title"
	When     string
	WhenFull string
	PageChat bool // a chat in a page's assistant panel
	// Branches is how many of the family's branches show this entry
	// (screens folds a family's shared entry into one hit): 1 for one.
	Branches int
}

// SearchScreen is /chat/search without JavaScript: the sidebar, and the
// results where the conversation would be.
type SearchScreen struct {
	Base
	Sidebar
	Results SearchResults
	// Project is the project the search was made from (its box offers
	// "All chats"); nil: none.
	Project *SearchScope
}

// ArchivedScreen is /chat/archived: the sidebar, and the archived
// conversations where the conversation would be.
type ArchivedScreen struct {
	Base
	Sidebar
	Archived HistoryList
}

// ChatSent is the htmx answer to a sent message: both new transcript entries,
// plus the out-of-band updates of the sidebar, the title and the composer.
type ChatSent struct {
	Messages   []ChatMessage
	Item       HistoryItem // the exchange, now first in the history
	New        bool        // the message started the exchange
	ExchangeID int64
	Heading    ChatHeading // the conversation's name, above it and on the composer
	// Pending, when set, opens the cell where the reply to this user message
	// appears as it is written (it arrives over /live).
	Pending *int64
	// Temporary says the chat is temporary: out of the history list, and
	// a new one says so above the transcript (with CSRF for its Keep form).
	Temporary bool
	CSRF      string
}

// ChatConfirm is the page that asks before deleting, for browsers without
// JavaScript (htmx asks with the browser's dialog instead).
type ChatConfirm struct {
	Base
	Heading string
	Message string
	Action  string // where the confirmed form posts
	Confirm string // the button's label
	Cancel  string // where "Cancel" leads
}

// inPlace is an item that replaces its copy where it is, out of band.
func inPlace(it HistoryItem) HistoryItem {
	it.SwapOOB, it.Group = true, ""
	return it
}

func messageID(id int64) string  { return "msg-" + itoa64(id) }
func feedbackID(id int64) string { return "feedback-" + itoa64(id) }
func historyID(id int64) string  { return "history-" + itoa64(id) }

// branchSwitchID is the element that holds an entry's switcher.
func branchSwitchID(messageID int64) string { return "branch-switch-" + itoa64(messageID) }

// nextFeedback is what pressing a thumb posts: its own value, or "none" to
// clear it when it is the one already chosen.
func nextFeedback(current, button string) string {
	if current == button {
		return FeedbackNone
	}
	return button
}

func pressed(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func feedbackLabel(value string) string {
	if value == FeedbackUp {
		return "Good reply"
	}
	return "Bad reply"
}

// FamilyItemsOf is the selector of the sidebar items of a family in one
// list (the pinned, or the others): the item takes their place when a
// branch of the family was deleted (HistoryItem.SwapFamily).
func FamilyItemsOf(family int64, pinned bool) string {
	list := "history-items"
	if pinned {
		list = "pinned-items"
	}
	return "#" + list + " > [data-family=\"" + itoa64(family) + "\"]"
}

// ChatHeading names the open conversation: the title above the transcript
// (and the browser tab's), and on the composer "Continuing “TITLE”" with a
// New chat button, so that a person sees where the next message goes.
type ChatHeading struct {
	ExchangeID int64  // 0: a new chat
	Title      string // as shown ("Untitled" for one without a title)
	CSRF       string // for the composer's New chat form
}

// Name is the heading's text: the title, or "New chat".
func (h ChatHeading) Name() string {
	if h.ExchangeID == 0 {
		return "New chat"
	}
	return h.Title
}

// DocumentTitle is the browser tab's title for the heading.
func (h ChatHeading) DocumentTitle() string { return h.Name() + " · Palaver" }

// What clearing the chat history keeps, and the question that asks first.
const (
	ClearAllKept     = "The chats beside your pages are kept."
	ClearAllQuestion = "Delete all your conversations? " + ClearAllKept + " This cannot be undone."
)
