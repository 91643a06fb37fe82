package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"palaver/internal/htmltest"
	"palaver/models"
)

// chatSeed makes n general exchanges for the user, oldest first, straight in
// the store, and returns their ids.
func (a *testApp) chatSeed(userID int64, n int) []int64 {
	a.t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		ex, _, err := a.store.StartTurn(context.Background(), models.TurnStart{
			UserID: userID, Scope: models.ScopeGeneral, AgentType: "router", Query: fmt.Sprintf("topic %02d", i), Owner: "seed",
		})
		if err != nil {
			a.t.Fatal(err)
		}
		if err := a.store.FinishTurn(context.Background(), ex.ID, "seed"); err != nil {
			a.t.Fatal(err)
		}
		ids[i] = ex.ID
	}
	return ids
}

// chatGroups lists the group headers in a page or fragment, with the id of
// the item each heads (hidden empty headers excluded).
func chatGroups(doc *chatNode) []string {
	var out []string
	for _, h := range htmltest.FindAll(doc, func(n *chatNode) bool { _, ok := htmltest.Attr(n, "data-group"); return ok }) {
		next := h.NextSibling
		for next != nil && next.Type != 1+2 /* html.ElementNode */ {
			next = next.NextSibling
		}
		if next == nil {
			continue
		}
		if v, _ := htmltest.Attr(next, "data-testid"); v != "history-item" {
			continue // an empty header, hidden by CSS
		}
		g, _ := htmltest.Attr(h, "data-group")
		id, _ := htmltest.Attr(next, "data-exchange-id")
		out = append(out, g+"@"+id)
	}
	return out
}

// chatMore is the next batch's address the sidebar offers: the htmx trigger
// and the plain link ("" at the end).
func chatMore(t *testing.T, doc *chatNode) (hxGet, href string) {
	t.Helper()
	more := htmltest.ByTestID(doc, "history-more")
	if len(more) == 0 {
		return "", ""
	}
	hxGet, _ = htmltest.Attr(more[0], "hx-get")
	links := htmltest.FindAll(more[0], func(n *chatNode) bool { return n.Data == "a" })
	if len(links) != 1 {
		t.Fatal("the more trigger has no plain link")
	}
	href, _ = htmltest.Attr(links[0], "href")
	return hxGet, href
}

// Walking the cursors returns every exchange exactly once, most recent
// activity first, with each group header once even across page boundaries.
func TestChatHistoryPagination(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	ids := a.chatSeed(c.user.ID, 45)
	other := a.register("bob")
	a.chatSeed(other.user.ID, 3) // never listed for ada

	// Spread them over time: the newest 25 today, 17 yesterday, 3 older.
	// (Times from the start of today so the test holds at any hour.)
	midnight := func() time.Time { y, m, d := time.Now().Date(); return time.Date(y, m, d, 0, 0, 0, 0, time.Local) }()
	want := slices.Clone(ids)
	slices.Reverse(want)
	for i, id := range want {
		var at time.Time
		switch {
		case i < 25:
			at = midnight.Add(time.Duration(100-i) * time.Second)
		case i < 42:
			at = midnight.Add(-time.Hour - time.Duration(i)*time.Second)
		default:
			at = midnight.AddDate(0, 0, -30).Add(-time.Duration(i) * time.Second)
		}
		a.chatExec("UPDATE exchanges SET updated_at = ? WHERE id = ?", at.UTC(), id)
	}

	doc := c.chatScreen(t, "/chat")
	got := chatHistoryIDs(doc)
	groups := chatGroups(doc)
	hxGet, href := chatMore(t, doc)
	pages := 1
	for hxGet != "" {
		if !strings.HasPrefix(hxGet, "/chat/history?before=") {
			t.Fatalf("more trigger %q", hxGet)
		}
		// Without JavaScript, the link renders the page with the sidebar there.
		if cur := strings.TrimPrefix(hxGet, "/chat/history"); href != "/chat"+cur {
			t.Fatalf("plain link %q, want /chat%s", href, cur)
		}
		res := c.htmx(http.MethodGet, hxGet, nil)
		mustStatus(t, res, http.StatusOK)
		if strings.Contains(bodyOf(res), "<html") {
			t.Fatal("the next page came as a whole document")
		}
		frag := chatDoc(t, res)
		got = append(got, chatHistoryIDs(frag)...)
		groups = append(groups, chatGroups(frag)...)
		hxGet, href = chatMore(t, frag)
		pages++
	}
	if !slices.Equal(got, want) {
		t.Fatalf("walked %v\nwant   %v", got, want)
	}
	if pages != 3 {
		t.Fatalf("%d pages of 20 for 45 exchanges", pages)
	}
	wantGroups := []string{
		"Today@" + fmt.Sprint(want[0]), "Yesterday@" + fmt.Sprint(want[25]), "Older@" + fmt.Sprint(want[42]),
	}
	if !slices.Equal(groups, wantGroups) {
		t.Fatalf("group headers %v, want %v", groups, wantGroups)
	}

	// The plain page after the first cursor starts at the 21st exchange,
	// with its group's header and a way back to the newest.
	_, href = chatMore(t, doc)
	doc = c.chatScreen(t, href)
	if ids := chatHistoryIDs(doc); len(ids) != 20 || ids[0] != want[20] {
		t.Fatalf("the ?before= page starts at %v", ids)
	}
	if g := chatGroups(doc); len(g) == 0 || g[0] != "Today@"+fmt.Sprint(want[20]) {
		t.Fatalf("the ?before= page's headers: %v", g)
	}
	if !strings.Contains(htmltest.Text(doc), "Newest conversations") {
		t.Fatal("no way back to the newest conversations")
	}
	// Without JavaScript /chat/history is that same page.
	res := c.get("/chat/history?" + url.Values{"before": {strings.TrimPrefix(href, "/chat?before=")}}.Encode())
	mustStatus(t, res, http.StatusOK)
	if ids := chatHistoryIDs(chatDoc(t, res)); len(ids) != 20 || ids[0] != want[20] {
		t.Fatalf("plain /chat/history starts at %v", ids)
	}
}

// New activity does not shift the pages: a conversation that becomes active
// while someone scrolls moves to the top, and the walk still sees each
// other conversation once.
func TestChatHistoryStableUnderActivity(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	ids := a.chatSeed(c.user.ID, 25)
	doc := c.chatScreen(t, "/chat")
	first := chatHistoryIDs(doc)
	hxGet, _ := chatMore(t, doc)
	c.chatSend(t, "new activity", ids[0]) // the oldest, on page 2, becomes the newest
	rest := chatHistoryIDs(chatDoc(t, c.htmx(http.MethodGet, hxGet, nil)))
	all := append(first, rest...)
	if len(all) != 24 || slices.Contains(all, ids[0]) {
		t.Fatalf("walk under activity: %v", all)
	}
	slices.Sort(all)
	if len(slices.Compact(all)) != 24 {
		t.Fatal("an exchange was listed twice")
	}
}

func TestChatHistoryBadCursor(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	for _, path := range []string{"/chat/history?before=!!!", "/chat?before=bm90LWEtY3Vyc29y", "/chat/history?before=MTIzLjA"} {
		mustStatus(t, c.htmx(http.MethodGet, path, nil), http.StatusBadRequest)
		mustStatus(t, c.get(path), http.StatusBadRequest)
	}
}
