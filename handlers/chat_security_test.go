package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Another user's conversation answers 404 on every chat route that takes an
// id, exactly like a missing one, and nothing of theirs changes.
func TestChatCrossUser(t *testing.T) {
	a := newTestApp(t)
	ada := a.register("ada")
	bob := a.register("bob")
	bobs := bob.chatSend(t, "bob's private question", 0)
	bobsReply := a.chatReply(bob.user.ID, bobs)
	mine := ada.chatSend(t, "ada's", 0)
	for _, tc := range []struct {
		name, method, path string
		form               url.Values
	}{
		{"open", http.MethodGet, fmt.Sprintf("/chat/%d", bobs), nil},
		{"rename", http.MethodPost, fmt.Sprintf("/chat/%d/rename", bobs), url.Values{"title": {"pwned"}}},
		{"delete unconfirmed", http.MethodPost, fmt.Sprintf("/chat/%d/delete", bobs), url.Values{}},
		{"delete", http.MethodPost, fmt.Sprintf("/chat/%d/delete", bobs), url.Values{"confirmed": {"1"}}},
		{"feedback", http.MethodPost, fmt.Sprintf("/chat/message/%d/feedback", bobsReply), url.Values{"value": {"down"}, "comment": {"x"}}},
		{"send", http.MethodPost, "/chat/send", url.Values{"query": {"hi"}, "exchange_id": {fmt.Sprint(bobs)}}},
	} {
		for _, htmx := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s htmx=%v", tc.name, htmx), func(t *testing.T) {
				before := a.chatSnapshot()
				var res *http.Response
				switch {
				case tc.method == http.MethodGet && htmx:
					res = ada.htmx(tc.method, tc.path, nil)
				case tc.method == http.MethodGet:
					res = ada.get(tc.path)
				case htmx:
					res = ada.htmx(tc.method, tc.path, tc.form)
				default:
					res = ada.postForm(tc.path, tc.form)
				}
				mustStatus(t, res, http.StatusNotFound)
				if strings.Contains(bodyOf(res), "bob&#39;s private") || strings.Contains(bodyOf(res), "bob's private") {
					t.Fatal("the answer shows bob's conversation")
				}
				if a.chatSnapshot() != before {
					t.Fatal("another user's request changed something")
				}
			})
		}
	}
	// Ada's session still points at her own conversation.
	if msgs := chatTranscript(ada.chatScreen(t, "/chat")); len(msgs) != 2 || msgs[0].Text != "ada's" {
		t.Fatalf("ada's /chat after the attempts: %+v (mine=%d)", msgs, mine)
	}
	// Bob's history never lists it for ada, and his own is intact.
	if ids := chatHistoryIDs(ada.chatScreen(t, "/chat")); len(ids) != 1 || ids[0] != mine {
		t.Fatalf("ada's history %v", ids)
	}
	if msgs := chatTranscript(bob.chatScreen(t, fmt.Sprintf("/chat/%d", bobs))); len(msgs) != 2 {
		t.Fatalf("bob's conversation: %+v", msgs)
	}
}

// Page and job chats are not opened or changed through /chat.
func TestChatOtherScopes(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	job := a.chatOtherScope(c.user.ID)
	before := a.chatSnapshot()
	mustStatus(t, c.get(fmt.Sprintf("/chat/%d", job)), http.StatusNotFound)
	mustStatus(t, c.postForm(fmt.Sprintf("/chat/%d/rename", job), url.Values{"title": {"x"}}), http.StatusNotFound)
	mustStatus(t, c.postForm(fmt.Sprintf("/chat/%d/delete", job), url.Values{"confirmed": {"1"}}), http.StatusNotFound)
	if a.chatSnapshot() != before {
		t.Fatal("a job chat was changed through /chat")
	}
	if ids := chatHistoryIDs(c.chatScreen(t, "/chat")); len(ids) != 0 {
		t.Fatalf("the history lists a job chat: %v", ids)
	}
}

// Every unsafe chat route refuses a request without the session's CSRF
// token (form field or header) with 403, and changes nothing.
func TestChatCSRF(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	ex := c.chatSend(t, "protected", 0)
	reply := a.chatReply(c.user.ID, ex)
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{"/chat/send", url.Values{"query": {"forged"}, "exchange_id": {fmt.Sprint(ex)}}},
		{"/chat/send", url.Values{"query": {"forged"}, "exchange_id": {"0"}}},
		{"/chat/new", url.Values{}},
		{"/chat/clear", url.Values{"confirmed": {"1"}}},
		{fmt.Sprintf("/chat/%d/rename", ex), url.Values{"title": {"forged"}}},
		{fmt.Sprintf("/chat/%d/delete", ex), url.Values{"confirmed": {"1"}}},
		{fmt.Sprintf("/chat/message/%d/feedback", reply), url.Values{"value": {"down"}}},
	} {
		for _, token := range []string{"", "forged-token"} {
			t.Run(fmt.Sprintf("%s token=%q", tc.path, token), func(t *testing.T) {
				before := a.chatSnapshot()
				form := url.Values{}
				for k, v := range tc.form {
					form[k] = v
				}
				form.Set("csrf_token", token)
				mustStatus(t, c.postForm(tc.path, form), http.StatusForbidden)

				saved := c.csrf
				c.csrf = token
				res := c.htmx(http.MethodPost, tc.path, tc.form)
				c.csrf = saved
				mustStatus(t, res, http.StatusForbidden)

				if a.chatSnapshot() != before {
					t.Fatal("a request without the CSRF token changed the database")
				}
				// The session's current conversation did not change either.
				if got := chatComposerExchange(t, c.chatScreen(t, "/chat")); got != fmt.Sprint(ex) {
					t.Fatalf("current conversation became %q", got)
				}
			})
		}
	}
}

// Signed-out visitors are sent to sign in, for pages and for htmx.
func TestChatRequiresSignIn(t *testing.T) {
	a := newTestApp(t)
	owner := a.register("ada")
	ex := owner.chatSend(t, "private", 0)
	anon := a.anon()
	anon.get("/login") // a session with a CSRF token, but no user
	for _, path := range []string{"/chat", fmt.Sprintf("/chat/%d", ex), "/chat/history"} {
		res := anon.get(path)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
			t.Fatalf("GET %s signed out: %d %q", path, res.StatusCode, res.Header.Get("Location"))
		}
	}
	before := a.chatSnapshot()
	res := anon.postForm("/chat/send", url.Values{"query": {"hi"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Fatalf("signed-out send: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	res = anon.htmx(http.MethodPost, fmt.Sprintf("/chat/%d/delete", ex), url.Values{"confirmed": {"1"}})
	if res.Header.Get("HX-Redirect") != "/login" {
		t.Fatalf("signed-out htmx delete: %d %q", res.StatusCode, res.Header.Get("HX-Redirect"))
	}
	if a.chatSnapshot() != before {
		t.Fatal("a signed-out request changed something")
	}
}
