package views

// PagesScreen is the /pages screen: the user's pages and the form that
// creates one.
type PagesScreen struct {
	Base
	Pages []PageListItem
	Form  PageForm
}

// PageListItem is one page in the list.
type PageListItem struct {
	ID          int64
	Title       string
	Updated     string // "5 min ago"
	UpdatedFull string // RFC 3339
	Revisions   int64
}

// PageForm is the create form, with what was typed when it was refused.
type PageForm struct {
	Title   string
	Content string
	Error   string
	CSRF    string
}

// PageEditScreen is /pages/{id}/edit: the editor and the chat panel side by
// side.
type PageEditScreen struct {
	Base
	Editor PageEditor
	Panel  PagePanel
}

// PageEditor is the Markdown editor with its preview and revisions.
type PageEditor struct {
	ID        int64
	Title     string
	Content   string
	Preview   string // rendered and sanitised Markdown
	Revisions []RevisionItem
	// OlderRevisions counts the revisions left out of the list.
	OlderRevisions int
	Status         string // "Saved at 15:04", after a save
	Error          string // why a save was refused
	CSRF           string
}

// Revision sources, as the list shows them.
const (
	SourceUser    = "user"
	SourceAgent   = "agent"
	SourceRestore = "restore"
)

// RevisionItem is one revision in the editor's list, newest first.
type RevisionItem struct {
	ID         int64
	Source     string // SourceUser, SourceAgent or SourceRestore
	When       string
	WhenFull   string
	MessageURL string // agent revisions: the proposing message, while it exists
	Current    bool   // the page's content now
}

// RevisionDiff is a revision against the page's text now: the lines a
// restore would take out (-) and put in (+).
type RevisionDiff struct {
	PageID, RevisionID int64
	Title              string // the page's
	Source             string // the revision's (SourceUser, SourceAgent, SourceRestore)
	When, WhenFull     string
	Diff               Diff
	CSRF               string
}

// RevisionScreen is a revision's changes on a page of its own (no
// JavaScript).
type RevisionScreen struct {
	Base
	Diff RevisionDiff
}

// PagePanel is the page's chat panel: its conversations, the open one with
// its proposal cards, and the composer.
type PagePanel struct {
	PageID     int64
	Open       bool
	ExchangeID int64  // the open conversation; 0 for a new one
	Title      string // of the open conversation; "" for a new one
	TurnStatus string // of the open conversation (TurnIdle, TurnRunning, TurnFailed)
	Chats      []PageChatItem
	Entries    []PageEntry
	Composer   Composer
	CSRF       string
}

// PageChatItem is one of the page's conversations in the panel's list.
type PageChatItem struct {
	ID       int64
	Title    string
	Turns    int64
	When     string
	WhenFull string
	Current  bool
}

// PageEntry is a transcript entry and, for a proposal, its card (nil when
// the message proposes nothing or the proposal was dismissed).
type PageEntry struct {
	Message  ChatMessage
	Proposal *ProposalCard
}

// ProposalCard is a proposed page edit under its message: actionable, or a
// short note once applied (accepted) or rejected.
type ProposalCard struct {
	PageID    int64
	MessageID int64
	Mode      string // "full_replacement" or "section_patch"
	Reasoning string
	Applied   bool
	Rejected  bool // dismissed: a note that is no proposal card
	Stale     bool // the page changed since: accepting is refused
	Diff      Diff // a full replacement's
	Sections  []SectionBlock
	Added     int // lines, over the whole proposal
	Deleted   int
	CSRF      string
}

// Proposal kinds.
const (
	ModeFull    = "full_replacement"
	ModeSection = "section_patch"
)

// SectionBlock is one section a section patch changes.
type SectionBlock struct {
	Key  string // what its checkbox posts: tells duplicate headings apart
	Name string // the heading, or "(preamble)"
	Kind string // "changed", "new" or "removed"
	Diff Diff
}

// PageSaved is the htmx answer to a save, a restore or an accepted
// proposal: the editor's parts and the proposal cards, out of band.
type PageSaved struct {
	Editor PageEditor
	// Content, when set, replaces the editor's text (a restore or an
	// accepted proposal; a save keeps what the person is typing).
	Content bool
	Cards   []ProposalCard
}

// StaleReason is what a stale proposal card says.
const StaleReason = "The page changed since this was proposed"

func proposalID(messageID int64) string { return "proposal-" + itoa64(messageID) }

// ApplyCount is how many sections the Accept button applies at first: all.
func (c ProposalCard) ApplyCount() int { return len(c.Sections) }

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func sourceLabel(s string) string {
	switch s {
	case SourceAgent:
		return "Assistant"
	case SourceRestore:
		return "Restored"
	default:
		return "You"
	}
}
