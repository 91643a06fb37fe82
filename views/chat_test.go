package views

import (
	"strings"
	"testing"

	"golang.org/x/net/html"

	"palaver/internal/htmltest"
)

type fakeAssets struct{}

func (fakeAssets) URL(name string) string { return "/static/" + name }

func testBase() Base {
	return Base{Title: "Chat", CSRF: "tok123", Assets: fakeAssets{}, User: &User{Name: "ada"}, Nav: "chat"}
}

func TestUserTextIsEscaped(t *testing.T) {
	const evil = `<script>alert(1)</script><img src=x onerror=alert(2)>`
	raw, doc := htmltest.Render(t, Message(ChatMessage{ID: 7, Role: RoleUser, Text: evil}))
	if len(htmltest.ByTag(doc, "script")) != 0 || len(htmltest.ByTag(doc, "img")) != 0 {
		t.Fatalf("user text became markup: %s", raw)
	}
	msg := htmltest.One(t, doc, "message")
	htmltest.MustAttr(t, msg, "data-role", "user")
	htmltest.MustAttr(t, msg, "id", "msg-7")
	if got := htmltest.Text(msg); got != evil {
		t.Fatalf("user text shown as %q, want it verbatim %q", got, evil)
	}
	if !strings.Contains(raw, "&lt;script&gt;") {
		t.Fatalf("no escaped <script> in %s", raw)
	}
}

func TestAssistantMarkdown(t *testing.T) {
	md := NewMarkdown()
	for _, tc := range []struct {
		name, src string
		check     func(t *testing.T, body *html.Node, raw string)
	}{
		{"bold", "some **b** text", func(t *testing.T, body *html.Node, raw string) {
			strong := htmltest.ByTag(body, "strong")
			if len(strong) != 1 || htmltest.Text(strong[0]) != "b" {
				t.Fatalf("**b** did not become <strong>b</strong>: %s", raw)
			}
		}},
		{"javascript link dropped", "[click](javascript:alert(1)) and <a href=\"javascript:alert(2)\">raw</a>", func(t *testing.T, body *html.Node, raw string) {
			for _, a := range htmltest.ByTag(body, "a") {
				if href, _ := htmltest.Attr(a, "href"); strings.Contains(strings.ToLower(href), "javascript") {
					t.Fatalf("javascript: link kept: %s", raw)
				}
			}
			if strings.Contains(strings.ToLower(raw), "javascript:") {
				t.Fatalf("javascript: survives in the HTML: %s", raw)
			}
			if !strings.Contains(htmltest.Text(body), "click") {
				t.Fatalf("the link text is lost: %s", raw)
			}
		}},
		{"raw html dropped", "hi <script>alert(1)</script><img src=x onerror=alert(1)>", func(t *testing.T, body *html.Node, raw string) {
			if len(htmltest.ByTag(body, "script")) != 0 || strings.Contains(raw, "onerror") {
				t.Fatalf("raw HTML kept: %s", raw)
			}
		}},
		{"safe link kept", "[docs](https://example.com/x)", func(t *testing.T, body *html.Node, raw string) {
			a := htmltest.ByTag(body, "a")
			if len(a) != 1 {
				t.Fatalf("want one link: %s", raw)
			}
			htmltest.MustAttr(t, a[0], "href", "https://example.com/x")
			if rel, _ := htmltest.Attr(a[0], "rel"); !strings.Contains(rel, "nofollow") {
				t.Fatalf("link without rel=nofollow: %s", raw)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, doc := htmltest.Render(t, Message(ChatMessage{
				ID: 9, Role: RoleAssistant, HTML: md.HTML(tc.src), Feedback: FeedbackView{MessageID: 9},
			}))
			msg := htmltest.One(t, doc, "message")
			htmltest.MustAttr(t, msg, "data-role", "assistant")
			htmltest.MustAttr(t, msg, "id", "msg-9")
			tc.check(t, htmltest.One(t, msg, "message-body"), raw)
		})
	}
}

func TestErrorRowIsVisible(t *testing.T) {
	_, doc := htmltest.Render(t, Message(ChatMessage{ID: 3, Role: RoleError, Text: "The assistant could not answer: <boom>"}))
	msg := htmltest.One(t, doc, "message")
	htmltest.MustAttr(t, msg, "data-role", "error")
	if got := htmltest.Text(msg); !strings.Contains(got, "The assistant could not answer: <boom>") {
		t.Fatalf("error text not shown: %q", got)
	}
	if len(htmltest.ByTestID(doc, "feedback")) != 0 {
		t.Fatal("an error row offers feedback")
	}
}

func TestFeedbackPressed(t *testing.T) {
	for _, tc := range []struct {
		value              string
		upPressed, downPre string
		upPosts, downPosts string
	}{
		{"", "false", "false", "up", "down"},
		{FeedbackUp, "true", "false", "none", "down"},
		{FeedbackDown, "false", "true", "up", "none"},
	} {
		t.Run("value="+tc.value, func(t *testing.T) {
			_, doc := htmltest.Render(t, Feedback(FeedbackView{MessageID: 4, Value: tc.value, CSRF: "tok"}))
			for _, b := range []struct{ id, pressed, posts string }{
				{"feedback-up", tc.upPressed, tc.upPosts},
				{"feedback-down", tc.downPre, tc.downPosts},
			} {
				btn := htmltest.One(t, doc, b.id)
				htmltest.MustAttr(t, btn, "aria-pressed", b.pressed)
				form := btn.Parent
				htmltest.MustAttr(t, form, "method", "post")
				htmltest.MustAttr(t, form, "action", "/chat/message/4/feedback")
				if v, _ := htmltest.FormValue(form, "value"); v != b.posts {
					t.Fatalf("%s posts value=%q, want %q", b.id, v, b.posts)
				}
				if v, _ := htmltest.FormValue(form, "csrf_token"); v != "tok" {
					t.Fatalf("%s form without the CSRF token", b.id)
				}
			}
		})
	}
}

func TestFeedbackComment(t *testing.T) {
	_, doc := htmltest.Render(t, Feedback(FeedbackView{MessageID: 4, Value: FeedbackDown, Comment: "too <b>short</b>", CSRF: "tok"}))
	if got := htmltest.Text(htmltest.One(t, doc, "feedback-comment-text")); got != "“too <b>short</b>”" {
		t.Fatalf("comment shown as %q", got)
	}
	area := htmltest.One(t, doc, "feedback-comment")
	htmltest.MustAttr(t, area, "name", "comment")
	htmltest.MustAttr(t, area, "maxlength", "2000")
	if htmltest.Text(area) != "too <b>short</b>" {
		t.Fatalf("comment field holds %q", htmltest.Text(area))
	}
	checked := htmltest.FindAll(doc, func(n *html.Node) bool { _, ok := htmltest.Attr(n, "checked"); return ok && n.Data == "input" })
	if len(checked) != 1 {
		t.Fatalf("%d ratings checked, want 1", len(checked))
	}
	htmltest.MustAttr(t, checked[0], "value", FeedbackDown)
}

func TestChatScreen(t *testing.T) {
	p := ChatScreen{
		Base:     testBase(),
		Composer: Composer{ExchangeID: 0, MaxLength: 100000, CSRF: "tok123"},
	}
	raw, doc := htmltest.Render(t, Chat(p))
	htmltest.One(t, doc, "chat-welcome")
	in := htmltest.One(t, doc, "chat-input")
	htmltest.MustAttr(t, in, "name", "query")
	if in.Data != "textarea" {
		t.Fatalf("chat-input is a <%s>", in.Data)
	}
	send := htmltest.One(t, doc, "chat-send")
	if _, disabled := htmltest.Attr(send, "disabled"); disabled {
		t.Fatal("send is disabled in the HTML: it could never be pressed without JavaScript")
	}
	form := htmltest.FindAll(doc, func(n *html.Node) bool { id, _ := htmltest.Attr(n, "id"); return id == "composer" })[0]
	htmltest.MustAttr(t, form, "action", "/chat/send")
	htmltest.MustAttr(t, form, "method", "post")
	if v, _ := htmltest.FormValue(form, "exchange_id"); v != "0" {
		t.Fatalf("exchange_id %q, want 0", v)
	}
	htmltest.One(t, doc, "new-chat")
	htmltest.One(t, doc, "history-list")
	if len(htmltest.ByTestID(doc, "history-item")) != 0 || len(htmltest.ByTestID(doc, "message")) != 0 {
		t.Fatal("an empty chat shows items or messages")
	}
	// Every form that posts carries the CSRF token (the search's GET form
	// must not: the token would land in the address and the history).
	for _, f := range htmltest.ByTag(doc, "form") {
		if m, _ := htmltest.Attr(f, "method"); m != "post" {
			continue
		}
		if v, _ := htmltest.FormValue(f, "csrf_token"); v != "tok123" {
			action, _ := htmltest.Attr(f, "action")
			t.Fatalf("form %s without the CSRF token: %s", action, raw)
		}
	}
}

func TestChatScreenKeepsRefusedText(t *testing.T) {
	p := ChatScreen{
		Base:         testBase(),
		Conversation: Conversation{ID: 5, Heading: ChatHeading{ExchangeID: 5, Title: "Plans"}, Messages: []ChatMessage{{ID: 1, Role: RoleUser, Text: "hi"}}},
		Composer:     Composer{ExchangeID: 5, Query: "  \n ", Error: "No query provided", CSRF: "tok123"},
	}
	_, doc := htmltest.Render(t, Chat(p))
	if got := htmltest.Text(htmltest.One(t, doc, "composer-error")); got != "No query provided" {
		t.Fatalf("composer error %q", got)
	}
	if len(htmltest.ByTestID(doc, "chat-welcome")) != 0 {
		t.Fatal("welcome shown above a conversation")
	}
	if got := htmltest.Text(htmltest.One(t, doc, "chat-title")); got != "Plans" {
		t.Fatalf("title %q", got)
	}
}

func TestHistoryItems(t *testing.T) {
	l := HistoryList{
		Next: "CURSOR",
		Items: []HistoryItem{
			{ID: 3, Title: "<b>first</b>", AgentType: "router", When: "just now", Turns: 1, Current: true, CSRF: "tok"},
			{ID: 2, Title: "second", Turns: 2, Group: GroupYesterday, CSRF: "tok"},
			{ID: 1, Title: "third", Turns: 3, CSRF: "tok"},
		},
	}
	raw, doc := htmltest.Render(t, HistoryItems(l))
	items := htmltest.ByTestID(doc, "history-item")
	if len(items) != 3 {
		t.Fatalf("%d items", len(items))
	}
	if got := htmltest.Text(htmltest.One(t, items[0], "history-title")); got != "<b>first</b>" {
		t.Fatalf("title shown as %q", got)
	}
	if len(htmltest.ByTag(items[0], "b")) != 0 {
		t.Fatal("a title became markup")
	}
	htmltest.MustAttr(t, items[0], "data-current", "true")
	if _, ok := htmltest.Attr(items[1], "data-current"); ok {
		t.Fatal("a second item is marked current")
	}
	if got := htmltest.Text(htmltest.One(t, items[2], "history-turns")); got != "3 turns" {
		t.Fatalf("turns %q", got)
	}
	headers := htmltest.FindAll(doc, func(n *html.Node) bool { _, ok := htmltest.Attr(n, "data-group"); return ok })
	if len(headers) != 1 || htmltest.Text(headers[0]) != GroupYesterday {
		t.Fatalf("headers: want just Yesterday: %s", raw)
	}
	if htmltest.NextElement(headers[0]) != items[1] {
		t.Fatal("the header is not right above its first item")
	}
	more := htmltest.One(t, doc, "history-more")
	htmltest.MustAttr(t, more, "hx-get", "/chat/history?before=CURSOR")
	a := htmltest.ByTag(more, "a")
	if len(a) != 1 {
		t.Fatal("no link for browsers without JavaScript")
	}
	htmltest.MustAttr(t, a[0], "href", "/chat?before=CURSOR")

	// Rename and delete are real forms.
	del := htmltest.One(t, items[1], "delete-exchange").Parent
	htmltest.MustAttr(t, del, "action", "/chat/2/delete")
	htmltest.MustAttr(t, del, "method", "post")
	if _, ok := htmltest.Attr(del, "hx-confirm"); !ok {
		t.Fatal("htmx delete without hx-confirm")
	}
	rename := htmltest.FindAll(items[1], func(n *html.Node) bool { v, _ := htmltest.Attr(n, "action"); return v == "/chat/2/rename" })
	if len(rename) != 1 {
		t.Fatal("no rename form")
	}
	if v, _ := htmltest.FormValue(rename[0], "title"); v != "second" {
		t.Fatalf("rename field holds %q", v)
	}

	_, doc = htmltest.Render(t, HistoryItems(HistoryList{Items: l.Items[:1]}))
	if len(htmltest.ByTestID(doc, "history-more")) != 0 {
		t.Fatal("a last page offers more")
	}
}

func TestChatSendResult(t *testing.T) {
	s := ChatSent{
		Messages: []ChatMessage{
			{ID: 1, Role: RoleUser, Text: "hi"},
			{ID: 2, Role: RoleAssistant, HTML: "<p>Hello!</p>", Feedback: FeedbackView{MessageID: 2}},
		},
		Item:       HistoryItem{ID: 5, Title: "hi", Turns: 1, Current: true},
		ExchangeID: 5,
		Heading:    ChatHeading{ExchangeID: 5, Title: "hi"},
	}
	for _, isNew := range []bool{true, false} {
		s.New = isNew
		raw, doc := htmltest.Render(t, ChatSendResult(s))
		msgs := htmltest.ByTestID(doc, "message")
		if len(msgs) != 2 {
			t.Fatalf("%d messages", len(msgs))
		}
		for _, m := range msgs {
			if _, ok := htmltest.Attr(m, "hx-swap-oob"); ok {
				t.Fatal("a message is out of band")
			}
		}
		oob := map[string]string{}
		for _, n := range htmltest.FindAll(doc, func(n *html.Node) bool { _, ok := htmltest.Attr(n, "hx-swap-oob"); return ok }) {
			id, _ := htmltest.Attr(n, "id")
			v, _ := htmltest.Attr(n, "hx-swap-oob")
			oob[n.Data+"#"+id] = v
		}
		if oob["input#composer-exchange"] != "true" || oob["h1#chat-title"] != "true" ||
			oob["ol#"] != "afterend:#history-group-today" {
			t.Fatalf("out-of-band parts: %v", oob)
		}
		// The family's item goes, whichever branch it shows (a family of
		// one here: its own).
		if deletes := oob["li#"] == `delete:#history-items > [data-family="5"]`; deletes == isNew {
			t.Fatalf("new=%v: old item delete present=%v: %s", isNew, deletes, raw)
		}
		items := htmltest.ByTestID(doc, "history-item")
		if len(items) != 1 {
			t.Fatalf("%d history items", len(items))
		}
		htmltest.MustAttr(t, items[0], "id", "history-5")
	}
}

func TestConfirmScreen(t *testing.T) {
	_, doc := htmltest.Render(t, ConfirmScreen(ChatConfirm{
		Base: testBase(), Heading: "Delete?", Message: "“x” goes.", Action: "/chat/5/delete", Confirm: "Delete", Cancel: "/chat/5",
	}))
	form := htmltest.One(t, doc, "confirm").Parent
	htmltest.MustAttr(t, form, "action", "/chat/5/delete")
	if v, _ := htmltest.FormValue(form, "confirmed"); v != "1" {
		t.Fatal("the confirmation form does not post confirmed=1")
	}
	if v, _ := htmltest.FormValue(form, "csrf_token"); v != "tok123" {
		t.Fatal("the confirmation form lacks the CSRF token")
	}
}
