package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// browserNoJavaScript: with scripts off, the plain forms do everything:
// register, send (a 303 to the conversation, which shows the reply), start
// another chat and go back through the history link.
func browserNoJavaScript(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("kit-nojs")
	w.disableJavaScript()
	w.register("kit")
	// The page's own scripts did not run (the test reads the page through
	// the DevTools protocol, which still can).
	if ran := browserEval[bool](w, `typeof window.htmx !== "undefined" || document.querySelector("form[data-composer]").hasAttribute("data-enhanced")`); ran {
		s.fatalf("the page's scripts ran although JavaScript is off")
	}

	sendForm := func(query string) int64 {
		t.Helper()
		w.typeInto("[data-testid=chat-input]", query)
		// The requests of the send, seen until the step's deadline.
		ctx, cancel := w.step()
		defer cancel()
		requests := chromedp.Events(ctx, network.RequestWillBeSent)
		w.clickToLoad("[data-testid=chat-send]")
		// The form's POST was answered with a redirect to the conversation.
		redirected := false
		for ev, err := range requests {
			if err != nil {
				break
			}
			if r := ev.RedirectResponse; r != nil && r.URL == s.base+"/chat/send" {
				if r.Status != 303 {
					s.fatalf("POST /chat/send answered %d, want 303", r.Status)
				}
				redirected = true
				break
			}
		}
		if !redirected {
			s.fatalf("POST /chat/send did not redirect")
		}
		loc := w.location()
		if !browserChatPath.MatchString(loc) {
			s.fatalf("sending %q landed on %q, want /chat/{id}", query, loc)
		}
		var id int64
		fmt.Sscanf(strings.TrimPrefix(loc, "/chat/"), "%d", &id)
		return id
	}

	first := sendForm("hello without scripts")
	if got := browserTexts(w, browserUserMsg); len(got) != 1 || got[0] != "hello without scripts" {
		s.fatalf("after the send the user messages are %q", got)
	}
	if got := browserTexts(w, browserAssistantMsg); len(got) != 1 || !strings.Contains(got[0], `You asked: "hello without scripts"`) {
		s.fatalf("after the send the replies are %q, want the answer quoting it", got)
	}

	// Another chat, then back to the first through the history link.
	w.clickToLoad("aside [data-testid=new-chat]")
	if got := browserTexts(w, "#transcript [data-testid=message]"); len(got) != 0 {
		s.fatalf("a new chat shows %q", got)
	}
	second := sendForm("how tall are giraffes")
	if second == first {
		s.fatalf("the second chat reused exchange %d", first)
	}
	if got := browserTexts(w, browserAssistantMsg); len(got) != 1 || !strings.Contains(got[0], "how tall are giraffes") {
		s.fatalf("the second chat's replies are %q", got)
	}
	if got := browserTexts(w, browserHistoryItem); len(got) != 2 {
		s.fatalf("the sidebar lists %d conversations, want 2: %q", len(got), got)
	}
	w.clickToLoad(fmt.Sprintf("#history-%d a", first))
	if loc := w.location(); loc != fmt.Sprintf("/chat/%d", first) {
		s.fatalf("the history link led to %q", loc)
	}
	if got := browserTexts(w, browserUserMsg); len(got) != 1 || got[0] != "hello without scripts" {
		s.fatalf("the first conversation shows %q", got)
	}
}
