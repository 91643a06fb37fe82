package views

// ProjectLink is a project as the sidebar and the lists show it.
type ProjectLink struct {
	ID       int64
	Name     string
	Count    int64 // its chats
	Unread   int64 // its unread chats (issue 28)
	Current  bool  // the project on screen
	Children []ProjectLink
}

// ProjectsScreen is /projects: the person's projects and the new-project form.
type ProjectsScreen struct {
	Base
	Projects []ProjectLink
	Error    string // why the form was refused
}

// ProjectChat is one of a project's chats on its page.
type ProjectChat struct {
	ID    int64
	Title string
	When  string
}

// ProjectScreen is a project's page: its instructions, its chats, a new
// chat in it.
type ProjectScreen struct {
	Base
	ID           int64
	Name         string
	Instructions string
	Memory       bool
	Chats        []ProjectChat
	Files        []ProjectFile
	DefaultModel int64         // the project's default model; 0: none
	Models       []ModelChoice // the models the person may pick, the project's default marked
	FileLimit    string        // the largest file one may upload, said for people
	Notice       string
	Error        string
}

// ProjectFile is one of a project's files on its page.
type ProjectFile struct {
	ID   int64
	Name string
	Size string
	Kind string
}

// MoveScreen is the form that moves a chat into a project, or out.
type MoveScreen struct {
	Base
	ExchangeID int64
	Title      string
	Current    int64 // its project now; 0: none
	Projects   []ProjectLink
}

// AccountMemory is the account page's instructions and memory sections.
type AccountMemory struct {
	About, Style string
	Memory       bool // the account-wide switch
	Entries      []MemoryEntry
}

// MemoryEntry is one memory entry with where it came from.
type MemoryEntry struct {
	ID      int64
	Content string
	Source  string // "You added this" or "From a chat"
	Chat    int64  // the chat it came from, while it exists; 0: none
	Created string
}
