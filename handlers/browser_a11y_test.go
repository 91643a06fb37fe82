package handlers_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// browserContrastScan is a script that judges the contrast of every
// visible piece of text and every icon on the page against WCAG AA: the
// computed colour (the element's opacity and its ancestors' folded in) over
// the effective background (the backgrounds of the element and its
// ancestors, composited down to the first opaque one). Text needs 4.5:1,
// large text (24 px, or 18.66 px bold) and icons 3:1. Disabled controls and
// marks flagged data-inactive (a switcher's missing arrow) are exempt, as
// WCAG exempts inactive components; a background image is not judged.
// It returns the failures, and the lowest ratio found under each of the
// named selectors (-1: none of them was judged).
const browserContrastScan = `((named) => {
	const parse = (c) => { const m = /rgba?\(([^)]+)\)/.exec(c || ""); if (!m) return null;
		const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(parseFloat);
		return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 }; };
	const over = (t, b) => ({ r: t.r * t.a + b.r * (1 - t.a), g: t.g * t.a + b.g * (1 - t.a), b: t.b * t.a + b.b * (1 - t.a), a: 1 });
	const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
	const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
	const background = (el) => {
		const layers = [];
		for (let e = el; e; e = e.parentElement) {
			const cs = getComputedStyle(e);
			if (cs.backgroundImage !== "none") return null;
			const bg = parse(cs.backgroundColor);
			if (bg && bg.a > 0) { layers.push(bg); if (bg.a >= 1) break; }
		}
		let c = { r: 255, g: 255, b: 255, a: 1 };
		for (let i = layers.length - 1; i >= 0; i--) c = over(layers[i], c);
		return c;
	};
	const opacity = (el) => { let o = 1; for (let e = el; e; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity); return o; };
	const shown = (el) => {
		const r = el.getBoundingClientRect();
		if (r.width < 2 || r.height < 2 || getComputedStyle(el).visibility !== "visible") return false;
		for (let e = el; e; e = e.parentElement) {
			const s = getComputedStyle(e);
			if (s.position === "absolute" && s.clip && s.clip !== "auto") return false; // sr-only
		}
		return true;
	};
	const pseudo = (el) => ["::before", "::after"].some((p) => { const c = getComputedStyle(el, p).content; return c && c !== "none" && c !== "normal" && c !== '""'; });
	const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.dataset.testid ? "[data-testid=" + el.dataset.testid + "]" : "") +
		(typeof el.className === "string" && el.className ? "." + el.className.trim().split(/\s+/).slice(0, 4).join(".") : "");
	const fails = [], low = {};
	named.forEach((s) => { low[s] = -1; });
	const judge = (el, color, kind) => {
		const bg = background(el);
		const fg0 = parse(color);
		if (!bg || !fg0) return;
		const op = opacity(el);
		if (op === 0) return;
		const fg = over({ r: fg0.r, g: fg0.g, b: fg0.b, a: fg0.a * op }, bg);
		const cs = getComputedStyle(el);
		const size = parseFloat(cs.fontSize), bold = parseInt(cs.fontWeight, 10) >= 700;
		const min = kind === "icon" || size >= 24 || (size >= 18.66 && bold) ? 3 : 4.5;
		const r = ratio(fg, bg);
		named.forEach((s) => { if (el.closest(s) && (low[s] < 0 || r < low[s])) low[s] = r; });
		if (r < min - 0.005) {
			const text = kind === "icon" ? "(icon)" : (kind === "placeholder" ? el.placeholder : el.textContent).replace(/\s+/g, " ").trim().slice(0, 40);
			fails.push(name(el) + " " + JSON.stringify(text) + ": " + r.toFixed(2) + ":1 < " + min + ":1 (" + color + " on rgb(" +
				[bg.r, bg.g, bg.b].map(Math.round).join(", ") + "))");
		}
	};
	for (const el of document.body.querySelectorAll("*")) {
		const tag = el.tagName.toLowerCase();
		if ((el.closest("svg") && tag !== "svg") || el.closest(":disabled, [data-inactive], [aria-disabled=true]") || !shown(el)) continue;
		if (tag === "svg") { judge(el, getComputedStyle(el).color, "icon"); continue; }
		if (["input", "textarea"].includes(tag) && el.placeholder && el.value === "") judge(el, getComputedStyle(el, "::placeholder").color, "placeholder");
		if (Array.from(el.childNodes).some((n) => n.nodeType === 3 && n.textContent.trim() !== "") || pseudo(el)) judge(el, getComputedStyle(el).color, "text");
	}
	return { fails: fails, low: low };
})`

type browserContrast struct {
	Fails []string           `json:"fails"`
	Low   map[string]float64 `json:"low"`
}

// contrast judges the page's contrast; every named selector must have been
// judged (so that the check cannot pass on a page that lost them).
func (tab *browserTab) contrast(where string, named ...string) []string {
	tab.s.t.Helper()
	got := browserEval[browserContrast](tab, browserContrastScan+"("+browserQuote(append([]string{}, named...))+")")
	var out []string
	for _, f := range got.Fails {
		out = append(out, where+": "+f)
	}
	for _, n := range named {
		if got.Low[n] < 0 {
			out = append(out, fmt.Sprintf("%s: nothing under %s was on screen to judge", where, n))
		}
	}
	return out
}

// browserContrast: every text and icon on the chat, its sidebar, the branch
// switcher, the page editor, the account and admin pages, and the sign-in
// page meets WCAG AA, at 1440 px and at 390 px.
func browserContrastTour(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	s.expectConsole(`^error: Failed to load resource: the server responded with a status of 404 `) // the error page
	w := s.window("cleo")
	w.do("desktop", chromedp.EmulateViewport(1440, 900))
	w.register("cleo")
	w.send("first question")
	w.send("second question")
	// A second branch at the last reply: the switcher shows.
	w.click(browserAssistantMsg + ":last-of-type [data-testid=regenerate]")
	w.waitFor("the new branch, its switcher at 2 / 2", browserCount("#transcript [data-testid=branch-prev]")+" > 0")
	ex := w.exchangeID()
	var fails []string
	chat := []string{"#transcript time", "[data-testid=edit-message]", "[data-testid=regenerate]", "[data-testid=branch-switch]",
		"#composer-hint", ".history-group", "[data-testid=history-item]", "[data-testid=feedback]"}
	fails = append(fails, w.contrast("/chat/N at 1440 px", chat...)...)
	w.shot("chat-1440")
	for _, p := range []string{fmt.Sprintf("/chat/%d/branches", ex), fmt.Sprintf("/chat/%d?at=1", ex), "/chat/archived", "/pages", "/account",
		"/admin", "/admin/exchanges", "/admin/users", "/admin/housekeeping", "/admin/audit", "/chat/search?q=question", "/chat/999999"} {
		w.visit(p)
		fails = append(fails, w.contrast(p)...)
	}
	// The two branches compared, their tree with one ticked (its hint).
	cleo, err := s.app.store.UserByUsername(context.Background(), "cleo")
	if err != nil {
		s.fatalf("cleo: %v", err)
	}
	first, fork, _ := s.app.branchFamily(cleo.ID)
	w.visit(fmt.Sprintf("/chat/%d/branches", first))
	w.click(fmt.Sprintf(`[data-testid=branch][data-exchange="%d"] [data-testid=branch-pick]`, first))
	w.waitFor("the compare hint", browserHasText("[data-compare-hint]", "Tick two branches"))
	fails = append(fails, w.contrast("the branch tree, one ticked", "[data-compare-hint]")...)
	w.visit(fmt.Sprintf("/chat/%d/compare/%d", first, fork))
	fails = append(fails, w.contrast("the comparison", "[data-testid=compare-a]", "[data-testid=compare-b]")...)
	// Menus and the confirmation dialog, open.
	w.visit(fmt.Sprintf("/chat/%d", ex))
	w.openMenu(browserHistoryItem)
	fails = append(fails, w.contrast("a sidebar row's menu", browserHistoryItem+" details[open] [data-menu-item]")...)
	w.click(browserHistoryItem + " details[open] [data-testid=delete-exchange]")
	w.waitVisible("dialog[open][data-testid=confirm-dialog]")
	fails = append(fails, w.contrast("the confirmation dialog", "dialog[open][data-testid=confirm-dialog]")...)
	w.click("dialog[open] [data-testid=confirm-cancel]")
	w.waitFor("the dialog closed", `!document.querySelector("dialog[open]")`)
	w.visit("/pages")
	browserEval[bool](w, `(() => { const f = document.querySelector("[data-testid=page-create]");
		f.querySelector("[name=title]").value = "Trip"; f.querySelector("[name=content]").value = "# Trip\n\nGo north.";
		f.requestSubmit(); return true })()`)
	w.waitFor("the editor", browserVisible("[data-testid=page-content]"))
	w.click("[data-testid=revisions-toggle]")
	fails = append(fails, w.contrast("the page editor", "[data-testid=revision-list]")...)
	w.shot("page-1440")
	// A proposal card, then the note a rejected one leaves; a revision's
	// changes.
	w.send(`replace "north" with "south"`)
	w.waitFor("a proposal card", browserCount("[data-testid=page-chat] [data-testid=proposal]")+" === 1")
	fails = append(fails, w.contrast("a proposal", "[data-testid=proposal]")...)
	w.click("[data-testid=page-chat] [data-testid=proposal-reject]")
	w.waitFor("the rejected note", browserCount("[data-testid=page-chat] [data-testid=proposal-rejected]")+" === 1")
	fails = append(fails, w.contrast("a rejected proposal's note", "[data-testid=proposal-rejected]")...)
	w.do("edit", chromedp.SetValue(chromedp.CSS("#page-content"), "# Trip\n\nGo south."))
	w.click("[data-testid=page-save]")
	w.waitFor("two revisions", browserCount("[data-testid=revision]")+" === 2")
	if !browserEval[bool](w, browserShown("[data-testid=revision-compare-toggle]")) {
		w.click("[data-testid=revisions-toggle]")
	}
	w.click("[data-testid=revision-compare-toggle]")
	w.waitVisible("[data-testid=revision-review] [data-testid=revision-restore]")
	fails = append(fails, w.contrast("a revision's changes", "[data-testid=revision-diff-lines]")...)

	w.do("phone", chromedp.EmulateViewport(390, 844))
	w.visit(fmt.Sprintf("/chat/%d", ex))
	fails = append(fails, w.contrast("/chat/N at 390 px", "#transcript time", "[data-testid=branch-switch]")...)
	w.shot("chat-390")
	w.click("[data-testid=chat-menu]")
	w.shot("chat-390-menu")
	w.click("[data-testid=chat-menu]")
	w.click("[data-testid=drawer-toggle]")
	w.waitFor("the drawer open", browserSettledIn("#conversations"))
	fails = append(fails, w.contrast("the drawer at 390 px", ".history-group", "[data-testid=history-item]")...)
	w.shot("drawer-390")
	w.click("#conversations [data-testid=history-item] [data-testid=row-menu]")
	w.shot("drawer-390-menu")

	v := s.window("visitor")
	v.visit("/login")
	fails = append(fails, v.contrast("/login")...)
	v.visit("/register")
	fails = append(fails, v.contrast("/register")...)
	// Without JavaScript a delete asks on a page of its own.
	n := s.window("cleo-nojs")
	n.disableJavaScript()
	n.visit("/login")
	n.typeInto(`form[action="/login"] input[name=username]`, "cleo")
	n.typeInto(`form[action="/login"] input[name=password]`, browserPass)
	n.clickToLoad(`form[action="/login"] button[type=submit]`)
	n.click(browserHistoryItem + " [data-testid=row-menu]")
	n.clickToLoad(browserHistoryItem + " [data-testid=delete-exchange]")
	n.waitVisible("[data-testid=confirm]")
	fails = append(fails, n.contrast("the confirmation page without JavaScript", "[data-testid=confirm]")...)
	if len(fails) > 0 {
		s.fatalf("below WCAG AA contrast:\n  %s", strings.Join(fails, "\n  "))
	}
}

// shot saves a screenshot of the window to $PALAVER_SHOTS/NAME.png when
// that variable names a folder: a person's look at what the tour saw.
func (tab *browserTab) shot(name string) {
	tab.s.t.Helper()
	dir := os.Getenv("PALAVER_SHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := tab.step()
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tab.s.fatalf("%s: screenshot %s: %v", tab.name, name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tab.s.fatalf("%s: save screenshot %s: %v", tab.name, name, err)
	}
}

// browserShown is a script expression: whether the element is rendered
// (also not inside a closed <details>, whose content still has a box).
func browserShown(sel string) string {
	return fmt.Sprintf(`(() => { const e = document.querySelector(%s); return !!e && e.checkVisibility({ visibilityProperty: true }) })()`, browserQuote(sel))
}

// browserTargetSizes is a script: the selectors (of those on screen) whose
// box is under 44 × 44 px, with their size.
const browserTargetSizes = `((sels) => sels.flatMap((s) => Array.from(document.querySelectorAll(s))
	.filter((e) => e.checkVisibility({ visibilityProperty: true }))
	.map((e) => { const r = e.getBoundingClientRect(); return { s: s, w: r.width, h: r.height }; })
	.filter((x) => x.w < 43.5 || x.h < 43.5).map((x) => x.s + " is " + x.w.toFixed(0) + "×" + x.h.toFixed(0) + " px")))`

// browserPhoneTargets: at 390 px every control a thumb uses in the chat is
// a 44 px target; a history item's actions are one menu, so its title
// keeps the drawer's width; the header's Branches, Time travel and Export
// are in a menu; a touch screen shows no key hints; the admin tables
// scroll sideways in their frame, not the page.
func browserPhoneTargets(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("tess")
	w.do("phone", chromedp.EmulateViewport(390, 844))
	w.register("tess")
	const long = "A rather long question about the ferry timetable to the northern islands"
	w.send(long)
	w.click(browserAssistantMsg + " [data-testid=regenerate]")
	w.waitFor("the new branch, its switcher at 2 / 2", browserCount("#transcript [data-testid=branch-prev]")+" > 0")

	transcript := []string{"[data-testid=edit-message]", "[data-testid=regenerate]", "[data-testid=branch-prev]", "[data-testid=branch-next]",
		"[data-testid=feedback-up]", "[data-testid=feedback-down]", "[data-testid=feedback-comment-toggle]", "[data-testid=chat-menu]",
		"[data-testid=drawer-toggle]", "[data-testid=chat-send]", "[data-testid=composer-new-chat]"}
	small := browserEval[[]string](w, browserTargetSizes+"("+browserQuote(transcript)+")")
	if n := browserEval[int](w, browserCount("[data-testid=branch-prev]")+" + "+browserCount("[data-testid=edit-message]")); n < 2 {
		s.fatalf("the transcript lacks the controls to measure (%d)", n)
	}

	// The header's links are in its menu.
	if browserEval[bool](w, browserShown("[data-testid=open-branches]")) {
		s.fatalf("at 390 px the header shows Branches in the bar, not in its menu")
	}
	w.click("[data-testid=chat-menu]")
	for _, id := range []string{"open-branches", "open-time-travel", "export-exchange"} {
		w.waitFor(id+" in the header's menu", browserShown("[data-testid=chat-menu] ~ * [data-testid="+id+"]"))
	}
	small = append(small, browserEval[[]string](w, browserTargetSizes+`(["[data-testid=open-branches]", "[data-testid=open-time-travel]"])`)...)
	w.click("[data-testid=chat-menu]")

	// The drawer: one menu button per item, a 44 px target, and the title
	// keeps the item's width.
	w.click("[data-testid=drawer-toggle]")
	w.waitFor("the drawer open", browserSettledIn("#conversations"))
	small = append(small, browserEval[[]string](w, browserTargetSizes+`(["#conversations [data-testid=row-menu]", "[data-drawer-close]"])`)...)
	if n := browserEval[int](w, `Array.from(document.querySelector("#conversations [data-testid=history-item]").querySelectorAll("a, button, summary"))
		.filter((e) => e.checkVisibility({ visibilityProperty: true })).length`); n != 2 {
		s.fatalf("a history item shows %d controls, want two: its link and its menu button", n)
	}
	title := browserEval[float64](w, `document.querySelector("#conversations [data-testid=history-title]").getBoundingClientRect().width`)
	if title < 220 {
		s.fatalf("at 390 px a history item's title is %.0f px wide, want at least 220 (the drawer's width less its menu button)", title)
	}
	w.openMenu("#conversations [data-testid=history-item]")
	w.shot("drawer-menu-390")
	small = append(small, browserEval[[]string](w, browserTargetSizes+`(["#conversations details[open] [data-menu-item]"])`)...)
	w.click("#conversations details[open] [data-testid=rename-exchange]")
	w.waitFor("the rename form", browserShown("#conversations [data-testid=rename-input]"))
	small = append(small, browserEval[[]string](w, browserTargetSizes+`(["#conversations [data-testid=rename-input]", "#conversations [data-testid=rename-save]"])`)...)

	// The page editor's bar and a proposal's buttons.
	w.visit("/pages")
	w.typeInto("[data-testid=page-create-title]", "Trip")
	w.typeInto("[data-testid=page-create-content]", "# Trip\n\nWalk to the river.\n")
	w.clickToLoad("[data-testid=page-create-submit]")
	small = append(small, browserEval[[]string](w, browserTargetSizes+`(["[data-testid=all-pages]", "[data-testid=revisions-toggle]", "[data-testid=page-delete]", "[data-testid=page-save]"])`)...)
	w.click("[data-testid=page-tab-chat]") // at 390 px the assistant is a tab of its own
	w.waitVisible("[data-testid=page-chat] [data-testid=chat-input]")
	w.send(`replace "Walk" with "Cycle"`)
	w.waitFor("a proposal card", browserCount("[data-testid=page-chat] [data-testid=proposal]")+" === 1")
	w.shot("page-390")
	if n := browserEval[int](w, browserCount("[data-testid=page-save]")+" + "+browserCount("[data-testid=proposal-accept]")); n != 2 {
		s.fatalf("the page editor lacks the controls to measure (%d)", n)
	}
	small = append(small, browserEval[[]string](w, browserTargetSizes+`(["[data-testid=proposal-accept]", "[data-testid=proposal-reject]"])`)...)
	if len(small) > 0 {
		s.fatalf("at 390 px these touch targets are under 44 px:\n  %s", strings.Join(small, "\n  "))
	}

	// The admin tables keep their width and scroll in their frame.
	for _, p := range []string{"/admin/exchanges", "/admin/users"} {
		w.visit(p)
		sel := map[string]string{"/admin/exchanges": "[data-testid=admin-exchanges]", "/admin/users": "[data-testid=admin-users]"}[p]
		got := browserEval[[]float64](w, fmt.Sprintf(`(() => { const t = document.querySelector(%s);
			return [t.getBoundingClientRect().width, t.parentElement.clientWidth, t.parentElement.scrollWidth, document.documentElement.scrollWidth] })()`, browserQuote(sel)))
		w.shot("admin-390" + strings.ReplaceAll(p, "/", "-"))
		if got[0] < 700 || got[2] <= got[1] || got[3] > 390 {
			s.fatalf("%s at 390 px: the table is %.0f px in a frame of %.0f (scrolling %.0f), the page %.0f px wide; want a table of 44rem scrolling in its frame",
				p, got[0], got[1], got[2], got[3])
		}
	}

	// A touch screen: no "Shift+Enter" hint.
	w.visit("/chat")
	if !browserEval[bool](w, browserVisible("#composer-hint")) {
		s.fatalf("with a mouse the composer shows no key hint")
	}
	w.touchScreen()
	w.reload()
	if !browserEval[bool](w, `matchMedia("(pointer: coarse)").matches`) {
		s.fatalf("the touch emulation does not make the pointer coarse")
	}
	w.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)
	if browserEval[bool](w, browserVisible("#composer-hint")) {
		s.fatalf("on a touch screen the composer says %q", w.text("#composer-hint"))
	}
}

// touchScreen makes the window a touch screen: a coarse pointer, no hover.
func (tab *browserTab) touchScreen() {
	tab.s.t.Helper()
	ctx, cancel := tab.step()
	defer cancel()
	_, err := chromedp.Call(ctx, emulation.SetTouchEmulationEnabled, emulation.SetTouchEmulationEnabledParams{Enabled: true, MaxTouchPoints: 5})
	if err == nil {
		_, err = chromedp.Call(ctx, emulation.SetEmitTouchEventsForMouse,
			emulation.SetEmitTouchEventsForMouseParams{Enabled: true, Configuration: emulation.SetEmitTouchEventsForMouseConfigurationMobile})
	}
	if err != nil {
		tab.s.fatalf("%s: emulate a touch screen: %v", tab.name, err)
	}
}

// key presses one key (kb's names: kb.Tab, kb.ArrowDown, "\r" for Enter)
// with the modifiers given, in the focused element.
func (tab *browserTab) key(k string, mods ...chromedp.Modifier) {
	tab.s.t.Helper()
	tab.do("press "+browserQuote(k), chromedp.KeyEvent(k, chromedp.KeyModifiers(mods...)))
}

// focused is a short name of the element that has the focus.
func (tab *browserTab) focused() string {
	tab.s.t.Helper()
	return browserEval[string](tab, `(() => { const e = document.activeElement; if (!e) return "";
		return e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.dataset.testid ? "[data-testid=" + e.dataset.testid + "]" : "") +
			(e.closest("[data-testid=history-item]") ? " in " + e.closest("[data-testid=history-item]").id : "") })()`)
}

// browserKeyboard: a person with a keyboard only. The first Tab reaches
// the skip link, which goes to the conversation; each history item is one
// tab stop, its actions a menu that the right arrow reaches, Enter or
// Space opens, the arrows move through and Escape closes; its Delete asks
// in a dialog that starts on Cancel; the edit box sends on Enter and takes
// Shift+Enter as a new line, and says so.
func browserKeyboard(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("kit")
	w.register("kit")
	w.send("first chat")
	first := w.exchangeID()
	w.clickToLoad("aside [data-testid=new-chat]")
	w.send("second chat")
	second := w.exchangeID()
	w.reload()
	w.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)

	// The skip link comes first. (The chat puts the focus in its composer,
	// and a Tab past the end of a page leaves headless Chromium's document:
	// Shift+Tab from the top bar's first link shows what comes before it.)
	w.focusEmulation()
	browserEval[bool](w, `(document.querySelector('header a[href="/"]').focus(), true)`)
	w.key(kb.Tab, chromedp.ModifierShift)
	if got := w.focused(); got != "a[data-testid=skip-link]" {
		s.fatalf("before the top bar the keyboard reaches %q, want the skip link", got)
	}
	if first := browserEval[string](w, `Array.from(document.querySelectorAll("a[href], button, input, textarea, select, summary, [tabindex]"))
		.find((e) => e.tabIndex >= 0).dataset.testid`); first != "skip-link" {
		s.fatalf("the page's first tab stop is %q, want the skip link", first)
	}
	if !browserEval[bool](w, browserVisible("[data-testid=skip-link]")) {
		s.fatalf("the focused skip link is not shown")
	}
	w.key("\r")
	w.waitFor("the conversation focused", `document.activeElement && document.activeElement.id === "transcript-scroll"`)

	// One tab stop per history item.
	top, next := fmt.Sprintf("history-%d", second), fmt.Sprintf("history-%d", first)
	browserEval[bool](w, fmt.Sprintf(`(document.querySelector("#%s > a").focus(), true)`, top))
	w.key(kb.Tab)
	if got := w.focused(); got != "a in "+next {
		s.fatalf("Tab from the first history item goes to %q, want the next item's link (a in %s)", got, next)
	}
	w.key(kb.ArrowRight)
	if got := w.focused(); got != "summary[data-testid=row-menu] in "+next {
		s.fatalf("the right arrow goes to %q, want the item's menu button", got)
	}
	// It says what it opens, and its items are the menu's.
	if roles := browserEval[string](w, fmt.Sprintf(`(() => { const d = document.querySelector("#%s details[data-menu]");
		return [d.querySelector("summary").getAttribute("aria-haspopup"), d.querySelector("[data-menu-panel]").getAttribute("role"),
			d.querySelector("[data-testid=pin-exchange]").getAttribute("role"), document.querySelector("#%s > a").getAttribute("aria-keyshortcuts")].join(" ") })()`, next, next)); roles != "menu menu menuitem ArrowRight" {
		s.fatalf("the item's menu has roles %q, want \"menu menu menuitem ArrowRight\"", roles)
	}
	open := fmt.Sprintf(`document.querySelector("#%s details[data-menu]").open`, next)
	for _, opener := range []string{"\r", " "} {
		w.key(opener)
		w.waitFor("the menu open on an item", open+` && document.activeElement.matches("[data-menu-item]")`)
		if got := w.focused(); got != "summary[data-testid=rename-exchange] in "+next {
			s.fatalf("%q opens the menu on %q, want its first item, Rename", opener, got)
		}
		for _, step := range []struct{ key, want string }{
			{kb.ArrowDown, "button[data-testid=pin-exchange]"}, {kb.ArrowDown, "button[data-testid=archive-exchange]"},
			{kb.ArrowUp, "button[data-testid=pin-exchange]"}, {kb.End, "button[data-testid=delete-exchange]"},
			{kb.ArrowDown, "summary[data-testid=rename-exchange]"}, {kb.Home, "summary[data-testid=rename-exchange]"},
		} {
			w.key(step.key)
			if got := w.focused(); got != step.want+" in "+next {
				s.fatalf("in the menu %q goes to %q, want %s", step.key, got, step.want)
			}
		}
		w.key(kb.Escape)
		w.waitFor("the menu closed", "!"+open)
		if got := w.focused(); got != "summary[data-testid=row-menu] in "+next {
			s.fatalf("Escape leaves the focus on %q, want the menu's button", got)
		}
	}

	// Delete from the keyboard: the dialog starts on Cancel, and Escape
	// keeps the conversation.
	w.key("\r")
	w.waitFor("the menu open on its first item", open+` && document.activeElement.matches("[data-testid=rename-exchange]")`)
	w.key(kb.End)
	w.key("\r")
	w.waitVisible("dialog[open][data-testid=confirm-dialog]")
	if got := w.focused(); got != "button[data-testid=confirm-cancel]" {
		s.fatalf("the delete's confirmation starts on %q, want Cancel", got)
	}
	w.key(kb.Escape)
	w.waitFor("the dialog closed", `!document.querySelector("dialog[open]")`)
	if n := browserEval[int](w, browserCount("#"+next)); n != 1 || len(w.asked()) != 0 {
		s.fatalf("after Escape in the confirmation the item is there %d times, and the browser asked %q", n, w.asked())
	}

	// The edit box: Shift+Enter breaks the line, Enter sends.
	w.click(browserUserMsg + " [data-testid=edit-message]")
	w.waitVisible("[data-testid=edit-input]")
	if got := w.text("[data-testid=edit-hint]"); got != "Enter to send · Shift+Enter for a new line" {
		s.fatalf("the edit box says %q about its keys", got)
	}
	w.do("clear the edit box", chromedp.Clear(chromedp.CSS("[data-testid=edit-input]")))
	w.typeInto("[data-testid=edit-input]", "line one")
	w.key("\r", chromedp.ModifierShift)
	w.typeInto("[data-testid=edit-input]", "line two")
	if got := browserEval[string](w, `document.querySelector("[data-testid=edit-input]").value`); got != "line one\nline two" {
		s.fatalf("after Shift+Enter the edit box holds %q", got)
	}
	w.key("\r")
	w.waitFor("the edited message sent as a new branch", browserHasText(browserUserMsg, "line one\nline two")+
		` && !document.querySelector("[data-testid=edit-input]")`)
}

// focusEmulation keeps the window's page focused as a foreground window's
// is, so that Tab moves the focus through it.
func (tab *browserTab) focusEmulation() {
	tab.s.t.Helper()
	ctx, cancel := tab.step()
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true}); err != nil {
		tab.s.fatalf("%s: emulate focus: %v", tab.name, err)
	}
}

// browserConfirmations: no confirmation starts with the focus on its
// destructive button, with JavaScript (a <dialog>, never the browser's
// confirm()) or without (a page of its own); and a page revision shows its
// changes against the text now before it is restored.
func browserConfirmations(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	w := s.window("rae")
	w.register("rae")
	w.send("a chat to clear")

	// Clear all, with JavaScript: the dialog, Cancel first; Cancel keeps them.
	w.click("[data-testid=clear-history]")
	w.waitVisible("dialog[open][data-testid=confirm-dialog]")
	if got := w.focused(); got != "button[data-testid=confirm-cancel]" {
		s.fatalf("the clear's confirmation starts on %q, want Cancel", got)
	}
	w.shot("dialog-1280")
	if got := w.text("dialog[open] h2"); got != "Delete all your conversations?" {
		s.fatalf("the dialog's heading is %q", got)
	}
	w.click("dialog[open] [data-testid=confirm-cancel]")
	w.waitFor("the dialog closed", `!document.querySelector("dialog[open]")`)
	if n := browserEval[int](w, browserCount(browserHistoryItem)); n != 1 || len(w.asked()) != 0 {
		s.fatalf("after Cancel the sidebar has %d items, and the browser asked %q", n, w.asked())
	}

	// A revision's changes before Restore.
	w.visit("/pages")
	browserEval[bool](w, `(() => { const f = document.querySelector("[data-testid=page-create]");
		f.querySelector("[name=title]").value = "Trip"; f.querySelector("[name=content]").value = "# Trip\n\nGo north.\n";
		f.requestSubmit(); return true })()`)
	w.waitFor("the editor", browserVisible("[data-testid=page-content]"))
	w.do("edit", chromedp.SetValue(chromedp.CSS("#page-content"), "# Trip\n\nGo south.\n"))
	w.click("[data-testid=page-save]")
	w.waitFor("two revisions", browserCount("[data-testid=revision]")+" === 2")
	w.click("[data-testid=revisions-toggle]")
	w.click("[data-testid=revision-compare-toggle]")
	w.waitFor("the revision's diff", browserHasText("[data-testid=revision-diff]", "-Go south.")+" && "+browserHasText("[data-testid=revision-diff]", "+Go north."))
	w.shot("revision-diff-1280")
	// Restore is under the changes it makes, and makes them.
	w.click("[data-testid=revision-review] [data-testid=revision-restore]")
	w.waitFor("the restored text", `document.querySelector("#page-content").value.includes("Go north.")`)
	w.waitFor("a third revision", browserCount("[data-testid=revision]")+" === 3")

	// Without JavaScript: the confirmation page, Cancel first.
	n := s.window("rae-nojs")
	n.disableJavaScript()
	n.visit("/login")
	n.typeInto(`form[action="/login"] input[name=username]`, "rae")
	n.typeInto(`form[action="/login"] input[name=password]`, browserPass)
	n.clickToLoad(`form[action="/login"] button[type=submit]`)
	n.click(browserHistoryItem + " [data-testid=row-menu]")
	n.clickToLoad(browserHistoryItem + " [data-testid=delete-exchange]")
	n.waitVisible("[data-testid=confirm]")
	n.shot("confirm-page-nojs")
	// autofocus acts when the page is next drawn, a moment after it loads.
	n.waitFor("Cancel focused on the confirmation page", `document.activeElement && document.activeElement.matches("[data-testid=confirm-cancel]")`)
	n.clickToLoad("[data-testid=confirm]")
	if c := browserEval[int](n, browserCount(browserHistoryItem)); c != 0 {
		s.fatalf("after confirming without JavaScript the sidebar has %d items", c)
	}
}
