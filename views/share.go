package views

// Share links (issue 28).

// ShareScreen is a share link's page: the snapshot, read-only.
type ShareScreen struct {
	Base
	Title    string
	Owner    string // the owner's name, only when they chose to show it
	AtSeq    int64  // the snapshot's seq this page shows (kept by continue)
	Token    string
	SignedIn bool
	Messages []SharedMessage
}

// SharedMessage is one entry of a share's page: a user's text (Text,
// escaped) or an assistant's rendered and sanitised Markdown (HTML).
type SharedMessage struct {
	Seq        int64
	Role       string
	Text, HTML string
	Time       string
	Files      []FileChip // served through the share's own route
}

// ShareForm is a conversation's share form and, once made, its link.
type ShareForm struct {
	Base
	ExchangeID int64
	Title      string
	LastSeq    int64 // the log's last entry
	AtSeq      int64 // what to share: up to this entry
	Visibility string
	Error      string
	Link       string // the link just made: shown with its Copy button
}

// AccountShare is one share link as the account page (and the admin list,
// with Owner) shows it.
type AccountShare struct {
	ID, ExchangeID int64
	Title          string
	Link           string
	What, Who      string
	Created        string
	Expires        string
	Views          int64
	Live           bool
	State          string // "", "revoked" or "expired"
	Owner          string // the admin list's: whose link
}

// AdminSharesScreen is /admin/shares: every user's share links.
type AdminSharesScreen struct {
	AdminChrome
	Shares   []AccountShare
	NextURL  string // older links; "" on the last batch
	FirstURL string // back to the newest; "" on the first batch
}
