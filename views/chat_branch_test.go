package views

import (
	"strings"
	"testing"

	"palaver/internal/htmltest"
	"palaver/paths"
)

// A live general chat's entries carry their controls: a user message its
// edit link, a reply its regenerate link; a read-only transcript (no
// exchange) has none. Where branches part, the switcher links both ways,
// or shows an end without a link.
func TestMessageBranchControls(t *testing.T) {
	user := ChatMessage{ID: 7, Seq: 2, HasSeq: true, Role: RoleUser, Text: "hi", Exchange: 3,
		Branch: BranchSwitch{Seq: 2, Index: 2, Count: 3, Prev: 4, Next: 9}}
	_, doc := htmltest.Render(t, Message(user))
	htmltest.MustAttr(t, htmltest.One(t, doc, "edit-message"), "href", paths.MessageEdit(7))
	sw := htmltest.One(t, doc, "branch-switch")
	if got := htmltest.Text(htmltest.One(t, sw, "branch-position")); got != "2 / 3" {
		t.Fatalf("switcher says %q", got)
	}
	htmltest.MustAttr(t, htmltest.One(t, sw, "branch-prev"), "href", paths.ChatAtSeq(4, 2))
	htmltest.MustAttr(t, htmltest.One(t, sw, "branch-next"), "href", paths.ChatAtSeq(9, 2))
	if got := htmltest.Text(htmltest.One(t, doc, "message-body")); got != "hi" {
		t.Fatalf("the message's text is %q", got)
	}

	reply := ChatMessage{ID: 8, Seq: 3, HasSeq: true, Role: RoleAssistant, HTML: "<p>ok</p>", Exchange: 3,
		Branch: BranchSwitch{Seq: 3, Index: 1, Count: 2, Next: 5}}
	_, doc = htmltest.Render(t, Message(reply))
	htmltest.MustAttr(t, htmltest.One(t, doc, "regenerate"), "hx-post", paths.MessageRegenerate(8))
	if len(htmltest.ByTestID(doc, "branch-prev")) != 0 || len(htmltest.ByTestID(doc, "branch-next")) != 1 {
		t.Fatal("the first branch links back")
	}

	for _, m := range []ChatMessage{{ID: 1, Seq: 0, HasSeq: true, Role: RoleUser, Text: "x"},
		{ID: 2, Seq: 1, HasSeq: true, Role: RoleAssistant, HTML: "y"}} {
		raw, doc := htmltest.Render(t, Message(m))
		if len(htmltest.ByTestID(doc, "edit-message"))+len(htmltest.ByTestID(doc, "regenerate"))+len(htmltest.ByTestID(doc, "branch-switch")) != 0 {
			t.Fatalf("a read-only entry has controls: %s", raw)
		}
	}
}

// The edit form keeps the text it was given and says why it was refused.
func TestEditMessageForm(t *testing.T) {
	raw, doc := htmltest.Render(t, EditMessageForm(EditForm{Action: paths.MessageEdit(7), Cancel: paths.Chat(3), Seq: 2,
		Text: "<b>mine</b>", Error: "Type the new text", MaxLength: 100, CSRF: "tok"}))
	form := htmltest.One(t, doc, "edit-form")
	htmltest.MustAttr(t, form, "action", paths.MessageEdit(7))
	htmltest.MustAttr(t, form, "hx-post", paths.MessageEdit(7))
	if got := htmltest.Text(htmltest.One(t, doc, "edit-input")); got != "<b>mine</b>" || strings.Contains(raw, "<b>mine") {
		t.Fatalf("the text is %q, escaped: %v", got, !strings.Contains(raw, "<b>mine"))
	}
	if !strings.Contains(htmltest.Text(htmltest.One(t, doc, "edit-error")), "Type the new text") || !strings.Contains(raw, `value="tok"`) {
		t.Fatalf("the form: %s", raw)
	}
}

// The tree counts a branch's messages and turns in a person's words: a
// branch of one turn says "1 turn", not "1 turns".
func TestBranchNodeCountsSingular(t *testing.T) {
	n := BranchNode{ID: 2, Title: "hello", URL: paths.Chat(2), Number: 2, Parts: 1, Role: "You", Excerpt: "hi there",
		Length: 1, Turns: 1, When: "just now"}
	_, doc := htmltest.Render(t, branchNode(n))
	text := htmltest.Text(doc)
	if got := htmltest.Text(htmltest.One(t, doc, "branch-length")); got != "1 message" {
		t.Fatalf("the branch's length reads %q, want 1 message", got)
	}
	if !strings.Contains(text, "1 turn ·") || strings.Contains(text, "1 turns") {
		t.Fatalf("the branch's counts read %q, want 1 turn", text)
	}
}

// The sidebar's delete dialog asks one question: for a family's item both
// its heading and its text speak of the branch it deletes, and for a lone
// conversation both speak of the conversation.
func TestDeleteDialogHeadingFollowsBranch(t *testing.T) {
	for _, tc := range []struct {
		branches      int
		heading, text string
	}{
		{3, `data-confirm-heading="Delete this branch?"`, "Delete this branch of"},
		{1, `data-confirm-heading="Delete this conversation?"`, "Delete “Plans”?"},
	} {
		it := HistoryItem{ID: 9, Title: "Plans", When: "just now", Turns: 1, Branches: tc.branches, Group: GroupToday, CSRF: "tok"}
		raw, _ := htmltest.Render(t, HistoryEntry(it))
		if !strings.Contains(raw, tc.heading) || !strings.Contains(raw, tc.text) {
			t.Fatalf("with %d branches the delete dialog lacks %s or %q:\n%s", tc.branches, tc.heading, tc.text, raw)
		}
	}
}
