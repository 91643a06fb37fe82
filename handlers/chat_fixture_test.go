package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"palaver/agents"
	"palaver/handlers"
	"palaver/models"
)

// The chat tests' helpers: reading the pages by data-testid, sending
// messages as a browser with and without JavaScript, and snapshots of the
// database to prove a refused request changed nothing.

// chatDoc parses a response body as the browser would.
func chatDoc(t *testing.T, res *http.Response) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(bodyOf(res)))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc
}

func chatFind(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && match(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func chatAttr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func chatByTestID(n *html.Node, id string) []*html.Node {
	return chatFind(n, func(e *html.Node) bool { v, _ := chatAttr(e, "data-testid"); return v == id })
}

func chatByID(n *html.Node, id string) *html.Node {
	got := chatFind(n, func(e *html.Node) bool { v, _ := chatAttr(e, "id"); return v == id })
	if len(got) == 0 {
		return nil
	}
	return got[0]
}

func chatText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// chatMsg is a transcript entry as the page shows it.
type chatMsg struct {
	ID   string
	Role string
	Text string
}

// chatTranscript lists the messages on a page.
func chatTranscript(doc *html.Node) []chatMsg {
	var out []chatMsg
	for _, m := range chatByTestID(doc, "message") {
		id, _ := chatAttr(m, "id")
		role, _ := chatAttr(m, "data-role")
		out = append(out, chatMsg{ID: id, Role: role, Text: chatText(m)})
	}
	return out
}

// chatHistoryIDs lists the exchange ids of the history items, in order.
func chatHistoryIDs(doc *html.Node) []int64 {
	var out []int64
	for _, it := range chatByTestID(doc, "history-item") {
		v, _ := chatAttr(it, "data-exchange-id")
		id, _ := strconv.ParseInt(v, 10, 64)
		out = append(out, id)
	}
	return out
}

// chatComposerExchange is the exchange_id the composer would post.
func chatComposerExchange(t *testing.T, doc *html.Node) string {
	t.Helper()
	in := chatByID(doc, "composer-exchange")
	if in == nil {
		t.Fatal("no composer exchange_id field")
	}
	v, _ := chatAttr(in, "value")
	return v
}

// chatSend posts the composer as a browser without JavaScript and returns
// the exchange the 303 leads to.
func (c *client) chatSend(t *testing.T, query string, exchangeID int64) int64 {
	t.Helper()
	res := c.postForm("/chat/send", url.Values{"query": {query}, "exchange_id": {strconv.FormatInt(exchangeID, 10)}})
	mustStatus(t, res, http.StatusSeeOther)
	loc := res.Header.Get("Location")
	id, err := strconv.ParseInt(strings.TrimPrefix(loc, "/chat/"), 10, 64)
	if err != nil || !strings.HasPrefix(loc, "/chat/") {
		t.Fatalf("send redirected to %q, want /chat/{id}", loc)
	}
	return id
}

// postFormFrom posts a form (with the CSRF field) from the page at referer.
func (c *client) postFormFrom(path, referer string, form url.Values) *http.Response {
	form.Set("csrf_token", c.csrf)
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Referer", referer)
	return c.do(req)
}

// chatScreen GETs a chat page and checks it is a 200. /chat with a current
// conversation is a redirect to its address, followed as a browser does.
func (c *client) chatScreen(t *testing.T, path string) *html.Node {
	t.Helper()
	res := c.get(path)
	if loc := res.Header.Get("Location"); res.StatusCode == http.StatusSeeOther &&
		(path == "/chat" || strings.HasPrefix(path, "/chat?")) && strings.HasPrefix(loc, "/chat/") {
		res = c.get(loc)
	}
	mustStatus(t, res, http.StatusOK)
	return chatDoc(t, res)
}

// chatSnapshot dumps what the chat routes can change (exchanges, messages,
// ratings) so a test can prove a refused request changed nothing.
func (a *testApp) chatSnapshot() string {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	var b strings.Builder
	for _, q := range []string{
		"SELECT id, user_id, scope, title, turn_count, updated_at FROM exchanges ORDER BY id",
		"SELECT id, exchange_id, role, content, COALESCE(feedback, -9), COALESCE(feedback_comment, '<nil>') FROM messages ORDER BY id",
	} {
		rows, err := db.Query(q)
		if err != nil {
			a.t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				a.t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
	}
	return b.String()
}

// chatExec runs a statement on the test database (to arrange times).
func (a *testApp) chatExec(query string, args ...any) {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := db.Exec(query, args...); err != nil {
		a.t.Fatal(err)
	}
}

// chatMessages is the stored log of an exchange.
func (a *testApp) chatMessages(userID, exchangeID int64) []models.Message {
	a.t.Helper()
	msgs, err := a.store.Messages(context.Background(), userID, exchangeID, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	return msgs
}

// chatReply is the id of the latest assistant message of an exchange.
func (a *testApp) chatReply(userID, exchangeID int64) int64 {
	a.t.Helper()
	msgs := a.chatMessages(userID, exchangeID)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == models.RoleAssistant {
			return msgs[i].ID
		}
	}
	a.t.Fatalf("exchange %d has no reply", exchangeID)
	return 0
}

// chatOtherScope makes one of the user's exchanges that is not a general
// chat (a job's), as the agents would.
func (a *testApp) chatOtherScope(userID int64) int64 {
	a.t.Helper()
	job := "77"
	ex, _, err := a.store.StartTurn(context.Background(), models.TurnStart{
		UserID: userID, Scope: models.ScopeJob, JobID: &job, AgentType: "router", Query: "job question", Owner: "test",
	})
	if err != nil {
		a.t.Fatal(err)
	}
	if err := a.store.FinishTurn(context.Background(), ex.ID, "test",
		&models.Message{Role: models.RoleAssistant, Content: "job answer"}); err != nil {
		a.t.Fatal(err)
	}
	return ex.ID
}

// chatNode is an element of a parsed page.
type chatNode = html.Node

var chatHTMXAlert = regexp.MustCompile(`data-testid="alert"`)

// withChatProvider runs the app's agents on p instead of the builtin one.
func withChatProvider(p agents.Provider) appOption {
	return func(d *handlers.Deps) {
		d.Agents = agents.New(d.Store.(agents.Store), p, agents.Options{Logger: d.Logger, Hub: d.Hub})
	}
}

// chatDownProvider is an agent backend that is down.
type chatDownProvider struct{}

func (chatDownProvider) Name() string { return "down" }

func (chatDownProvider) Execute(context.Context, agents.Request, func(string)) (*models.AgentResponse, error) {
	return nil, errors.New("connection refused <b>by upstream</b>")
}
