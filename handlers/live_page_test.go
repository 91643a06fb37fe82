package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/fasthttp/websocket"
	"golang.org/x/net/html"

	"palaver/agents"
	"palaver/internal/htmltest"
	"palaver/models"
)

// watchPage tells the server which exchange and page the tab shows. With an
// exchange, it waits for the catch-up's answer (the turn state), so that the
// server has taken the watch before the test goes on.
func (l *liveTab) watchPage(exchangeID, since, pageID int64) {
	l.t.Helper()
	msg := fmt.Sprintf(`{"type":"watch","exchange_id":%d,"since":%d,"page_id":%d}`, exchangeID, since, pageID)
	if err := l.conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		l.t.Fatalf("send watch: %v", err)
	}
	if exchangeID > 0 {
		l.read()
	}
}

// readFrame waits for a message with what in it, and parses it.
func (l *liveTab) readFrame(what string) *html.Node {
	l.t.Helper()
	var frame string
	l.readUntil(what, func() bool {
		for _, f := range l.frames {
			if strings.Contains(f, what) {
				frame = f
				return true
			}
		}
		return false
	})
	doc, err := html.Parse(strings.NewReader(frame))
	if err != nil {
		l.t.Fatal(err)
	}
	return doc
}

// allSeq is a since past every seq: the tab has the whole log.
const allSeq = 1 << 40

// A reply in a page chat reaches a tab watching it as the panel shows it:
// with its proposal card. The htmx send answers at once with the user
// message and the pending reply cell.
func TestLivePageChatReplyArrivesAsCard(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	ex := c.pageSend(t, id, "hello", 0) // a chat to watch
	c.pageEdit(t, id)
	tab := c.openTab(t, addr)
	tab.watchPage(ex, allSeq, id)

	res := c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/chat", id),
		url.Values{"query": {`replace section "Budget" with: 500 euros`}, "exchange_id": {strconv.FormatInt(ex, 10)}})
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	if msgs := chatTranscript(doc); len(msgs) != 1 || msgs[0].Role != "user" {
		t.Fatalf("send answer entries %+v", msgs)
	}
	if len(htmltest.ByTestID(doc, "pending-reply")) != 1 {
		t.Fatal("no pending reply cell in the send answer")
	}
	if len(pageCards(doc)) != 0 {
		t.Fatal("the send answer already holds the reply's card")
	}

	frame := tab.readFrame(`data-testid="proposal"`)
	cards := pageCards(frame)
	reply := a.chatReply(c.user.ID, ex)
	if len(cards) != 1 || cards[0].MessageID != reply || cards[0].Mode != models.EditSectionPatch || cards[0].Stale || !cards[0].Accept {
		t.Fatalf("live cards %+v (reply %d)", cards, reply)
	}
	// A message may carry several appends (what queued up goes out as one
	// message): the card is in one of them, once.
	boxes := htmltest.FindAll(frame, func(n *html.Node) bool { v, _ := htmltest.Attr(n, "hx-swap-oob"); return v == "beforeend:#transcript" })
	appended := 0
	for _, box := range boxes {
		appended += len(htmltest.ByTestID(box, "proposal"))
	}
	if appended != 1 {
		t.Fatalf("the card is appended to the transcript %d times, want once", appended)
	}
	if !strings.Contains(strings.Join(tab.entries, ","), fmt.Sprintf("msg-%d", reply)) {
		t.Fatalf("the reply itself did not arrive: %v", tab.entries)
	}
}

// Saving the page (a plain form post, as from another tab) pushes its new
// text, preview and revisions to a tab showing the page, and the watched
// chat's card turns stale; a restore makes it actionable again.
func TestLivePageSavePushesTheEditor(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	ex, msg := c.pageProposal(t, id, `add section "Z": z`, 0)
	c.pageEdit(t, id)
	tab := c.openTab(t, addr)
	tab.watchPage(ex, allSeq, id)

	res := c.postForm(fmt.Sprintf("/pages/%d/save", id), url.Values{"title": {"Trip"}, "content": {"# New\n\ntext\n"}})
	mustStatus(t, res, http.StatusSeeOther)
	doc := tab.readFrame(`id="page-content"`)
	ta := htmltest.ByID(doc, "page-content")
	if v, _ := htmltest.Attr(ta, "hx-swap-oob"); v != "true" {
		t.Fatal("the editor text is not swapped out of band")
	}
	if got := pageEditorText(t, doc); got != "# New\n\ntext\n" {
		t.Fatalf("pushed editor text %q", got)
	}
	if h := htmltest.FindAll(oob(t, doc, "page-preview"), func(n *html.Node) bool { return n.Data == "h1" }); len(h) != 1 {
		t.Fatal("the preview does not show the saved text")
	}
	if got := pageRevisionSources(oob(t, doc, "page-revisions")); len(got) != 2 || got[0] != "user" {
		t.Fatalf("pushed revisions %v", got)
	}
	if v, _ := htmltest.Attr(oob(t, doc, fmt.Sprintf("proposal-%d", msg)), "data-stale"); v != "true" {
		t.Fatal("the card did not turn stale")
	}

	// A restore (HTML) pushes too, and the card is fresh again.
	first := a.revisions(c.user.ID, id)[0].ID
	tab.frames = nil
	res = c.postForm(fmt.Sprintf("/pages/%d/revisions/%d/restore", id, first), url.Values{})
	mustStatus(t, res, http.StatusSeeOther)
	doc = tab.readFrame(`id="page-content"`)
	if got := pageEditorText(t, doc); got != pageTrip {
		t.Fatalf("pushed editor text after the restore %q", got)
	}
	if v, _ := htmltest.Attr(oob(t, doc, fmt.Sprintf("proposal-%d", msg)), "data-stale"); v != "false" {
		t.Fatal("the card should be actionable again")
	}

	// Accepting the proposal (the API) pushes the applied card.
	tab.frames = nil
	var out map[string]any
	c.apiJSON(http.MethodPost, fmt.Sprintf("/api/pages/%d/proposals/%d/accept", id, msg), nil, http.StatusOK, &out)
	doc = tab.readFrame(`id="page-content"`)
	if !strings.Contains(pageEditorText(t, doc), "## Z") {
		t.Fatalf("pushed editor text after the accept %q", pageEditorText(t, doc))
	}
	if v, _ := htmltest.Attr(oob(t, doc, fmt.Sprintf("proposal-%d", msg)), "data-testid"); v != "proposal-applied" {
		t.Fatalf("the accepted card became %q", v)
	}
}

// Page events are the user's own: another user's save never reaches a tab,
// nor does an event naming another user's page, even when the tab claims
// to show it.
func TestLivePageEventsStayWithTheirUser(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ada := a.register("ada")
	bob := a.register("bob")
	adaPage := ada.pageCreate(t, "Ada's", "ada secret\n")
	bobPage := bob.pageCreate(t, "Bob's", "bob text\n")
	bobEx := bob.pageSend(t, bobPage, "hello", 0)

	tab := bob.openTab(t, addr)
	tab.watchPage(bobEx, allSeq, adaPage) // bob's tab claims ada's page
	res := ada.postForm(fmt.Sprintf("/pages/%d/save", adaPage), url.Values{"title": {"Ada's"}, "content": {"ada secret 2\n"}})
	mustStatus(t, res, http.StatusSeeOther)
	// An event for bob naming ada's page: re-read as bob, it is not found.
	a.hub.Publish(agents.Event{Kind: agents.EventPage, UserID: bob.user.ID, PageID: adaPage})

	tab.watchPage(bobEx, allSeq, bobPage)
	res = bob.postForm(fmt.Sprintf("/pages/%d/save", bobPage), url.Values{"title": {"Bob's"}, "content": {"bob text 2\n"}})
	mustStatus(t, res, http.StatusSeeOther)
	doc := tab.readFrame(`id="page-content"`)
	if got := pageEditorText(t, doc); got != "bob text 2\n" {
		t.Fatalf("bob's tab got editor text %q", got)
	}
	for _, f := range tab.frames {
		if strings.Contains(f, "ada secret") {
			t.Fatalf("ada's page reached bob: %q", f)
		}
	}
	// And the page in the database is ada's as she saved it.
	if p, err := a.store.Page(context.Background(), ada.user.ID, adaPage); err != nil || p.Content != "ada secret 2\n" {
		t.Fatalf("ada's page %v %v", p, err)
	}
}

// The editor page is live: one connection, the page it names for the
// watch, and the panel's pending reply container and turn control; the
// Stop form shows while a turn runs.
func TestPageEditorIsLive(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	c.pageSend(t, id, "hello", 0)
	doc := c.pageEdit(t, id)
	if n := len(htmltest.ByTestID(doc, "live")); n != 1 {
		t.Fatalf("%d live connections on the editor page", n)
	}
	pages := htmltest.FindAll(doc, func(n *html.Node) bool { _, ok := htmltest.Attr(n, "data-live-page"); return ok })
	if len(pages) != 1 {
		t.Fatalf("%d elements naming the page", len(pages))
	}
	if v, _ := htmltest.Attr(pages[0], "data-live-page"); v != strconv.FormatInt(id, 10) {
		t.Fatalf("data-live-page %q", v)
	}
	for _, el := range []string{"transcript", "transcript-pending", "composer-turn", "page-changed"} {
		if htmltest.ByID(doc, el) == nil {
			t.Fatalf("the editor page has no #%s", el)
		}
	}
	if _, hidden := htmltest.Attr(htmltest.ByID(doc, "page-changed"), "hidden"); !hidden {
		t.Fatal("the page-changed notice shows on load")
	}
	if len(htmltest.ByTestID(doc, "chat-stop")) != 0 {
		t.Fatal("Stop shown with no turn running")
	}
}
