package handlers_test

import (
	"context"
	"errors"
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
	"palaver/internal/dbtest"
	"palaver/internal/htmltest"
	"palaver/models"
)

// The chat tests' helpers: reading the pages by data-testid, sending
// messages as a browser with and without JavaScript, and snapshots of the
// database to prove a refused request changed nothing.

// chatDoc parses a response body as the browser would.
func chatDoc(t *testing.T, res *http.Response) *html.Node {
	t.Helper()
	return htmltest.Parse(t, bodyOf(res))
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
	for _, m := range htmltest.ByTestID(doc, "message") {
		id, _ := htmltest.Attr(m, "id")
		role, _ := htmltest.Attr(m, "data-role")
		out = append(out, chatMsg{ID: id, Role: role, Text: htmltest.Text(m)})
	}
	return out
}

// chatHistoryIDs lists the exchange ids of the history items, in order.
func chatHistoryIDs(doc *html.Node) []int64 {
	var out []int64
	for _, it := range htmltest.ByTestID(doc, "history-item") {
		v, _ := htmltest.Attr(it, "data-exchange-id")
		id, _ := strconv.ParseInt(v, 10, 64)
		out = append(out, id)
	}
	return out
}

// chatComposerExchange is the exchange_id the composer would post.
func chatComposerExchange(t *testing.T, doc *html.Node) string {
	t.Helper()
	in := htmltest.ByID(doc, "composer-exchange")
	if in == nil {
		t.Fatal("no composer exchange_id field")
	}
	v, _ := htmltest.Attr(in, "value")
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
	return a.dump(
		"SELECT id, user_id, scope, title, turn_count, updated_at FROM exchanges ORDER BY id",
		"SELECT id, exchange_id, role, content, COALESCE(feedback, -9), COALESCE(feedback_comment, '<nil>') FROM messages ORDER BY id",
	)
}

// dump prints the rows the queries answer (dbtest.Dump on the app's
// database), for a snapshot.
func (a *testApp) dump(queries ...string) string {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	return dbtest.Dump(a.t, db, queries...)
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
		d.Agents = agents.New(d.Store, p, agents.Options{Logger: d.Logger, Hub: d.Hub})
	}
}

// chatDownProvider is an agent backend that is down.
type chatDownProvider struct{}

func (chatDownProvider) Name() string { return "down" }

func (chatDownProvider) Execute(context.Context, agents.Request, func(string)) (*models.AgentResponse, error) {
	return nil, errors.New("connection refused <b>by upstream</b>")
}
