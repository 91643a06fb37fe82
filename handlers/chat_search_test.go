package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"palaver/internal/htmltest"
	"palaver/models"
)

// searchChat stores a finished turn straight in the store: a new exchange
// of scope (page: about pageID) with the query and reply. It returns the
// exchange's id.
func (a *testApp) searchChat(userID int64, scope string, pageID *int64, query, reply string) int64 {
	a.t.Helper()
	ctx := context.Background()
	ex, _, err := a.store.StartTurn(ctx, models.TurnStart{
		UserID: userID, Scope: scope, PageID: pageID, AgentType: "router", Query: query, Owner: "seed",
	})
	if err != nil {
		a.t.Fatal(err)
	}
	if err := a.store.FinishTurn(ctx, ex.ID, "seed", &models.Message{Role: models.RoleAssistant, Content: reply}); err != nil {
		a.t.Fatal(err)
	}
	return ex.ID
}

// searchHits lists the hits' links in a page or fragment.
func searchHits(doc *chatNode) []string {
	var out []string
	for _, h := range htmltest.ByTestID(doc, "search-hit") {
		href, _ := htmltest.Attr(h, "href")
		out = append(out, href)
	}
	return out
}

// As the person types, htmx gets the hits alone: each links to the
// message it found, shows the title, the snippet with its marks, the role
// and the date; what the person typed, markup included, stays text; another
// user's conversations never show.
func TestChatSearchAsYouType(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	old := a.searchChat(ann.user.ID, models.ScopeGeneral, nil, "Where do axolotls sleep?", "Axolotls rest on the bottom.")
	a.searchChat(ann.user.ID, models.ScopeGeneral, nil, "<script>alert(1)</script> axolotl trap", "noted")
	a.searchChat(ann.user.ID, models.ScopeGeneral, nil, "nothing to see", "indeed")
	theirs := a.searchChat(bob.user.ID, models.ScopeGeneral, nil, "bob's axolotl", "bob's reply")

	res := ann.htmx(http.MethodGet, "/chat/search?q=axolotl", nil)
	mustStatus(t, res, http.StatusOK)
	body := bodyOf(res)
	if strings.Contains(body, "<html") {
		t.Fatal("htmx got a whole document")
	}
	if strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Fatalf("the typed markup is not escaped in the hit: %s", body)
	}
	doc := chatDoc(t, res)
	hits := searchHits(doc)
	if len(hits) < 4 { // the question and reply of the first, the title and question of the second
		t.Fatalf("%d hits: %v", len(hits), hits)
	}
	want := map[string]bool{fmt.Sprintf("/chat/%d?seq=0", old): false, fmt.Sprintf("/chat/%d?seq=1", old): false}
	for _, h := range hits {
		if strings.Contains(h, fmt.Sprint(theirs)) {
			t.Fatalf("bob's conversation in ann's hits: %v", hits)
		}
		if _, ok := want[h]; ok {
			want[h] = true
		}
	}
	for h, seen := range want {
		if !seen {
			t.Errorf("no hit links to %s: %v", h, hits)
		}
	}
	if n := len(htmltest.FindAll(doc, func(n *chatNode) bool { return n.Data == "script" })); n != 0 {
		t.Fatalf("%d script elements in the hits", n)
	}
	marks := htmltest.FindAll(doc, func(n *chatNode) bool { return n.Data == "mark" })
	if len(marks) == 0 || !strings.EqualFold(htmltest.Text(marks[0])[:7], "axolotl") {
		t.Fatalf("no <mark> around the matched word: %s", body)
	}
	first := htmltest.ByTestID(doc, "search-hit")[0]
	for _, part := range []string{"search-hit-title", "search-snippet", "search-hit-role"} {
		if len(htmltest.ByTestID(first, part)) != 1 {
			t.Errorf("the hit has no %s", part)
		}
	}
	if len(htmltest.FindAll(first, func(n *chatNode) bool { return n.Data == "time" })) != 1 {
		t.Error("the hit has no date")
	}
	roles := map[string]bool{}
	for _, r := range htmltest.ByTestID(doc, "search-hit-role") {
		roles[htmltest.Text(r)] = true
	}
	for _, r := range []string{"You", "Assistant", "Title"} {
		if !roles[r] {
			t.Errorf("no hit says %q: %v", r, roles)
		}
	}

	// Bob's search finds his own only.
	if hits := searchHits(chatDoc(t, bob.htmx(http.MethodGet, "/chat/search?q=axolotl", nil))); len(hits) == 0 ||
		strings.Contains(strings.Join(hits, " "), fmt.Sprintf("/chat/%d", old)) {
		t.Fatalf("bob's hits: %v", hits)
	}
}

// Without JavaScript the form lands on a results screen with the sidebar;
// an empty box is no search (the chat again, or an empty region for htmx);
// a query over 500 characters is told so where the hits would be, 500 of any
// script go through.
func TestChatSearchWithoutJavaScriptAndBadQueries(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	id := a.searchChat(ann.user.ID, models.ScopeGeneral, nil, "the quokka question", "a quokka answer")

	doc := ann.chatScreen(t, "/chat/search?q=quokka")
	if hits := searchHits(doc); len(hits) == 0 || !strings.HasPrefix(hits[0], fmt.Sprintf("/chat/%d", id)) {
		t.Fatalf("results screen hits %v", hits)
	}
	for _, part := range []string{"history-search", "history-list", "search-page-results"} {
		if len(htmltest.ByTestID(doc, part)) == 0 {
			t.Errorf("the results screen has no %s", part)
		}
	}
	form := htmltest.FindAll(doc, func(n *chatNode) bool { r, _ := htmltest.Attr(n, "role"); return n.Data == "form" && r == "search" })[0]
	if m, _ := htmltest.Attr(form, "method"); m != "get" {
		t.Fatalf("the search form's method is %q", m)
	}

	for _, q := range []string{"", "%20%20"} {
		res := ann.get("/chat/search?q=" + q)
		mustStatus(t, res, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != "/chat" {
			t.Fatalf("empty search went to %q", loc)
		}
		res = ann.htmx(http.MethodGet, "/chat/search?q="+q, nil)
		mustStatus(t, res, http.StatusOK)
		if b := bodyOf(res); b != "" {
			t.Fatalf("empty search for htmx answered %q", b)
		}
	}

	long := url.QueryEscape(strings.Repeat("q", 501))
	for _, res := range []*http.Response{ann.get("/chat/search?q=" + long), ann.htmx(http.MethodGet, "/chat/search?q="+long, nil)} {
		mustStatus(t, res, http.StatusBadRequest)
		msg := htmltest.ByTestID(chatDoc(t, res), "search-error")
		if len(msg) != 1 || !strings.Contains(htmltest.Text(msg[0]), "limit is 500") {
			t.Fatalf("over-long search: %s", bodyOf(res))
		}
	}
	emoji := url.QueryEscape(strings.Repeat("🦘", 500))
	mustStatus(t, ann.htmx(http.MethodGet, "/chat/search?q="+emoji, nil), http.StatusOK)
	if empty := htmltest.ByTestID(ann.chatScreen(t, "/chat/search?q="+emoji), "search-empty"); len(empty) != 1 {
		t.Fatal("no 'nothing found' for a search without hits")
	}
}

// More results come a batch at a time from the cursor, appended, none twice;
// page chats' hits open the page's editor on the message; job chats (no
// screen of their own) are left out.
func TestChatSearchPagesAndScopes(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	for i := range 12 {
		a.searchChat(ann.user.ID, models.ScopeGeneral, nil, fmt.Sprintf("wombat number %d", i), "ok")
	}
	pg, err := a.store.CreatePage(context.Background(), ann.user.ID, "Notes", "# Notes")
	if err != nil {
		t.Fatal(err)
	}
	pageChat := a.searchChat(ann.user.ID, models.ScopePage, &pg.ID, "wombat on the page", "ok")
	job := a.chatOtherScope(ann.user.ID)
	a.chatExec("UPDATE messages SET content = 'job wombat' WHERE exchange_id = ? AND role = 'user'", job)

	res := ann.htmx(http.MethodGet, "/chat/search?q=wombat", nil)
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	all := searchHits(doc)
	seen := map[string]bool{}
	for pages := 1; ; pages++ {
		more := htmltest.ByTestID(doc, "search-more")
		if len(more) == 0 {
			break
		}
		next, _ := htmltest.Attr(more[0], "hx-get")
		if href, _ := htmltest.Attr(more[0], "href"); href != next || !strings.Contains(next, "before=") {
			t.Fatalf("more: hx-get %q, href %q", next, href)
		}
		res = ann.htmx(http.MethodGet, next, nil)
		mustStatus(t, res, http.StatusOK)
		if strings.Contains(bodyOf(res), "search-list") {
			t.Fatal("the next page came with the list around it")
		}
		doc = chatDoc(t, res)
		all = append(all, searchHits(doc)...)
		if pages > 5 {
			t.Fatal("no end to the pages")
		}
	}
	for _, h := range all {
		if seen[h] {
			t.Fatalf("%s twice", h)
		}
		seen[h] = true
		if strings.Contains(h, fmt.Sprint("/chat/", job)) {
			t.Fatalf("a job chat's hit: %s", h)
		}
	}
	if len(all) != 12*2+2 { // each general chat's question and title; the page chat's question and title
		t.Errorf("%d hits: %v", len(all), all)
	}
	if !seen[fmt.Sprintf("/pages/%d/chat/%d?seq=0", pg.ID, pageChat)] {
		t.Errorf("no hit opens the page chat on its message: %v", all)
	}
}
