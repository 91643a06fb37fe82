package views

// EditForm is the inline form that edits a user message: sending it makes
// a new branch (a fork at the message's seq) with the new text.
type EditForm struct {
	Action    string // where it posts: /chat/{id}/edit/{seq}
	Cancel    string // the conversation, unchanged
	Seq       int64
	Text      string // the message's text, or what was typed when refused
	Error     string // why the last try was refused
	MaxLength int
	CSRF      string
}

// EditScreen is the edit form on a screen of its own, for browsers without
// JavaScript.
type EditScreen struct {
	Base
	Form EditForm
}

// Notices of the branch a tab lands on.
const (
	// NoticeStale is told to the tab whose message answered an older point
	// of the log than its end: it started a new branch.
	NoticeStale = "You were answering an earlier point: this started a new branch."
	// NoticeEdited and NoticeRegenerated say what became of the original.
	NoticeEdited      = "Your edit started a new branch; the original conversation is kept as it was."
	NoticeRegenerated = "A new answer, in a new branch; the earlier answer is kept."
	// NoticeContinued is told after time travel's "Continue from here".
	NoticeContinued = "You continued from an earlier point: this is a new branch; the original conversation is kept as it was."
)

// deleteQuestion is what the sidebar's delete control asks: a family's
// item deletes the branch it shows, and the others stay.
func deleteQuestion(it HistoryItem) string { return DeleteQuestion(it.Title, it.Branches) }

// deleteHeading heads that question's dialog, in the same words: a
// family's item deletes one branch, not the conversation.
func deleteHeading(it HistoryItem) string { return DeleteHeading(it.Branches) }

// DeleteQuestion is what a delete asks of a conversation titled title in
// a family of that many branches, in the dialog and on the page shown
// without JavaScript alike.
func DeleteQuestion(title string, branches int) string {
	if branches > 1 {
		return "Delete this branch of “" + title + "”? Its other branches stay. This cannot be undone."
	}
	return "Delete “" + title + "”? This cannot be undone."
}

// DeleteHeading heads DeleteQuestion.
func DeleteHeading(branches int) string {
	if branches > 1 {
		return "Delete this branch?"
	}
	return "Delete this conversation?"
}
