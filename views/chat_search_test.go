package views

import (
	"strings"
	"testing"

	"golang.org/x/net/html"

	"palaver/internal/htmltest"
)

// A hit renders the store's snippet as HTML (its <mark>s), everything else
// as text, and links to the message.
func TestSearchResultsView(t *testing.T) {
	r := SearchResults{Query: "<b>otter</b>", Next: "/chat/search?q=otter&before=abc", Hits: []SearchHit{{
		URL: "/chat/4?seq=2", Title: "<i>Otters</i>", Snippet: "the &lt;b&gt; <mark>otter</mark> swims",
		Role: "You", When: "5 min ago", WhenFull: "2026-12-03T07:00:00Z",
	}}}
	raw, doc := htmltest.Render(t, SearchResultsView(r))
	hit := htmltest.One(t, doc, "search-hit")
	htmltest.MustAttr(t, hit, "href", "/chat/4?seq=2")
	if got := htmltest.Text(htmltest.One(t, hit, "search-hit-title")); got != "<i>Otters</i>" {
		t.Fatalf("title %q", got)
	}
	marks := htmltest.ByTag(hit, "mark")
	if len(marks) != 1 || htmltest.Text(marks[0]) != "otter" || len(htmltest.ByTag(hit, "b")) != 0 || len(htmltest.ByTag(hit, "i")) != 0 {
		t.Fatalf("snippet markup: %s", raw)
	}
	if got := htmltest.Text(htmltest.One(t, hit, "search-snippet")); got != "the <b> otter swims" {
		t.Fatalf("snippet text %q", got)
	}
	more := htmltest.One(t, doc, "search-more")
	htmltest.MustAttr(t, more, "href", r.Next)
	htmltest.MustAttr(t, more, "hx-get", r.Next)

	// A next batch is the hits alone; a refusal is its message, no hits.
	r.More = true
	if raw, _ := htmltest.Render(t, SearchResultsView(r)); strings.Contains(raw, "search-list") {
		t.Fatalf("a next page with its list: %s", raw)
	}
	_, doc = htmltest.Render(t, SearchResultsView(SearchResults{Query: "x", Error: "Too long."}))
	if htmltest.Text(htmltest.One(t, doc, "search-error")) != "Too long." || len(htmltest.ByTestID(doc, "search-hit")) != 0 {
		t.Fatal("a refused search")
	}
}

// The sidebar's search box searches as the person types (htmx) and is a
// plain GET form without JavaScript; the Pinned group comes first, its items
// marked, their control saying retention keeps them.
func TestSidebarSearchAndPinned(t *testing.T) {
	p := ChatScreen{Base: testBase(), Sidebar: Sidebar{
		Pinned:  []HistoryItem{{ID: 1, Title: "Kept", Pinned: true, CSRF: "tok123"}},
		History: HistoryList{Items: []HistoryItem{{ID: 2, Title: "Other", Group: GroupToday, CSRF: "tok123"}}},
	}}
	_, doc := htmltest.Render(t, Chat(p))
	box := htmltest.One(t, doc, "history-search")
	htmltest.MustAttr(t, box, "type", "search")
	htmltest.MustAttr(t, box, "name", "q")
	htmltest.MustAttr(t, box, "hx-get", "/chat/search")
	htmltest.MustAttr(t, box, "hx-trigger", "input changed delay:250ms, search")
	htmltest.MustAttr(t, box, "hx-sync", "this:replace")
	htmltest.MustAttr(t, box, "hx-target", "#search-results")
	form := box.Parent
	htmltest.MustAttr(t, form, "action", "/chat/search")
	htmltest.MustAttr(t, form, "method", "get")

	pinned := htmltest.One(t, doc, "pinned-list")
	items := htmltest.ByTestID(pinned, "history-item")
	if len(items) != 1 || len(htmltest.ByTestID(items[0], "pinned-mark")) != 1 {
		t.Fatal("the Pinned group")
	}
	pin := htmltest.One(t, items[0], "pin-exchange")
	if title, _ := htmltest.Attr(pin, "title"); !strings.Contains(title, "kept by retention") {
		t.Fatalf("pin control title %q", title)
	}
	if v, _ := htmltest.FormValue(pin.Parent, "pinned"); v != "0" {
		t.Fatalf("a pinned item's control posts pinned=%q", v)
	}
	other := htmltest.ByTestID(htmltest.One(t, doc, "history-list"), "history-item")
	if len(other) != 1 || len(htmltest.ByTestID(other[0], "pinned-mark")) != 0 {
		t.Fatal("the list under the Pinned group")
	}
	archive := htmltest.One(t, other[0], "archive-exchange")
	if v, _ := htmltest.FormValue(archive.Parent, "archived"); v != "1" {
		t.Fatalf("archive posts archived=%q", v)
	}
	if m, _ := htmltest.Attr(archive.Parent, "method"); m != "post" {
		t.Fatal("archive is not a post form")
	}
	// The Pinned group is above the list.
	var order []string
	for _, n := range htmltest.FindAll(doc, func(n *html.Node) bool {
		v, _ := htmltest.Attr(n, "data-testid")
		return v == "pinned-list" || v == "history-list"
	}) {
		v, _ := htmltest.Attr(n, "data-testid")
		order = append(order, v)
	}
	if strings.Join(order, ",") != "pinned-list,history-list" {
		t.Fatalf("order %v", order)
	}
}
