package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/gofiber/fiber/v2"

	"palaver/handlers"
	"palaver/models"
)

// apiFuzzEnv is the app the fuzz inputs go to: made once per fuzz worker
// (the body of FuzzAPIRequest runs once per process; only the function given
// to f.Fuzz runs per input), so an input costs one request and two reads.
type apiFuzzEnv struct {
	app   *fiber.App
	store *models.Store
	owner string // API key of the account that owns the rows in the paths
	other string // API key of the account whose requests may delete and create
	reply int64  // the owner's assistant reply (PUT .../message/{id}/feedback)
	page  int64  // the owner's page (PUT /api/pages/{id})
	chat  int64  // the owner's exchange (PATCH /api/chat/exchange/{id})
}

// apiFuzzRoute is one route the fuzzer sends bodies to, as the key that
// sends them and the path.
type apiFuzzRoute struct {
	method string
	path   func(e *apiFuzzEnv) string
	owner  bool // sent with the owner's key (else the other account's)
	query  bool // the input goes in the query string as q, not in the body
}

var apiFuzzRoutes = []apiFuzzRoute{
	{"POST", func(*apiFuzzEnv) string { return "/api/chat" }, false, false},
	{"PUT", func(e *apiFuzzEnv) string { return fmt.Sprintf("/api/chat/message/%d/feedback", e.reply) }, true, false},
	{"PUT", func(*apiFuzzEnv) string { return "/api/chat/exchanges/batch/delete" }, false, false},
	{"POST", func(*apiFuzzEnv) string { return "/api/pages" }, false, false},
	{"PUT", func(e *apiFuzzEnv) string { return fmt.Sprintf("/api/pages/%d", e.page) }, true, false},
	{"GET", func(*apiFuzzEnv) string { return "/api/chat/search" }, true, true},
	{"PATCH", func(e *apiFuzzEnv) string { return fmt.Sprintf("/api/chat/exchange/%d", e.chat) }, true, false},
}

// newAPIFuzzEnv builds the app on a temporary SQLite database with two
// accounts: the owner has a reply and a page for the PUT routes to change
// (never delete); the other account's batch deletes and chats cannot reach
// them, so every input finds the owner's rows in place.
func newAPIFuzzEnv(f *testing.F) *apiFuzzEnv {
	ctx := context.Background()
	d, store := newDeps(f)
	app := handlers.New(d)
	e := &apiFuzzEnv{app: app, store: store}
	var ids [2]int64
	for i, name := range []string{"owner", "other"} {
		u, err := store.CreateUser(ctx, name, "x", false)
		if err != nil {
			f.Fatal(err)
		}
		ids[i] = u.ID
		key := "pal_fuzz_" + name
		if _, err := store.CreateAPIKey(ctx, u.ID, "fuzz", handlers.HashAPIKey(key)); err != nil {
			f.Fatal(err)
		}
		if i == 0 {
			e.owner = key
		} else {
			e.other = key
		}
	}
	ex, _, err := store.StartTurn(ctx, models.TurnStart{UserID: ids[0], Scope: models.ScopeGeneral,
		AgentType: "router", Query: "a question", Owner: "fuzz"})
	if err != nil {
		f.Fatal(err)
	}
	reply := &models.Message{Role: models.RoleAssistant, Content: "an answer"}
	if err := store.FinishTurn(ctx, ex.ID, "fuzz", reply); err != nil {
		f.Fatal(err)
	}
	p, err := store.CreatePage(ctx, ids[0], "Trip", pageTrip)
	if err != nil {
		f.Fatal(err)
	}
	e.reply, e.page, e.chat = reply.ID, p.ID, ex.ID
	return e
}

// fingerprint sums up everything the fuzzed routes can change: rows added
// or deleted anywhere, and the owner's reply and page. It stays cheap as the
// database grows.
func (e *apiFuzzEnv) fingerprint(t *testing.T) string {
	t.Helper()
	db, err := e.store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, q := range []string{
		"SELECT COUNT(*), COALESCE(MAX(id), 0), COALESCE(SUM(turn_count), 0), COALESCE(MAX(updated_at), '') FROM exchanges",
		"SELECT COUNT(*), COALESCE(MAX(id), 0), COALESCE(SUM(feedback), -1), '' FROM messages",
		"SELECT COUNT(*), COALESCE(MAX(id), 0), COALESCE(MAX(updated_at), ''), '' FROM pages",
		"SELECT COUNT(*), COALESCE(MAX(id), 0), '', '' FROM page_revisions",
		fmt.Sprintf("SELECT COALESCE(feedback, -9), COALESCE(feedback_comment, '<nil>'), content, '' FROM messages WHERE id = %d", e.reply),
		fmt.Sprintf("SELECT title, content, updated_at, COALESCE(deleted_at, 'live') FROM pages WHERE id = %d", e.page),
	} {
		var a, b, c, d any
		if err := db.QueryRow(q).Scan(&a, &b, &c, &d); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		fmt.Fprintln(&out, a, b, c, d)
	}
	return out.String()
}

// FuzzAPIRequest sends arbitrary bodies to the JSON API's decoding routes:
// never a panic or a 5xx; always one valid JSON value; a 4xx has the error
// shape of API.md and changes nothing.
func FuzzAPIRequest(f *testing.F) {
	for _, s := range []struct {
		route uint8
		body  string
	}{
		{0, `{"query": "hello"}`}, {0, `{"query": "  "}`}, {0, `{"query": 1}`}, {0, `{"query": "hi", "exchange_id": -1}`},
		{0, `{"query": "hi", "exchange_id": 1}`}, {0, `{"query": "hi", "page_id": 1, "regenerate": true}`},
		{0, `{"query": "hi"} {}`}, {0, `[`}, {0, `null`}, {0, ``}, {0, `{"query": "hi", "exchange_id": 1e400}`},
		{1, `{"feedback": 1}`}, {1, `{"feedback": null, "comment": "x"}`}, {1, `{"feedback": 2}`}, {1, `{}`},
		{1, `{"feedback": 0, "comment": 5}`}, {1, `{"feedback": "1"}`}, {1, `1`},
		{2, `{"ids": [1, 2, 3]}`}, {2, `{"ids": null}`}, {2, `{"ids": [1.5]}`}, {2, `{"ids": "1"}`}, {2, `{"ids": [-1, 0, 9223372036854775807]}`},
		{3, `{"title": "Notes", "content": "# Hello"}`}, {3, `{"title": ""}`}, {3, `{"content": "x"}`}, {3, `{"title": "\u0000"}`},
		{4, `{"content": "new"}`}, {4, `{"content": "new", "title": " "}`}, {4, `{"title": "t"}`}, {4, `{"content": null}`},
		{5, `question`}, {5, `"unbalanced`}, {5, `AND OR NOT NEAR(a b)`}, {5, `col:val *`}, {5, `\ ( ) ^`}, {5, ``}, {5, "\x00\x7f"},
		{6, `{"title": "New"}`}, {6, `{"pinned": true}`}, {6, `{"archived": "yes"}`}, {6, `{"title": ""}`}, {6, `{}`},
	} {
		f.Add(s.route, []byte(s.body))
	}
	e := newAPIFuzzEnv(f)
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := apiFuzzRoutes[int(route)%len(apiFuzzRoutes)]
		before := e.fingerprint(t)
		path, reqBody := r.path(e), body
		if r.query {
			path, reqBody = path+"?q="+url.QueryEscape(string(body)), nil
		}
		req := httptest.NewRequest(r.method, path, bytes.NewReader(reqBody))
		req.Header.Set("Content-Type", "application/json")
		if r.owner {
			req.Header.Set("x-api-key", e.owner)
		} else {
			req.Header.Set("x-api-key", e.other)
		}
		res, err := e.app.Test(req, -1)
		if err != nil {
			t.Fatalf("%s %s: %v", r.method, req.URL.Path, err)
		}
		out, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("%s %s with %q: status %d: %s", r.method, req.URL.Path, body, res.StatusCode, out)
		if res.StatusCode >= 500 {
			t.Fatal(what)
		}
		if !json.Valid(out) {
			t.Fatalf("%s: not JSON", what)
		}
		if res.StatusCode < 400 {
			return
		}
		var shape struct {
			ErrMsg  *string `json:"err_msg"`
			ErrCode *int    `json:"err_code"`
		}
		if json.Unmarshal(out, &shape) != nil || shape.ErrMsg == nil || *shape.ErrMsg == "" ||
			shape.ErrCode == nil || *shape.ErrCode != res.StatusCode {
			t.Fatalf("%s: not the API error shape", what)
		}
		if after := e.fingerprint(t); after != before {
			t.Fatalf("%s: a refused request changed the database:\n%s---\n%s", what, before, after)
		}
		if res.StatusCode != http.StatusBadRequest && res.StatusCode != http.StatusNotFound &&
			res.StatusCode != http.StatusConflict && res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("%s: a status API.md does not give for a body", what)
		}
	})
}
