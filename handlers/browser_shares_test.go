package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// TestBrowserShares runs the share links' and unread marks' scenarios on a
// Chromium of their own (issue 28).
func TestBrowserShares(t *testing.T) {
	root := startBrowser(t)
	t.Run("ShareLink", func(t *testing.T) { browserShareLink(t, root) })
	t.Run("UnreadTwoDevices", func(t *testing.T) { browserUnreadTwoDevices(t, root) })
	t.Run("ShareNoJavaScript", func(t *testing.T) { browserShareNoJavaScript(t, root) })
	t.Run("ReplyNotifications", func(t *testing.T) { browserReplyNotifications(t, root) })
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

// browserShareNoJavaScript: with scripts off, a signed-out visitor reads a
// shared conversation (its image too, through the link's own route),
// registers from the link and is brought back to it, and continues it as
// their own with the plain form.
func browserShareNoJavaScript(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	sam := s.app.register("sam")
	img := sam.mustUpload("dot.png", pngOf(t, 40, 30))
	var out apiChatOut
	sam.apiJSON("POST", "/api/chat", map[string]any{"query": "hello there", "attachments": []int64{img.ID}}, 200, &out)
	sam.apiJSON("POST", "/api/chat", map[string]any{"query": "what is a share link?", "exchange_id": *out.ExchangeID}, 200, nil)
	s.app.waitTurns()
	path := sam.shareCreate(*out.ExchangeID, `{"visibility": "link"}`).URL

	v := s.window("visitor-nojs")
	v.disableJavaScript()
	v.visit(path)
	if ran := browserEval[bool](v, `typeof window.htmx !== "undefined"`); ran {
		s.fatalf("the page's scripts ran although JavaScript is off")
	}
	v.waitFor("the shared messages", browserCount("[data-testid=message]")+" === 4")
	if got := browserTexts(v, "[data-testid=message][data-role=user] [data-testid=message-body]"); len(got) != 2 || got[1] != "what is a share link?" {
		s.fatalf("the shared user messages read %q", got)
	}
	v.waitFor("the shared image, loaded", fmt.Sprintf(
		`(() => { const i = document.querySelector("[data-testid=attachment] img"); return !!i && i.complete && i.naturalWidth > 0 && new URL(i.src).pathname === %s })()`,
		browserQuote(fmt.Sprintf("/s/%s/files/%d/thumbnail", strings.TrimPrefix(path, "/s/"), img.ID))))

	v.clickToLoad("[data-testid=share-register]")
	v.typeInto(`form[action="/register"] input[name=username]`, "nadia")
	v.typeInto(`form[action="/register"] input[name=password]`, browserPass)
	v.clickToLoad(`form[action="/register"] button[type=submit]`)
	if loc := v.location(); loc != path {
		s.fatalf("after registering without JavaScript the visitor is on %q, want back on %q", loc, path)
	}
	v.clickToLoad("[data-testid=share-continue]")
	loc := v.location()
	if !browserChatPath.MatchString(loc) {
		s.fatalf("continue without JavaScript landed on %q", loc)
	}
	v.waitVisible("[data-testid=shared-copy]")
	if got := browserTexts(v, browserUserMsg); len(got) != 2 || !strings.Contains(got[1], "what is a share link?") {
		s.fatalf("the copy shows the user messages %q", got)
	}
	var copyID int64
	fmt.Sscanf(strings.TrimPrefix(loc, "/chat/"), "%d", &copyID)
	if msgs, err := s.app.store.Messages(context.Background(), sam.user.ID, copyID, nil); err == nil || len(msgs) != 0 {
		s.fatalf("the copy %d is sam's: %d messages, %v", copyID, len(msgs), err)
	}
}

// browserNotifyWatch records the notifications a page makes, and lets the
// test put the page in the background: headless Chromium offers no way to
// hide a tab, so document.hidden follows window.__background.
const browserNotifyWatch = `(() => {
  window.__notes = [];
  const N = window.Notification;
  if (!N) return;
  window.Notification = new Proxy(N, {
    construct(target, args) {
      window.__notes.push(args[0] + " | " + ((args[1] || {}).body || ""));
      return Reflect.construct(target, args);
    },
    get(target, prop) { return Reflect.get(target, prop); },
  });
  Object.defineProperty(document, "hidden", { configurable: true, get: () => window.__background === true });
})()`

// browserReplyNotifications: notifications are off until the person
// switches them on in the account page (with the browser's permission);
// then a reply that finishes while the tab is in the background notifies,
// one that finishes in front of them does not, and once switched off
// nothing does.
func browserReplyNotifications(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("pat")
	origin := s.base
	if _, err := chromedp.CallBrowser(w.ctx, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "notifications"}, Setting: browser.PermissionSettingGranted,
		Origin: origin, BrowserContextID: chromedp.FromContext(w.ctx).BrowserContextID}); err != nil {
		s.fatalf("grant notifications: %v", err)
	}
	if _, err := chromedp.Call(w.ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: browserNotifyWatch}); err != nil {
		s.fatalf("watch notifications: %v", err)
	}
	w.register("pat")
	background := func(on bool) { browserEval[bool](w, fmt.Sprintf(`window.__background = %t`, on)) }
	idle := func() {
		w.waitFor("the turn's end", `document.getElementById("composer-turn").getAttribute("data-turn-status") !== "running"`)
	}

	// Off by default: a reply in the background says nothing.
	background(true)
	w.send("hello there")
	if n := browserEval[int](w, `window.__notes.length`); n != 0 {
		s.fatalf("%d notifications before they were switched on", n)
	}

	// Switched on in the account page.
	w.visit("/account")
	w.waitVisible("[data-testid=notifications-toggle]")
	w.click("[data-testid=notifications-toggle]")
	w.waitFor("notifications on", `document.querySelector("[data-testid=notifications-toggle]").getAttribute("aria-pressed") === "true"`)

	// A reply in front of the person: no notification; in the background: one.
	w.visit("/chat")
	w.send("hello again")
	idle()
	if n := browserEval[int](w, `window.__notes.length`); n != 0 {
		s.fatalf("%d notifications for a reply in a tab in front", n)
	}
	background(true)
	w.send("what is a notification?")
	w.waitFor("the notification", `window.__notes.length === 1`)
	if note := browserEval[string](w, `window.__notes[0]`); !strings.Contains(note, "The reply is ready.") {
		s.fatalf("the notification reads %q", note)
	}

	// Switched off: nothing more.
	w.visit("/account")
	w.click("[data-testid=notifications-toggle]")
	w.waitFor("notifications off", `document.querySelector("[data-testid=notifications-toggle]").getAttribute("aria-pressed") === "false"`)
	w.visit("/chat")
	background(true)
	w.send("hello once more")
	if n := browserEval[int](w, `window.__notes.length`); n != 0 {
		s.fatalf("%d notifications after they were switched off", n)
	}
}
