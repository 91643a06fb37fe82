package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/fasthttp/websocket"
	"golang.org/x/net/html"

	"palaver/internal/htmltest"
	"palaver/paths"
)

// Deletions reach the user's other tabs (issue 11): a deleted branch leaves
// the family's sidebar item (now showing another branch, one branch fewer)
// and the switchers of the branch on screen; a tab showing the deleted
// conversation itself is told.

// watchShowing is watch from a tab whose page shows switchers on the
// entries at seqs (as app.js reports them).
func (l *liveTab) watchShowing(exchangeID, since int64, seqs ...int64) {
	l.t.Helper()
	list := make([]string, len(seqs))
	for i, s := range seqs {
		list[i] = strconv.FormatInt(s, 10)
	}
	msg := fmt.Sprintf(`{"type":"watch","exchange_id":%d,"since":%d,"switches":[%s]}`, exchangeID, since, strings.Join(list, ","))
	if err := l.conn.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		l.t.Fatalf("send watch: %v", err)
	}
	// Taken by the server a moment later: what happens before then is
	// not the shown chat's to hear.
	l.c.a.waitWatching(l.c.user.ID, exchangeID)
}

// lastDoc is the tab's last message, parsed.
func (l *liveTab) lastDoc() *html.Node {
	l.t.Helper()
	if len(l.frames) == 0 {
		return nil
	}
	doc, err := html.Parse(strings.NewReader(l.frames[len(l.frames)-1]))
	if err != nil {
		l.t.Fatal(err)
	}
	return doc
}

// liveSwitcher is the out-of-band swap of the switcher of entry messageID
// in doc (nil: none).
func liveSwitcher(doc *html.Node, messageID int64) *html.Node {
	want := "branch-switch-" + strconv.FormatInt(messageID, 10)
	for _, n := range htmltest.FindAll(doc, func(n *html.Node) bool { id, _ := htmltest.Attr(n, "id"); return id == want }) {
		if oob, _ := htmltest.Attr(n, "hx-swap-oob"); oob == "true" {
			return n
		}
	}
	return nil
}

// liveFamilyItem is the sidebar item in doc that replaces the family's
// items in the unpinned list (nil: none), and the branch count it shows
// (0: none shown).
func liveFamilyItem(doc *html.Node, family int64) (*html.Node, string) {
	want := fmt.Sprintf(`outerHTML:#history-items > [data-family="%d"]`, family)
	for _, it := range htmltest.ByTestID(doc, "history-item") {
		if oob, _ := htmltest.Attr(it, "hx-swap-oob"); oob == want {
			count := ""
			if b := htmltest.ByTestID(it, "history-branches"); len(b) == 1 {
				count = htmltest.Text(b[0])
			}
			return it, count
		}
	}
	return nil, ""
}

// liveRemoved says whether doc removes the sidebar item of exchange id.
func liveRemoved(doc *html.Node, id int64) bool {
	want := "history-" + strconv.FormatInt(id, 10)
	for _, n := range htmltest.FindAll(doc, func(n *html.Node) bool { i, _ := htmltest.Attr(n, "id"); return i == want }) {
		if oob, _ := htmltest.Attr(n, "hx-swap-oob"); oob == "delete" {
			return true
		}
	}
	return false
}

// A tab shows a conversation with two other branches at its first message.
// One is deleted through the API, the other with the sidebar's control in
// another tab: each time the tab's switcher (alone, not the entry) and the
// family's item follow, the deleted branch's item goes, and the tab is not
// told its own conversation went.
func TestLiveBranchDeletedElsewhere(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	api := a.apiClient("ann")
	id := ann.chatSend(t, "first question", 0)
	first := a.chatMsgAt(ann.user.ID, id, 0)
	var forks []int64
	for _, q := range []string{"second question", "third question"} {
		res := ann.htmx(http.MethodPost, paths.MessageEdit(first), url.Values{"query": {q}})
		mustStatus(t, res, http.StatusOK)
		forks = append(forks, chatLocationID(t, res.Header.Get("HX-Push-Url")))
		a.waitTurns()
	}
	ann.chatScreen(t, paths.Chat(id)) // the other tab is back on the root
	tab := ann.openTab(t, addr)
	tab.watchShowing(id, 1, 0)

	res, body := api.api(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", forks[1]), nil)
	mustStatus(t, res, http.StatusOK)
	var doc *html.Node
	tab.readUntil("the first deletion", func() bool {
		doc = tab.lastDoc()
		return doc != nil && liveRemoved(doc, forks[1])
	})
	sw := liveSwitcher(doc, first)
	if sw == nil || len(htmltest.ByTestID(sw, "branch-switch")) != 1 || !strings.Contains(htmltest.Text(sw), "1 / 2") {
		t.Fatalf("the switcher did not become 1 / 2: %s (api said %s)", tab.frames[len(tab.frames)-1], body)
	}
	if len(htmltest.ByTestID(doc, "message")) != 0 {
		t.Fatalf("the entry itself was sent again: %s", tab.frames[len(tab.frames)-1])
	}
	it, count := liveFamilyItem(doc, id)
	if it == nil || count != "2 branches" {
		t.Fatalf("the family's item is %v with %q, want it with 2 branches: %s", it, count, tab.frames[len(tab.frames)-1])
	}
	if ex, _ := htmltest.Attr(it, "data-exchange-id"); ex != strconv.FormatInt(id, 10) {
		t.Fatalf("the family's item shows %s, want the branch on screen %d", ex, id)
	}
	if len(htmltest.ByTestID(doc, "chat-deleted")) != 0 {
		t.Fatal("the tab was told its conversation went")
	}

	// The sidebar's delete control, in another tab (the session's).
	res = ann.htmx(http.MethodPost, paths.ChatDelete(forks[0]), url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusOK)
	tab.readUntil("the second deletion", func() bool {
		doc = tab.lastDoc()
		return liveRemoved(doc, forks[0])
	})
	sw = liveSwitcher(doc, first)
	if sw == nil || len(htmltest.ByTestID(sw, "branch-switch")) != 0 {
		t.Fatalf("the switcher was not taken away: %s", tab.frames[len(tab.frames)-1])
	}
	if it, count := liveFamilyItem(doc, id); it == nil || count != "" {
		t.Fatalf("the family's item is %v with %q, want it without a count: %s", it, count, tab.frames[len(tab.frames)-1])
	}
}

// The root of a family goes while a tab shows its fork: the family's item
// (known by the old root) now shows the fork, the family's root, and the
// fork's switcher goes.
func TestLiveRootDeletedUnderItsFork(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	api := a.apiClient("ann")
	id := ann.chatSend(t, "first question", 0)
	res := ann.htmx(http.MethodPost, paths.MessageEdit(a.chatMsgAt(ann.user.ID, id, 0)), url.Values{"query": {"other question"}})
	mustStatus(t, res, http.StatusOK)
	fork := chatLocationID(t, res.Header.Get("HX-Push-Url"))
	a.waitTurns()
	tab := ann.openTab(t, addr)
	tab.watchShowing(fork, 1, 0)

	res, _ = api.api(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", id), nil)
	mustStatus(t, res, http.StatusOK)
	var doc *html.Node
	tab.readUntil("the root's deletion", func() bool {
		doc = tab.lastDoc()
		return doc != nil && liveRemoved(doc, id)
	})
	it, count := liveFamilyItem(doc, id)
	if it == nil || count != "" {
		t.Fatalf("the family's item: %v %q: %s", it, count, tab.frames[len(tab.frames)-1])
	}
	if ex, _ := htmltest.Attr(it, "data-exchange-id"); ex != strconv.FormatInt(fork, 10) {
		t.Fatalf("the family's item shows %s, want the fork %d", ex, fork)
	}
	if fam, _ := htmltest.Attr(it, "data-family"); fam != strconv.FormatInt(fork, 10) {
		t.Fatalf("the family is now known by %s, want its new root %d", fam, fork)
	}
	if sw := liveSwitcher(doc, a.chatMsgAt(ann.user.ID, fork, 0)); sw == nil || len(htmltest.ByTestID(sw, "branch-switch")) != 0 {
		t.Fatalf("the fork's switcher was not taken away: %s", tab.frames[len(tab.frames)-1])
	}
}

// A conversation deleted elsewhere: the tab showing it is told, and its
// composer sends to a new chat; another tab only loses its sidebar item.
// Nobody else hears of it.
func TestLiveDeletedChatTellsItsTab(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	bob := a.register("bob")
	api := a.apiClient("ann")
	gone := ann.chatSend(t, "soon gone", 0)
	kept := ann.chatSend(t, "kept", 0)
	bobs := bob.chatSend(t, "bob's", 0)
	a.waitTurns()
	showing, other, stranger := ann.openTab(t, addr), ann.openTab(t, addr), bob.openTab(t, addr)
	showing.watch(gone, 1)
	other.watch(kept, 1)
	stranger.watch(bobs, 1)
	// Each watch is answered with its chat's sidebar item: once read, the
	// watches are taken, and the deletion cannot overtake them.
	for _, tab := range []*liveTab{showing, other, stranger} {
		tab.read()
	}

	res, _ := api.api(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", gone), nil)
	mustStatus(t, res, http.StatusOK)
	var doc *html.Node
	showing.readUntil("the notice", func() bool {
		doc = showing.lastDoc()
		return doc != nil && len(htmltest.ByTestID(doc, "chat-deleted")) == 1
	})
	if !liveRemoved(doc, gone) {
		t.Fatalf("its sidebar item stays: %s", showing.frames[len(showing.frames)-1])
	}
	exchange := htmltest.FindAll(doc, func(n *html.Node) bool { id, _ := htmltest.Attr(n, "id"); return id == "composer-exchange" })
	if len(exchange) != 1 {
		t.Fatalf("the composer's exchange was not reset: %s", showing.frames[len(showing.frames)-1])
	}
	if v, _ := htmltest.Attr(exchange[0], "value"); v != "0" {
		t.Fatalf("the composer now sends to %q, want a new chat", v)
	}
	other.readUntil("the removal", func() bool {
		doc = other.lastDoc()
		return doc != nil && liveRemoved(doc, gone)
	})
	if len(htmltest.ByTestID(doc, "chat-deleted")) != 0 {
		t.Fatal("a tab on another conversation was told it went")
	}
	// Bob's tab hears nothing: a message of his own comes first.
	bob.chatSend(t, "bob again", bobs)
	a.waitTurns()
	stranger.readUntil("bob's own entries", func() bool { return len(stranger.entries) >= 2 })
	for _, f := range stranger.frames {
		if strings.Contains(f, "history-"+strconv.FormatInt(gone, 10)) || strings.Contains(f, "chat-deleted") {
			t.Fatalf("another user's tab heard of the deletion: %s", f)
		}
	}
}

// The branch a tab shows is deleted: the tab is told, and the family stays
// in its sidebar, shown by the branch that is left.
func TestLiveShownBranchDeletedLeavesItsFamily(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	api := a.apiClient("ann")
	id := ann.chatSend(t, "first question", 0)
	res := ann.htmx(http.MethodPost, paths.MessageEdit(a.chatMsgAt(ann.user.ID, id, 0)), url.Values{"query": {"other question"}})
	mustStatus(t, res, http.StatusOK)
	fork := chatLocationID(t, res.Header.Get("HX-Push-Url"))
	a.waitTurns()
	tab := ann.openTab(t, addr)
	tab.watchShowing(fork, 1, 0)

	res, _ = api.api(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", fork), nil)
	mustStatus(t, res, http.StatusOK)
	var doc *html.Node
	tab.readUntil("the notice", func() bool {
		doc = tab.lastDoc()
		return doc != nil && len(htmltest.ByTestID(doc, "chat-deleted")) == 1
	})
	it, count := liveFamilyItem(doc, id)
	if it == nil || count != "" {
		t.Fatalf("the family's item: %v %q: %s", it, count, tab.frames[len(tab.frames)-1])
	}
	if ex, _ := htmltest.Attr(it, "data-exchange-id"); ex != strconv.FormatInt(id, 10) {
		t.Fatalf("the family's item shows %s, want the branch left %d", ex, id)
	}
	if _, current := htmltest.Attr(it, "data-current"); current {
		t.Fatal("the branch left is marked as the one on screen")
	}
}
