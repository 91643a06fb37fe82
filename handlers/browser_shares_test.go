package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestBrowserShares runs the share links' and unread marks' scenarios on a
// Chromium of their own (issue 28).
func TestBrowserShares(t *testing.T) {
	root := startBrowser(t)
	t.Run("ShareLink", func(t *testing.T) { browserShareLink(t, root) })
	t.Run("UnreadTwoDevices", func(t *testing.T) { browserUnreadTwoDevices(t, root) })
}

// browserShareLink: the owner shares from the chat's menu and gets the link
// with a Copy button; a visitor (another browser, signed out) reads it,
// is sent to register to continue and comes back to it, and continues it
// as their own conversation.
func browserShareLink(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	owner := s.window("owner")
	owner.register("sam")
	owner.send("hello there")
	owner.send("give me a code block")
	owner.visit(fmt.Sprintf("/chat/%d", owner.exchangeID())) // the header's menu is the stored chat's
	owner.clickToLoad("[data-testid=share-exchange]")
	owner.waitVisible("[data-testid=share-form]")
	owner.clickToLoad("[data-testid=share-create]")
	link := browserEval[string](owner, `document.querySelector("[data-testid=share-link]").value`)
	if !strings.Contains(link, "/s/") {
		s.fatalf("the share link is %q", link)
	}
	owner.waitVisible("[data-testid=share-copy]")
	path := link[strings.Index(link, "/s/"):]

	v := s.window("visitor")
	v.visit(path)
	v.waitFor("the shared messages", browserCount("[data-testid=message]")+" === 4")
	if n := browserEval[int](v, browserCount("pre code, .hl-chroma, [class*=hl-]")); n == 0 {
		s.fatalf("the shared code block is not highlighted")
	}
	if robots := browserEval[string](v, `document.querySelector("meta[name=robots]").content`); !strings.Contains(robots, "noindex") {
		s.fatalf("robots meta %q", robots)
	}
	v.click("[data-testid=share-register]")
	v.waitVisible(`form[action="/register"]`)
	v.typeInto(`form[action="/register"] input[name=username]`, "vic")
	v.typeInto(`form[action="/register"] input[name=password]`, browserPass)
	v.clickToLoad(`form[action="/register"] button[type=submit]`)
	if loc := v.location(); loc != path {
		s.fatalf("after registering the visitor is on %q, want back on %q", loc, path)
	}
	v.clickToLoad("[data-testid=share-continue]")
	if loc := v.location(); !browserChatPath.MatchString(loc) {
		s.fatalf("continue landed on %q", loc)
	}
	v.waitVisible("[data-testid=shared-copy]")
	if n := browserEval[int](v, browserCount(browserUserMsg)); n != 2 {
		s.fatalf("the copy shows %d user messages", n)
	}
	v.send("and one more thing")

	// The owner's account page lists the link; revoking it closes it.
	owner.visit("/account")
	owner.waitVisible("[data-testid=shares] [data-testid=share]")
	owner.clickToLoad("[data-testid=share-revoke]")
	s.expectConsole(`status of 404`)
	v.visit(path)
	if !strings.Contains(browserEval[string](v, `document.body.textContent`), "ot found") {
		s.fatalf("a revoked link still opens")
	}
}

// browserUnreadTwoDevices: one person on two devices (browser contexts). A
// reply finishes (a script's, through the API) while neither shows its
// conversation: device B's sidebar shows the dot and its title the count;
// device A opens it, and B's dot and count go, live. B marks it unread from
// its menu: A's sidebar shows the dot again, live.
func browserUnreadTwoDevices(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	a := s.window("device A")
	a.register("una")
	a.send("a first chat")
	b := s.window("device B")
	b.visit("/login")
	b.typeInto(`form[action="/login"] input[name=username]`, "una")
	b.typeInto(`form[action="/login"] input[name=password]`, browserPass)
	b.clickToLoad(`form[action="/login"] button[type=submit]`)
	b.waitFor("B's live connection", `document.querySelector("[ws-connect]") !== null`)
	a.visit("/chat")
	a.click("[data-testid=new-chat]")

	script := s.app.apiClient("una")
	ex := *script.apiChat("a question from a script", 0).ExchangeID
	item := fmt.Sprintf(`#history-items [data-testid=history-item][data-exchange-id="%d"]`, ex)
	b.waitFor("the dot on B", fmt.Sprintf(`document.querySelector(%s)`, browserQuote(item+" [data-testid=unread]")))
	b.waitFor("the count in B's title", `document.title.startsWith("(1) ")`)

	a.visit(fmt.Sprintf("/chat/%d", ex))
	b.waitFor("B's dot gone", fmt.Sprintf(`!document.querySelector(%s)`, browserQuote(item+" [data-testid=unread]")))
	b.waitFor("B's title without a count", `!document.title.startsWith("(")`)

	b.openMenu(item)
	b.click(item + " [data-testid=mark-unread]")
	a.waitFor("the dot on A", fmt.Sprintf(`document.querySelector(%s)`, browserQuote(item+" [data-testid=unread]")))
	a.waitFor("the count in A's title", `document.title.startsWith("(1) ")`)
}
