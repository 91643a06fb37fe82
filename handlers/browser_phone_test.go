package handlers_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// browserVisible is a script expression: whether the element is shown.
func browserVisible(sel string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) return false;
		const s = getComputedStyle(e); const r = e.getBoundingClientRect();
		return s.display !== "none" && s.visibility !== "hidden" && r.width > 0 && r.height > 0 && r.right > 0 })()`, browserQuote(sel))
}

// browserSettledIn is a script expression: whether the element is shown
// and at rest, wholly on screen (a drawer that slid in).
func browserSettledIn(sel string) string {
	return browserVisible(sel) + fmt.Sprintf(` && document.querySelector(%s).getBoundingClientRect().left >= 0`, browserQuote(sel))
}

// browserPhone: on a phone the conversations are a drawer that opens from
// the top bar and closes on choosing a chat, and the page editor shows its
// editor, preview and assistant as tabs; with JavaScript on and off. At
// tablet and desktop widths the sidebar stays beside the chat.
func browserPhone(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("pip")
	w.do("phone", chromedp.EmulateViewport(390, 844))
	w.register("pip")
	w.send("first conversation")
	first := w.exchangeID()
	const drawer = "#conversations"
	w.click("[data-testid=drawer-toggle]")
	w.waitFor("the drawer open", browserSettledIn(drawer))
	w.clickToLoad("aside [data-testid=new-chat]")
	w.waitFor("the drawer closed for the new chat", "!"+browserVisible(drawer))
	w.send("second conversation")

	if browserEval[bool](w, browserVisible(drawer)) {
		s.fatalf("at 390 px the conversations cover the chat before they are asked for")
	}
	if !browserEval[bool](w, browserVisible("[data-testid=chat-input]")) {
		s.fatalf("at 390 px the composer is not on screen")
	}
	w.click("[data-testid=drawer-toggle]")
	w.waitFor("the drawer open", browserSettledIn(drawer))
	w.click(fmt.Sprintf("#history-%d a", first))
	w.waitFor("the first conversation", browserHasText(browserUserMsg, "first conversation"))
	w.waitFor("the drawer closed after choosing", "!"+browserVisible(drawer))

	// Wider screens: the sidebar beside the chat, no drawer button.
	for _, width := range []int64{768, 1440} {
		w.do("resize", chromedp.EmulateViewport(width, 900))
		w.reload()
		if !browserEval[bool](w, browserVisible(drawer)) || browserEval[bool](w, browserVisible("[data-testid=drawer-toggle]")) {
			s.fatalf("at %d px the sidebar is hidden or the drawer button shows", width)
		}
	}

	// The page editor's tabs.
	w.do("phone", chromedp.EmulateViewport(390, 844))
	w.visit("/pages")
	browserEval[bool](w, `(() => { const f = document.querySelector("[data-testid=page-create]");
		f.querySelector("[name=title]").value = "Trip"; f.querySelector("[name=content]").value = "# Trip\n\nGo north.";
		f.requestSubmit(); return true })()`)
	w.waitFor("the editor", browserVisible("[data-testid=page-content]"))
	tabs := func(who string) {
		if browserEval[bool](w, browserVisible("#page-preview-pane")) || browserEval[bool](w, browserVisible("#page-chat")) {
			s.fatalf("%s: at 390 px the editor shares the screen", who)
		}
		w.click("[data-testid=page-tab-preview]")
		w.waitFor(who+": the preview tab", browserVisible("#page-preview-pane")+" && !"+browserVisible("[data-testid=page-content]"))
		w.click("[data-testid=page-tab-chat]")
		w.waitFor(who+": the assistant tab", browserVisible("#page-chat")+" && !"+browserVisible("#page-editor"))
		w.click("[data-testid=page-tab-edit]")
		w.waitFor(who+": back to the editor", browserVisible("[data-testid=page-content]")+" && !"+browserVisible("#page-chat"))
	}
	tabs("with JavaScript")
	page := w.location()

	// Without JavaScript: the same, through the links' targets.
	n := s.window("pip-nojs")
	n.disableJavaScript()
	n.do("phone", chromedp.EmulateViewport(390, 844))
	n.visit("/login")
	n.typeInto(`form[action="/login"] input[name=username]`, "pip")
	n.typeInto(`form[action="/login"] input[name=password]`, browserPass)
	n.clickToLoad(`form[action="/login"] button[type=submit]`)
	if browserEval[bool](n, browserVisible(drawer)) {
		s.fatalf("without JavaScript the drawer is open before it is asked for")
	}
	n.click("[data-testid=drawer-toggle]") // a link to #conversations: no page load
	n.waitFor("the drawer open without JavaScript", browserSettledIn(drawer))
	n.clickToLoad(fmt.Sprintf("#history-%d a", first))
	n.waitFor("the first conversation without JavaScript", browserHasText(browserUserMsg, "first conversation")+" && !"+browserVisible(drawer))
	n.visit(page)
	n.waitFor("the editor without JavaScript", browserVisible("[data-testid=page-content]"))
	w = n
	tabs("without JavaScript")
}
