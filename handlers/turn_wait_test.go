package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"palaver/agents"
	"palaver/handlers"
	"palaver/models"
)

// turnWaitDeadline is the database deadline of the slow-reply tests: far
// shorter than the reply, so that a wait it bounded would fail.
const turnWaitDeadline = 250 * time.Millisecond

// withSlowReplies shortens the database deadline and has the builtin agent
// type slowly, so that every reply takes over half a second: more than two
// database deadlines.
func withSlowReplies() appOption {
	return func(d *handlers.Deps) {
		d.Config.DBDeadline = turnWaitDeadline
		d.Agents = agents.New(d.Store, &agents.Builtin{Delay: 25 * time.Millisecond},
			agents.Options{Logger: d.Logger, Hub: d.Hub})
	}
}

// turnWaitExchange stores a finished first turn of a general chat, as the
// agents would, without waiting for a slow reply.
func turnWaitExchange(t *testing.T, a *testApp, userID int64, failed bool) (ex *models.Exchange, query, reply int64) {
	t.Helper()
	ctx := context.Background()
	ex, q, err := a.store.StartTurn(ctx, models.TurnStart{UserID: userID, Scope: models.ScopeGeneral, AgentType: "router", Query: "first question", Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if failed {
		if _, err := a.store.FailTurn(ctx, ex.ID, "test", "the model went away"); err != nil {
			t.Fatal(err)
		}
		return ex, q.ID, 0
	}
	if err := a.store.FinishTurn(ctx, ex.ID, "test", &models.Message{Role: models.RoleAssistant, Content: "first answer"}); err != nil {
		t.Fatal(err)
	}
	return ex, q.ID, a.chatReply(userID, ex.ID)
}

// TestSlowReplyOutlastsTheDatabaseDeadline answers every synchronous path
// (the JSON API and the forms without JavaScript) with a reply that takes
// longer than the database deadline: the request waits for it and answers
// with it, never the deadline's 503.
func TestSlowReplyOutlastsTheDatabaseDeadline(t *testing.T) {
	d, store := newDeps(t)
	d.CSRFKey = make([]byte, 32) // one key for the two apps below, which share the sessions
	a := &testApp{t: t, app: handlers.New(d), store: store, hub: d.Hub, agents: d.Agents, sessions: d.Sessions}
	api := a.apiClient("ann")
	web := a.register("bob")
	// The accounts are made first: a password's hash alone may take longer
	// than the short deadline on a busy machine. From here on, the app
	// has it, and replies outlast it.
	withSlowReplies()(&d)
	a.app = handlers.New(d)
	ctx := context.Background()
	page, err := a.store.CreatePage(ctx, web.user.ID, "Notes", "# Notes\n")
	if err != nil {
		t.Fatal(err)
	}
	job := "job-slow"
	post := func(c *client, path string, body any) func() (int, string) {
		return func() (int, string) {
			res, b := c.api(http.MethodPost, path, body)
			return res.StatusCode, string(b)
		}
	}
	form := func(path string, values url.Values) func() (int, string) {
		return func() (int, string) {
			res := web.postForm(path, values)
			return res.StatusCode, res.Header.Get("Location")
		}
	}
	apiEx, _, _ := turnWaitExchange(t, a, api.user.ID, false)
	apiFailed, _, _ := turnWaitExchange(t, a, api.user.ID, true)
	webEx, webQuery, webReply := turnWaitExchange(t, a, web.user.ID, false)
	webFailed, _, _ := turnWaitExchange(t, a, web.user.ID, true)
	apiReplySeq := a.chatMessages(api.user.ID, apiEx.ID)[1].Seq
	for _, tc := range []struct {
		name   string
		do     func() (int, string)
		status int
		want   string // in the body (API) or the Location (forms)
	}{
		{"POST /api/chat", post(api, "/api/chat", map[string]any{"query": "a slow one"}), 200, `You asked: \"a slow one\"`},
		{"POST /api/chat, a job", post(api, "/api/chat?job_id="+job, map[string]any{"query": "about the job"}), 200, `You asked: \"about the job\"`},
		{"POST /api/chat, continuing", post(api, "/api/chat", map[string]any{"query": "and more", "exchange_id": apiEx.ID}), 200, `You asked: \"and more\"`},
		{"regenerate", post(api, fmt.Sprintf("/api/chat/exchange/%d/regenerate", apiEx.ID), map[string]any{"seq": *apiReplySeq}), 200, `You asked: \"first question\"`},
		{"fork with a query", post(api, fmt.Sprintf("/api/chat/exchange/%d/fork", apiEx.ID), map[string]any{"seq": 0, "query": "edited"}), 200, `You asked: \"edited\"`},
		{"retry", post(api, fmt.Sprintf("/api/chat/exchange/%d/retry", apiFailed.ID), nil), 200, `You asked: \"first question\"`},
		{"no-JS send", form("/chat/send", url.Values{"query": {"a slow form"}}), 303, "/chat/"},
		{"no-JS edit", form(fmt.Sprintf("/chat/message/%d/edit", webQuery), url.Values{"query": {"edited form"}}), 303, "/chat/"},
		{"no-JS regenerate", form(fmt.Sprintf("/chat/message/%d/regenerate", webReply), url.Values{}), 303, "/chat/"},
		{"no-JS retry", form(fmt.Sprintf("/chat/%d/retry", webFailed.ID), url.Values{}), 303, fmt.Sprintf("/chat/%d", webFailed.ID)},
		{"no-JS page chat", form(fmt.Sprintf("/pages/%d/chat", page.ID), url.Values{"query": {"about the page"}}), 303, fmt.Sprintf("/pages/%d/edit", page.ID)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			status, got := tc.do()
			took := time.Since(start)
			if status != tc.status || !strings.Contains(got, tc.want) {
				t.Fatalf("after %s: status %d %q, want %d with %q", took.Round(time.Millisecond), status, got, tc.status, tc.want)
			}
			if took < turnWaitDeadline {
				t.Fatalf("answered in %s, before the reply could be written: it did not wait", took)
			}
		})
	}

	// The forms came back once their replies were written.
	msgs := a.chatMessages(web.user.ID, webFailed.ID)
	if last := msgs[len(msgs)-1]; last.Role != models.RoleAssistant || !strings.Contains(last.Content, "first question") {
		t.Errorf("the retried exchange ends with %s %q, not the reply", last.Role, last.Content)
	}
	if id := web.chatSend(t, "one more slow form", webEx.ID); id != webEx.ID {
		t.Fatalf("the send went to %d, not %d", id, webEx.ID)
	}
	msgs = a.chatMessages(web.user.ID, webEx.ID)
	if last := msgs[len(msgs)-1]; last.Role != models.RoleAssistant || !strings.Contains(last.Content, "one more slow form") {
		t.Errorf("the no-JS send came back before its reply: the log ends with %s %q", last.Role, last.Content)
	}
}
