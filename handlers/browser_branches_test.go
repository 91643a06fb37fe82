package handlers_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"palaver/models"
	"palaver/views"
)

// The transcript's messages with an element id (the server's), in order.
const browserLogged = `#transcript > [data-testid=message][id^=msg-]`

// browserScrollTop scrolls the transcript to its oldest end and says where
// the message with element id was on screen right then (before anything the
// scroll set off can load).
func browserScrollTop(tab *browserTab, id string) float64 {
	tab.s.t.Helper()
	return browserEval[float64](tab, fmt.Sprintf(`(() => {
		const box = document.getElementById("transcript-scroll");
		box.scrollTop = -box.scrollHeight;
		box.dispatchEvent(new Event("scroll"));
		return document.getElementById(%s).getBoundingClientRect().top;
	})()`, browserQuote(id)))
}

// browserTop is where the element with id is on screen.
func browserTop(tab *browserTab, id string) float64 {
	tab.s.t.Helper()
	return browserEval[float64](tab, fmt.Sprintf(`document.getElementById(%s).getBoundingClientRect().top`, browserQuote(id)))
}

// browserLongTranscript: a conversation of 130 entries and 4 error rows
// opens on its latest 50; scrolling up loads the older ones a window at a
// time, the message read before each load staying where it was on screen,
// until every entry and error row is there once, in order; a message sent
// then still lands at the bottom. Opened on a search hit (?seq=40), it
// loads newer entries as the person scrolls down, again without moving
// what they read.
func browserLongTranscript(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("lou")
	tab.register("lou")
	u, err := s.app.store.UserByUsername(context.Background(), "lou")
	if err != nil {
		s.fatalf("lou: %v", err)
	}
	id := s.app.longChat(u.ID, 130, 20, 79, 80, 129)
	all := s.app.logIDs(u.ID, id, nil)

	tab.visit(fmt.Sprintf("/chat/%d", id))
	tab.waitFor("the composer's script", `document.querySelector("form[data-composer][data-enhanced]")`)
	if n := browserEval[int](tab, browserCount(browserLogged)); n != 52 {
		s.fatalf("the conversation opens with %d entries, want 52", n)
	}
	// Without JavaScript, the sentinel is a link to the older batch.
	plain := tab.tab("lou-nojs")
	plain.disableJavaScript()
	plain.visit(fmt.Sprintf("/chat/%d", id))
	plain.clickToLoad("[data-testid=transcript-older] a")
	if loc := plain.location(); loc != fmt.Sprintf("/chat/%d?before_seq=80", id) {
		s.fatalf("without JavaScript, older messages are at %s", loc)
	}
	if got := browserTexts(plain, browserLogged+"[data-role=user]"); len(got) != 25 || got[0] != "m30" {
		s.fatalf("without JavaScript, the older page shows %v", got)
	}

	for loaded := 52; loaded < len(all); {
		oldest := browserEval[string](tab, `document.querySelector(`+browserQuote(browserLogged)+`).id`)
		before := browserScrollTop(tab, oldest)
		tab.waitFor("older messages", fmt.Sprintf(`%s > %d`, browserCount(browserLogged), loaded))
		tab.waitFor("the page settled", `!document.querySelector(".htmx-request, .htmx-settling")`)
		if after := browserTop(tab, oldest); after < before-2 || after > before+2 {
			s.fatalf("loading older messages moved the message in view from %.0f to %.0f px", before, after)
		}
		loaded = browserEval[int](tab, browserCount(browserLogged))
	}
	if got := browserEval[[]string](tab, `Array.from(document.querySelectorAll(`+browserQuote(browserLogged)+`)).map((m) => m.id)`); fmt.Sprint(got) != fmt.Sprint(all) {
		s.fatalf("the transcript after scrolling up:\n%v\nthe log:\n%v", got, all)
	}
	if browserEval[int](tab, browserCount("[data-testid=transcript-older]")) != 0 {
		s.fatalf("the sentinel stays at the top of the whole log")
	}
	tab.send("a message after all that")
	last := browserEval[[]string](tab, `Array.from(document.querySelectorAll(`+browserQuote(browserLogged)+`)).slice(-2).map((m) => m.dataset.role + ":" + m.textContent.trim().slice(0, 24))`)
	if len(last) != 2 || last[0] != "user:a message after all that" {
		s.fatalf("the sent message is not at the bottom: %v", last)
	}

	// A search hit's window, scrolled down.
	tab.visit(fmt.Sprintf("/chat/%d?seq=40", id))
	tab.waitFor("the highlighted message", `document.querySelector("[data-highlight=true]")`)
	loaded := browserEval[int](tab, browserCount(browserLogged))
	// A message sent from another tab reaches this one live, at the
	// bottom: the socket resumes after the log's end, not the window's (it
	// does not bring the entries between them).
	other := tab.tab("lou-2")
	other.visit(fmt.Sprintf("/chat/%d", id))
	other.send("from the other tab")
	tab.waitFor("the other tab's message and its reply", fmt.Sprintf(`%s && %s === %d`,
		browserHasText(browserUserMsg, "from the other tab"), browserCount(browserLogged), loaded+2))
	order := browserEval[[]string](tab, `Array.from(document.getElementById("transcript").children).slice(-3).map((e) => e.dataset.testid + ":" + (e.dataset.role || ""))`)
	if fmt.Sprint(order) != "[transcript-newer: message:user message:assistant]" {
		s.fatalf("the live messages are not at the bottom, after the window: %v", order)
	}
	loaded += 2
	newest := browserEval[string](tab, `document.getElementById("transcript-newer").previousElementSibling.id`)
	before := browserEval[float64](tab, fmt.Sprintf(`(() => {
		document.getElementById("transcript-newer").scrollIntoView({block: "end"});
		return document.getElementById(%s).getBoundingClientRect().top;
	})()`, browserQuote(newest)))
	tab.waitFor("newer messages", fmt.Sprintf(`%s > %d`, browserCount(browserLogged), loaded))
	tab.waitFor("the page settled", `!document.querySelector(".htmx-request, .htmx-settling")`)
	if after := browserTop(tab, newest); after < before-2 || after > before+2 {
		s.fatalf("loading newer messages moved the message in view from %.0f to %.0f px", before, after)
	}
}

// browserTimeTravel: ?at= shows the log as it was, the error row in its
// place; Previous, Next and the range move through it; "Continue from
// here" opens a new conversation whose log is that prefix, with its
// composer, and the original keeps its log.
func browserTimeTravel(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("tia")
	tab.register("tia")
	u, err := s.app.store.UserByUsername(context.Background(), "tia")
	if err != nil {
		s.fatalf("tia: %v", err)
	}
	id := s.app.longChat(u.ID, 6, 3)
	orig := s.app.logIDs(u.ID, id, nil)
	roles := func() string {
		return fmt.Sprint(browserEval[[]string](tab, `Array.from(document.querySelectorAll(`+browserQuote(browserLogged)+`)).map((m) => m.dataset.role)`))
	}

	tab.visit(fmt.Sprintf("/chat/%d?at=4", id))
	tab.waitVisible("[data-testid=time-travel]")
	if got := roles(); got != "[user assistant user assistant error]" {
		s.fatalf("at 3: %s", got)
	}
	if browserEval[int](tab, browserCount("[data-testid=chat-input]")) != 0 {
		s.fatalf("time travel shows the composer")
	}
	tab.clickToLoad("[data-testid=time-travel-prev]")
	if loc := tab.location(); loc != fmt.Sprintf("/chat/%d?at=3", id) || roles() != "[user assistant user]" {
		s.fatalf("previous: %s shows %s", loc, roles())
	}
	tab.clickToLoad("[data-testid=time-travel-next]")
	tab.clickToLoad("[data-testid=time-travel-next]")
	if loc := tab.location(); loc != fmt.Sprintf("/chat/%d?at=5", id) || roles() != "[user assistant user assistant error user]" {
		s.fatalf("next twice: %s shows %s", loc, roles())
	}
	// The range goes where it is moved to.
	browserEval[bool](tab, `(() => {
		const r = document.querySelector("[data-testid=time-travel-range]");
		r.value = "2";
		r.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`)
	tab.waitFor("the range's message", fmt.Sprintf(`location.pathname + location.search === %s && %s === 2`,
		browserQuote(fmt.Sprintf("/chat/%d?at=2", id)), browserCount(browserLogged)))

	tab.clickToLoad("[data-testid=time-travel-continue]")
	loc := tab.location()
	if !browserChatPath.MatchString(loc) || loc == fmt.Sprintf("/chat/%d", id) {
		s.fatalf("continue landed on %s", loc)
	}
	tab.waitVisible("[data-testid=chat-input]")
	if got := tab.text("[data-testid=branch-notice]"); got != views.NoticeContinued {
		s.fatalf("the new conversation says %q, want that it is a new branch", got)
	}
	fork := tab.exchangeID()
	if got := roles(); got != "[user assistant]" {
		s.fatalf("the new conversation shows %s", got)
	}
	ex, err := s.app.store.Exchange(context.Background(), u.ID, fork)
	if err != nil || ex.ForkedFromID == nil || *ex.ForkedFromID != id || *ex.ForkedAtSeq != 2 {
		s.fatalf("the new conversation is not a fork of %d at 2: %+v %v", id, ex, err)
	}
	tab.send("and now something else")
	msgs, err := s.app.store.Messages(context.Background(), u.ID, fork, nil)
	if err != nil || len(msgs) != 4 || msgs[0].Content != "m0" || msgs[1].Content != "m1" || msgs[2].Content != "and now something else" || msgs[3].Role != models.RoleAssistant {
		s.fatalf("the fork's log after a send: %v %v", browserLogLines(msgs), err)
	}
	if got := s.app.logIDs(u.ID, id, nil); fmt.Sprint(got) != fmt.Sprint(orig) {
		s.fatalf("the original changed: %v, was %v", got, orig)
	}
}

// browserLogLines shows a log's roles and contents.
func browserLogLines(msgs []models.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ":" + m.Content
	}
	return out
}

// browserTreeCompare: the tree of a family, two branches ticked and
// compared; side by side on a wide screen, stacked at 390 px.
func browserTreeCompare(t *testing.T, root context.Context) {
	s := newBrowserScene(t, root)
	tab := s.window("tom")
	tab.register("tom")
	u, err := s.app.store.UserByUsername(context.Background(), "tom")
	if err != nil {
		s.fatalf("tom: %v", err)
	}
	base, fork, _ := s.app.branchFamily(u.ID)

	tab.visit(fmt.Sprintf("/chat/%d", fork))
	tab.clickToLoad("[data-testid=open-branches]")
	if n := browserEval[int](tab, browserCount("[data-testid=branch]")); n != 3 {
		s.fatalf("the tree has %d branches", n)
	}
	tab.click(fmt.Sprintf(`[data-testid=branch-pick][value="%d"]`, base))
	tab.click(fmt.Sprintf(`[data-testid=branch-pick][value="%d"]`, fork))
	tab.clickToLoad("[data-testid=branches-compare]")
	if loc := tab.location(); loc != fmt.Sprintf("/chat/%d/compare/%d", base, fork) {
		s.fatalf("compare landed on %s", loc)
	}
	tab.waitVisible("[data-testid=compare-b]")
	if got := tab.text("[data-testid=compare-b] [data-role=user]"); got != "a different question" {
		s.fatalf("side B starts with %q", got)
	}
	layout := `(() => {
		const a = document.querySelector("[data-testid=compare-a]").getBoundingClientRect();
		const b = document.querySelector("[data-testid=compare-b]").getBoundingClientRect();
		return (Math.abs(a.top - b.top) < 1 && b.left >= a.right ? "side" : b.top >= a.bottom ? "stacked" : "overlap") +
			(document.documentElement.scrollWidth > window.innerWidth ? "+scroll" : "");
	})()`
	if got := browserEval[string](tab, layout); got != "side" {
		s.fatalf("on a wide screen the branches are %s", got)
	}
	tab.do("phone", chromedp.EmulateViewport(390, 844))
	tab.reload()
	tab.waitVisible("[data-testid=compare-b]")
	if got := browserEval[string](tab, layout); got != "stacked" {
		s.fatalf("at 390 px the branches are %s", got)
	}
	tab.clickToLoad("[data-testid=compare-a] header a")
	if loc := tab.location(); loc != fmt.Sprintf("/chat/%d", base) {
		s.fatalf("side A opens %s", loc)
	}
}
