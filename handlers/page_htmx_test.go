package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"palaver/internal/htmltest"
	"palaver/models"
)

// oob finds the element with id in an htmx answer and checks it is an
// out-of-band swap.
func oob(t *testing.T, doc *html.Node, id string) *html.Node {
	t.Helper()
	n := htmltest.ByID(doc, id)
	if n == nil {
		t.Fatalf("the answer has no #%s", id)
	}
	if v, ok := htmltest.Attr(n, "hx-swap-oob"); !ok || v == "" {
		t.Fatalf("#%s is not swapped out of band", id)
	}
	return n
}

// With htmx: a message from the panel answers with the new entries (the
// proposal's card under the reply) and the composer's new exchange out of
// band; accepting answers with the editor's new text, preview, revisions and
// cards out of band.
func TestPageHTMXProposalFlow(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	c.pageEdit(t, id)

	res := c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/chat", id), url.Values{"query": {`replace section "Budget" with: 500 euros`}, "exchange_id": {"0"}})
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	// The user message at once, and the pending reply cell: the reply (and
	// its card) follows live.
	msgs := chatTranscript(doc)
	if len(msgs) != 1 || msgs[0].Role != "user" {
		t.Fatalf("sent entries %+v", msgs)
	}
	if len(htmltest.ByTestID(doc, "pending-reply")) != 1 {
		t.Fatal("no pending reply cell in the send answer")
	}
	ex := oob(t, doc, "composer-exchange")
	exID, _ := htmltest.Attr(ex, "value")
	if exID == "0" || exID == "" {
		t.Fatalf("composer exchange %q", exID)
	}
	oob(t, doc, "page-chat-title")
	if ids := chatHistoryIDs(oob(t, doc, "page-chats")); len(ids) != 1 || fmt.Sprint(ids[0]) != exID {
		t.Fatalf("page chats %v", ids)
	}
	a.waitTurns()
	panel := func() *html.Node {
		res := c.htmx(http.MethodGet, fmt.Sprintf("/pages/%d/chat/%s", id, exID), nil)
		mustStatus(t, res, http.StatusOK)
		return chatDoc(t, res)
	}
	cards := pageCards(panel())
	if len(cards) != 1 || cards[0].Mode != models.EditSectionPatch || cards[0].Stale {
		t.Fatalf("cards %+v", cards)
	}
	// Another proposal in the same chat, a whole-page one.
	res = c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/chat", id), url.Values{"query": {`replace "Paris" with "Rome"`}, "exchange_id": {exID}})
	mustStatus(t, res, http.StatusOK)
	a.waitTurns()
	all := pageCards(panel())
	if len(all) != 2 {
		t.Fatalf("cards %+v", all)
	}
	full := all[1]

	res = c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/proposals/%d/accept", id, cards[0].MessageID), url.Values{"pick": {"1"}, "sections": {"## Budget"}})
	mustStatus(t, res, http.StatusOK)
	doc = chatDoc(t, res)
	want := strings.Replace(pageTrip, "300 euros, Paris hotels included.", "500 euros", 1)
	ta := oob(t, doc, "page-content")
	if got := pageEditorText(t, doc); got != want {
		t.Fatalf("oob editor text %q, want %q", got, want)
	}
	if v, _ := htmltest.Attr(ta, "data-testid"); v != "page-content" {
		t.Fatal("the new editor lost its hook")
	}
	if !strings.Contains(htmltest.Text(oob(t, doc, "page-preview")), "500 euros") {
		t.Fatal("the preview was not updated")
	}
	if got := pageRevisionSources(oob(t, doc, "page-revisions")); len(got) != 2 || got[0] != "agent" {
		t.Fatalf("oob revisions %v", got)
	}
	if !strings.Contains(htmltest.Text(oob(t, doc, "page-status")), "Applied") {
		t.Fatal("no status")
	}
	applied := oob(t, doc, fmt.Sprintf("proposal-%d", cards[0].MessageID))
	if v, _ := htmltest.Attr(applied, "data-testid"); v != "proposal-applied" {
		t.Fatalf("the accepted card became %q", v)
	}
	stale := oob(t, doc, fmt.Sprintf("proposal-%d", full.MessageID))
	if v, _ := htmltest.Attr(stale, "data-stale"); v != "true" {
		t.Fatal("the other card did not turn stale")
	}
	if a.page(c.user.ID, id).Content != want {
		t.Fatal("the page was not saved")
	}
}

// An htmx save keeps the text being typed (no editor in the answer) and
// refreshes status, preview, revisions and the staleness of the cards.
func TestPageHTMXSaveAndRestore(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	_, msg := c.pageProposal(t, id, `add section "Z": z`, 0)
	c.pageEdit(t, id)

	res := c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/save", id), url.Values{"title": {"Trip"}, "content": {"# New\n\ntext\n"}})
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	if htmltest.ByID(doc, "page-content") != nil {
		t.Fatal("a save replaced the editor the person is typing in")
	}
	if h := htmltest.FindAll(oob(t, doc, "page-preview"), func(n *chatNode) bool { return n.Data == "h1" }); len(h) != 1 {
		t.Fatal("the preview does not show the saved text")
	}
	if v, _ := htmltest.Attr(oob(t, doc, fmt.Sprintf("proposal-%d", msg)), "data-stale"); v != "true" {
		t.Fatal("the card did not turn stale after the save")
	}
	if !strings.Contains(htmltest.Text(oob(t, doc, "page-status")), "Saved") {
		t.Fatal("no saved status")
	}
	// A title problem is an alert for htmx, and changes nothing.
	before := a.pageSnapshot()
	res = c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/save", id), url.Values{"title": {" "}, "content": {"x"}})
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if !chatHTMXAlert.MatchString(bodyOf(res)) || a.pageSnapshot() != before {
		t.Fatal("a refused htmx save")
	}

	// Restore replaces the editor's text, and the card is fresh again.
	first := a.revisions(c.user.ID, id)[0].ID
	res = c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/revisions/%d/restore", id, first), url.Values{})
	mustStatus(t, res, http.StatusOK)
	doc = chatDoc(t, res)
	oob(t, doc, "page-content")
	if got := pageEditorText(t, doc); got != pageTrip {
		t.Fatalf("restored editor %q", got)
	}
	if v, _ := htmltest.Attr(oob(t, doc, fmt.Sprintf("proposal-%d", msg)), "data-stale"); v != "false" {
		t.Fatal("back to the proposed-for content, the card should be actionable again")
	}

	// The live preview renders without saving.
	before = a.pageSnapshot()
	res = c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/preview", id), url.Values{"content": {"**bold** <script>alert(1)</script>"}})
	mustStatus(t, res, http.StatusOK)
	if b := bodyOf(res); !strings.Contains(b, "<strong>bold</strong>") || strings.Contains(b, "<script") {
		t.Fatalf("preview %s", b)
	}
	if a.pageSnapshot() != before {
		t.Fatal("the preview saved something")
	}
}

// htmx panel actions answer with the panel alone; deleting the page sends
// the browser to /pages.
func TestPageHTMXPanelAndDelete(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.pageCreate(t, "Trip", pageTrip)
	ex := c.pageSend(t, id, "hello", 0)

	res := c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/chat/new", id), url.Values{})
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	if len(htmltest.ByTestID(doc, "page-chat")) != 1 || chatComposerExchange(t, doc) != "0" || len(htmltest.ByTestID(doc, "page-content")) != 0 {
		t.Fatal("new chat for htmx")
	}
	res = c.htmx(http.MethodGet, fmt.Sprintf("/pages/%d/chat/%d", id, ex), nil)
	mustStatus(t, res, http.StatusOK)
	if doc = chatDoc(t, res); chatComposerExchange(t, doc) != fmt.Sprint(ex) || len(chatTranscript(doc)) != 2 {
		t.Fatal("selecting a chat for htmx")
	}
	res = c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/chat/%d/delete", id, ex), url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusOK)
	if doc = chatDoc(t, res); chatComposerExchange(t, doc) != "0" || len(chatHistoryIDs(doc)) != 0 {
		t.Fatal("deleting the open chat for htmx")
	}
	res = c.htmx(http.MethodPost, fmt.Sprintf("/pages/%d/delete", id), url.Values{"confirmed": {"1"}})
	if res.Header.Get("HX-Redirect") != "/pages" {
		t.Fatalf("htmx page delete: %d %q", res.StatusCode, res.Header.Get("HX-Redirect"))
	}
}
