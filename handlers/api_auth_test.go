package handlers_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
)

// apiRoute is one call of the JSON API.
type apiRoute struct {
	method, path string
	body         any
}

// apiRoutes is every JSON API route, aimed at an exchange and a message.
func apiRoutes(exchangeID, messageID int64) []apiRoute {
	return []apiRoute{
		{http.MethodPost, "/api/chat", map[string]any{"query": "hi", "exchange_id": exchangeID}},
		{http.MethodGet, "/api/chat/history", nil},
		{http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages", exchangeID), nil},
		{http.MethodPut, fmt.Sprintf("/api/chat/exchange/%d/feedback", exchangeID), "1"},
		{http.MethodPut, fmt.Sprintf("/api/chat/message/%d/feedback", messageID), map[string]any{"feedback": 1}},
		{http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", exchangeID), nil},
		{http.MethodPut, "/api/chat/exchanges/batch/delete", map[string]any{"ids": []int64{exchangeID}}},
		{http.MethodDelete, "/api/chat/history", nil},
	}
}

// apiState is everything a refused call must leave as it was: ada's
// exchange, its log and feedback, her history, and the row counts.
func apiState(owner *client, exchangeID int64) string {
	owner.a.t.Helper()
	_, msgs := owner.api(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages", exchangeID), nil)
	_, hist := owner.api(http.MethodGet, "/api/chat/history", nil)
	return fmt.Sprintf("%s\n%s\n%v", msgs, hist, owner.a.apiRows())
}

func TestAPIAuthRequired(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	id := *ada.apiChat("hello", 0).ExchangeID
	reply := ada.apiMessages(id)[1].ID
	before := apiState(ada, id)

	signedOut := a.anon()
	signedOut.get("/login") // a session, but nobody signed in
	for name, c := range map[string]*client{
		"no credentials": a.anon(),
		"signed out":     signedOut,
		"bad key":        {a: a, cookies: map[string]string{}, apiKey: "pal_not_a_key"},
		"revoked-looking key": {a: a, cookies: map[string]string{},
			apiKey: ada.apiKey + "x"},
	} {
		for _, r := range apiRoutes(id, reply) {
			t.Run(name+" "+r.method+" "+r.path, func(t *testing.T) {
				res, b := c.api(r.method, r.path, r.body)
				apiErr(t, res, b, http.StatusUnauthorized)
			})
		}
	}
	if after := apiState(ada, id); after != before {
		t.Fatalf("unauthenticated calls changed state:\n%s\n---\n%s", before, after)
	}
}

func TestAPISessionAuth(t *testing.T) {
	a := newTestApp(t)
	ada := a.register("ada")
	if ada.csrf == "" {
		t.Fatal("the signed-in browser has no CSRF token")
	}
	// With the session and its token, a browser can use the API.
	id := *ada.apiChat("hello from the browser", 0).ExchangeID
	reply := ada.apiMessages(id)[1].ID

	cookieOnly, forged := *ada, *ada
	cookieOnly.csrf, forged.csrf = "", "forged-token"
	if h := cookieOnly.apiHistory(""); len(h) != 1 || h[0].ID != id {
		t.Fatalf("GET with the cookie alone: %+v", h)
	}
	if m := cookieOnly.apiMessages(id); len(m) != 2 {
		t.Fatalf("GET messages with the cookie alone: %+v", m)
	}

	before := apiState(ada, id)
	for _, r := range apiRoutes(id, reply) {
		if r.method == http.MethodGet {
			continue
		}
		for name, c := range map[string]*client{"no token": &cookieOnly, "forged token": &forged} {
			t.Run(name+" "+r.method+" "+r.path, func(t *testing.T) {
				res, b := c.api(r.method, r.path, r.body)
				if msg := apiErr(t, res, b, http.StatusForbidden); !strings.Contains(msg, "X-CSRF-Token") {
					t.Fatalf("err_msg %q", msg)
				}
			})
		}
	}
	if after := apiState(ada, id); after != before {
		t.Fatalf("calls without the CSRF token changed state:\n%s\n---\n%s", before, after)
	}

	// With the token, every unsafe route works (in an order that leaves
	// something for the next one).
	for _, r := range apiRoutes(id, reply) {
		if r.method == http.MethodGet {
			continue
		}
		res, b := ada.api(r.method, r.path, r.body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s %s with the token: %d %s", r.method, r.path, res.StatusCode, b)
		}
	}
	if n := a.apiCount("exchanges"); n != 0 {
		t.Fatalf("%d exchanges left after the deletes", n)
	}
}

func TestAPICrossUser(t *testing.T) {
	a := newTestApp(t)
	ada, bob := a.apiClient("ada"), a.apiClient("bob")
	id := *ada.apiChat("ada's secret", 0).ExchangeID
	ada.apiChat("more secrets", id)
	msgs := ada.apiMessages(id)
	userMsg, reply := msgs[0].ID, msgs[3].ID
	bob.apiChat("bob's own", 0)
	const missing = 999_999

	before := apiState(ada, id)
	for _, tc := range []struct {
		name, method, path string // path: %d is the id
		body               func(id int64) any
		id                 int64
	}{
		{"messages", http.MethodGet, "/api/chat/exchange/%d/messages", nil, id},
		{"messages at", http.MethodGet, "/api/chat/exchange/%d/messages?at=0", nil, id},
		{"exchange feedback", http.MethodPut, "/api/chat/exchange/%d/feedback", func(int64) any { return "0" }, id},
		{"reply feedback", http.MethodPut, "/api/chat/message/%d/feedback", func(int64) any { return map[string]any{"feedback": 0} }, reply},
		{"user message feedback", http.MethodPut, "/api/chat/message/%d/feedback", func(int64) any { return map[string]any{"feedback": 0} }, userMsg},
		{"delete", http.MethodDelete, "/api/chat/exchange/%d", nil, id},
		{"continue", http.MethodPost, "/api/chat", func(id int64) any { return map[string]any{"query": "hijack", "exchange_id": id} }, id},
		{"continue as a job", http.MethodPost, "/api/chat?job_id=5", func(id int64) any { return map[string]any{"query": "hijack", "exchange_id": id} }, id},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := func(target int64) []byte {
				var body any
				if tc.body != nil {
					body = tc.body(target)
				}
				path := tc.path
				if strings.Contains(path, "%d") {
					path = fmt.Sprintf(path, target)
				}
				res, b := bob.api(tc.method, path, body)
				apiErr(t, res, b, http.StatusNotFound)
				return b
			}
			theirs, none := call(tc.id), call(missing)
			if string(theirs) != string(none) {
				t.Fatalf("another user's id answers %s, a missing one %s", theirs, none)
			}
		})
	}
	var out map[string]any
	bob.apiJSON(http.MethodPut, "/api/chat/exchanges/batch/delete", map[string]any{"ids": []int64{id}}, 200, &out)
	if out["message"] != "Deleted 0 exchanges" {
		t.Fatalf("bob's batch delete of ada's exchange: %v", out)
	}
	bob.apiJSON(http.MethodDelete, "/api/chat/history", nil, 200, &out)
	if out["message"] != "Cleared 1 chat exchanges with 2 messages" {
		t.Fatalf("bob's clear: %v", out)
	}
	if h := bob.apiHistory(""); len(h) != 0 {
		t.Fatalf("bob's history shows %+v", h)
	}
	// bob's own exchange went; compare ada's state without the row counts.
	after := apiState(ada, id)
	if cut := strings.LastIndexByte(before, '\n'); after[:strings.LastIndexByte(after, '\n')] != before[:cut] {
		t.Fatalf("bob's calls changed ada's exchange:\n%s\n---\n%s", before, after)
	}
	if n := a.apiCount("messages"); n != 4 {
		t.Fatalf("%d messages left, want ada's 4", n)
	}
}

// pipeListener serves an app over in-memory connections. fiber's app.Test
// cannot show a 413 (fasthttp refuses the body before any handler and Test
// returns that as an error). A pipe has no reset: the client always reads
// what the server wrote. (Over TCP, handlers.Listener makes that so too;
// TestOverSizeBodyIsAnswered tests it.)
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func servePipe(t *testing.T, app *fiber.App) *pipeListener {
	ln := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	return ln
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "pipe"} }

// do writes req whole (the server may stop reading it) and reads the answer.
func (l *pipeListener) do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	client, server := net.Pipe()
	defer client.Close()
	l.conns <- server
	go func() { _ = req.Write(client) }() // fails once the server hangs up: expected
	res, err := http.ReadResponse(bufio.NewReader(client), req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func TestAPIBodyLimit(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	ln := servePipe(t, a.app)
	const limit = 1 << 20
	envelope := `{"query": "hi", "context": "%s"}`
	pad := func(n int) string { return fmt.Sprintf(envelope, strings.Repeat("a", n-len(envelope)+2)) }

	before := a.apiRows()
	for _, tc := range []struct {
		name, method, path, body string
		chunked                  bool
	}{
		{"one byte over", http.MethodPost, "/api/chat", pad(limit + 1), false},
		{"three MiB", http.MethodPost, "/api/chat", pad(3 * limit), false},
		{"chunked, no length", http.MethodPost, "/api/chat", pad(limit + 1), true},
		{"batch delete", http.MethodPut, "/api/chat/exchanges/batch/delete", `{"ids": [` + strings.Repeat("1,", limit/2) + `1]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // hides the length: sent chunked
			}
			req := httptest.NewRequest(tc.method, "http://palaver.test"+tc.path, body)
			req.Header.Set("x-api-key", ada.apiKey)
			req.Header.Set("Content-Type", "application/json")
			if tc.chunked != (req.ContentLength <= 0) {
				t.Fatalf("request length %d, chunked %v", req.ContentLength, tc.chunked)
			}
			// A chunked request fasthttp refuses has lost its path before the
			// error handler runs; it still gets the JSON error shape.
			res, b := ln.do(t, req)
			apiErr(t, res, b, http.StatusRequestEntityTooLarge)
		})
	}
	if after := a.apiRows(); after != before {
		t.Fatalf("an over-size body stored rows: %v → %v", before, after)
	}

	// Exactly the limit is read and answered.
	body := pad(limit)
	if len(body) != limit {
		t.Fatalf("test body is %d bytes, want %d", len(body), limit)
	}
	req := httptest.NewRequest(http.MethodPost, "http://palaver.test/api/chat", strings.NewReader(body))
	req.Header.Set("x-api-key", ada.apiKey)
	res, b := ln.do(t, req)
	mustStatus(t, res, http.StatusOK)
	if !strings.Contains(string(b), `"error_code":0`) || a.apiCount("messages") != before[1]+2 {
		t.Fatalf("a body of exactly 1 MiB: %s", b[:min(len(b), 300)])
	}
}
