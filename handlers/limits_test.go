package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// limitGet sends a GET over a real connection (fasthttp reads the header
// there, which app.Test does not) with the client's cookies, API key and
// extra headers, and returns the status, content type and body.
func limitGet(t *testing.T, c *client, addr, target string, hdr map[string]string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ck := c.cookieHeader(); ck != "" {
		req.Header.Set("Cookie", ck)
	}
	if c.apiKey != "" {
		req.Header.Set("x-api-key", c.apiKey)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %.80s: %v", target, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

// limitOverLong sends a GET too long for the server's read buffer, as
// limitGet does but on a raw connection, and checks that the answer is the
// API's JSON 400; it returns the message.
//
// The server answers 400 before it has read the whole request and closes the
// connection with bytes still unread, so the kernel resets the connection;
// the reset can overtake the 400 and discard it before the client reads it
// ("connection reset by peer" instead of an answer). fasthttp cannot be told
// to drain first, so write errors are ignored, and the whole request is sent
// again, up to 5 times, while the reset wins the race. At least one attempt
// must read an answer, and every answer read must be the 400.
func limitOverLong(t *testing.T, c *client, addr, target string, hdr map[string]string) string {
	t.Helper()
	var req strings.Builder
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", target, addr)
	if ck := c.cookieHeader(); ck != "" {
		fmt.Fprintf(&req, "Cookie: %s\r\n", ck)
	}
	if c.apiKey != "" {
		fmt.Fprintf(&req, "x-api-key: %s\r\n", c.apiKey)
	}
	for k, v := range hdr {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n")
	what := fmt.Sprintf("GET %.20s… (%d bytes)", target, req.Len())

	var resets []string
	for range 5 {
		status, ctype, body, err := limitRaw(addr, req.String())
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			t.Fatalf("%s: %v", what, err) // no answer at all: not the race
		case err != nil:
			resets = append(resets, err.Error())
			continue
		}
		return limitJSONErr(t, what, status, ctype, body, http.StatusBadRequest)
	}
	t.Fatalf("%s: no answer read in 5 attempts: %s", what, strings.Join(resets, "; "))
	return ""
}

// limitRaw sends a raw request on a new connection and reads the answer.
// Only reading can fail: the server may close before it has read the whole
// request, and then the answer it sent is what counts.
func limitRaw(addr, req string) (status int, ctype, body string, err error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return 0, "", "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return 0, "", "", err
	}
	_, _ = conn.Write([]byte(req))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, "", "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", "", err
	}
	return res.StatusCode, res.Header.Get("Content-Type"), string(b), nil
}

// limitJSONErr checks the API's error shape and returns its message.
func limitJSONErr(t *testing.T, what string, status int, ctype, body string, want int) string {
	t.Helper()
	var e struct {
		ErrMsg  string `json:"err_msg"`
		ErrCode int    `json:"err_code"`
	}
	if status != want || !strings.HasPrefix(ctype, "application/json") || json.Unmarshal([]byte(body), &e) != nil ||
		e.ErrCode != want || e.ErrMsg == "" {
		t.Fatalf("%s: status %d (%s) %.300s; want %d with the API error shape", what, status, ctype, body, want)
	}
	return e.ErrMsg
}

// TestOverLongQuery: a query string over 8 KiB is the client's error, 400
// with a message that says so, as the HTML error page or the API's JSON;
// one of exactly 8 KiB, and the longest real ones, still work.
func TestOverLongQuery(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("ann")
	alice := a.register("alice")
	key := a.apiClient("alice")
	addr := a.listen()
	const limit = 8192
	pad := func(n int) string { return "pad=" + strings.Repeat("x", n-len("pad=")) }

	// An HTML page: the error page, with the limit in words.
	status, ctype, body := limitGet(t, alice, addr, "/chat?"+pad(limit+1), nil)
	if status != http.StatusBadRequest || !strings.HasPrefix(ctype, "text/html") ||
		!strings.Contains(body, "query string can have at most 8192 bytes") {
		t.Fatalf("HTML route, %d-byte query: status %d (%s): %.400s", limit+1, status, ctype, body)
	}
	// htmx gets the alert fragment.
	status, _, body = limitGet(t, alice, addr, "/chat/history?"+pad(limit+1), map[string]string{"HX-Request": "true"})
	if status != http.StatusBadRequest || !strings.Contains(body, `data-testid="alert"`) || strings.Contains(body, "<html") {
		t.Fatalf("htmx, %d-byte query: status %d: %.400s", limit+1, status, body)
	}
	// The API: its error shape.
	status, ctype, body = limitGet(t, key, addr, "/api/chat/history?"+pad(limit+1), nil)
	if msg := limitJSONErr(t, "API route", status, ctype, body, http.StatusBadRequest); !strings.Contains(msg, "8192") {
		t.Fatalf("API message %q does not state the limit", msg)
	}
	// Before authentication too: nothing reads an over-long query.
	status, ctype, body = limitGet(t, a.anon(), addr, "/api/chat/history?"+pad(limit+1), nil)
	limitJSONErr(t, "API route without credentials", status, ctype, body, http.StatusBadRequest)

	// Exactly at the limit: served.
	if status, _, body = limitGet(t, alice, addr, "/chat?"+pad(limit), nil); status != http.StatusOK {
		t.Fatalf("HTML route, %d-byte query: status %d: %.300s", limit, status, body)
	}
	if status, _, body = limitGet(t, key, addr, "/api/chat/history?limit=5&"+pad(limit-len("limit=5&")), nil); status != http.StatusOK {
		t.Fatalf("API route, %d-byte query: status %d: %.300s", limit, status, body)
	}

	// The longest real query: every admin filter, a 200-character title in
	// 4-byte characters, and a page cursor taken from the list itself.
	for range 3 {
		a.adminExchange(alice.user.ID, adminEx{queries: []string{"question"}})
	}
	q := url.Values{
		"user": {"2"}, "scope": {"general"}, "agent": {"router"}, "from": {"2000-01-01"}, "to": {"2999-12-31"},
		"q": {strings.Repeat("🦩", 200)}, "negative": {""}, "errors": {""}, "sort": {"activity"},
	}
	status, _, body = limitGet(t, admin, addr, "/admin/exchanges?"+q.Encode(), nil)
	if status != http.StatusOK || !strings.Contains(body, strings.Repeat("🦩", 200)) {
		t.Fatalf("admin filters (%d bytes): status %d: %.300s", len(q.Encode()), status, body)
	}
	var page []apiHistoryOut
	status, _, body = limitGet(t, key, addr, "/api/chat/history?limit=1", nil)
	if status != http.StatusOK || json.Unmarshal([]byte(body), &page) != nil || len(page) != 1 {
		t.Fatalf("history: status %d: %s", status, body)
	}
	long := url.Values{"limit": {"200"}, "before": {page[0].Cursor}, "note": {strings.Repeat("🦩", 200)}}
	if status, _, body = limitGet(t, key, addr, "/api/chat/history?"+long.Encode(), nil); status != http.StatusOK {
		t.Fatalf("history with a cursor and a long note (%d bytes): status %d: %s", len(long.Encode()), status, body)
	}
	if len(q.Encode()) < 2400 || len(q.Encode()) > limit {
		t.Fatalf("the admin query is %d bytes: the test no longer probes near the limit", len(q.Encode()))
	}
}

// TestOverLongURL: a request line that does not fit the 16 KiB read buffer
// is refused by fasthttp before the app sees a path; it is still the
// client's 400, with the API's JSON error shape (the only one the app can
// choose without a path), HTML route or not. Over-large headers after a
// short request line cannot be told apart there (fasthttp reports the URI
// "/" for both), so they get the same 400, whose message names both.
func TestOverLongURL(t *testing.T) {
	a := newTestApp(t)
	alice := a.register("alice")
	key := a.apiClient("alice")
	addr := a.listen()
	huge := strings.Repeat("x", 17<<10)
	before := a.mxSnapshot()

	for _, tc := range []struct {
		c      *client
		target string
		hdr    map[string]string
	}{
		{alice, "/chat?pad=" + huge, nil},
		{alice, "/chat/" + huge, nil},
		{key, "/api/chat/history?pad=" + huge, nil},
		{alice, "/chat", map[string]string{"X-Padding": huge}}, // an over-large header
	} {
		if msg := limitOverLong(t, tc.c, addr, tc.target, tc.hdr); !strings.Contains(msg, "address or headers are too long") {
			t.Fatalf("%.20s… (%d header bytes): message %q", tc.target, len(tc.hdr["X-Padding"]), msg)
		}
	}

	// The server still serves, and nothing was stored.
	if status, _, _ := limitGet(t, alice, addr, "/chat", nil); status != http.StatusOK {
		t.Fatalf("after the refusals: GET /chat: status %d", status)
	}
	if after := a.mxSnapshot(); after != before {
		t.Fatalf("refused requests changed the database:\n%s", mxDiff(before, after))
	}
}
