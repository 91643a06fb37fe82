package views

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// A hit renders the store's snippet as HTML (its <mark>s), everything else
// as text, and links to the message.
func TestSearchResultsView(t *testing.T) {
	r := SearchResults{Query: "<b>otter</b>", Next: "/chat/search?q=otter&before=abc", Hits: []SearchHit{{
		URL: "/chat/4?seq=2", Title: "<i>Otters</i>", Snippet: "the &lt;b&gt; <mark>otter</mark> swims",
		Role: "You", When: "5 min ago", WhenFull: "2026-12-03T07:00:00Z",
	}}}
	raw, doc := renderHTML(t, SearchResultsView(r))
	hit := one(t, doc, "search-hit")
	mustAttr(t, hit, "href", "/chat/4?seq=2")
	if got := textOf(one(t, hit, "search-hit-title")); got != "<i>Otters</i>" {
		t.Fatalf("title %q", got)
	}
	marks := byTag(hit, "mark")
	if len(marks) != 1 || textOf(marks[0]) != "otter" || len(byTag(hit, "b")) != 0 || len(byTag(hit, "i")) != 0 {
		t.Fatalf("snippet markup: %s", raw)
	}
	if got := textOf(one(t, hit, "search-snippet")); got != "the <b> otter swims" {
		t.Fatalf("snippet text %q", got)
	}
	more := one(t, doc, "search-more")
	mustAttr(t, more, "href", r.Next)
	mustAttr(t, more, "hx-get", r.Next)

	// A next batch is the hits alone; a refusal is its message, no hits.
	r.More = true
	if raw, _ := renderHTML(t, SearchResultsView(r)); strings.Contains(raw, "search-list") {
		t.Fatalf("a next page with its list: %s", raw)
	}
	_, doc = renderHTML(t, SearchResultsView(SearchResults{Query: "x", Error: "Too long."}))
	if textOf(one(t, doc, "search-error")) != "Too long." || len(byTestID(doc, "search-hit")) != 0 {
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
	_, doc := renderHTML(t, Chat(p))
	box := one(t, doc, "history-search")
	mustAttr(t, box, "type", "search")
	mustAttr(t, box, "name", "q")
	mustAttr(t, box, "hx-get", "/chat/search")
	mustAttr(t, box, "hx-trigger", "input changed delay:250ms, search")
	mustAttr(t, box, "hx-sync", "this:replace")
	mustAttr(t, box, "hx-target", "#search-results")
	form := box.Parent
	mustAttr(t, form, "action", "/chat/search")
	mustAttr(t, form, "method", "get")

	pinned := one(t, doc, "pinned-list")
	items := byTestID(pinned, "history-item")
	if len(items) != 1 || len(byTestID(items[0], "pinned-mark")) != 1 {
		t.Fatal("the Pinned group")
	}
	pin := one(t, items[0], "pin-exchange")
	if title, _ := attr(pin, "title"); !strings.Contains(title, "kept by retention") {
		t.Fatalf("pin control title %q", title)
	}
	if v, _ := formValue(pin.Parent, "pinned"); v != "0" {
		t.Fatalf("a pinned item's control posts pinned=%q", v)
	}
	other := byTestID(one(t, doc, "history-list"), "history-item")
	if len(other) != 1 || len(byTestID(other[0], "pinned-mark")) != 0 {
		t.Fatal("the list under the Pinned group")
	}
	archive := one(t, other[0], "archive-exchange")
	if v, _ := formValue(archive.Parent, "archived"); v != "1" {
		t.Fatalf("archive posts archived=%q", v)
	}
	if m, _ := attr(archive.Parent, "method"); m != "post" {
		t.Fatal("archive is not a post form")
	}
	// The Pinned group is above the list.
	var order []string
	for _, n := range findAll(doc, func(n *html.Node) bool {
		v, _ := attr(n, "data-testid")
		return v == "pinned-list" || v == "history-list"
	}) {
		v, _ := attr(n, "data-testid")
		order = append(order, v)
	}
	if strings.Join(order, ",") != "pinned-list,history-list" {
		t.Fatalf("order %v", order)
	}
}
