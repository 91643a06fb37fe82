package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"palaver/internal/htmltest"
)

// Deleting a page (after a confirmation without JavaScript) deletes its chats
// and their messages; other pages' chats and general chats stay.
func TestPageDeleteRemovesItsChats(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	doomed := c.pageCreate(t, "Doomed", pageTrip)
	kept := c.pageCreate(t, "Kept", pageTrip)
	ex1 := c.pageSend(t, doomed, "one", 0)
	c.pageSend(t, doomed, "two", ex1)
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/chat/new", doomed), url.Values{}), http.StatusSeeOther)
	ex2 := c.pageSend(t, doomed, "three", 0)
	keptEx := c.pageSend(t, kept, "kept", 0)
	general := c.chatSend(t, "general", 0)
	if n := a.pageCount("messages", "exchange_id IN (SELECT id FROM exchanges WHERE page_id = ?)", doomed); n != 6 {
		t.Fatalf("set-up: %d messages", n)
	}

	res := c.postForm(fmt.Sprintf("/pages/%d/delete", doomed), url.Values{})
	mustStatus(t, res, http.StatusOK)
	if len(htmltest.ByTestID(chatDoc(t, res), "confirm")) != 1 || a.pageCount("pages", "id = ? AND deleted_at IS NULL", doomed) != 1 {
		t.Fatal("an unconfirmed delete did not ask, or deleted")
	}
	res = c.postForm(fmt.Sprintf("/pages/%d/delete", doomed), url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/pages" {
		t.Fatalf("delete redirected to %q", loc)
	}
	for what, n := range map[string]int{
		"exchanges of the page":  a.pageCount("exchanges", "page_id = ?", doomed),
		"messages of its chats":  a.pageCount("messages", "exchange_id IN (?, ?)", ex1, ex2),
		"live rows of the page":  a.pageCount("pages", "id = ? AND deleted_at IS NULL", doomed),
		"soft-deleted page rows": 1 - a.pageCount("pages", "id = ? AND deleted_at IS NOT NULL", doomed),
	} {
		if n != 0 {
			t.Errorf("%s: %d", what, n)
		}
	}
	for _, ex := range []int64{keptEx, general} {
		if n := a.pageCount("messages", "exchange_id = ?", ex); n != 2 {
			t.Errorf("exchange %d lost its messages: %d", ex, n)
		}
	}
	mustStatus(t, c.get(fmt.Sprintf("/pages/%d/edit", doomed)), http.StatusNotFound)
	if items := htmltest.ByTestID(c.chatScreen(t, "/pages"), "page-item"); len(items) != 1 {
		t.Fatalf("/pages lists %d pages after the delete", len(items))
	}
}

// A page's chats can be cleared, from the panel and through the API; the page
// and other chats stay.
func TestPageClearChats(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	page := c.pageCreate(t, "Trip", pageTrip)
	other := c.pageCreate(t, "Other", pageTrip)
	ex := c.pageSend(t, page, "one", 0)
	c.pageSend(t, page, "two", ex)
	otherEx := c.pageSend(t, other, "other", 0)
	general := c.chatSend(t, "general", 0)

	res := c.postForm(fmt.Sprintf("/pages/%d/chat/clear", page), url.Values{})
	mustStatus(t, res, http.StatusOK)
	if len(htmltest.ByTestID(chatDoc(t, res), "confirm")) != 1 || a.pageCount("exchanges", "page_id = ?", page) != 1 {
		t.Fatal("an unconfirmed clear did not ask, or cleared")
	}
	mustStatus(t, c.postForm(fmt.Sprintf("/pages/%d/chat/clear", page), url.Values{"confirmed": {"1"}}), http.StatusSeeOther)
	if n := a.pageCount("exchanges", "page_id = ?", page); n != 0 {
		t.Fatalf("%d chats left", n)
	}
	if n := a.pageCount("messages", "exchange_id = ?", ex); n != 0 {
		t.Fatalf("%d messages left", n)
	}
	doc := c.pageEdit(t, page)
	if chatComposerExchange(t, doc) != "0" || len(chatTranscript(doc)) != 0 || pageEditorText(t, doc) != pageTrip {
		t.Fatal("after clearing, the editor should show the page and a new chat")
	}

	// Through the API.
	api := a.apiClient("ada")
	c.pageSend(t, page, "again", 0)
	c.pageSend(t, page, "and again", 0)
	var out struct{ Message string }
	api.apiJSON(http.MethodDelete, fmt.Sprintf("/api/chat/page/%d/history", page), nil, http.StatusOK, &out)
	if out.Message != "Cleared 2 chat exchanges with 4 messages" {
		t.Fatalf("clear answered %q", out.Message)
	}
	api.apiJSON(http.MethodDelete, fmt.Sprintf("/api/chat/page/%d/history", page), nil, http.StatusOK, &out)
	if out.Message != "Cleared 0 chat exchanges with 0 messages" {
		t.Fatalf("second clear answered %q", out.Message)
	}
	for _, id := range []int64{otherEx, general} {
		if n := a.pageCount("messages", "exchange_id = ?", id); n != 2 {
			t.Fatalf("exchange %d was cleared too", id)
		}
	}
	// The general clear leaves page chats alone.
	c.pageSend(t, page, "kept", 0)
	api.apiJSON(http.MethodDelete, "/api/chat/history", nil, http.StatusOK, &out)
	if n := a.pageCount("exchanges", "page_id IS NOT NULL"); n != 2 {
		t.Fatalf("the general clear removed page chats: %d left", n)
	}
}
