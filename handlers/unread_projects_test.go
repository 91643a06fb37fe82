package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"palaver/internal/htmltest"
)

// projectUnread is the sidebar's count of unread conversations on the
// project (0: no count shown), as the page or a live frame draws it.
func projectUnread(t *testing.T, page string, projectID int64) int {
	t.Helper()
	doc := htmltest.Parse(t, page)
	for _, it := range htmltest.ByTestID(doc, "project-item") {
		if id, _ := htmltest.Attr(it, "data-project-id"); id != fmt.Sprint(projectID) {
			continue
		}
		n := htmltest.ByTestID(it, "project-unread")
		if len(n) == 0 {
			return 0
		}
		var count int
		fmt.Sscan(mustAttr(n[0], "data-count"), &count)
		return count
	}
	t.Fatalf("project %d is not in the sidebar", projectID)
	return 0
}

// A project's item in the sidebar counts its unread conversations: two
// replies that finished unseen count 2 (another project's and a chat in no
// project count elsewhere or not at all); opening one takes the count to
// 1 in another tab, live; a reply finishing there while no tab shows it
// brings it back to 2, live; mark all read clears it.
func TestUnreadCountOnProjects(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	alice := a.register("alice")
	var work, home struct {
		ID int64 `json:"id"`
	}
	alice.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Work"}, http.StatusCreated, &work)
	alice.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Home"}, http.StatusCreated, &home)
	chat := func(query string, project int64) int64 {
		var out apiChatOut
		alice.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": query, "project_id": project}, http.StatusOK, &out)
		return *out.ExchangeID
	}
	one, two := chat("hello", work.ID), chat("hello there", work.ID)
	three := chat("hi", home.ID)
	loose := *alice.apiChat("hey there", 0).ExchangeID
	for _, ex := range []int64{one, two, three, loose} {
		waitUnread(t, alice, ex, true)
	}

	page := bodyOf(alice.get("/chat"))
	if w, h := projectUnread(t, page, work.ID), projectUnread(t, page, home.ID); w != 2 || h != 1 {
		t.Fatalf("the sidebar counts %d unread in Work and %d in Home, want 2 and 1", w, h)
	}

	// Tab B shows the loose chat; opening one of Work's elsewhere: Work 1.
	b := alice.openTab(t, addr)
	b.watch(loose, 1)
	a.waitSubscribers(1)
	b.read()
	alice.get(fmt.Sprintf("/chat/%d", one))
	b.readUntil("Work's count", func() bool { return strings.Contains(last(b.frames), `id="project-nav"`) })
	if n := projectUnread(t, last(b.frames), work.ID); n != 1 {
		t.Fatalf("B's Work count after one was opened: %d, want 1", n)
	}

	// A reply in it while nothing shows it: Work 2 again, live.
	alice.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": "hello again", "exchange_id": one}, http.StatusOK, nil)
	b.readUntil("Work's count back to 2", func() bool {
		f := last(b.frames)
		return strings.Contains(f, `id="project-nav"`) && projectUnread(t, f, work.ID) == 2
	})

	// Mark all read: no project counts any.
	mustStatus(t, alice.postForm("/chat/read-all", nil), http.StatusSeeOther)
	page = bodyOf(alice.get(fmt.Sprintf("/chat/%d", loose)))
	if w, h := projectUnread(t, page, work.ID), projectUnread(t, page, home.ID); w != 0 || h != 0 {
		t.Fatalf("after mark all read: Work %d, Home %d", w, h)
	}
}
