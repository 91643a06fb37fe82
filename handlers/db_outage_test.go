package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"palaver/internal/pgtest"
	"palaver/models"
)

// outage is how long the database is away in TestDatabaseAwayAndBack.
const outage = 10 * time.Second

// TestDatabaseAwayAndBack stops a private PostgreSQL server for ten seconds
// under a running process: requests answer 503 with a clear message and
// Retry-After at once (not a hang), a reply being written when it went
// fails with an error row once it is back, nothing committed is lost, and
// the same process serves again without a restart (the pool reconnects).
func TestDatabaseAwayAndBack(t *testing.T) {
	// It mostly waits (the outage, the reconnection): in parallel, on a
	// private cluster of its own; it asserts no elapsed time.
	t.Parallel()
	cluster := pgtest.NewCluster(t)
	migrate, err := models.Open(cluster.DSN, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	migrate.Close()
	gate := newGateProvider()
	a := newProcess(t, cluster.DSN, gate)
	browser := a.register("ann")
	api := a.apiClient("ann")

	first := api.apiChat("hello", 0)
	id := *first.ExchangeID
	before := api.apiMessages(id)
	held := make(chan apiChatOut, 1)
	go func() {
		c := api.at(a)
		res, body := c.api(http.MethodPost, "/api/chat", map[string]any{"query": "hold on", "exchange_id": id})
		var out apiChatOut
		if err := json.Unmarshal(body, &out); err != nil {
			t.Errorf("the held turn's answer (%d): %s", res.StatusCode, body)
		}
		held <- out
	}()
	gate.waitStarted(t, 1)

	cluster.Stop()
	stopped := time.Now()
	// Requests meanwhile: 503 with the reason, through the API, a page and
	// htmx, and the health check.
	for _, try := range []struct {
		c            *client
		method, path string
		body         any
	}{
		{api, http.MethodGet, "/api/chat/history", nil},
		{api, http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages", id), nil},
		{api, http.MethodPost, "/api/chat", map[string]any{"query": "sent while the database is away"}},
	} {
		res, body := try.c.api(try.method, try.path, try.body)
		if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" ||
			!strings.Contains(string(body), "The database is not answering just now") {
			t.Errorf("%s %s while the database is away: %d (Retry-After %q) %s", try.method, try.path, res.StatusCode, res.Header.Get("Retry-After"), body)
		}
	}
	res := browser.get("/chat")
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(bodyOf(res), "The database is not answering just now") {
		t.Errorf("GET /chat while the database is away: %d %s", res.StatusCode, bodyOf(res))
	}
	res = browser.htmx(http.MethodPost, "/chat/send", map[string][]string{"query": {"from a tab"}})
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(bodyOf(res), "The database is not answering just now") {
		t.Errorf("htmx send while the database is away: %d %s", res.StatusCode, bodyOf(res))
	}
	if res := browser.get("/healthz"); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/healthz while the database is away: %d", res.StatusCode)
	}
	// The held reply is written now, while the database is away.
	gate.pass <- struct{}{}

	time.Sleep(time.Until(stopped.Add(outage)))
	cluster.Start()

	// The reply that could not be saved ends as an error row, once the
	// database is back; the question is kept, and so is the earlier turn.
	select {
	case out := <-held:
		if out.ErrorCode == 0 || !strings.Contains(out.ErrorMessage, "database could not be reached") {
			t.Errorf("the held turn's answer: %+v", out)
		}
	case <-time.After(time.Minute):
		t.Fatal("the turn the database went away under did not end within a minute of its return")
	}
	after := api.apiMessages(id)
	if len(after) != len(before)+2 {
		t.Fatalf("log after the outage: %+v", after)
	}
	for i := range before {
		if after[i].ID != before[i].ID || after[i].Content != before[i].Content {
			t.Fatalf("entry %d changed: %+v, was %+v", i, after[i], before[i])
		}
	}
	if q, e := after[len(before)], after[len(before)+1]; q.Role != "user" || q.Content != "hold on" ||
		e.Role != "error" || !strings.Contains(e.Content, "database could not be reached") {
		t.Fatalf("the held turn's entries: %+v, %+v", q, e)
	}
	// Nothing of the refused requests was stored.
	for _, h := range api.apiHistory("") {
		if strings.Contains(h.Query, "away") || strings.Contains(h.Query, "from a tab") {
			t.Fatalf("a refused message was stored: %+v", h)
		}
	}

	// The same process serves again: the session, a new turn, the health
	// check, and the turn's slot was given back (4 more run).
	mustStatus(t, browser.get("/chat"), http.StatusOK)
	mustStatus(t, browser.get("/healthz"), http.StatusOK)
	if out := api.apiChat("hello again", id); out.ErrorCode != 0 || out.Response != "answered hello again" {
		t.Fatalf("a turn after the outage: %+v", out)
	}
}

// TestDatabaseHungAnswers503: a server that stops answering without closing
// its connections (frozen: a hung server, a host lost without a word) costs
// a request the database deadline, not a hang: 503, and the pool serves
// again once the server does.
func TestDatabaseHungAnswers503(t *testing.T) {
	// It mostly waits out the database deadline: in parallel, on a
	// private cluster of its own.
	t.Parallel()
	cluster := pgtest.NewCluster(t)
	migrate, err := models.Open(cluster.DSN, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	migrate.Close()
	a := newProcess(t, cluster.DSN, newGateProvider())
	api := a.apiClient("ann")
	api.apiChat("hello", 0) // the pool has open connections now

	cluster.Freeze()
	answered := make(chan *http.Response, 2)
	for _, path := range []string{"/api/chat/history", "/healthz"} {
		go func() {
			res, _ := api.at(a).api(http.MethodGet, path, nil)
			answered <- res
		}()
	}
	for range 2 {
		select {
		case res := <-answered:
			if res.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("%s with the server frozen: %d %s", res.Request.URL.Path, res.StatusCode, bodyOf(res))
			}
		case <-time.After(time.Minute):
			t.Fatal("a request hung for a minute on a frozen server")
		}
	}
	cluster.Thaw()
	if h := api.apiHistory(""); len(h) != 1 {
		t.Fatalf("history after the thaw: %+v", h)
	}
}
