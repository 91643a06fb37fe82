package handlers_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"palaver/agents"
)

// browserSendWhileReplying: while a reply is being written, Send is off
// and the composer says why; Enter sends nothing, the typed text stays,
// and no alert appears for what the page already shows. Stop marks the
// cut-off reply "Stopped"; then the kept text sends. A rename in another
// tab renames the heading and the browser tab's title here, live.
func browserSendWhileReplying(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root, withChatProvider(&agents.Builtin{Delay: 150 * time.Millisecond}))
	w := s.window("ivy")
	w.register("ivy")
	w.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)
	w.typeInto("[data-testid=chat-input]", "tell me a long story\n")
	w.waitFor("the reply being written", `document.querySelector("[data-testid=pending-reply-text]") && `+
		`document.querySelector("[data-testid=pending-reply-text]").textContent.length > 0`)
	w.waitFor("Send off while it runs", `document.querySelector("[data-testid=chat-send]").disabled && `+
		`!document.querySelector("[data-testid=composer-running]").hidden`)

	// Typing is fine; Enter sends nothing and keeps the text.
	w.typeInto("[data-testid=chat-input]", "and another thing\n")
	time.Sleep(300 * time.Millisecond) // what a request would take to come back refused
	if got := browserEval[string](w, `document.querySelector("[data-testid=chat-input]").value`); got != "and another thing" {
		s.fatalf("the typed text became %q while the reply runs", got)
	}
	if n := browserEval[int](w, browserCount(browserUserMsg)+` + `+browserCount("[data-pending=true]")); n != 1 {
		s.fatalf("%d user messages in the transcript, want the first alone", n)
	}
	if n := browserEval[int](w, browserCount("#alerts [role=alert]")); n != 0 {
		s.fatalf("%d alerts for a send the page knew it could not make: %q", n, browserTexts(w, "#alerts [role=alert]"))
	}
	if !browserEval[bool](w, `document.querySelector("[data-testid=chat-send]").disabled`) {
		s.fatalf("Send came back on while the reply runs")
	}

	// Stop: the reply so far stays, marked; Send comes back with the text.
	w.click("[data-testid=chat-stop]")
	w.waitFor("the stopped reply, marked", browserCount(browserAssistantMsg+" [data-testid=stopped]")+" === 1")
	w.waitFor("Send back on", `!document.querySelector("[data-testid=chat-send]").disabled && `+
		`document.querySelector("[data-testid=composer-running]").hidden`)

	// The text kept all along sends now.
	if got := browserEval[string](w, `document.querySelector("[data-testid=chat-input]").value`); got != "and another thing" {
		s.fatalf("after the stop the composer holds %q", got)
	}
	w.typeInto("[data-testid=chat-input]", "\n")
	w.waitFor("the kept text sent", browserHasText(browserUserMsg, "and another thing"))
	w.waitFor("its reply", `document.querySelectorAll(`+browserQuote(browserAssistantMsg)+`).length === 2 && `+
		`document.querySelector("[data-testid=composer-turn]").getAttribute("data-turn-status") !== "running"`)
	if n := browserEval[int](w, browserCount("#alerts [role=alert]")); n != 0 {
		s.fatalf("alerts: %q", browserTexts(w, "#alerts [role=alert]"))
	}
	w.reload()
	if n := browserEval[int](w, browserCount(browserAssistantMsg+" [data-testid=stopped]")); n != 1 {
		s.fatalf("after a reload %d replies are marked Stopped, want 1", n)
	}
	ex := w.exchangeID()

	// A second tab of the same person renames the conversation in the
	// sidebar; the first tab's heading and title follow.
	two := w.tab("ivy-tab2")
	two.visit(fmt.Sprintf("/chat/%d", ex))
	s.app.waitSubscribers(2)
	item := fmt.Sprintf("#history-%d", ex)
	two.openMenu(item)
	two.click(item + " [data-testid=rename-exchange]")
	two.waitVisible(item + " [data-testid=rename-input]")
	two.do("clear the title", chromedp.Clear(chromedp.CSS(item+" [data-testid=rename-input]")))
	two.typeInto(item+" [data-testid=rename-input]", "A story of stops\n")
	for _, tab := range []*browserTab{w, two} {
		tab.waitFor("the new name in the heading and the tab's title", `document.title === "A story of stops · Palaver" && `+
			browserHasText("#chat-title", "A story of stops")+` && `+
			browserHasText("[data-testid=composer-continuing-title]", "A story of stops"))
	}

	if !strings.Contains(w.text("[data-testid=composer-continuing]"), "A story of stops") {
		s.fatalf("the composer says %q", w.text("[data-testid=composer-continuing]"))
	}

	// The Chat link goes to the conversation, at its own address; its
	// New chat button starts an empty one.
	w.clickToLoad(`header nav a[href="/chat"]`)
	if loc := w.location(); loc != fmt.Sprintf("/chat/%d", ex) {
		s.fatalf("the Chat link went to %q, want /chat/%d", loc, ex)
	}
	w.clickToLoad("[data-testid=composer-new-chat]")
	if loc, id := w.location(), w.exchangeID(); loc != "/chat" || id != 0 || browserEval[int](w, browserCount(browserUserMsg)) != 0 {
		s.fatalf("New chat went to %q, composer to %d", loc, id)
	}
}

// browserRenameWhileLive: a sidebar item whose rename is open keeps it
// while live updates of that item arrive (here, the turns another tab
// runs in the conversation): the half-typed name stays, the rename
// finishes, and the item shows the conversation as it is now.
func browserRenameWhileLive(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root, withChatProvider(&agents.Builtin{Delay: 20 * time.Millisecond}))
	w := s.window("una")
	w.register("una")
	w.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)
	w.typeInto("[data-testid=chat-input]", "a first question\n")
	w.waitFor("the first reply", browserCount(browserAssistantMsg)+" === 1 && "+
		`document.querySelector("[data-testid=composer-turn]").getAttribute("data-turn-status") !== "running"`)
	ex := w.exchangeID()
	two := w.tab("una-tab2")
	two.visit(fmt.Sprintf("/chat/%d", ex))
	s.app.waitSubscribers(2)
	item := fmt.Sprintf("#history-%d", ex)
	input := item + " [data-testid=rename-input]"
	two.openMenu(item)
	two.click(item + " [data-testid=rename-exchange]")
	two.waitVisible(input)
	two.do("clear the title", chromedp.Clear(chromedp.CSS(input)))
	two.typeInto(input, "Half a na")

	// The first tab runs two turns: each starts and ends, and each time
	// the item is drawn again in every tab of the person.
	for i, q := range []string{"a second question\n", "a third question\n"} {
		w.typeInto("[data-testid=chat-input]", q)
		w.waitFor("the reply", `document.querySelector("[data-testid=composer-turn]").getAttribute("data-turn-status") !== "running" && `+
			browserCount(browserAssistantMsg)+` === `+strconv.Itoa(i+2))
	}
	if got := browserEval[string](two, `(document.querySelector(`+strconv.Quote(input)+`) || {value: "(gone)"}).value`); got != "Half a na" {
		s.fatalf("the half-typed name became %q while the item was updated live", got)
	}
	two.typeInto(input, "me\n")
	for _, tab := range []*browserTab{w, two} {
		tab.waitFor("the new name in the sidebar and the heading", browserHasText(item, "Half a name")+` && `+
			browserHasText("#chat-title", "Half a name"))
	}
	if n := browserEval[int](two, browserCount(item)); n != 1 {
		s.fatalf("%d sidebar items of the conversation after the rename, want 1", n)
	}
	if n := browserEval[int](two, browserCount(item+" details[open]")); n != 0 {
		s.fatalf("the item's menu is still open after the rename")
	}

	// A menu opened and closed without a change: the item held while it
	// was open shows the conversation as it is now once it closes.
	two.openMenu(item)
	w.typeInto("[data-testid=chat-input]", "a fourth question\n")
	w.waitFor("the fourth reply", `document.querySelector("[data-testid=composer-turn]").getAttribute("data-turn-status") !== "running" && `+
		browserCount(browserAssistantMsg)+` === 4`)
	w.waitFor("the item drawn again in the first tab", browserHasText(item+" [data-testid=history-turns]", "4 turns"))
	if got := two.text(item + " [data-testid=history-turns]"); got != "3 turns" {
		s.fatalf("while its menu is open the item says %q, want the 3 turns it showed", got)
	}
	two.key(kb.Escape)
	two.waitFor("the item as it is now", browserHasText(item+" [data-testid=history-turns]", "4 turns")+` && `+
		browserCount(item)+` === 1`)
}
