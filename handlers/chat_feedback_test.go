package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"palaver/internal/htmltest"
)

// chatPressed reads which thumbs a page shows pressed for a reply.
func chatPressed(t *testing.T, doc *chatNode, msgID int64) (up, down string) {
	t.Helper()
	fb := htmltest.ByID(doc, fmt.Sprintf("feedback-%d", msgID))
	if fb == nil {
		t.Fatalf("no feedback control for message %d", msgID)
	}
	u, d := htmltest.ByTestID(fb, "feedback-up"), htmltest.ByTestID(fb, "feedback-down")
	if len(u) != 1 || len(d) != 1 {
		t.Fatal("feedback control without both thumbs")
	}
	up, _ = htmltest.Attr(u[0], "aria-pressed")
	down, _ = htmltest.Attr(d[0], "aria-pressed")
	return up, down
}

func TestChatFeedbackNoJS(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	ex := c.chatSend(t, "rate me", 0)
	msg := a.chatReply(c.user.ID, ex)
	path := fmt.Sprintf("/chat/message/%d/feedback", msg)
	page := fmt.Sprintf("/chat/%d", ex)
	stored := func() (string, string) {
		m, err := a.store.Message(context.Background(), c.user.ID, msg)
		if err != nil {
			t.Fatal(err)
		}
		fb, cm := "nil", "nil"
		if m.Feedback != nil {
			fb = fmt.Sprint(*m.Feedback)
		}
		if m.FeedbackComment != nil {
			cm = *m.FeedbackComment
		}
		return fb, cm
	}

	for _, step := range []struct {
		form          url.Values
		up, down      string
		stored, cment string
	}{
		{url.Values{"value": {"up"}}, "true", "false", "1", "nil"},
		{url.Values{"value": {"down"}}, "false", "true", "0", "nil"},
		{url.Values{"value": {"none"}}, "false", "false", "nil", "nil"}, // pressing the chosen one again
		{url.Values{"value": {"down"}, "comment": {"  too vague  "}}, "false", "true", "0", "too vague"},
		{url.Values{"value": {"up"}}, "true", "false", "1", "too vague"}, // thumbs keep the comment
		{url.Values{"value": {"up"}, "comment": {""}}, "true", "false", "1", "nil"},
	} {
		res := c.postFormFrom(path, "http://example.com"+page, step.form)
		mustStatus(t, res, http.StatusSeeOther)
		if loc := res.Header.Get("Location"); loc != fmt.Sprintf("%s#msg-%d", page, msg) {
			t.Fatalf("feedback redirects to %q", loc)
		}
		// After a reload the page shows it.
		up, down := chatPressed(t, c.chatScreen(t, page), msg)
		if up != step.up || down != step.down {
			t.Fatalf("after %v: aria-pressed up=%s down=%s, want %s %s", step.form, up, down, step.up, step.down)
		}
		if fb, cm := stored(); fb != step.stored || cm != step.cment {
			t.Fatalf("after %v: stored %s %q, want %s %q", step.form, fb, cm, step.stored, step.cment)
		}
	}
	// Without a Referer, back to the conversation.
	res := c.postForm(path, url.Values{"value": {"down"}})
	if loc := res.Header.Get("Location"); loc != fmt.Sprintf("%s#msg-%d", page, msg) {
		t.Fatalf("feedback without referer redirects to %q", loc)
	}
}

func TestChatFeedbackHTMX(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	ex := c.chatSend(t, "rate me", 0)
	msg := a.chatReply(c.user.ID, ex)
	res := c.htmx(http.MethodPost, fmt.Sprintf("/chat/message/%d/feedback", msg), url.Values{"value": {"up"}, "comment": {"clear <b>answer</b>"}})
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	fb := htmltest.ByTestID(doc, "feedback")
	if len(fb) != 1 || chatIDOf(fb[0]) != fmt.Sprintf("feedback-%d", msg) {
		t.Fatalf("fragment is not the feedback control: %s", bodyOf(res))
	}
	if up, down := chatPressed(t, doc, msg); up != "true" || down != "false" {
		t.Fatalf("aria-pressed up=%s down=%s", up, down)
	}
	if got := htmltest.Text(htmltest.ByTestID(doc, "feedback-comment-text")[0]); got != "“clear <b>answer</b>”" {
		t.Fatalf("comment shown as %q", got)
	}
	// Pressing the chosen thumb again posts none.
	if v := chatFormValue(htmltest.ByTestID(doc, "feedback-up")[0].Parent, "value"); v != "none" {
		t.Fatalf("the pressed thumb posts %q, want none", v)
	}
}

func TestChatFeedbackRefused(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	ex := c.chatSend(t, "rate me", 0)
	msgs := a.chatMessages(c.user.ID, ex)
	user, reply := msgs[0].ID, msgs[1].ID
	for _, tc := range []struct {
		name   string
		path   string
		form   url.Values
		status int
	}{
		{"bad value", fmt.Sprintf("/chat/message/%d/feedback", reply), url.Values{"value": {"great"}}, http.StatusBadRequest},
		{"no value", fmt.Sprintf("/chat/message/%d/feedback", reply), url.Values{}, http.StatusBadRequest},
		{"comment too long", fmt.Sprintf("/chat/message/%d/feedback", reply), url.Values{"value": {"up"}, "comment": {strings.Repeat("ü", 2001)}}, http.StatusUnprocessableEntity},
		{"user message", fmt.Sprintf("/chat/message/%d/feedback", user), url.Values{"value": {"up"}}, http.StatusNotFound},
		{"missing message", "/chat/message/9999/feedback", url.Values{"value": {"up"}}, http.StatusNotFound},
		{"non-numeric id", "/chat/message/abc/feedback", url.Values{"value": {"up"}}, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := a.chatSnapshot()
			mustStatus(t, c.postForm(tc.path, tc.form), tc.status)
			if a.chatSnapshot() != before {
				t.Fatal("a refused rating changed something")
			}
		})
	}
	// 2000 characters is fine.
	mustStatus(t, c.postForm(fmt.Sprintf("/chat/message/%d/feedback", reply),
		url.Values{"value": {"up"}, "comment": {strings.Repeat("ü", 2000)}}), http.StatusSeeOther)
}

// A page chat's replies are rated as the chat's are: the control is in the
// panel, and a plain form goes back to that chat in the page's editor, which
// then shows the rating.
func TestPageReplyFeedback(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	pageID := c.pageCreate(t, "Trip", "# Trip\n\nWalk.\n")
	ex := c.pageSend(t, pageID, "what is this page about?", 0)
	msg := a.chatReply(c.user.ID, ex)
	if up, down := chatPressed(t, c.pageEdit(t, pageID), msg); up != "false" || down != "false" {
		t.Fatalf("a new page reply shows up=%s down=%s", up, down)
	}

	res := c.postFormFrom(fmt.Sprintf("/chat/message/%d/feedback", msg), fmt.Sprintf("http://example.com/pages/%d/edit", pageID), url.Values{"value": {"down"}})
	mustStatus(t, res, http.StatusSeeOther)
	back := fmt.Sprintf("/pages/%d/chat/%d", pageID, ex)
	if loc := res.Header.Get("Location"); loc != fmt.Sprintf("%s#msg-%d", back, msg) {
		t.Fatalf("rating a page reply redirects to %q, want %s", loc, back)
	}
	if up, down := chatPressed(t, c.chatScreen(t, back), msg); up != "false" || down != "true" {
		t.Fatalf("after rating down the page shows up=%s down=%s", up, down)
	}

	res = c.htmx(http.MethodPost, fmt.Sprintf("/chat/message/%d/feedback", msg), url.Values{"value": {"up"}})
	mustStatus(t, res, http.StatusOK)
	if up, down := chatPressed(t, chatDoc(t, res), msg); up != "true" || down != "false" {
		t.Fatalf("htmx rating answered up=%s down=%s", up, down)
	}
	if up, _ := chatPressed(t, c.pageEdit(t, pageID), msg); up != "true" {
		t.Fatal("the editor does not show the rating after a reload")
	}
}
