package handlers_test

import (
	"context"
	"fmt"
	"testing"
)

// browserTwoTabs: two tabs of one person follow each other live. What is
// sent in one appears in the other, which shows the same conversation,
// without a reload; a conversation started in one reaches the other's
// sidebar.
func browserTwoTabs(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	one := s.window("gus-tab1")
	one.register("gus")
	one.send("hello from tab one")
	ex := one.exchangeID()
	s.app.waitSubscribers(1) // tab one's live connection, and no other

	two := one.tab("gus-tab2") // same browser context: same cookies
	two.visit(fmt.Sprintf("/chat/%d", ex))
	if got := browserTexts(two, browserUserMsg); len(got) != 1 || got[0] != "hello from tab one" {
		s.fatalf("tab two opened the conversation and shows %q", got)
	}
	s.app.waitSubscribers(2)
	// A mark that a reload would wipe out.
	browserEval[bool](two, `window.notReloaded = true`)

	one.send("and a second message")
	two.waitFor("the second message in tab two", browserHasText(browserUserMsg, "and a second message"))
	two.waitFor("the reply to it in tab two", browserCount(browserAssistantMsg)+" === 2 && "+
		browserHasText(browserAssistantMsg, "and a second message"))
	if n := browserEval[int](two, browserCount(browserUserMsg)); n != 2 {
		s.fatalf("tab two shows %d user messages, want 2 (each once)", n)
	}

	// A new conversation in tab one reaches tab two's sidebar.
	one.clickToLoad("aside [data-testid=new-chat]")
	one.send("a brand new topic")
	other := one.exchangeID()
	if other == ex {
		s.fatalf("the new chat reused exchange %d", ex)
	}
	item := fmt.Sprintf("#history-items #history-%d", other)
	two.waitFor("the new conversation in tab two's sidebar", browserHasText(item+" [data-testid=history-title]", "a brand new topic"))
	if n := browserEval[int](two, browserCount(browserHistoryItem)); n != 2 {
		s.fatalf("tab two's sidebar lists %d conversations, want 2", n)
	}

	// Tab two still shows its own conversation, and was never reloaded.
	if !browserEval[bool](two, `window.notReloaded === true`) {
		s.fatalf("tab two was reloaded")
	}
	if got := browserTexts(two, browserUserMsg); len(got) != 2 || got[0] != "hello from tab one" || got[1] != "and a second message" {
		s.fatalf("tab two's transcript is %q, want its own two messages", got)
	}
	if loc := two.location(); loc != fmt.Sprintf("/chat/%d", ex) {
		s.fatalf("tab two is at %q", loc)
	}
}
