package handlers_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"palaver/internal/htmltest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"palaver/agents"
)

// TestStoppedReplyIsMarkedLiveAndAfterReload stops a reply being written
// and finds the "Stopped" mark on it in the live tab's fragment and on the
// page loaded afterwards, rendered alike: without it a cut-off reply just
// ends, as if it were whole.
func TestStoppedReplyIsMarkedLiveAndAfterReload(t *testing.T) {
	a := newTestApp(t, withChatProvider(&agents.Builtin{Delay: 30 * time.Millisecond}))
	addr := a.listen()
	ann := a.register("ann")
	mustStatus(t, ann.htmx(http.MethodPost, "/chat/send", url.Values{"query": {"write me a long answer"}}), http.StatusOK)
	var items []apiHistoryOut
	ann.apiJSON(http.MethodGet, "/api/chat/history", nil, http.StatusOK, &items)
	if len(items) != 1 {
		t.Fatalf("history %+v, want the one chat", items)
	}
	ex := items[0].ID
	tab := ann.openTab(t, addr)
	tab.watch(ex, -1)
	tab.readUntil("the reply being written", func() bool { return tab.deltas.Len() > 0 })
	mustStatus(t, ann.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/stop", ex), url.Values{}), http.StatusNoContent)

	reply := fmt.Sprintf("msg-%d", a.chatReply(ann.user.ID, ex))
	tab.readUntil("the stopped reply", func() bool { return strings.Contains(strings.Join(tab.entries, ","), reply) })
	var live *html.Node
	for _, f := range tab.frames {
		doc, err := html.Parse(strings.NewReader(f))
		if err != nil {
			t.Fatal(err)
		}
		if n := htmltest.ByID(doc, reply); n != nil {
			live = n
		}
	}
	loaded := htmltest.ByID(ann.chatScreen(t, fmt.Sprintf("/chat/%d", ex)), reply)
	if live == nil || loaded == nil {
		t.Fatalf("the reply %s: live %v, loaded %v", reply, live != nil, loaded != nil)
	}
	for what, n := range map[string]*html.Node{"live": live, "reloaded": loaded} {
		if marks := htmltest.ByTestID(n, "stopped"); len(marks) != 1 || htmltest.Text(marks[0]) != "Stopped" {
			t.Errorf("the %s reply has %d Stopped marks: %s", what, len(marks), chatOuterHTML(t, n))
		}
	}
	if l, r := chatOuterHTML(t, live), chatOuterHTML(t, loaded); l != r {
		t.Errorf("the stopped reply renders differently\nlive:     %s\nreloaded: %s", l, r)
	}

	// A reply that ran to its end carries no mark.
	id := ann.chatSend(t, "and a short one", ex)
	doc := ann.chatScreen(t, fmt.Sprintf("/chat/%d", id))
	if n := len(htmltest.ByTestID(doc, "stopped")); n != 1 {
		t.Errorf("%d Stopped marks after a whole reply, want the stopped one's alone", n)
	}
}

// chatOuterHTML renders a node as HTML.
func chatOuterHTML(t *testing.T, n *html.Node) string {
	t.Helper()
	var b bytes.Buffer
	if err := html.Render(&b, n); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
