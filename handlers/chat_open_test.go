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

// A conversation without JavaScript: send, 303, both messages; a reload
// and a later visit show the same conversation.
func TestChatNoJSConversation(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")

	doc := c.chatScreen(t, "/chat")
	if len(htmltest.ByTestID(doc, "chat-welcome")) != 1 || len(chatTranscript(doc)) != 0 {
		t.Fatal("an empty chat does not show the welcome, or shows messages")
	}
	if got := chatComposerExchange(t, doc); got != "0" {
		t.Fatalf("new chat composer exchange_id %q, want 0", got)
	}

	id := c.chatSend(t, "hello there", 0)
	doc = c.chatScreen(t, fmt.Sprintf("/chat/%d", id))
	msgs := chatTranscript(doc)
	if len(msgs) != 2 || msgs[0].Role != "user" || msgs[0].Text != "hello there" ||
		msgs[1].Role != "assistant" || !strings.HasPrefix(msgs[1].Text, "Hello!") {
		t.Fatalf("transcript after the first send: %+v", msgs)
	}
	for _, m := range msgs {
		if !strings.HasPrefix(m.ID, "msg-") {
			t.Fatalf("message without a msg- id: %+v", m)
		}
	}
	if len(htmltest.ByTestID(doc, "chat-welcome")) != 0 {
		t.Fatal("welcome shown above a conversation")
	}

	// The reply goes to the same exchange; a reload shows all of it.
	if again := c.chatSend(t, "what is 2+2?", id); again != id {
		t.Fatalf("second send went to exchange %d, want %d", again, id)
	}
	doc = c.chatScreen(t, "/chat")
	msgs = chatTranscript(doc)
	if len(msgs) != 4 || msgs[2].Text != "what is 2+2?" || !strings.Contains(msgs[3].Text, `You asked: "what is 2+2?"`) {
		t.Fatalf("reload shows %+v", msgs)
	}
	if got := chatComposerExchange(t, doc); got != fmt.Sprint(id) {
		t.Fatalf("reloaded composer posts to %q, want %d", got, id)
	}

	// Tomorrow: a new sign-in (no current exchange in the session yet)
	// starts a new chat; the conversation waits in the history.
	other := a.anon()
	other.get("/login")
	mustStatus(t, other.postForm("/login", url.Values{"username": {"ada"}, "password": {"correct horse"}}), http.StatusSeeOther)
	doc = other.chatScreen(t, "/chat")
	if got := chatTranscript(doc); len(got) != 0 || chatComposerExchange(t, doc) != "0" {
		t.Fatalf("a new session's /chat shows %d messages, composer to %s: want a new chat", len(got), chatComposerExchange(t, doc))
	}
	if got := chatHistoryIDs(doc); len(got) != 1 || got[0] != id {
		t.Fatalf("history %v, want [%d]", got, id)
	}
}

// TestChatCurrentIsThisSessions: /chat goes (303) to the conversation this
// session last opened or wrote in, whose composer says it continues it,
// with a New chat button; never to one that arrived otherwise (an import,
// another device), which a person would append to without knowing.
func TestChatCurrentIsThisSessions(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	continuing := func(doc *chatNode) string {
		t.Helper()
		box := htmltest.ByTestID(doc, "composer-continuing")
		if len(box) != 1 {
			t.Fatalf("%d composer-continuing boxes", len(box))
		}
		if n := len(htmltest.ByTestID(box[0], "composer-new-chat")); n != 0 && n != 1 {
			t.Fatalf("%d New chat buttons", n)
		}
		if len(htmltest.ByTestID(box[0], "composer-new-chat")) == 0 {
			return ""
		}
		return htmltest.Text(box[0])
	}
	current := func() string {
		t.Helper()
		return c.get("/chat").Header.Get("Location")
	}

	// A new account: a new chat, nothing continued.
	res := c.get("/chat")
	mustStatus(t, res, http.StatusOK)
	if got := continuing(chatDoc(t, res)); got != "" {
		t.Fatalf("a new chat's composer says %q", got)
	}

	// Written in: /chat goes there, and its composer says so.
	id := c.chatSend(t, "plan the trip", 0)
	if got := current(); got != fmt.Sprintf("/chat/%d", id) {
		t.Fatalf("/chat after a send goes to %q, want /chat/%d", got, id)
	}
	if got := continuing(c.chatScreen(t, "/chat")); got != "Continuing “plan the trip” New chat" {
		t.Fatalf("the reopened composer says %q", got)
	}
	if got := c.get("/chat?before=not-a-cursor"); got.StatusCode != http.StatusBadRequest {
		t.Fatalf("a bad cursor: status %d, want 400 before any redirect", got.StatusCode)
	}

	// Another device writes a newer conversation; an import brings more.
	// Neither becomes this session's.
	phone := a.anon()
	phone.get("/login")
	mustStatus(t, phone.postForm("/login", url.Values{"username": {"ada"}, "password": {"correct horse"}}), http.StatusSeeOther)
	phone.get("/chat")
	fromPhone := phone.chatSend(t, "written on the phone", 0)
	c.get("/chat") // for the CSRF token
	c.importOK("application/json", chatgptTestFile(t))
	if got := current(); got != fmt.Sprintf("/chat/%d", id) {
		t.Fatalf("/chat after the phone and an import goes to %q, want /chat/%d", got, id)
	}

	// New chat: the composer's button empties it; /chat is a new chat.
	doc := c.chatScreen(t, "/chat")
	mustStatus(t, c.postForm("/chat/new", url.Values{}), http.StatusSeeOther)
	res = c.get("/chat")
	mustStatus(t, res, http.StatusOK)
	if doc = chatDoc(t, res); chatComposerExchange(t, doc) != "0" || continuing(doc) != "" {
		t.Fatal("after New chat, /chat is not a new chat")
	}

	// Opened: the phone's conversation is current now, for this session.
	c.chatScreen(t, fmt.Sprintf("/chat/%d", fromPhone))
	if got := current(); got != fmt.Sprintf("/chat/%d", fromPhone) {
		t.Fatalf("/chat after opening %d goes to %q", fromPhone, got)
	}

	// Deleted elsewhere: a new chat, not an error.
	phone.apiJSON(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", fromPhone), nil, http.StatusOK, nil)
	res = c.get("/chat")
	mustStatus(t, res, http.StatusOK)
	if doc = chatDoc(t, res); chatComposerExchange(t, doc) != "0" {
		t.Fatal("after its deletion, /chat does not start a new chat")
	}
}

// New chat empties the screen; opening an older conversation switches to
// it and makes it the current one.
func TestChatNewAndSwitch(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	first := c.chatSend(t, "first topic", 0)

	res := c.postForm("/chat/new", nil)
	mustStatus(t, res, http.StatusSeeOther)
	if loc := res.Header.Get("Location"); loc != "/chat" {
		t.Fatalf("new chat redirects to %q", loc)
	}
	doc := c.chatScreen(t, "/chat")
	if len(chatTranscript(doc)) != 0 || len(htmltest.ByTestID(doc, "chat-welcome")) != 1 {
		t.Fatal("new chat is not empty")
	}
	if got := chatComposerExchange(t, doc); got != "0" {
		t.Fatalf("new chat posts to exchange %q", got)
	}
	if len(htmltest.FindAll(doc, func(n *chatNode) bool { _, ok := htmltest.Attr(n, "data-current"); return ok })) != 0 {
		t.Fatal("a history item is highlighted on a new chat")
	}

	second := c.chatSend(t, "second topic", 0)
	if second == first {
		t.Fatal("new chat sent into the old exchange")
	}
	doc = c.chatScreen(t, "/chat")
	if got := chatHistoryIDs(doc); len(got) != 2 || got[0] != second || got[1] != first {
		t.Fatalf("history %v, want [%d %d]", got, second, first)
	}

	// Switch back to the first one.
	doc = c.chatScreen(t, fmt.Sprintf("/chat/%d", first))
	if msgs := chatTranscript(doc); len(msgs) != 2 || msgs[0].Text != "first topic" {
		t.Fatalf("switched transcript %+v", msgs)
	}
	current := htmltest.FindAll(doc, func(n *chatNode) bool { v, _ := htmltest.Attr(n, "data-current"); return v == "true" })
	if len(current) != 1 {
		t.Fatalf("%d current items", len(current))
	}
	if v, _ := htmltest.Attr(current[0], "data-exchange-id"); v != fmt.Sprint(first) {
		t.Fatalf("highlighted %s, want %d", v, first)
	}
	// It is now the current one.
	if msgs := chatTranscript(c.chatScreen(t, "/chat")); len(msgs) != 2 || msgs[0].Text != "first topic" {
		t.Fatalf("/chat after switching shows %+v", msgs)
	}
}

// The conversation in the session was deleted elsewhere (the API, another
// tab): /chat starts a new one rather than failing.
func TestChatCurrentDeletedElsewhere(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "soon gone", 0)
	if _, err := a.store.DeleteExchange(context.Background(), c.user.ID, id); err != nil {
		t.Fatal(err)
	}
	doc := c.chatScreen(t, "/chat")
	if len(chatTranscript(doc)) != 0 || chatComposerExchange(t, doc) != "0" {
		t.Fatal("a deleted current conversation is not replaced by a new chat")
	}
}

// Error rows show as errors; the user's message is kept above them.
func TestChatErrorRow(t *testing.T) {
	a := newTestApp(t, withChatProvider(chatDownProvider{}))
	c := a.register("ada")
	id := c.chatSend(t, "are you there?", 0)
	msgs := chatTranscript(c.chatScreen(t, fmt.Sprintf("/chat/%d", id)))
	if len(msgs) != 2 || msgs[0].Role != "user" || msgs[1].Role != "error" ||
		!strings.Contains(msgs[1].Text, "connection refused <b>by upstream</b>") {
		t.Fatalf("transcript %+v", msgs)
	}
}

// User text is escaped on the page, assistant Markdown is rendered.
func TestChatScreenEscapesAndRenders(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "<script>alert(1)</script> **bold**", 0)
	res := c.get(fmt.Sprintf("/chat/%d", id))
	mustStatus(t, res, http.StatusOK)
	body := bodyOf(res)
	if strings.Contains(body, "<script>alert(1)") {
		t.Fatal("user text reached the page unescaped")
	}
	doc := chatDoc(t, res)
	msgs := chatTranscript(doc)
	if msgs[0].Text != "<script>alert(1)</script> **bold**" {
		t.Fatalf("user text shown as %q", msgs[0].Text)
	}
	// The builtin agent quotes the question: in the reply, Markdown applies.
	reply := htmltest.ByTestID(doc, "message")[1]
	if len(htmltest.FindAll(reply, func(n *chatNode) bool { return n.Data == "strong" })) != 1 {
		t.Fatalf("assistant Markdown not rendered: %s", body)
	}
	if len(htmltest.FindAll(doc, func(n *chatNode) bool { return n.Data == "script" && strings.Contains(htmltest.Text(n), "alert") })) != 0 {
		t.Fatal("a script element made it into the page")
	}
}
