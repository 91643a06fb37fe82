package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

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
