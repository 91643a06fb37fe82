package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"palaver/internal/htmltest"
	"palaver/models"
)

// A refused send without JavaScript comes back as the chat page with the
// reason by the composer and the text kept; with htmx, as an alert. Either
// way nothing is stored.
func TestChatSendRefused(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "kept conversation", 0)
	long := strings.Repeat("x", 100_001)
	for _, tc := range []struct {
		name, query string
		exchange    string
		msg, hxMsg  string
	}{
		{"empty", "", "0", "Type a message before sending", "No query provided"},
		{"whitespace", "  \n\t ", fmt.Sprint(id), "Type a message before sending", "No query provided"},
		{"too long", long, fmt.Sprint(id), "the limit is 100000", "the limit is 100000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := a.chatSnapshot()
			res := c.postForm("/chat/send", url.Values{"query": {tc.query}, "exchange_id": {tc.exchange}})
			mustStatus(t, res, http.StatusUnprocessableEntity)
			doc := chatDoc(t, res)
			errs := htmltest.ByTestID(doc, "composer-error")
			if len(errs) != 1 || !strings.Contains(htmltest.Text(errs[0]), tc.msg) {
				t.Fatalf("no composer error saying %q", tc.msg)
			}
			in := htmltest.ByTestID(doc, "chat-input")
			if len(in) != 1 || strings.TrimPrefix(chatRawText(in[0]), "\n") != strings.TrimPrefix(tc.query, "\n") {
				t.Fatal("the typed text was not kept in the composer")
			}
			if got := chatComposerExchange(t, doc); got != tc.exchange {
				t.Fatalf("composer posts to %q, want %q", got, tc.exchange)
			}

			res = c.htmx(http.MethodPost, "/chat/send", url.Values{"query": {tc.query}, "exchange_id": {tc.exchange}})
			mustStatus(t, res, http.StatusBadRequest)
			if res.Header.Get("HX-Reswap") != "none" || !chatHTMXAlert.MatchString(bodyOf(res)) ||
				!strings.Contains(bodyOf(res), tc.hxMsg) {
				t.Fatalf("htmx refusal: HX-Reswap %q, body %s", res.Header.Get("HX-Reswap"), bodyOf(res))
			}
			if after := a.chatSnapshot(); after != before {
				t.Fatalf("a refused send changed the database:\n%s\n---\n%s", before, after)
			}
		})
	}
}

// Sends the server refuses outright, with the status that says why.
func TestChatSendErrors(t *testing.T) {
	a := newTestApp(t)
	ada := a.register("ada")
	bob := a.register("bob")
	bobs := bob.chatSend(t, "bob's secret", 0)
	job := a.chatOtherScope(ada.user.ID)

	busy := ada.chatSend(t, "a long question", 0)
	// Another tab (or server) is writing a reply in this exchange.
	if _, _, err := a.store.StartTurn(context.Background(), models.TurnStart{
		UserID: ada.user.ID, ExchangeID: busy, Scope: models.ScopeGeneral, AgentType: "router", Query: "other tab", Owner: "elsewhere",
	}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		exchange string
		status   int
		msg      string
	}{
		{"bad exchange id", "abc", http.StatusBadRequest, "Invalid exchange_id"},
		{"missing exchange", "999", http.StatusNotFound, "Not found"},
		{"another user's exchange", fmt.Sprint(bobs), http.StatusNotFound, "Not found"},
		{"job exchange", fmt.Sprint(job), http.StatusUnprocessableEntity, "job chat"},
		{"turn running", fmt.Sprint(busy), http.StatusConflict, "still being written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := a.chatSnapshot()
			res := ada.postForm("/chat/send", url.Values{"query": {"hello"}, "exchange_id": {tc.exchange}})
			mustStatus(t, res, tc.status)
			if !strings.Contains(bodyOf(res), tc.msg) {
				t.Fatalf("body lacks %q", tc.msg)
			}
			if after := a.chatSnapshot(); after != before {
				t.Fatalf("a refused send changed the database:\n%s\n---\n%s", before, after)
			}
		})
	}
}

// With htmx a send answers at once with the user message and, out of band,
// the cell where the reply will be written (it arrives over /live), the
// history item at the top, the title and the composer's exchange_id.
func TestChatSendHTMX(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	older := c.chatSend(t, "an older chat", 0)
	mustStatus(t, c.postForm("/chat/new", nil), http.StatusSeeOther)

	res := c.htmx(http.MethodPost, "/chat/send", url.Values{"query": {"hi there"}, "exchange_id": {"0"}})
	mustStatus(t, res, http.StatusOK)
	doc := chatDoc(t, res)
	msgs := chatTranscript(doc)
	if len(msgs) != 1 || msgs[0].Role != "user" || msgs[0].Text != "hi there" {
		t.Fatalf("fragment messages %+v", msgs)
	}
	if !strings.Contains(bodyOf(res), `data-testid="pending-reply"`) {
		t.Fatal("no pending reply cell in the send answer")
	}
	if strings.Contains(bodyOf(res), "<html") {
		t.Fatal("htmx got a full page")
	}
	ex, err := a.store.ListExchanges(context.Background(), c.user.ID, models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 1})
	if err != nil || len(ex) != 1 || ex[0].ID == older {
		t.Fatalf("no new exchange: %v %v", ex, err)
	}
	id := ex[0].ID
	if got := res.Header.Get("HX-Push-Url"); got != fmt.Sprintf("/chat/%d", id) {
		t.Fatalf("HX-Push-Url %q", got)
	}
	if v := htmltest.ByID(doc, "composer-exchange"); v == nil || chatOOB(v) != "true" || chatValue(v) != fmt.Sprint(id) {
		t.Fatal("the composer's exchange_id is not set out of band")
	}
	if h := htmltest.ByID(doc, "chat-title"); h == nil || chatOOB(h) != "true" || htmltest.Text(h) != "hi there" {
		t.Fatal("the title is not updated out of band")
	}
	items := htmltest.ByTestID(doc, "history-item")
	if len(items) != 1 || chatOOB(items[0].Parent) != "afterend:#history-group-today" {
		t.Fatal("the history item is not moved to the top out of band")
	}
	if v, _ := htmltest.Attr(items[0], "data-current"); v != "true" {
		t.Fatal("the new item is not highlighted")
	}
	// The session follows: a reload shows this conversation.
	a.waitTurns()
	if got := chatTranscript(c.chatScreen(t, "/chat")); len(got) != 2 || got[0].Text != "hi there" {
		t.Fatalf("reload after an htmx send shows %+v", got)
	}

	// Into the older exchange: its old item is removed (the item of its
	// family, whichever branch it shows), the new one counts 2 turns.
	res = c.htmx(http.MethodPost, "/chat/send", url.Values{"query": {"more"}, "exchange_id": {fmt.Sprint(older)}})
	mustStatus(t, res, http.StatusOK)
	doc = chatDoc(t, res)
	del := htmltest.FindAll(doc, func(n *chatNode) bool { return strings.HasPrefix(chatOOB(n), "delete") })
	if len(del) != 1 || chatOOB(del[0]) != fmt.Sprintf(`delete:#history-items > [data-family="%d"]`, older) {
		t.Fatal("the old history item is not deleted out of band")
	}
	items = htmltest.ByTestID(doc, "history-item")
	if len(items) != 1 || !strings.Contains(htmltest.Text(items[0]), "2 turns") || !strings.Contains(htmltest.Text(items[0]), "an older chat") {
		t.Fatalf("moved item: %s", htmltest.Text(items[0]))
	}
	// A tab already at /chat/{id} gets no second history entry for it.
	a.waitTurns() // the reply to "more" is still being written
	res = c.htmxFrom(http.MethodPost, "/chat/send", fmt.Sprintf("http://example.com/chat/%d", older),
		url.Values{"query": {"again"}, "exchange_id": {fmt.Sprint(older)}})
	mustStatus(t, res, http.StatusOK)
	if got := res.Header.Get("HX-Push-Url"); got != "" {
		t.Fatalf("HX-Push-Url %q for the page the tab is on", got)
	}
}

// htmxFrom is htmx from a tab showing currentURL.
func (c *client) htmxFrom(method, path, currentURL string, form url.Values) *http.Response {
	req := httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Current-URL", currentURL)
	req.Header.Set("X-CSRF-Token", c.csrf)
	return c.do(req)
}

func chatOOB(n *chatNode) string { v, _ := htmltest.Attr(n, "hx-swap-oob"); return v }

func chatValue(n *chatNode) string { v, _ := htmltest.Attr(n, "value"); return v }

func chatIDOf(n *chatNode) string { v, _ := htmltest.Attr(n, "id"); return v }

// chatRawText is the text of n as is (a textarea's value).
func chatRawText(n *chatNode) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(c.Data)
	}
	return b.String()
}
