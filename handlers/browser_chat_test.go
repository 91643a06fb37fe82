package handlers_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// browserChatFlow: a person registers, chats, reloads, starts a second
// chat, switches between the two in the sidebar, renames one and deletes
// the other, all through the pages as a browser shows them.
func browserChatFlow(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("ada")
	w.register("ada")
	w.waitVisible("[data-testid=chat-welcome]")

	// The first message and the builtin agent's greeting.
	reply := w.send("hello there")
	if !strings.HasPrefix(reply, "Hello!") {
		s.fatalf("the reply to a greeting reads %q, want it to begin with Hello!", reply)
	}
	first := w.exchangeID()
	if first == 0 {
		s.fatalf("after the first message the composer still sends to a new chat")
	}
	w.waitFor("the conversation's URL", fmt.Sprintf(`location.pathname === "/chat/%d"`, first))

	// A reload shows the same transcript, from the server.
	w.reload()
	if got := browserTexts(w, browserUserMsg); !slices.Equal(got, []string{"hello there"}) {
		s.fatalf("after a reload the user messages are %q, want [hello there]", got)
	}
	if got := browserTexts(w, browserAssistantMsg); len(got) != 1 || !strings.Contains(got[0], "Hello!") {
		s.fatalf("after a reload the replies are %q, want the greeting", got)
	}
	if n := browserEval[int](w, browserCount(browserHistoryItem)); n != 1 {
		s.fatalf("the sidebar lists %d conversations, want 1", n)
	}

	// A new chat: an empty transcript, then a second conversation.
	w.clickToLoad("aside [data-testid=new-chat]")
	w.waitVisible("[data-testid=chat-welcome]")
	if n := browserEval[int](w, browserCount("#transcript [data-testid=message]")); n != 0 {
		s.fatalf("a new chat shows %d messages, want none", n)
	}
	reply = w.send("what do pelicans eat")
	if !strings.Contains(reply, "what do pelicans eat") || !strings.Contains(reply, "offline agent") {
		s.fatalf("the reply to a question reads %q, want the offline agent quoting it", reply)
	}
	second := w.exchangeID()
	if second == 0 || second == first {
		s.fatalf("the second chat's exchange is %d (the first is %d)", second, first)
	}
	w.waitFor("both conversations in the sidebar", browserCount(browserHistoryItem)+" === 2")

	// After a reload the sidebar still lists both, the newest first.
	w.reload()
	ids := browserEval[[]string](w, `Array.from(document.querySelectorAll("#history-items [data-testid=history-item]")).map((e) => e.dataset.exchangeId)`)
	if want := []string{fmt.Sprint(second), fmt.Sprint(first)}; !slices.Equal(ids, want) {
		s.fatalf("the sidebar lists exchanges %v, want %v", ids, want)
	}

	// Switch to the first conversation: its transcript replaces the other.
	w.click(fmt.Sprintf("#history-%d a", first))
	w.waitFor("the first conversation's transcript", browserHasText(browserUserMsg, "hello there")+
		" && !"+browserHasText(browserUserMsg, "pelicans"))
	w.waitFor("the first conversation's URL", fmt.Sprintf(`location.pathname === "/chat/%d"`, first))
	if id := w.exchangeID(); id != first {
		s.fatalf("after switching, the composer sends to exchange %d, want %d", id, first)
	}
	// And back to the second.
	w.click(fmt.Sprintf("#history-%d a", second))
	w.waitFor("the second conversation's transcript", browserHasText(browserUserMsg, "pelicans")+
		" && !"+browserHasText(browserUserMsg, "hello there"))
	w.click(fmt.Sprintf("#history-%d a", first))
	w.waitFor("the first conversation again", browserHasText(browserUserMsg, "hello there"))

	// Rename the second conversation inline (Enter saves).
	item := fmt.Sprintf("#history-%d", second)
	w.openMenu(item)
	w.click(item + " [data-testid=rename-exchange]")
	w.waitVisible(item + " [data-testid=rename-input]")
	w.do("clear the title", chromedp.Clear(chromedp.CSS(item+" [data-testid=rename-input]")))
	w.typeInto(item+" [data-testid=rename-input]", "Pelican notes\n")
	w.waitFor("the new title in the sidebar", browserHasText(item+" [data-testid=history-title]", "Pelican notes"))
	w.reload()
	if got := w.text(item + " [data-testid=history-title]"); got != "Pelican notes" {
		s.fatalf("after a reload the renamed conversation is titled %q, want Pelican notes", got)
	}

	// Delete it: the confirmation is answered OK, and it leaves the sidebar.
	w.openMenu(item)
	w.click(item + " [data-testid=delete-exchange]")
	if asked := w.confirmDialog(); !strings.Contains(asked, "Delete “Pelican notes”?") {
		s.fatalf("the delete asked %q, want a confirmation naming Pelican notes", asked)
	}
	w.waitFor("the deleted conversation to leave the sidebar", fmt.Sprintf(`!document.querySelector(%s)`, browserQuote(item)))
	if asked := w.asked(); len(asked) != 0 {
		s.fatalf("the delete asked with the browser's own dialog too: %q", asked)
	}
	w.reload()
	ids = browserEval[[]string](w, `Array.from(document.querySelectorAll("#history-items [data-testid=history-item]")).map((e) => e.dataset.exchangeId)`)
	if want := []string{fmt.Sprint(first)}; !slices.Equal(ids, want) {
		s.fatalf("after deleting and reloading the sidebar lists %v, want %v", ids, want)
	}
	if got := browserTexts(w, browserUserMsg); !slices.Equal(got, []string{"hello there"}) {
		s.fatalf("the open conversation shows %q, want [hello there]", got)
	}
}
