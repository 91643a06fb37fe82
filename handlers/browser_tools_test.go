package handlers_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

const browserToolCard = "#transcript [data-testid=tool-approval]"

// browserToolApproval: a call that waits for approval shows as a card in
// every tab of the conversation, and the sidebar says the chat waits; when
// it is approved in one tab the card leaves both and the reply follows.
func browserToolApproval(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	one := s.window("tia-tab1")
	one.register("tia")
	one.send("Old plans")
	one.clickToLoad("aside [data-testid=new-chat]")
	one.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)
	one.typeInto("[data-testid=chat-input]", `delete my chat "Old plans"`+"\n")
	one.waitFor("the approval card", browserCount(browserToolCard)+" === 1")
	one.waitFor("the sidebar's waiting mark", browserCount("#history-items [data-testid=history-paused]")+" === 1")
	ex := one.exchangeID()
	if ex == 0 {
		s.fatalf("no exchange after the send")
	}
	if args := one.text(browserToolCard + " [data-testid=tool-arguments]"); !strings.Contains(args, "title: Old plans") {
		s.fatalf("the card shows the arguments %q", args)
	}

	two := one.tab("tia-tab2")
	two.visit(fmt.Sprintf("/chat/%d", ex))
	two.waitFor("the card in tab two", browserCount(browserToolCard)+" === 1")
	s.app.waitSubscribers(2)

	one.click(browserToolCard + " [data-testid=tool-approve]")
	for _, tab := range []*browserTab{one, two} {
		tab.waitFor("the card gone", browserCount(browserToolCard)+" === 0")
		tab.waitFor("the reply", browserHasText(browserAssistantMsg, `Deleted the conversation "Old plans"`))
	}
	two.waitFor("the waiting mark gone", browserCount("#history-items [data-testid=history-paused]")+" === 0")

	// A new message while a call waits cancels it ("the person moved on"):
	// its card leaves the other tab too.
	one.typeInto("[data-testid=chat-input]", "remember this: tea, no sugar\n")
	two.waitFor("the second card in tab two", browserCount(browserToolCard)+" === 1")
	one.waitFor("the second card in tab one", browserCount(browserToolCard)+" === 1")
	one.send("hello")
	two.waitFor("the cancelled card gone from tab two", browserCount(browserToolCard)+" === 0")
}

// browserToolReadEditor: the page assistant's read_editor call is answered
// by the editor's script with the unsaved text: the reply counts it, not
// the saved page.
func browserToolReadEditor(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("uma")
	w.register("uma")
	w.visit("/pages")
	w.typeInto("[data-testid=page-create-title]", "Draft")
	w.typeInto("[data-testid=page-create-content]", "# Saved heading\n\nold words\n")
	w.clickToLoad("[data-testid=page-create-submit]")
	if loc := w.location(); !regexp.MustCompile(`^/pages/\d+/edit$`).MatchString(loc) {
		s.fatalf("creating a page landed on %q", loc)
	}
	w.waitVisible("[data-testid=page-chat] [data-testid=chat-input]")
	// Unsaved: typed into the editor, not saved.
	browserEval[bool](w, `(() => { const e = document.getElementById("page-content");
		e.value = "# Fresh heading\n\none two three four five"; e.dispatchEvent(new Event("input", {bubbles: true})); return true })()`)
	reply := w.send("review my draft")
	if !strings.Contains(reply, "7 words") || !strings.Contains(reply, "Fresh heading") {
		s.fatalf("the review says %q; want the unsaved text's 7 words and its heading", reply)
	}
	if n := browserEval[int](w, browserCount("[data-testid=tool-approval]")); n != 0 {
		s.fatalf("%d cards left", n)
	}
	if got := browserEval[string](w, `document.getElementById("page-content").value`); !strings.Contains(got, "Fresh heading") {
		s.fatalf("the editor lost its unsaved text: %q", got)
	}
}

// browserToolReadEditorConfirm: read_editor set to "Ask me first" on the
// account page: the page chat shows the approval card first (nothing is
// read yet); approved, the editor's script answers the call with the
// unsaved text and the turn resumes with the review.
func browserToolReadEditorConfirm(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("vic")
	w.register("vic")
	w.visit("/account")
	browserEval[bool](w, `(() => { document.querySelector("select[name=read_editor]").value = "confirm"; return true })()`)
	w.clickToLoad("[data-testid=tool-permissions-save]")
	w.visit("/account")
	if got := browserEval[string](w, `document.querySelector("select[name=read_editor]").value`); got != "confirm" {
		s.fatalf("read_editor's permission is %q after saving", got)
	}
	w.visit("/pages")
	w.typeInto("[data-testid=page-create-title]", "Draft")
	w.typeInto("[data-testid=page-create-content]", "# Saved heading\n\nold words\n")
	w.clickToLoad("[data-testid=page-create-submit]")
	w.waitVisible("[data-testid=page-chat] [data-testid=chat-input]")
	browserEval[bool](w, `(() => { const e = document.getElementById("page-content");
		e.value = "# Fresh heading\n\none two three four five"; e.dispatchEvent(new Event("input", {bubbles: true})); return true })()`)
	w.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)
	w.typeInto("[data-testid=chat-input]", "review my draft\n")
	const card = "#transcript [data-testid=tool-approval][data-awaiting=approval]"
	w.waitFor("the approval card", browserCount(card)+" === 1")
	if n := browserEval[int](w, browserCount(browserAssistantMsg)); n != 0 {
		s.fatalf("%d replies before the approval", n)
	}
	w.click(card + " [data-testid=tool-approve]")
	w.waitFor("the review", browserHasText(browserAssistantMsg, "7 words"))
	if reply := w.text(browserAssistantMsg); !strings.Contains(reply, "Fresh heading") {
		s.fatalf("the review says %q; want the unsaved text's heading", reply)
	}
	w.waitFor("no card left", browserCount("#transcript [data-testid=tool-approval]")+" === 0")
}
