package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/jackc/pgx/v5"
	"golang.org/x/net/html"

	"palaver/internal/pgtest"
)

// Several palaver serve processes on one PostgreSQL database (issue 13):
// a turn sent to process A is followed by a tab and a stream held by
// process B, Stop sent to B stops it, a killed A's turn is failed and
// retried by B, and B's listening connection recovers when the database
// ends it. These run the real binary twice on the database named by
// PALAVER_TEST_POSTGRES (make test starts a throwaway cluster).

// xprocWait bounds each wait of these tests.
const xprocWait = 20 * time.Second

// twoServers is a database with one account, served by two processes.
type twoServers struct {
	t      *testing.T
	bin    string
	dsn    string
	key    string // ann's API key
	a, b   *server
	aAddr  string
	bAddr  string
	shared *pgx.Conn // the test's own connection, for looking at the database
}

// startTwo wipes the test database, makes ann and starts A and B on it.
func startTwo(t *testing.T, extra ...string) *twoServers {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	dsn := pgtest.Take(t) // make test sets PALAVER_TEST_POSTGRES
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	if _, err := conn.Exec(ctx, "DROP SCHEMA public CASCADE; CREATE SCHEMA public"); err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	cli(t, bin, "migrate", "--db", dsn)
	cli(t, bin, "user", "add", "ann", "--password", "correct horse", "--db", dsn)
	ts := &twoServers{t: t, bin: bin, dsn: dsn, key: cli(t, bin, "user", "key", "ann", "--db", dsn), shared: conn}
	// A slow builtin agent (40 ms a word), so that a reply is being
	// written long enough to be watched, stopped or cut off.
	flags := append([]string{"--builtin-delay", "40ms"}, extra...)
	ts.aAddr, ts.bAddr = freeAddr(t), freeAddr(t)
	ts.a = startServer(t, bin, dsn, ts.aAddr, flags...)
	ts.b = startServer(t, bin, dsn, ts.bAddr, flags...)
	return ts
}

// chat sends a message through s's API and returns its answer (it waits for
// the reply).
func (ts *twoServers) chat(s *server, exchangeID int64, query string) apiAnswer {
	var out apiAnswer
	body := map[string]any{"query": query}
	if exchangeID != 0 {
		body["exchange_id"] = exchangeID
	}
	if code := s.api(http.MethodPost, "/api/chat", ts.key, body, &out); code != http.StatusOK {
		ts.t.Errorf("POST /api/chat: %d %+v", code, out)
	}
	return out
}

type apiAnswer struct {
	Response   string `json:"response"`
	ExchangeID int64  `json:"exchange_id"`
	Message    string `json:"message"`
}

// apiEntry is an entry as the API shows it.
type apiEntry struct {
	ID      int64  `json:"id"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

// messages reads an exchange's log through s.
func (ts *twoServers) messages(s *server, exchangeID int64) []apiEntry {
	var out []apiEntry
	s.api(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages", exchangeID), ts.key, nil, &out)
	return out
}

// sseEvent is one event of a /stream.
type sseEvent struct {
	id, kind string
	entry    apiEntry
	text     string // a delta's
	status   string // a turn's
}

// stream reads an exchange's /stream on s from after seq since.
type stream struct {
	t      *testing.T
	events chan sseEvent
	got    []sseEvent
	cancel func()
}

func (ts *twoServers) openStream(s *server, exchangeID, since int64) *stream {
	t := ts.t
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
		fmt.Sprintf("%s/api/chat/exchange/%d/stream?since=%d", s.base, exchangeID, since), nil)
	req.Header.Set("x-api-key", ts.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", res.StatusCode)
	}
	st := &stream{t: t, events: make(chan sseEvent, 1024), cancel: cancel}
	t.Cleanup(cancel)
	go func() {
		defer res.Body.Close()
		defer close(st.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				e.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				e.kind = line[7:]
			case strings.HasPrefix(line, "data: "):
				data := []byte(line[6:])
				switch e.kind {
				case "entry":
					_ = json.Unmarshal(data, &e.entry)
				case "delta":
					var d struct{ Text string }
					_ = json.Unmarshal(data, &d)
					e.text = d.Text
				case "turn":
					var d struct{ Status string }
					_ = json.Unmarshal(data, &d)
					e.status = d.Status
				}
			case line == "" && e.kind != "":
				st.events <- e
				e = sseEvent{}
			}
		}
	}()
	return st
}

// until reads events until done says so.
func (st *stream) until(what string, done func(e sseEvent) bool) {
	st.t.Helper()
	timeout := time.After(xprocWait)
	for {
		select {
		case e, ok := <-st.events:
			if !ok {
				st.t.Fatalf("stream ended waiting for %s; got %+v", what, st.got)
			}
			st.got = append(st.got, e)
			if done(e) {
				return
			}
		case <-timeout:
			st.t.Fatalf("waiting for %s on the stream; got %+v", what, st.got)
		}
	}
}

// ends waits for the server to end the stream, and checks that it sent no
// entry before (headers' changes may come).
func (st *stream) ends() {
	st.t.Helper()
	timeout := time.After(xprocWait)
	for {
		select {
		case e, ok := <-st.events:
			if !ok {
				return
			}
			if e.kind != "turn" {
				st.t.Fatalf("the stream went on with %+v; want its end", e)
			}
		case <-timeout:
			st.t.Fatal("the stream did not end")
		}
	}
}

// entries are the ids of the entries the stream sent, in order.
func (st *stream) entries() []int64 {
	var ids []int64
	for _, e := range st.got {
		if e.kind == "entry" {
			ids = append(ids, e.entry.ID)
		}
	}
	return ids
}

// typed is the text of the deltas the stream sent.
func (st *stream) typed() string {
	var b strings.Builder
	for _, e := range st.got {
		if e.kind == "delta" {
			b.WriteString(e.text)
		}
	}
	return b.String()
}

// signIn signs ann in on s through its form and returns the cookie header.
func (ts *twoServers) signIn(s *server) string {
	t := ts.t
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.Get(s.base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	b := new(strings.Builder)
	_, _ = bufio.NewReader(res.Body).WriteTo(b)
	res.Body.Close()
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(b.String())
	if m == nil {
		t.Fatalf("no CSRF token on /login: %s", b)
	}
	res, err = c.PostForm(s.base+"/login", url.Values{"username": {"ann"}, "password": {"correct horse"}, "csrf_token": {html.UnescapeString(m[1])}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	u, _ := url.Parse(s.base)
	var parts []string
	for _, ck := range jar.Cookies(u) {
		parts = append(parts, ck.Name+"="+ck.Value)
	}
	return strings.Join(parts, "; ")
}

// tab is a browser tab's /live connection and what it was sent.
type tab struct {
	t       *testing.T
	conn    *websocket.Conn
	entries []string // message element ids, in order, repeats kept
	typed   strings.Builder
	turn    string // the composer's last turn state
	frames  int
	raw     strings.Builder // every frame, one after the other
}

func (ts *twoServers) openTab(s *server, cookie string) *tab {
	t := ts.t
	h := http.Header{}
	h.Set("Cookie", cookie)
	d := websocket.Dialer{HandshakeTimeout: xprocWait}
	conn, res, err := d.Dial("ws"+strings.TrimPrefix(s.base, "http")+"/live", h)
	if err != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		t.Fatalf("dial /live: %v (%d)", err, status)
	}
	t.Cleanup(func() { conn.Close() })
	return &tab{t: t, conn: conn}
}

func (tb *tab) watch(exchangeID, since int64) {
	if err := tb.conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"watch","exchange_id":%d,"since":%d}`, exchangeID, since)); err != nil {
		tb.t.Fatal(err)
	}
}

// read waits for one message and records what it shows.
func (tb *tab) read(deadline time.Time) {
	tb.t.Helper()
	_ = tb.conn.SetReadDeadline(deadline)
	_, data, err := tb.conn.ReadMessage()
	if err != nil {
		tb.t.Fatalf("read /live: %v (entries %v, turn %q)", err, tb.entries, tb.turn)
	}
	tb.frames++
	tb.raw.Write(data)
	doc, err := html.Parse(strings.NewReader(string(data)))
	if err != nil {
		tb.t.Fatal(err)
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			attr := map[string]string{}
			for _, a := range n.Attr {
				attr[a.Key] = a.Val
			}
			switch {
			case attr["data-testid"] == "message":
				tb.entries = append(tb.entries, attr["id"])
			case attr["hx-swap-oob"] == "beforeend:#pending-reply-text" && n.FirstChild != nil:
				tb.typed.WriteString(n.FirstChild.Data)
			case attr["id"] == "pending-reply-text" && attr["hx-swap-oob"] == "innerHTML":
				tb.typed.Reset()
				if n.FirstChild != nil {
					tb.typed.WriteString(n.FirstChild.Data)
				}
			case attr["data-testid"] == "composer-turn":
				tb.turn = attr["data-turn-status"]
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
}

func (tb *tab) until(what string, done func() bool) {
	tb.t.Helper()
	deadline := time.Now().Add(xprocWait)
	for !done() {
		tb.read(deadline)
	}
}

func (tb *tab) has(id int64) bool {
	for _, e := range tb.entries {
		if e == "msg-"+strconv.FormatInt(id, 10) {
			return true
		}
	}
	return false
}

// onceEach checks that got holds each of want once, in that order, and
// nothing else.
func onceEach[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v (each once, in order)", what, got, want)
	}
}

// TestTwoProcessesFollowATurn: a tab and a stream on B follow a turn sent to
// A — its entries, the reply being typed, the final state — each entry once.
func TestTwoProcessesFollowATurn(t *testing.T) {
	ts := startTwo(t)
	first := ts.chat(ts.a, 0, "hello")
	ex := first.ExchangeID
	before := ts.messages(ts.b, ex)
	if len(before) != 2 {
		t.Fatalf("B reads %d entries of A's first turn, want 2", len(before))
	}
	tb := ts.openTab(ts.b, ts.signIn(ts.b))
	tb.watch(ex, 1)
	tb.until("the turn state", func() bool { return tb.turn == "idle" })
	st := ts.openStream(ts.b, ex, 1)
	st.until("the turn state", func(e sseEvent) bool { return e.kind == "turn" })

	question := "what do the processes share " + strings.Repeat("and what else ", 12)
	done := make(chan apiAnswer, 1)
	go func() { done <- ts.chat(ts.a, ex, question) }()

	st.until("the reply", func(e sseEvent) bool { return e.kind == "turn" && e.status == "idle" && len(st.entries()) == 2 })
	answer := <-done
	after := ts.messages(ts.a, ex)
	if len(after) != 4 || after[3].Content != answer.Response {
		t.Fatalf("A's log after the turn: %+v", after)
	}
	user, reply := after[2], after[3]
	onceEach(t, "the stream's entries", st.entries(), []int64{user.ID, reply.ID})
	var states []string
	for _, e := range st.got {
		if e.kind == "turn" {
			states = append(states, e.status)
		}
	}
	if len(states) < 3 || states[1] != "running" || states[len(states)-1] != "idle" {
		t.Fatalf("the stream's turn states: %v, want idle, running, …, idle", states)
	}
	if typed := st.typed(); typed == "" || !strings.HasPrefix(reply.Content, typed) {
		t.Fatalf("the stream on B was typed %q; want a beginning of the reply %q", typed, reply.Content)
	}

	tb.until("the reply and the idle state", func() bool { return tb.has(reply.ID) && tb.turn == "idle" })
	onceEach(t, "the tab's entries", tb.entries, []string{"msg-" + strconv.FormatInt(user.ID, 10), "msg-" + strconv.FormatInt(reply.ID, 10)})
	if typed := tb.typed.String(); typed == "" || !strings.HasPrefix(reply.Content, strings.TrimSpace(typed)) {
		t.Fatalf("the tab on B was typed %q; want a beginning of the reply %q", typed, reply.Content)
	}

	// A rename through A reaches the tab's sidebar on B; a deletion
	// through A ends B's stream.
	if code := ts.a.api(http.MethodPatch, fmt.Sprintf("/api/chat/exchange/%d", ex), ts.key, map[string]any{"title": "Renamed through A"}, nil); code != http.StatusOK {
		t.Fatalf("rename through A: %d", code)
	}
	tb.until("the new title", func() bool { return strings.Contains(tb.raw.String(), "Renamed through A") })
	if code := ts.a.api(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", ex), ts.key, nil, nil); code != http.StatusOK {
		t.Fatalf("delete through A: %d", code)
	}
	st.ends()

	// A page saved through A reaches the editor of B's tab.
	var page struct {
		ID int64 `json:"id"`
	}
	if code := ts.a.api(http.MethodPost, "/api/pages", ts.key, map[string]any{"title": "Notes", "content": "# Notes"}, &page); code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("create a page through A: %d", code)
	}
	if err := tb.conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"watch","page_id":%d}`, page.ID)); err != nil {
		t.Fatal(err)
	}
	// The watch is answered with nothing (no chat is shown): give B a
	// moment to take it before the save.
	time.Sleep(300 * time.Millisecond)
	if code := ts.a.api(http.MethodPut, fmt.Sprintf("/api/pages/%d", page.ID), ts.key, map[string]any{"content": "# Notes\n\nSaved through A"}, nil); code != http.StatusOK {
		t.Fatalf("save the page through A: %d", code)
	}
	tb.until("the page's new text", func() bool { return strings.Contains(tb.raw.String(), "Saved through A") })
}

// TestStopOnAnotherProcess: a Stop sent to B stops the turn A runs, and
// answers as a Stop on A would: what the reply held when it stopped.
func TestStopOnAnotherProcess(t *testing.T) {
	ts := startTwo(t)
	ex := ts.chat(ts.a, 0, "hello").ExchangeID
	st := ts.openStream(ts.b, ex, 1)
	st.until("the turn state", func(e sseEvent) bool { return e.kind == "turn" })
	// The builtin agent quotes the question back: 300 words take 12 s.
	question := "please " + strings.Repeat("go on ", 150)
	done := make(chan apiAnswer, 1)
	go func() { done <- ts.chat(ts.a, ex, question) }()
	st.until("the message", func(e sseEvent) bool { return e.kind == "entry" && e.entry.Role == "user" })
	st.until("the reply being typed", func(e sseEvent) bool { return e.kind == "delta" })

	var stopped apiAnswer
	start := time.Now()
	if code := ts.b.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/stop", ex), ts.key, nil, &stopped); code != http.StatusOK {
		t.Fatalf("stop on B: %d %+v", code, stopped)
	}
	took := time.Since(start)
	answer := <-done
	if stopped.Message != "Stopped" || stopped.Response == "" || stopped.Response != answer.Response {
		t.Fatalf("B's stop answered %+v; A's turn answered %q", stopped, answer.Response)
	}
	if strings.Contains(answer.Response, strings.TrimSpace(question)) {
		t.Fatalf("the reply was written to its end (%d bytes): the stop did not reach it", len(answer.Response))
	}
	log := ts.messages(ts.b, ex)
	if last := log[len(log)-1]; last.Role != "assistant" || last.Content != stopped.Response {
		t.Fatalf("the log ends with %+v, want the stopped reply", last)
	}
	t.Logf("stopped through the other process in %s", took)
	// Nothing runs any more: a second stop has nothing to stop, on either.
	for _, s := range []*server{ts.a, ts.b} {
		if code := s.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/stop", ex), ts.key, nil, nil); code != http.StatusConflict {
			t.Fatalf("a second stop: %d, want 409", code)
		}
	}
}

// TestKilledProcessTurnRetriedByAnother: A is killed with SIGKILL while it
// writes a reply; B fails the turn (an error row) and retries it within
// 30 s, and the reply is written by B.
func TestKilledProcessTurnRetriedByAnother(t *testing.T) {
	ts := startTwo(t)
	ex := ts.chat(ts.a, 0, "hello").ExchangeID
	st := ts.openStream(ts.b, ex, 1)
	st.until("the turn state", func(e sseEvent) bool { return e.kind == "turn" })
	go func() { // never answered: A dies
		body := fmt.Sprintf(`{"query":"a long story %s","exchange_id":%d}`, strings.Repeat("and more ", 40), ex)
		req, _ := http.NewRequest(http.MethodPost, ts.a.base+"/api/chat", strings.NewReader(body))
		req.Header.Set("x-api-key", ts.key)
		req.Header.Set("Content-Type", "application/json")
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	st.until("the message", func(e sseEvent) bool { return e.kind == "entry" && e.entry.Role == "user" })
	st.until("the reply being typed", func(e sseEvent) bool { return e.kind == "delta" })
	if err := ts.a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = ts.a.cmd.Wait()
	killed := time.Now()
	st.until("the error row", func(e sseEvent) bool { return e.kind == "entry" && e.entry.Role == "error" })
	if took := time.Since(killed); took > 30*time.Second {
		t.Fatalf("the dead process's turn was failed %s after it died, want within 30 s", took)
	} else {
		t.Logf("failed by B %s after A died", took)
	}
	st.until("the retried reply", func(e sseEvent) bool { return e.kind == "entry" && e.entry.Role == "assistant" })
	st.until("the idle state", func(e sseEvent) bool { return e.kind == "turn" && e.status == "idle" })
	log := ts.messages(ts.b, ex)
	var roles []string
	for _, m := range log {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user,error,assistant" {
		t.Fatalf("the log: %v, want the user message kept, an error row, and the retried reply", roles)
	}
	var ids []int64
	for _, m := range log[2:] {
		ids = append(ids, m.ID)
	}
	onceEach(t, "the stream's entries", st.entries(), ids)
	if !strings.Contains(ts.b.log.String(), "failed turns left running") {
		t.Fatalf("B's log does not say it failed the dead process's turn:\n%s", ts.b.log)
	}
}

// TestListenerReconnects: the database ends B's listening connection and
// refuses new ones for a while, during which A runs a turn that B cannot
// hear of; once connections are let in again, B listens again by itself,
// its tab and stream catch up from the database, and they follow the next
// turn sent to A, each entry once.
func TestListenerReconnects(t *testing.T) {
	ts := startTwo(t)
	ex := ts.chat(ts.a, 0, "hello").ExchangeID
	tb := ts.openTab(ts.b, ts.signIn(ts.b))
	tb.watch(ex, 1)
	tb.until("the turn state", func() bool { return tb.turn == "idle" })
	st := ts.openStream(ts.b, ex, 1)
	st.until("the turn state", func(e sseEvent) bool { return e.kind == "turn" })

	ctx := context.Background()
	u, _ := url.Parse(ts.dsn)
	database := pgx.Identifier{strings.TrimPrefix(u.Path, "/")}.Sanitize()
	// (from another database: PostgreSQL does not let a session close its own)
	cfg, err := pgx.ParseConfig(ts.dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Database = "postgres"
	admin, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Skipf("connecting to database postgres to refuse connections for a while: %v", err)
	}
	t.Cleanup(func() { admin.Close(ctx) })
	allow := func(yes bool) {
		if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS %t", database, yes)); err != nil {
			t.Fatal(err)
		}
	}
	allow(false)
	t.Cleanup(func() { allow(true) })
	listener := fmt.Sprintf("palaver listener %d", ts.b.cmd.Process.Pid)
	var ended int
	err = ts.shared.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", listener).Scan(&ended)
	if err != nil || ended != 1 {
		t.Fatalf("ending B's listening connection: %d ended, %v", ended, err)
	}
	for deadline := time.Now().Add(xprocWait); !strings.Contains(ts.b.log.String(), "listening connection lost"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("B did not notice:\n%s", ts.b.log)
		}
	}
	// A runs a whole turn on the connections it holds; B hears nothing of it.
	answer := ts.chat(ts.a, ex, "are you still there")
	log := ts.messages(ts.a, ex)
	if len(log) != 4 || log[3].Content != answer.Response {
		t.Fatalf("the log: %+v", log)
	}
	select {
	case e := <-st.events:
		t.Fatalf("B's stream heard %+v while B was not listening", e)
	case <-time.After(300 * time.Millisecond):
	}

	allow(true)
	st.until("the reply", func(e sseEvent) bool { return e.kind == "entry" && e.entry.ID == log[3].ID })
	st.until("the idle state", func(e sseEvent) bool { return e.kind == "turn" && e.status == "idle" })
	onceEach(t, "the stream's entries", st.entries(), []int64{log[2].ID, log[3].ID})
	tb.until("the reply", func() bool { return tb.has(log[3].ID) && tb.turn == "idle" })
	onceEach(t, "the tab's entries", tb.entries, []string{"msg-" + strconv.FormatInt(log[2].ID, 10), "msg-" + strconv.FormatInt(log[3].ID, 10)})
	if !strings.Contains(ts.b.log.String(), "listening again") {
		t.Fatalf("B's log does not say it listens again:\n%s", ts.b.log)
	}

	// And it goes on hearing A: the next turn reaches both, each entry once.
	second := ts.chat(ts.a, ex, "hello again")
	st.until("the next reply", func(e sseEvent) bool { return e.kind == "entry" && e.entry.Content == second.Response })
	log = ts.messages(ts.a, ex)
	onceEach(t, "the stream's entries", st.entries(), []int64{log[2].ID, log[3].ID, log[4].ID, log[5].ID})
	tb.until("the next reply", func() bool { return tb.has(log[5].ID) })
	if n := len(tb.entries); n != 4 {
		t.Fatalf("the tab's entries: %v, want 4, each once", tb.entries)
	}
}
