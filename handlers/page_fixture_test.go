package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"palaver/internal/htmltest"
	"palaver/models"
)

// The page tests' helpers: creating pages and talking to their assistant as
// a browser with and without JavaScript, reading the editor and the proposal
// cards by data-testid, and snapshots that prove a refused request changed
// nothing.

const pageTrip = "Notes for the trip.\n\n## Plan\nFly to Paris.\n\n## Budget\n300 euros, Paris hotels included.\n"

// pageCreate creates a page through the /pages form and returns its id.
func (c *client) pageCreate(t *testing.T, title, content string) int64 {
	t.Helper()
	c.get("/pages")
	res := c.postForm("/pages", url.Values{"title": {title}, "content": {content}})
	mustStatus(t, res, http.StatusSeeOther)
	loc := res.Header.Get("Location")
	var id int64
	if _, err := fmt.Sscanf(loc, "/pages/%d/edit", &id); err != nil || loc != fmt.Sprintf("/pages/%d/edit", id) {
		t.Fatalf("create redirected to %q, want /pages/{id}/edit", loc)
	}
	return id
}

// pageSend sends a message from the page's panel without JavaScript and
// returns the exchange it went to (the page's current one afterwards).
func (c *client) pageSend(t *testing.T, pageID int64, query string, exchangeID int64) int64 {
	t.Helper()
	res := c.postForm(fmt.Sprintf("/pages/%d/chat", pageID), url.Values{"query": {query}, "exchange_id": {strconv.FormatInt(exchangeID, 10)}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != fmt.Sprintf("/pages/%d/edit", pageID) {
		t.Fatalf("send redirected to %q", loc)
	}
	id, err := strconv.ParseInt(chatComposerExchange(t, c.pageEdit(t, pageID)), 10, 64)
	if err != nil || id == 0 {
		t.Fatalf("after a send the panel's exchange is %d (%v)", id, err)
	}
	return id
}

// pageEdit GETs the page's editor and checks it is a 200.
func (c *client) pageEdit(t *testing.T, pageID int64) *html.Node {
	t.Helper()
	return c.chatScreen(t, fmt.Sprintf("/pages/%d/edit", pageID))
}

// pageCard is a proposal card as the page shows it.
type pageCard struct {
	MessageID int64
	Mode      string
	Stale     bool
	Accept    bool     // the accept/apply button is enabled
	Sections  []string // a section patch's sections, by heading
	Keys      []string // what their checkboxes post
	Kinds     []string // and their kinds
	Text      string
}

// pageCards lists the actionable proposal cards on a page.
func pageCards(doc *html.Node) []pageCard {
	var out []pageCard
	for _, n := range htmltest.ByTestID(doc, "proposal") {
		var pc pageCard
		id, _ := htmltest.Attr(n, "data-message-id")
		pc.MessageID, _ = strconv.ParseInt(id, 10, 64)
		pc.Mode, _ = htmltest.Attr(n, "data-mode")
		stale, _ := htmltest.Attr(n, "data-stale")
		pc.Stale = stale == "true"
		if b := htmltest.ByTestID(n, "proposal-accept"); len(b) == 1 {
			_, disabled := htmltest.Attr(b[0], "disabled")
			pc.Accept = !disabled
		}
		for _, s := range htmltest.ByTestID(n, "proposal-section") {
			kind, _ := htmltest.Attr(s, "data-kind")
			name, _ := htmltest.Attr(s, "data-section")
			pc.Kinds = append(pc.Kinds, kind)
			pc.Sections = append(pc.Sections, name)
			if box := htmltest.ByTestID(s, "proposal-section-check"); len(box) == 1 {
				v, _ := htmltest.Attr(box[0], "value")
				pc.Keys = append(pc.Keys, v)
			}
		}
		pc.Text = htmltest.Text(n)
		out = append(out, pc)
	}
	return out
}

// pageApplied lists the ids of the proposals shown as applied.
func pageApplied(doc *html.Node) []string {
	var out []string
	for _, n := range htmltest.ByTestID(doc, "proposal-applied") {
		id, _ := htmltest.Attr(n, "id")
		out = append(out, id)
	}
	return out
}

// pageRejected lists the element ids of the rejected proposals' notes.
func pageRejected(doc *html.Node) []string {
	var out []string
	for _, n := range htmltest.ByTestID(doc, "proposal-rejected") {
		id, _ := htmltest.Attr(n, "id")
		out = append(out, id)
	}
	return out
}

// pageEditorText is the editor's text on a page.
func pageEditorText(t *testing.T, doc *html.Node) string {
	t.Helper()
	ta := htmltest.ByTestID(doc, "page-content")
	if len(ta) != 1 {
		t.Fatalf("%d page-content editors", len(ta))
	}
	var b strings.Builder
	for c := ta[0].FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(c.Data)
	}
	return b.String()
}

// pageRevisionSources lists the sources of the revisions the editor shows,
// newest first.
func pageRevisionSources(doc *html.Node) []string {
	var out []string
	for _, r := range htmltest.ByTestID(doc, "revision") {
		s, _ := htmltest.Attr(r, "data-source")
		out = append(out, s)
	}
	return out
}

// page reads a page straight from the store.
func (a *testApp) page(userID, pageID int64) *models.Page {
	a.t.Helper()
	p, err := a.store.Page(context.Background(), userID, pageID)
	if err != nil {
		a.t.Fatalf("page %d: %v", pageID, err)
	}
	return p
}

// revisions lists a page's revisions straight from the store, oldest first.
func (a *testApp) revisions(userID, pageID int64) []models.RevisionSummary {
	a.t.Helper()
	revs, err := a.store.Revisions(context.Background(), userID, pageID)
	if err != nil {
		a.t.Fatal(err)
	}
	return revs
}

// pageSnapshot dumps everything the page routes can change, so a test can
// prove a refused request changed nothing.
func (a *testApp) pageSnapshot() string {
	a.t.Helper()
	return a.chatSnapshot() + a.dump(
		"SELECT id, user_id, title, content, updated_at, COALESCE(deleted_at, 'live') FROM pages ORDER BY id",
		"SELECT id, page_id, content, edit_source, COALESCE(message_id, 0) FROM page_revisions ORDER BY id",
		"SELECT message_id, user_id FROM proposal_rejections ORDER BY message_id",
	)
}

// pageCount counts rows of table matching where.
func (a *testApp) pageCount(table, where string, args ...any) int {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM "+table+" WHERE "+where, args...).Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}

// pageProposal asks the page's assistant without JavaScript and returns the
// exchange and the id of the reply (a proposal, for an instruction).
func (c *client) pageProposal(t *testing.T, pageID int64, query string, exchangeID int64) (int64, int64) {
	t.Helper()
	ex := c.pageSend(t, pageID, query, exchangeID)
	return ex, c.a.chatReply(c.user.ID, ex)
}
