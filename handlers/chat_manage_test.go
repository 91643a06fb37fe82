package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"palaver/internal/htmltest"
	"palaver/models"
)

func TestChatRenameNoJS(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "first words", 0)
	self := fmt.Sprintf("/chat/%d", id)
	for _, tc := range []struct {
		name, referer, want string
	}{
		{"back to the page", "http://example.com/chat?before=abc%2B", "/chat?before=abc%2B"},
		{"back to the conversation", "http://example.com" + self, self},
		{"no referer", "", self},
		{"foreign site", "http://evil.test/chat", self},
		{"not a chat page", "http://example.com/chat/1/delete", self},
		{"path tricks", "http://example.com/chat/../admin", self},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := c.postFormFrom(self+"/rename", tc.referer, url.Values{"title": {"  Trip plans " + tc.name + "  "}})
			mustStatus(t, res, http.StatusSeeOther)
			if loc := res.Header.Get("Location"); loc != tc.want {
				t.Fatalf("redirect to %q, want %q", loc, tc.want)
			}
			ex, err := a.store.Exchange(context.Background(), c.user.ID, id)
			if err != nil || ex.Title != "Trip plans "+tc.name {
				t.Fatalf("title %q (%v)", ex.Title, err)
			}
		})
	}
	doc := c.chatScreen(t, self)
	if got := htmltest.Text(htmltest.ByTestID(doc, "history-title")[0]); got != "Trip plans path tricks" {
		t.Fatalf("history shows %q", got)
	}
	if got := htmltest.Text(htmltest.ByTestID(doc, "chat-title")[0]); got != "Trip plans path tricks" {
		t.Fatalf("title shows %q", got)
	}
}

func TestChatRenameRefused(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "first words", 0)
	for _, title := range []string{"", "   ", strings.Repeat("é", 201)} {
		before := a.chatSnapshot()
		res := c.postForm(fmt.Sprintf("/chat/%d/rename", id), url.Values{"title": {title}})
		mustStatus(t, res, http.StatusUnprocessableEntity)
		if !strings.Contains(bodyOf(res), "A title needs 1 to 200 characters") {
			t.Fatal("no clear message for a bad title")
		}
		res = c.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/rename", id), url.Values{"title": {title}})
		mustStatus(t, res, http.StatusUnprocessableEntity)
		if !chatHTMXAlert.MatchString(bodyOf(res)) {
			t.Fatal("htmx gets no alert")
		}
		if a.chatSnapshot() != before {
			t.Fatalf("title %q changed something", title)
		}
	}
	// 200 characters is fine.
	mustStatus(t, c.postForm(fmt.Sprintf("/chat/%d/rename", id), url.Values{"title": {strings.Repeat("é", 200)}}), http.StatusSeeOther)
}

func TestChatRenameHTMX(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "first words", 0)
	before, err := a.store.Exchange(context.Background(), c.user.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	res := c.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/rename", id), url.Values{"title": {"<i>New</i> name"}})
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	items := htmltest.ByTestID(doc, "history-item")
	if len(items) != 1 || chatIDOf(items[0]) != fmt.Sprintf("history-%d", id) {
		t.Fatalf("rename fragment is not the item: %s", bodyOf(res))
	}
	if got := htmltest.Text(htmltest.ByTestID(items[0], "history-title")[0]); got != "<i>New</i> name" {
		t.Fatalf("item title %q", got)
	}
	if v, _ := htmltest.Attr(items[0], "data-current"); v != "true" {
		t.Fatal("the renamed current item lost its highlight")
	}
	if len(htmltest.FindAll(doc, func(n *chatNode) bool { return n.Data == "i" })) != 0 {
		t.Fatal("the title became markup")
	}
	after, _ := a.store.Exchange(context.Background(), c.user.ID, id)
	if !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatal("renaming counted as activity: the history order changed")
	}
}

func TestChatDeleteNoJS(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	keep := c.chatSend(t, "keep me", 0)
	mustStatus(t, c.postForm("/chat/new", nil), http.StatusSeeOther)
	gone := c.chatSend(t, "delete me", 0)
	path := fmt.Sprintf("/chat/%d/delete", gone)

	// Unconfirmed: a confirmation page, nothing deleted.
	before := a.chatSnapshot()
	res := c.postForm(path, nil)
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	confirm := htmltest.ByTestID(doc, "confirm")
	if len(confirm) != 1 {
		t.Fatal("no confirmation button")
	}
	form := confirm[0].Parent
	if action, _ := htmltest.Attr(form, "action"); action != path {
		t.Fatalf("confirmation posts to %q", action)
	}
	if chatFormValue(form, "confirmed") != "1" || chatFormValue(form, "csrf_token") == "" {
		t.Fatal("confirmation form lacks confirmed=1 or the CSRF token")
	}
	if !strings.Contains(htmltest.Text(doc), "delete me") {
		t.Fatal("the confirmation does not name the conversation")
	}
	if a.chatSnapshot() != before {
		t.Fatal("an unconfirmed delete changed something")
	}

	// Confirmed: gone, and being the current one, /chat is a new chat.
	res = c.postForm(path, url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/chat" {
		t.Fatalf("after delete: %q", loc)
	}
	if _, err := a.store.Exchange(context.Background(), c.user.ID, gone); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("exchange still there: %v", err)
	}
	doc = c.chatScreen(t, "/chat")
	if len(chatTranscript(doc)) != 0 || chatComposerExchange(t, doc) != "0" {
		t.Fatal("/chat still shows the deleted conversation")
	}
	if got := chatHistoryIDs(doc); len(got) != 1 || got[0] != keep {
		t.Fatalf("history %v, want [%d]", got, keep)
	}
	mustStatus(t, c.get(fmt.Sprintf("/chat/%d", gone)), http.StatusNotFound)
}

func TestChatDeleteHTMX(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	other := c.chatSend(t, "other", 0)
	mustStatus(t, c.postForm("/chat/new", nil), http.StatusSeeOther)
	open := c.chatSend(t, "open one", 0)

	// Not the open one: the item goes, the page stays.
	res := c.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/delete", other), url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusOK)
	if res.Header.Get("HX-Redirect") != "" || strings.TrimSpace(bodyOf(res)) != "" {
		t.Fatalf("deleting another item: HX-Redirect %q, body %q", res.Header.Get("HX-Redirect"), bodyOf(res))
	}
	if msgs := chatTranscript(c.chatScreen(t, "/chat")); len(msgs) != 2 || msgs[0].Text != "open one" {
		t.Fatal("deleting another item changed the current conversation")
	}

	// The open one: the page must change.
	res = c.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/delete", open), url.Values{"confirmed": {"1"}})
	if res.Header.Get("HX-Redirect") != "/chat" {
		t.Fatalf("deleting the open conversation: status %d, HX-Redirect %q", res.StatusCode, res.Header.Get("HX-Redirect"))
	}
	if doc := c.chatScreen(t, "/chat"); len(chatTranscript(doc)) != 0 || len(chatHistoryIDs(doc)) != 0 {
		t.Fatal("after deleting everything /chat is not an empty new chat")
	}
}

func TestChatClear(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	c.chatSend(t, "one", 0)
	mustStatus(t, c.postForm("/chat/new", nil), http.StatusSeeOther)
	c.chatSend(t, "two", 0)
	job := a.chatOtherScope(c.user.ID)
	bob := a.register("bob")
	bobs := bob.chatSend(t, "bob's", 0)

	before := a.chatSnapshot()
	res := c.postForm("/chat/clear", nil)
	mustStatus(t, res, http.StatusOK)
	if form := htmltest.ByTestID(chatDoc(t, res), "confirm"); len(form) != 1 || chatFormValue(form[0].Parent, "confirmed") != "1" {
		t.Fatal("no confirmation form")
	}
	if a.chatSnapshot() != before {
		t.Fatal("an unconfirmed clear changed something")
	}

	res = c.postForm("/chat/clear", url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/chat" {
		t.Fatalf("after clear: %q", loc)
	}
	doc := c.chatScreen(t, "/chat")
	if len(chatHistoryIDs(doc)) != 0 || len(chatTranscript(doc)) != 0 {
		t.Fatal("general chats survived the clear")
	}
	ctx := context.Background()
	if _, err := a.store.Exchange(ctx, c.user.ID, job); err != nil {
		t.Fatalf("the job chat went too: %v", err)
	}
	if _, err := a.store.Exchange(ctx, bob.user.ID, bobs); err != nil {
		t.Fatalf("another user's chat went too: %v", err)
	}

	// htmx: confirmed by the dialog, then the whole page changes.
	c.chatSend(t, "three", 0)
	res = c.htmx(http.MethodPost, "/chat/clear", url.Values{"confirmed": {"1"}})
	if res.Header.Get("HX-Redirect") != "/chat" {
		t.Fatalf("htmx clear: %d, HX-Redirect %q", res.StatusCode, res.Header.Get("HX-Redirect"))
	}
	if len(chatHistoryIDs(c.chatScreen(t, "/chat"))) != 0 {
		t.Fatal("htmx clear left chats")
	}
}

// chatFormValue is the value of a form's named input.
func chatFormValue(form *chatNode, name string) string {
	for _, in := range htmltest.FindAll(form, func(n *chatNode) bool { return n.Data == "input" }) {
		if n, _ := htmltest.Attr(in, "name"); n == name {
			return chatValue(in)
		}
	}
	return ""
}
