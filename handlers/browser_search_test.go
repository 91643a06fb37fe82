package handlers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"palaver/models"
)

// browserSearchOrganise: "/" focuses the search box and Escape clears it; a
// rare word from an older chat, typed in the sidebar's search box, finds its
// message; ArrowDown and Enter open it on
// that message, highlighted and in view although newer ones follow it. Then
// pinning a chat moves it to the Pinned group, and archiving one takes it
// out of the sidebar and onto /chat/archived.
func browserSearchOrganise(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("sam")
	tab.register("sam")
	u, err := s.app.store.UserByUsername(context.Background(), "sam")
	if err != nil {
		s.fatalf("sam: %v", err)
	}
	// The older chat: the rare word in its first message, a long log after
	// it, and a title without the word (so the hit is the message's).
	old := s.app.searchChat(u.ID, models.ScopeGeneral, nil, "Packing list for the quetzalcoatl expedition?", "Boots, a hat, water.")
	for i := range 12 {
		query := fmt.Sprintf("follow-up %d: %s", i, strings.Repeat("more details about the route and the weather. ", 8))
		if _, _, err := s.app.store.StartTurn(context.Background(), models.TurnStart{
			UserID: u.ID, ExchangeID: old, AgentType: "router", Query: query, Owner: "seed",
		}); err != nil {
			s.fatalf("seed: %v", err)
		}
		if err := s.app.store.FinishTurn(context.Background(), old, "seed",
			&models.Message{Role: models.RoleAssistant, Content: strings.Repeat("Noted. ", 30)}); err != nil {
			s.fatalf("seed: %v", err)
		}
	}
	title := "Trip planning"
	if _, err := s.app.store.UpdateExchange(context.Background(), u.ID, old, models.ExchangeUpdate{Title: &title}); err != nil {
		s.fatalf("rename: %v", err)
	}
	pinMe := s.app.searchChat(u.ID, models.ScopeGeneral, nil, "a chat to keep", "kept")
	archiveMe := s.app.searchChat(u.ID, models.ScopeGeneral, nil, "a chat to put away", "put away")

	tab.visit("/chat")
	// "/" focuses the box (outside a field); Escape clears it, and the
	// history shows again. The composer's script focuses the composer once
	// it runs: wait for it, or "/" may be typed into the composer.
	tab.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)
	// and for a rendering of the page: the composer's autofocus is applied
	// in one (before its animation frame callbacks), and would take the
	// focus back from the blur below.
	browserEval[bool](tab, "window.rendered = false, requestAnimationFrame(() => { window.rendered = true; }), true")
	tab.waitFor("a rendering", "window.rendered === true")
	browserEval[bool](tab, "document.activeElement.blur(), true")
	tab.do("press /", chromedp.KeyEvent("/"))
	tab.waitFor("the search box focused", `document.activeElement && document.activeElement.id === "history-search"`)
	tab.typeInto("[data-testid=history-search]", "expedition")
	tab.waitFor("a hit", browserCount("#search-results [data-testid=search-hit]")+" > 0")
	tab.do("press Escape", chromedp.KeyEvent(kb.Escape))
	tab.waitFor("the history back", `document.getElementById("history-search").value === "" && `+
		`getComputedStyle(document.getElementById("history")).display !== "none" && `+browserCount("[data-testid=search-hit]")+" === 0")

	tab.typeInto("[data-testid=history-search]", "quetzal*")
	tab.waitFor("the hit", browserCount("#search-results [data-testid=search-hit]")+" === 1 && "+
		`getComputedStyle(document.getElementById("history")).display === "none"`)
	if href := browserEval[string](tab, `document.querySelector("#search-results [data-testid=search-hit]").getAttribute("href")`); href != fmt.Sprintf("/chat/%d?seq=0", old) {
		s.fatalf("the hit links to %q", href)
	}
	tab.do("choose the hit and open it", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter))
	tab.waitFor("the conversation open on the message", fmt.Sprintf(`location.pathname + location.search === %s`,
		browserQuote(fmt.Sprintf("/chat/%d?seq=0", old))))
	tab.waitFor("the highlighted message in view", `(() => {
		const m = document.querySelector("[data-testid=message][data-highlight=true]");
		const box = document.getElementById("transcript-scroll");
		if (!m || m.dataset.seq !== "0" || !box) return false;
		const r = m.getBoundingClientRect(), b = box.getBoundingClientRect();
		return r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
	})()`)
	if n := browserEval[int](tab, browserCount("[data-highlight=true]")); n != 1 {
		s.fatalf("%d highlighted entries", n)
	}
	// Newer messages follow it: the page was scrolled to it, not left at the bottom.
	if top := browserEval[float64](tab, `document.getElementById("transcript-scroll").scrollTop`); top >= 0 {
		s.fatalf("the transcript is at the bottom (scrollTop %v)", top)
	}

	// Pin: into the Pinned group, marked. Archive: out of the sidebar.
	tab.openMenu(fmt.Sprintf("#history-%d", pinMe))
	tab.click(fmt.Sprintf("#history-%d [data-testid=pin-exchange]", pinMe))
	tab.waitFor("the pinned chat in the Pinned group", fmt.Sprintf(
		`document.querySelector("#pinned-items #history-%d [data-testid=pinned-mark]") && !document.querySelector("#history-items #history-%d")`, pinMe, pinMe))
	tab.openMenu(fmt.Sprintf("#history-%d", archiveMe))
	tab.click(fmt.Sprintf("#history-%d [data-testid=archive-exchange]", archiveMe))
	tab.waitFor("the archived chat out of the sidebar", fmt.Sprintf(`!document.getElementById("history-%d")`, archiveMe))
	tab.clickToLoad("[data-testid=archived-link]")
	tab.waitVisible(fmt.Sprintf("[data-testid=archived-list] #history-%d", archiveMe))
	tab.visit("/chat")
	if n := browserEval[int](tab, browserCount(fmt.Sprintf("#history-%d", archiveMe))); n != 0 {
		s.fatalf("the archived chat is back in the sidebar after a reload")
	}
	tab.waitVisible(fmt.Sprintf("#pinned-items #history-%d", pinMe))
}

// browserSearchLongMatch: a rare word near the start of a reply far taller
// than the screen. Opened from its search hit, the conversation shows the
// matched word itself, marked, in view (centring the message showed the
// middle of the reply, the word far above it).
func browserSearchLongMatch(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("lea")
	tab.register("lea")
	u, err := s.app.store.UserByUsername(context.Background(), "lea")
	if err != nil {
		s.fatalf("lea: %v", err)
	}
	var reply strings.Builder
	reply.WriteString("First, a word about the Okapi forests.\n\n")
	for i := range 120 {
		fmt.Fprintf(&reply, "Paragraph %d of the long answer, about the route and the weather and the gear.\n\n", i)
	}
	long := s.app.searchChat(u.ID, models.ScopeGeneral, nil, "Tell me everything about the trip", reply.String())
	s.app.searchChat(u.ID, models.ScopeGeneral, nil, "a newer chat", "newer")

	tab.visit("/chat")
	tab.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)
	tab.typeInto("[data-testid=history-search]", "okapi")
	tab.waitFor("the hit", browserCount("#search-results [data-testid=search-hit]")+" === 1")
	tab.do("choose the hit and open it", chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter))
	tab.waitFor("the conversation open on the reply", fmt.Sprintf(`location.pathname + location.search === %s`,
		browserQuote(fmt.Sprintf("/chat/%d?seq=1", long))))
	tab.waitFor("the matched word marked and in view", `(() => {
		const m = document.querySelector("[data-testid=message][data-highlight=true] [data-testid=search-match]");
		const box = document.getElementById("transcript-scroll");
		if (!m || m.textContent !== "Okapi" || !box) return false;
		const r = m.getBoundingClientRect(), b = box.getBoundingClientRect();
		return r.height > 0 && r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
	})()`)
	// The reply is far taller than the screen: the mark is not in view by
	// chance of the whole message fitting.
	if h := browserEval[float64](tab, `document.querySelector("[data-highlight=true]").getBoundingClientRect().height / document.getElementById("transcript-scroll").getBoundingClientRect().height`); h < 2 {
		s.fatalf("the reply is only %.1f screens tall", h)
	}
}
