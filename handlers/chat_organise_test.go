package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"palaver/internal/htmltest"
	"palaver/models"
)

// sidebarIDs lists the exchange ids of the Pinned group and of the history
// list under it.
func sidebarIDs(doc *chatNode) (pinned, others []int64) {
	if l := htmltest.ByTestID(doc, "pinned-list"); len(l) == 1 {
		pinned = chatHistoryIDs(l[0])
	}
	if l := htmltest.ByTestID(doc, "history-list"); len(l) == 1 {
		others = chatHistoryIDs(l[0])
	}
	return pinned, others
}

// Pinning moves a conversation to the Pinned group on top (out of the list
// by date), marked, and its control says retention keeps it; unpinning puts
// it back. Without JavaScript: 303 back to the chat page; htmx: the
// sidebar's lists again.
func TestChatPin(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	ids := a.chatSeed(ann.user.ID, 3)

	res := ann.postFormFrom(fmt.Sprintf("/chat/%d/pin", ids[0]), "http://example.com/chat", url.Values{"pinned": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/chat" {
		t.Fatalf("pin went to %q", loc)
	}
	doc := ann.chatScreen(t, "/chat")
	pinned, others := sidebarIDs(doc)
	if !slices.Equal(pinned, []int64{ids[0]}) || slices.Contains(others, ids[0]) || len(others) != 2 {
		t.Fatalf("pinned %v, others %v", pinned, others)
	}
	if !strings.Contains(htmltest.Text(doc), "Pinned") || len(htmltest.ByTestID(doc, "pinned-mark")) != 1 {
		t.Fatal("no Pinned header or pin mark")
	}
	item := htmltest.ByID(doc, fmt.Sprintf("history-%d", ids[0]))
	control := htmltest.ByTestID(item, "pin-exchange")[0]
	if title, _ := htmltest.Attr(control, "title"); !strings.Contains(title, "kept by retention") {
		t.Fatalf("the pin control says %q", title)
	}
	if v, _ := htmltest.Attr(control, "aria-pressed"); v != "true" {
		t.Fatal("the pin control of a pinned chat is not pressed")
	}

	// htmx: the lists again, the second one pinned too, newest first.
	res = ann.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/pin", ids[2]), url.Values{"pinned": {"1"}})
	mustStatus(t, res, http.StatusOK)
	frag := chatDoc(t, res)
	if nav := htmltest.ByID(frag, "history"); nav == nil || strings.Contains(bodyOf(res), "<html") {
		t.Fatalf("the pin's htmx answer: %s", bodyOf(res))
	}
	if pinned, others = sidebarIDs(frag); !slices.Equal(pinned, []int64{ids[2], ids[0]}) || !slices.Equal(others, []int64{ids[1]}) {
		t.Fatalf("after a second pin: pinned %v, others %v", pinned, others)
	}
	// Unpinning (a toggle without a value) puts it back among the others.
	mustStatus(t, ann.postForm(fmt.Sprintf("/chat/%d/pin", ids[2]), nil), http.StatusSeeOther)
	if pinned, others = sidebarIDs(ann.chatScreen(t, "/chat")); !slices.Equal(pinned, []int64{ids[0]}) || !slices.Equal(others, []int64{ids[2], ids[1]}) {
		t.Fatalf("after unpinning: pinned %v, others %v", pinned, others)
	}
	mustStatus(t, ann.postForm(fmt.Sprintf("/chat/%d/pin", ids[1]), url.Values{"pinned": {"yes"}}), http.StatusBadRequest)
	// A new message in a pinned chat keeps it in the Pinned group: its item
	// is replaced where it is, not moved under Today.
	res = ann.htmx(http.MethodPost, "/chat/send", url.Values{"query": {"still here?"}, "exchange_id": {fmt.Sprint(ids[0])}})
	mustStatus(t, res, http.StatusOK)
	a.waitTurns()
	sent := chatDoc(t, res)
	item = htmltest.ByID(sent, fmt.Sprintf("history-%d", ids[0]))
	if oob, _ := htmltest.Attr(item, "hx-swap-oob"); item == nil || oob != "true" || strings.Contains(bodyOf(res), "afterend:#history-group-today") {
		t.Fatalf("the send answer moves the pinned chat: %s", bodyOf(res))
	}
	// The API says the same.
	var items []struct {
		ID     int64 `json:"id"`
		Pinned bool  `json:"pinned"`
	}
	ann.apiJSON(http.MethodGet, "/api/chat/history", nil, http.StatusOK, &items)
	for _, it := range items {
		if it.Pinned != (it.ID == ids[0]) {
			t.Errorf("API item %d pinned=%v", it.ID, it.Pinned)
		}
	}
}

// Archiving takes a conversation out of the sidebar; /chat/archived lists
// it with unarchive and delete; unarchiving brings it back.
func TestChatArchive(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	ids := a.chatSeed(ann.user.ID, 3)
	a.chatSeed(bob.user.ID, 1)

	res := ann.postFormFrom(fmt.Sprintf("/chat/%d/archive", ids[0]), fmt.Sprintf("http://example.com/chat/%d", ids[1]), url.Values{"archived": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != fmt.Sprintf("/chat/%d", ids[1]) {
		t.Fatalf("archive went to %q", loc)
	}
	// htmx: the item goes where it is (hx-swap="delete" on an empty 200).
	res = ann.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/archive", ids[1]), url.Values{"archived": {"1"}})
	mustStatus(t, res, http.StatusOK)
	if b := bodyOf(res); b != "" {
		t.Fatalf("htmx archive answered %q", b)
	}
	if pinned, others := sidebarIDs(ann.chatScreen(t, "/chat")); len(pinned) != 0 || !slices.Equal(others, []int64{ids[2]}) {
		t.Fatalf("sidebar after archiving: pinned %v, others %v", pinned, others)
	}

	doc := ann.chatScreen(t, "/chat/archived")
	list := htmltest.ByTestID(doc, "archived-list")
	if len(list) != 1 || !slices.Equal(chatHistoryIDs(list[0]), []int64{ids[1], ids[0]}) {
		t.Fatalf("archived list: %v", chatHistoryIDs(doc))
	}
	item := htmltest.ByID(list[0], fmt.Sprintf("history-%d", ids[0]))
	unarchive := htmltest.ByTestID(item, "archive-exchange")
	if len(unarchive) != 1 || len(htmltest.ByTestID(item, "delete-exchange")) != 1 || len(htmltest.ByTestID(item, "pin-exchange")) != 0 {
		t.Fatal("an archived item without unarchive and delete (or with pin)")
	}
	if label, _ := htmltest.Attr(unarchive[0], "title"); label != "Unarchive" {
		t.Fatalf("the archived item's control says %q", label)
	}
	if links := htmltest.ByTestID(doc, "archived-link"); len(links) != 1 {
		t.Fatal("no link to the archived view in the sidebar")
	}
	// Bob sees none of ann's.
	if ids := chatHistoryIDs(htmltest.ByTestID(bob.chatScreen(t, "/chat/archived"), "archived-list")[0]); len(ids) != 0 {
		t.Fatalf("bob's archived list: %v", ids)
	}

	// Unarchive from the archived view: back there, and back in the sidebar.
	res = ann.postFormFrom(fmt.Sprintf("/chat/%d/archive", ids[0]), "http://example.com/chat/archived", url.Values{"archived": {"0"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/chat/archived" {
		t.Fatalf("unarchive went to %q", loc)
	}
	if _, others := sidebarIDs(ann.chatScreen(t, "/chat")); !slices.Equal(others, []int64{ids[2], ids[0]}) {
		t.Fatalf("sidebar after unarchiving: %v", others)
	}
	// An archived chat still opens, and is still the user's only.
	ann.chatScreen(t, fmt.Sprintf("/chat/%d", ids[1]))
	mustStatus(t, bob.postForm(fmt.Sprintf("/chat/%d/archive", ids[2]), nil), http.StatusNotFound)
	mustStatus(t, bob.postForm(fmt.Sprintf("/chat/%d/pin", ids[2]), nil), http.StatusNotFound)
}

// /chat/{id}?seq=N highlights the message at seq N, only it; a seq the log
// does not hold opens the conversation as usual; another user's: 404. The
// page chat panel does the same, opening the panel.
func TestChatOpenAtSeq(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.register("ann"), a.register("bob")
	id := ann.chatSend(t, "first question", 0)
	a.waitTurns()
	ann.chatSend(t, "second question", id)
	a.waitTurns()

	highlighted := func(doc *chatNode) []string {
		var out []string
		for _, m := range htmltest.FindAll(doc, func(n *chatNode) bool { v, _ := htmltest.Attr(n, "data-highlight"); return v == "true" }) {
			seq, _ := htmltest.Attr(m, "data-seq")
			testid, _ := htmltest.Attr(m, "data-testid")
			out = append(out, testid+"@"+seq)
		}
		return out
	}
	if got := highlighted(ann.chatScreen(t, fmt.Sprintf("/chat/%d?seq=2", id))); !slices.Equal(got, []string{"message@2"}) {
		t.Fatalf("highlighted %v, want the message at seq 2", got)
	}
	for _, seq := range []string{"99", "-1", "x", ""} {
		if got := highlighted(ann.chatScreen(t, fmt.Sprintf("/chat/%d?seq=%s", id, seq))); len(got) != 0 {
			t.Fatalf("?seq=%s highlighted %v", seq, got)
		}
	}
	mustStatus(t, bob.get(fmt.Sprintf("/chat/%d?seq=0", id)), http.StatusNotFound)

	pg, err := a.store.CreatePage(t.Context(), ann.user.ID, "Notes", "# Notes")
	if err != nil {
		t.Fatal(err)
	}
	pageChat := a.searchChat(ann.user.ID, models.ScopePage, &pg.ID, "about the notes", "they are short")
	mustStatus(t, ann.postForm(fmt.Sprintf("/pages/%d/panel", pg.ID), url.Values{"panel": {"closed"}}), http.StatusSeeOther)
	doc := ann.chatScreen(t, fmt.Sprintf("/pages/%d/chat/%d?seq=1", pg.ID, pageChat))
	if len(htmltest.ByTestID(doc, "page-chat")) != 1 {
		t.Fatal("the panel stayed closed")
	}
	if got := highlighted(doc); !slices.Equal(got, []string{"message@1"}) {
		t.Fatalf("page chat highlighted %v", got)
	}
	mustStatus(t, bob.get(fmt.Sprintf("/pages/%d/chat/%d?seq=1", pg.ID, pageChat)), http.StatusNotFound)
	// A title hit (no seq) opens the closed panel too, nothing highlighted.
	mustStatus(t, ann.postForm(fmt.Sprintf("/pages/%d/panel", pg.ID), url.Values{"panel": {"closed"}}), http.StatusSeeOther)
	doc = ann.chatScreen(t, fmt.Sprintf("/pages/%d/chat/%d", pg.ID, pageChat))
	if len(htmltest.ByTestID(doc, "page-chat")) != 1 || len(highlighted(doc)) != 0 {
		t.Fatal("a page chat opened without seq: panel closed or something highlighted")
	}
}
