package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"palaver/agents"
	"palaver/handlers"
	"palaver/internal/dbtest"
	"palaver/models"
	"palaver/paths"
	"palaver/transfer"
	"palaver/transfer/transfertest"
)

// newBusyApp is newTestApp on a store whose SQLite busy timeout is busy:
// a write waits that long for a writer held elsewhere before it fails.
func newBusyApp(t *testing.T, busy time.Duration, opts ...appOption) *testApp {
	t.Helper()
	store, err := models.Open(filepath.Join(t.TempDir(), "palaver.db"), models.Options{BusyTimeout: busy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	sqlDB, err := store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	d, _ := newDeps(t) // the other dependencies, as every test has them
	d.Store = store
	d.Sessions = handlers.NewSessions(sqlDB, store.Dialect(), false, 0)
	d.Agents = agents.New(store, &agents.Builtin{}, agents.Options{Logger: d.Logger, Hub: d.Hub})
	for _, o := range opts {
		o(&d)
	}
	return &testApp{t: t, app: handlers.New(d), store: store, hub: d.Hub, agents: d.Agents, sessions: d.Sessions}
}

// serve runs the app on a real listener and returns its address.
func (a *testApp) serve() string {
	a.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.t.Fatal(err)
	}
	go func() { _ = a.app.Listener(handlers.Listener(ln)) }()
	a.t.Cleanup(func() { _ = a.app.ShutdownWithTimeout(2 * time.Second) })
	return ln.Addr().String()
}

// A client that sends its import a byte now and then holds a connection,
// not SQLite's writer: another user's POST /api/chat meanwhile answers at
// once (it failed "database is locked" while the import's transaction
// waited for the body), and the upload is cut off at its deadline, all of
// it counted, with nothing stored.
func TestImportTrickleLeavesTheWriterFree(t *testing.T) {
	const deadline = 3 * time.Second
	a := newBusyApp(t, 300*time.Millisecond, func(d *handlers.Deps) { d.Config.ImportDeadline = deadline })
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	addr := a.serve()

	// Two pages of 60 KB: past the 64 KiB the format is told by, so that
	// the reading of the items (once in a transaction) waits for the rest.
	var file bytes.Buffer
	w, err := transfer.NewWriter(&file, time.Unix(1700000000, 0).UTC())
	if err != nil {
		t.Fatal(err)
	}
	g := transfertest.New(31)
	for range 2 {
		p := g.Page()
		p.Content = strings.Repeat("slow notes ", 6000)
		if err := w.WritePage(p); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nx-api-key: %s\r\nContent-Type: application/x-ndjson\r\nContent-Length: %d\r\n\r\n",
		paths.Import, addr, ann.apiKey, file.Len())
	head, tail := file.Bytes()[:file.Len()-2000], file.Bytes()[file.Len()-2000:]
	if _, err := conn.Write(head); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	go func() { // a byte every 100 ms: 200 s for the rest
		for _, b := range tail {
			time.Sleep(100 * time.Millisecond)
			if _, err := conn.Write([]byte{b}); err != nil {
				return
			}
		}
	}()

	time.Sleep(800 * time.Millisecond) // the import is under way
	sent := time.Now()
	reply := bob.apiChat("hello while ann uploads", 0)
	if took := time.Since(sent); took > 2*time.Second {
		t.Errorf("bob's chat took %s during ann's upload", took)
	}
	if reply.Response == "" {
		t.Errorf("bob's chat: no reply")
	}

	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the import's answer: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	took := time.Since(started)
	t.Logf("the import answered %d after %s: %s", res.StatusCode, took.Round(time.Millisecond), b)
	if msg := apiErr(t, res, b, http.StatusRequestTimeout); !strings.Contains(msg, "The upload took too long") {
		t.Errorf("the trickled import: %s", msg)
	}
	if took > deadline+2*time.Second {
		t.Errorf("the upload was cut off after %s, its deadline is %s", took, deadline)
	}
	if n := a.apiCount("pages"); n != 0 {
		t.Fatalf("a cut-off upload stored %d pages", n)
	}
}

// A turn whose writes find the writer held elsewhere for longer than the
// busy timeout still lands: POST /api/chat answers its reply, and the log
// holds it (it failed "database is locked", the reply lost).
func TestChatReplyLandsWhileWriterHeld(t *testing.T) {
	const busy = 200 * time.Millisecond
	a := newBusyApp(t, busy)
	bob := a.apiClient("bob")
	bob.apiHistory("") // the key's first use writes its last_used_at, which is not a turn's write
	released := dbtest.HoldWriter(t, a.store, 6*busy)
	start := time.Now()
	reply := bob.apiChat("hello", 0)
	<-released
	if took := time.Since(start); took < 5*busy {
		t.Fatalf("the chat answered in %s: the writer was not held", took)
	}
	msgs := bob.apiMessages(*reply.ExchangeID)
	if len(msgs) != 2 || msgs[1].Role != "assistant" || msgs[1].Content != reply.Response || reply.Response == "" {
		t.Fatalf("the log: %+v, the reply %q", msgs, reply.Response)
	}
}

// Rows that form a fork cycle (A forked from B, B from A, and C from A:
// data no fork makes, and an import now refuses) do not make the chat
// pages or a delete loop until the database deadline: each answers at
// once.
func TestForkCycleChatPagesAnswer(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	x := ann.chatSend(t, "first", 0)
	y := ann.chatSend(t, "second", 0)
	z := ann.chatSend(t, "third", 0)
	for _, link := range [][2]int64{{x, y}, {y, x}, {z, x}} {
		a.chatExec("UPDATE exchanges SET forked_from_id = ?, forked_at_seq = 1 WHERE id = ?", link[1], link[0])
	}
	key := a.apiClient("ann")
	timed := func(c *client, method, path string) {
		t.Helper()
		want := http.StatusOK
		if path == "/chat" {
			want = http.StatusSeeOther // to the chat this session opened last
		}
		start := time.Now()
		req, _ := http.NewRequest(method, path, nil)
		if method != http.MethodGet {
			req.Header.Set("X-CSRF-Token", c.csrf)
		}
		res := c.do(req)
		if took := time.Since(start); res.StatusCode != want || took > 3*time.Second {
			t.Errorf("%s %s: %d after %s", method, path, res.StatusCode, took.Round(time.Millisecond))
		}
	}
	for _, id := range []int64{x, y, z} {
		timed(ann, http.MethodGet, paths.Chat(id))
		timed(ann, http.MethodGet, paths.ChatBranches(id))
	}
	timed(ann, http.MethodGet, paths.ChatCompare(x, y))
	timed(ann, http.MethodGet, "/chat")
	timed(key, http.MethodGet, "/api/chat/history")
	timed(key, http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", x))
	timed(ann, http.MethodGet, paths.Chat(y))
	timed(key, http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", y))
}
