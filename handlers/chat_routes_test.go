package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// Every chat route's success and error statuses, with and without htmx, in
// one table. The flows around them are in the other chat tests.
func TestChatRouteStatuses(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	bob := a.register("bob")
	bobs := bob.chatSend(t, "bob's", 0)
	bobsReply := a.chatReply(bob.user.ID, bobs)
	ex := c.chatSend(t, "mine", 0)
	reply := a.chatReply(c.user.ID, ex)
	spare := func() int64 { return c.chatSend(t, "to delete", 0) }

	type tc struct {
		name     string
		method   string
		path     func() string
		form     url.Values
		htmx     bool
		status   int
		location string // Location, or HX-Redirect for htmx
	}
	p := func(s string) func() string { return func() string { return s } }
	for _, tc := range []tc{
		{"chat page", "GET", p("/chat"), nil, false, 303, fmt.Sprintf("/chat/%d", ex)},
		{"chat bad cursor", "GET", p("/chat?before=x"), nil, false, 400, ""},
		{"open", "GET", p(fmt.Sprintf("/chat/%d", ex)), nil, false, 200, ""},
		{"open via htmx", "GET", p(fmt.Sprintf("/chat/%d", ex)), nil, true, 200, ""},
		{"open missing", "GET", p("/chat/424242"), nil, false, 404, ""},
		{"open non-numeric", "GET", p("/chat/abc"), nil, false, 404, ""},
		{"open zero", "GET", p("/chat/0"), nil, false, 404, ""},
		{"open negative", "GET", p("/chat/-3"), nil, false, 404, ""},
		{"open other user's", "GET", p(fmt.Sprintf("/chat/%d", bobs)), nil, false, 404, ""},
		{"history fragment", "GET", p("/chat/history"), nil, true, 200, ""},
		{"history page", "GET", p("/chat/history"), nil, false, 303, fmt.Sprintf("/chat/%d", ex)},
		{"history bad cursor", "GET", p("/chat/history?before=%%%"), nil, true, 400, ""},
		{"send", "POST", p("/chat/send"), url.Values{"query": {"hi"}, "exchange_id": {fmt.Sprint(ex)}}, false, 303, fmt.Sprintf("/chat/%d", ex)},
		{"send htmx", "POST", p("/chat/send"), url.Values{"query": {"hi"}, "exchange_id": {fmt.Sprint(ex)}}, true, 200, ""},
		{"send empty", "POST", p("/chat/send"), url.Values{"query": {" "}}, false, 422, ""},
		{"send empty htmx", "POST", p("/chat/send"), url.Values{"query": {" "}}, true, 400, ""},
		{"send bad exchange", "POST", p("/chat/send"), url.Values{"query": {"hi"}, "exchange_id": {"x"}}, false, 400, ""},
		{"send other user's", "POST", p("/chat/send"), url.Values{"query": {"hi"}, "exchange_id": {fmt.Sprint(bobs)}}, true, 404, ""},
		{"new", "POST", p("/chat/new"), nil, false, 303, "/chat"},
		{"new htmx", "POST", p("/chat/new"), nil, true, 204, "/chat"},
		{"rename", "POST", p(fmt.Sprintf("/chat/%d/rename", ex)), url.Values{"title": {"T"}}, false, 303, fmt.Sprintf("/chat/%d", ex)},
		{"rename htmx", "POST", p(fmt.Sprintf("/chat/%d/rename", ex)), url.Values{"title": {"T"}}, true, 200, ""},
		{"rename empty", "POST", p(fmt.Sprintf("/chat/%d/rename", ex)), url.Values{"title": {""}}, false, 422, ""},
		{"rename missing", "POST", p("/chat/424242/rename"), url.Values{"title": {"T"}}, false, 404, ""},
		{"rename other user's", "POST", p(fmt.Sprintf("/chat/%d/rename", bobs)), url.Values{"title": {"T"}}, true, 404, ""},
		{"delete unconfirmed", "POST", p(fmt.Sprintf("/chat/%d/delete", ex)), nil, false, 200, ""},
		{"delete", "POST", func() string { return fmt.Sprintf("/chat/%d/delete", spare()) }, url.Values{"confirmed": {"1"}}, false, 303, "/chat"},
		{"delete htmx", "POST", func() string { return fmt.Sprintf("/chat/%d/delete", spare()) }, url.Values{"confirmed": {"1"}}, true, 204, "/chat"},
		{"delete missing", "POST", p("/chat/424242/delete"), url.Values{"confirmed": {"1"}}, false, 404, ""},
		{"delete other user's", "POST", p(fmt.Sprintf("/chat/%d/delete", bobs)), url.Values{"confirmed": {"1"}}, true, 404, ""},
		{"feedback", "POST", p(fmt.Sprintf("/chat/message/%d/feedback", reply)), url.Values{"value": {"up"}}, false, 303, fmt.Sprintf("/chat/%d#msg-%d", ex, reply)},
		{"feedback htmx", "POST", p(fmt.Sprintf("/chat/message/%d/feedback", reply)), url.Values{"value": {"down"}}, true, 200, ""},
		{"feedback bad value", "POST", p(fmt.Sprintf("/chat/message/%d/feedback", reply)), url.Values{"value": {"5"}}, false, 400, ""},
		{"feedback missing", "POST", p("/chat/message/424242/feedback"), url.Values{"value": {"up"}}, false, 404, ""},
		{"feedback other user's", "POST", p(fmt.Sprintf("/chat/message/%d/feedback", bobsReply)), url.Values{"value": {"up"}}, true, 404, ""},
		{"clear unconfirmed", "POST", p("/chat/clear"), nil, false, 200, ""},
		{"clear", "POST", p("/chat/clear"), url.Values{"confirmed": {"1"}}, false, 303, "/chat"},
		{"clear htmx", "POST", p("/chat/clear"), url.Values{"confirmed": {"1"}}, true, 204, "/chat"},
		{"unknown chat route", "GET", p("/chat/1/nope"), nil, false, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path()
			var res *http.Response
			switch {
			case tc.htmx:
				res = c.htmx(tc.method, path, tc.form)
			case tc.method == "GET":
				res = c.get(path)
			default:
				res = c.postForm(path, tc.form)
			}
			mustStatus(t, res, tc.status)
			got := res.Header.Get("Location")
			if tc.htmx {
				got = res.Header.Get("HX-Redirect")
			}
			if got != tc.location {
				t.Fatalf("redirect %q, want %q", got, tc.location)
			}
		})
	}
}
