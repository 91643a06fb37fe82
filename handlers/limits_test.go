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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"palaver/handlers"
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
// The server answers 400 before it has read the whole request, and a
// few megabytes more of headers follow what it refused; the client writes it
// all before it reads, and must read the answer every time (the connection
// lingers, handlers/limits.go, instead of resetting the answer away).
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
	what := fmt.Sprintf("GET %.20s… (%d bytes)", target, req.Len())
	fmt.Fprintf(&req, "X-More: %s\r\n\r\n", strings.Repeat("y", 6<<20))
	status, ctype, body, err := limitRaw(addr, []byte(req.String()))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return limitJSONErr(t, what, status, ctype, body, http.StatusBadRequest)
}

// limitRaw sends a raw request on a new connection, whole, and only then
// reads the answer, as a client that does not read while it sends. Writing
// fails if the server resets the connection, as reading does.
func limitRaw(addr string, req []byte) (status int, ctype, body string, err error) {
	res, body, err := limitRawRes(addr, req)
	if err != nil {
		return 0, "", "", err
	}
	return res.StatusCode, res.Header.Get("Content-Type"), body, nil
}

// limitRawRes is limitRaw's answer whole: the response (its body read) and
// the body.
func limitRawRes(addr string, req []byte) (*http.Response, string, error) {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return nil, "", err
	}
	if _, err := conn.Write(req); err != nil {
		return nil, "", fmt.Errorf("write: %w", err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, "", err
	}
	return res, string(b), nil
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
	// 4-byte characters, and a batch cursor taken from the list itself.
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

// limitPost is a raw POST with a body of n bytes (Content-Length, or chunked
// in 64 KiB chunks), with the client's credentials.
func limitPost(c *client, addr, target string, n int, chunked bool) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", target, addr)
	if ck := c.cookieHeader(); ck != "" {
		fmt.Fprintf(&b, "Cookie: %s\r\nX-CSRF-Token: %s\r\n", ck, c.csrf)
	}
	if c.apiKey != "" {
		fmt.Fprintf(&b, "x-api-key: %s\r\n", c.apiKey)
	}
	if !chunked {
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", n)
		b.WriteString(strings.Repeat("a", n))
		return []byte(b.String())
	}
	b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
	for left := n; left > 0; left -= 64 << 10 {
		k := min(left, 64<<10)
		fmt.Fprintf(&b, "%x\r\n%s\r\n", k, strings.Repeat("a", k))
	}
	b.WriteString("0\r\n\r\n")
	return []byte(b.String())
}

// countingListener counts the bytes the server reads on each connection,
// by the client's address.
type countingListener struct {
	net.Listener
	mu   sync.Mutex
	read map[string]*atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	n := new(atomic.Int64)
	l.mu.Lock()
	l.read[c.RemoteAddr().String()] = n
	l.mu.Unlock()
	return &countingConn{Conn: c, n: n}, nil
}

// readBy is what the server has read from the client at addr so far.
func (l *countingListener) readBy(addr string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.read[addr]; n != nil {
		return n.Load()
	}
	return -1
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

// CloseWrite passes the half-close on, as the connection it wraps can.
func (c *countingConn) CloseWrite() error { return c.Conn.(*net.TCPConn).CloseWrite() }

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// An over-size body is answered 413, and the client reads the answer even
// when it writes its whole body before reading (as Python's urllib and many
// SDKs do): 20 times in a row, 2 MiB and 6 MiB, with a length or chunked, on
// the API and on an HTML route. A client sending far more than the server
// discards (8 MiB) is cut off: the server does not read it all.
func TestOverSizeBodyIsAnswered(t *testing.T) {
	a := newTestApp(t)
	alice := a.register("alice")
	key := a.apiClient("bob")
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: raw, read: map[string]*atomic.Int64{}}
	go func() { _ = a.app.Listener(handlers.Listener(ln)) }()
	t.Cleanup(func() { _ = a.app.ShutdownWithTimeout(2 * time.Second) })
	addr := raw.Addr().String()
	before := a.apiRows()

	for _, tc := range []struct {
		name    string
		c       *client
		target  string
		size    int
		chunked bool
	}{
		{"API, 2 MiB", key, "/api/chat", 2 << 20, false},
		{"API, 6 MiB", key, "/api/chat", 6 << 20, false},
		{"API, 2 MiB chunked", key, "/api/chat", 2 << 20, true},
		{"HTML form, 2 MiB", alice, "/chat/send", 2 << 20, false},
	} {
		req := limitPost(tc.c, addr, tc.target, tc.size, tc.chunked)
		for i := range 20 {
			status, ctype, body, err := limitRaw(addr, req)
			if err != nil {
				t.Fatalf("%s, try %d: %v", tc.name, i+1, err)
			}
			limitJSONErr(t, fmt.Sprintf("%s, try %d", tc.name, i+1), status, ctype, body, http.StatusRequestEntityTooLarge)
		}
	}
	if after := a.apiRows(); after != before {
		t.Fatalf("over-size bodies stored rows: %v → %v", before, after)
	}
	// fasthttp's own answer carries the security headers too.
	res, _, err := limitRawRes(addr, limitPost(key, addr, "/api/chat", 2<<20, false))
	if err != nil {
		t.Fatal(err)
	}
	headersCheck(t, "413", res)

	// 20 MiB: the server discards 8 MiB after the answer, then closes; the
	// client's writing fails, having sent far less than its body.
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	req := limitPost(key, addr, "/api/chat", 20<<20, false)
	sent, werr := conn.Write(req)
	if werr == nil {
		t.Fatalf("the server took all %d bytes of a 20 MiB body", sent)
	}
	var ne net.Error
	if errors.As(werr, &ne) && ne.Timeout() {
		t.Fatalf("writing 20 MiB timed out after %d bytes: the server neither read nor closed", sent)
	}
	local := conn.LocalAddr().String()
	deadline := time.Now().Add(5 * time.Second)
	for ln.readBy(local) < 8<<20 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // anything read after the close would show now
	if n := ln.readBy(local); n < 8<<20 || n > 9<<20 {
		t.Fatalf("the server read %d bytes of a 20 MiB body (sent %d before %v); want 8 to 9 MiB", n, sent, werr)
	}

	// Bodies within the limit are still read and served on such a listener.
	body := fmt.Sprintf(`{"query": "hi", "context": "%s"}`, strings.Repeat("a", 1<<20-len(`{"query": "hi", "context": ""}`)))
	var exact strings.Builder
	fmt.Fprintf(&exact, "POST /api/chat HTTP/1.1\r\nHost: %s\r\nx-api-key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, key.apiKey, len(body), body)
	status, _, answer, err := limitRaw(addr, []byte(exact.String()))
	if err != nil || status != http.StatusOK || !strings.Contains(answer, `"error_code":0`) {
		t.Fatalf("a body of exactly 1 MiB: %d %v %.300s", status, err, answer)
	}
}
