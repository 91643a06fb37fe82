package handlers_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"palaver/internal/htmltest"
	"palaver/models"
)

// The admin tests' helpers: exchanges seeded through the store as the agents
// would write them, row counts of every table, and reading the admin pages.

// adminEx describes an exchange to seed.
type adminEx struct {
	scope   string // general when empty
	page    int64  // with page scope
	job     string // with job scope
	agent   string // router when empty
	queries []string
	fail    bool   // the last turn fails with an error row
	rate    *int64 // rating of the first reply
	tools   bool   // the first turn also logs a tool call and its result
	ago     time.Duration
	pinned  bool
}

// adminExchange writes an exchange for userID and returns its id.
func (a *testApp) adminExchange(userID int64, e adminEx) int64 {
	a.t.Helper()
	ctx := context.Background()
	if e.agent == "" {
		e.agent = "router"
	}
	ts := models.TurnStart{UserID: userID, Scope: models.ScopeGeneral, AgentType: e.agent, Owner: "seed"}
	switch e.scope {
	case models.ScopePage:
		ts.Scope, ts.PageID = e.scope, &e.page
	case models.ScopeJob:
		ts.Scope, ts.JobID = e.scope, &e.job
	}
	var id int64
	var firstReply *models.Message
	for i, q := range e.queries {
		ts.Query = q
		ex, _, err := a.store.StartTurn(ctx, ts)
		if err != nil {
			a.t.Fatal(err)
		}
		id, ts.ExchangeID = ex.ID, ex.ID
		if i == len(e.queries)-1 && e.fail {
			if _, err := a.store.FailTurn(ctx, id, "seed", "the model endpoint timed out"); err != nil {
				a.t.Fatal(err)
			}
			continue
		}
		agent := e.agent
		reply := &models.Message{Role: models.RoleAssistant, Content: "reply to " + q, AgentType: &agent,
			AgentResponse: &models.AgentResponse{Content: "reply to " + q, AgentType: agent, Confidence: "high",
				Suggestions: []models.Suggestion{}, Metadata: map[string]any{"model": "test-model", "total_tokens": 42}}}
		var entries []*models.Message
		if i == 0 && e.tools {
			entries = append(entries,
				&models.Message{Role: models.RoleToolCall, Content: "looking it up", Tool: &models.ToolFields{
					CallID: "call-1", Name: "search_docs", Arguments: map[string]any{"q": "pelicans"}}},
				&models.Message{Role: models.RoleToolResult, Content: "3 results", Tool: &models.ToolFields{
					CallID: "call-1", Name: "search_docs", Result: []any{"winter", "coasts"}}})
		}
		entries = append(entries, reply)
		if err := a.store.FinishTurn(ctx, id, "seed", entries...); err != nil {
			a.t.Fatal(err)
		}
		if firstReply == nil {
			firstReply = reply
		}
	}
	if e.rate != nil {
		if _, err := a.store.SetFeedback(ctx, userID, firstReply.ID, e.rate, nil); err != nil {
			a.t.Fatal(err)
		}
	}
	a.chatExec("UPDATE exchanges SET updated_at = ?, pinned = ? WHERE id = ?", time.Now().UTC().Add(-e.ago).Truncate(time.Microsecond), e.pinned, id)
	return id
}

// adminPage makes a page for userID, as the page editor would store it.
func (a *testApp) adminPage(userID int64, title string) int64 {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	now := time.Now().UTC()
	var id int64
	err = db.QueryRow("INSERT INTO pages (user_id, title, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id",
		userID, title, "# "+title, now, now).Scan(&id)
	if err != nil {
		a.t.Fatal(err)
	}
	return id
}

// adminTables are the tables whose rows the admin tests count.
var adminTables = []string{"users", "api_keys", "pages", "page_revisions", "exchanges", "messages",
	"proposal_rejections", "admin_audit", "retention_runs", "settings"}

// adminCounts counts the rows of every table.
func (a *testApp) adminCounts() map[string]int {
	a.t.Helper()
	out := map[string]int{}
	for _, table := range adminTables {
		out[table] = a.apiCount(table)
	}
	return out
}

// adminRowIDs lists the exchange ids of the admin list's rows, in order.
func adminRowIDs(doc *chatNode) []int64 {
	var out []int64
	for _, r := range htmltest.ByTestID(doc, "admin-exchange-row") {
		v, _ := htmltest.Attr(r, "data-exchange-id")
		id, _ := strconv.ParseInt(v, 10, 64)
		out = append(out, id)
	}
	return out
}

// adminWalk reads every batch of the admin list from path on, following the
// "Next page" links as a browser without JavaScript would.
func (c *client) adminWalk(t *testing.T, path string) []int64 {
	t.Helper()
	var all []int64
	for pages := 0; path != ""; pages++ {
		if pages > 50 {
			t.Fatal("the pages do not end")
		}
		doc := c.chatScreen(t, path)
		all = append(all, adminRowIDs(doc)...)
		path = ""
		if next := htmltest.ByTestID(doc, "admin-next"); len(next) == 1 {
			path, _ = htmltest.Attr(next[0], "href")
		}
	}
	return all
}

// adminFlash is the message an admin page shows after an action ("" if none).
func adminFlash(doc *chatNode) string {
	if f := htmltest.ByTestID(doc, "admin-flash"); len(f) == 1 {
		return htmltest.Text(f[0])
	}
	return ""
}

// csrfValue strips what differs between two renderings of the same page.
var csrfValue = regexp.MustCompile(`(csrf_token" value="|X-CSRF-Token&#34;: &#34;|X-CSRF-Token": ")[^"&]*`)

func withoutTokens(body string) string { return csrfValue.ReplaceAllString(body, "$1") }

// adminIDs formats ids for failure messages.
func adminIDs(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return "[" + strings.Join(s, " ") + "]"
}
