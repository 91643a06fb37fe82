package views

// MoreLink loads more of a long transcript: Fragment (htmx, when the
// sentinel comes into view) swaps the next window in place of the sentinel;
// Page is the same as a full screen, for browsers without JavaScript.
type MoreLink struct {
	Fragment string // "": none (a link only)
	Page     string
}

// TranscriptMore is a window of a long transcript loaded in place of its
// sentinel: the older entries under the next older sentinel, or the newer
// ones over the next newer sentinel.
type TranscriptMore struct {
	Messages []ChatMessage
	Older    *MoreLink // set on a window of older entries with more before it
	Newer    *MoreLink // set on a window of newer entries with more after it
}

// TimeTravel is the bar of a conversation shown as it was at seq At:
// previous and next entry, a range over the log, and "Continue from here"
// (a fork at At+1).
type TimeTravel struct {
	ExchangeID int64
	At, Last   int64  // the seq shown and the log's last
	Prev, Next string // the addresses of the steps; "": none
	Now        string // the conversation as it is now
	Continue   string // where "Continue from here" posts (with at)
	CSRF       string
}

// BranchesScreen is /chat/{id}/branches: the family of a conversation as
// a tree, each branch a link, and a form to compare two.
type BranchesScreen struct {
	Base
	Title   string // the conversation's
	Back    string // the conversation
	Root    BranchNode
	Count   int    // branches in the family
	Compare string // the compare form's action (GET, two ?branch=)
	// Error says why the form's ticks were refused (not two branches), on
	// the tree shown again with them ticked.
	Error string
}

// BranchNode is one branch of the tree and the branches forked from it.
type BranchNode struct {
	ID      int64
	Title   string
	URL     string
	Current bool // the conversation the tree was opened from
	Root    bool
	Number  int  // its place in the family, root first: "branch 2"
	Picked  bool // ticked to compare
	// Parts is the seq of its first entry that the branch it was forked
	// from does not share; Excerpt (by Role) is that entry, "" when the
	// branch has nothing there yet.
	Parts    int64
	Role     string // "You", "Assistant", …
	Excerpt  string
	Length   int64 // entries in its log
	Turns    int64
	When     string
	WhenFull string
	Children []BranchNode
}

// CompareScreen is /chat/{id}/compare/{other}: two branches side by side
// from where they part, the entries they share folded away.
type CompareScreen struct {
	Base
	Tree   string // the family's tree
	Shared int64  // entries both logs begin with
	// SharedTail is the last few of them; SharedAll shows them all (time
	// travel to the last shared entry), "" when the tail is all of them.
	SharedTail []ChatMessage
	SharedAll  string
	A, B       CompareSide
}

// CompareSide is one branch of a comparison, from where they part.
type CompareSide struct {
	ID       int64
	Title    string
	Number   int // its place in the family, as the tree numbers it
	URL      string
	Length   int64
	Messages []ChatMessage
	More     int64 // entries past those shown
}
