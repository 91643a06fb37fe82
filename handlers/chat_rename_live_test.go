package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"palaver/internal/htmltest"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestRenameFollowsLiveInEveryTab renames a conversation in one tab's
// sidebar: every tab showing it (this browser's two, another device's)
// gets the new name above the transcript, for the browser tab's title and
// on the composer, rendered as a reload renders it.
func TestRenameFollowsLiveInEveryTab(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann := a.register("ann")
	id := ann.chatSend(t, "plan the trip", 0)
	other := ann.chatSend(t, "something else", 0)
	phone := a.anon()
	phone.get("/login")
	mustStatus(t, phone.postForm("/login", url.Values{"username": {"ann"}, "password": {"correct horse"}}), http.StatusSeeOther)

	last := int64(1) // both logs hold seqs 0 and 1
	one, two, away, elsewhere := ann.openTab(t, addr), ann.openTab(t, addr), phone.openTab(t, addr), ann.openTab(t, addr)
	for _, tab := range []*liveTab{one, two, away} {
		tab.watch(id, last)
	}
	elsewhere.watch(other, last)
	for _, tab := range []*liveTab{one, two, away, elsewhere} {
		tab.readUntil("the turn state", func() bool { return tab.turn != "" })
	}

	ann.get(fmt.Sprintf("/chat/%d", id))
	mustStatus(t, ann.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/rename", id), url.Values{"title": {"Lisbon in May"}}), http.StatusOK)

	for _, tc := range []struct {
		name string
		tab  *liveTab
		c    *client // whose reload it is compared with (the CSRF token is the session's)
	}{{"the renaming tab", one, ann}, {"a second tab", two, ann}, {"another device", away, phone}} {
		var title, composer *html.Node
		tc.tab.readUntil("the new name", func() bool {
			for _, f := range tc.tab.frames {
				doc, err := html.Parse(strings.NewReader(f))
				if err != nil {
					t.Fatal(err)
				}
				if title = htmltest.ByID(doc, "chat-title"); title != nil {
					composer = htmltest.ByID(doc, "composer-continuing")
					return true
				}
			}
			return false
		})
		if got, _ := htmltest.Attr(title, "data-document-title"); htmltest.Text(title) != "Lisbon in May" || got != "Lisbon in May · Palaver" {
			t.Errorf("%s: the heading says %q, the tab's title %q", tc.name, htmltest.Text(title), got)
		}
		if composer == nil || !strings.Contains(htmltest.Text(composer), "Continuing “Lisbon in May”") {
			t.Fatalf("%s: the composer says %v", tc.name, composer)
		}
		// As a reload draws them, but for the out-of-band swap itself.
		loaded := tc.c.chatScreen(t, fmt.Sprintf("/chat/%d", id))
		for _, part := range []struct {
			id   string
			live *html.Node
		}{{"chat-title", title}, {"composer-continuing", composer}} {
			live := strings.Replace(chatOuterHTML(t, part.live), ` hx-swap-oob="true"`, "", 1)
			if reload := chatOuterHTML(t, htmltest.ByID(loaded, part.id)); live != reload {
				t.Errorf("%s: live and reloaded #%s differ\nlive:     %s\nreloaded: %s", tc.name, part.id, live, reload)
			}
		}
	}
	// The tab on another conversation keeps its own name.
	elsewhere.readUntil("the sidebar item", func() bool { return len(elsewhere.history) > 0 })
	if f := strings.Join(elsewhere.frames, ""); strings.Contains(f, `id="chat-title"`) {
		t.Errorf("a tab on another conversation got a heading: %s", f)
	}
}
