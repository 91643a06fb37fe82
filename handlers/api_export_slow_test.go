package handlers_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"palaver/handlers"
	"palaver/transfer"
)

// stalledExport starts GET /api/export as key on a connection whose client
// never reads (its receive buffer a few KiB), and leaves it so.
func stalledExport(t *testing.T, addr, key string) net.Conn {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		_ = rc.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := fmt.Fprintf(conn, "GET /api/export HTTP/1.1\r\nHost: palaver\r\nx-api-key: %s\r\n\r\n", key); err != nil {
		t.Fatal(err)
	}
	// Its status line says the export has begun (a few bytes read: the
	// rest stays unread).
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	status, err := bufio.NewReaderSize(conn, 16).ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 200") {
		t.Fatalf("a stalled export's status %q, %v", status, err)
	}
	return conn
}

// serveTCP serves the app on a real loopback listener.
func (a *testApp) serveTCP() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.t.Fatal(err)
	}
	go func() { _ = a.app.Listener(handlers.Listener(ln)) }()
	a.t.Cleanup(func() { _ = a.app.ShutdownWithTimeout(time.Second) })
	return ln.Addr().String()
}

// promptGet answers a GET within a second, or fails the test.
func promptGet(t *testing.T, url, key string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	start := time.Now()
	res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if took := time.Since(start); took > time.Second {
		t.Errorf("GET %s took %v", url, took)
	}
	return res.StatusCode
}

// checkpoint writes a row, then checkpoints the WAL with TRUNCATE, again
// for up to three seconds while readers hold it back (an export reading its
// next batch does, for a moment): it says whether one completed.
func (a *testApp) checkpoint() bool {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		a.t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "UPDATE users SET username = username"); err != nil {
		a.t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 100"); err != nil {
		a.t.Fatal(err)
	}
	defer func() { _, _ = conn.ExecContext(ctx, "PRAGMA busy_timeout = 10000") }()
	for until := time.Now().Add(3 * time.Second); time.Now().Before(until); time.Sleep(100 * time.Millisecond) {
		var busy, log, done int
		if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done); err != nil {
			a.t.Fatal(err)
		}
		if busy == 0 {
			return true
		}
	}
	return false
}

// TestAPIExportStalledClientsHoldNoCursor: eight exports (the pool's size)
// whose clients never read. The exports hold no database cursor while they
// wait on their clients, so /healthz and another user's request still
// answer at once and a TRUNCATE checkpoint completes (an open cursor pins
// the WAL); past the write deadline the exports end.
func TestAPIExportStalledClientsHoldNoCursor(t *testing.T) {
	a := newTestApp(t, func(d *handlers.Deps) {
		d.Config.ExportsPerUser, d.Config.ExportsAtOnce = 8, 8 // the pool's size: the gate does not help here
		d.Config.ExportWriteTimeout = 6 * time.Second          // past the checks below
	})
	ann, dan := a.apiClient("ann"), a.apiClient("dan")
	a.seedBulk(ann.user.ID, 40, 20, 16000) // 12 MiB: far more than the sockets buffer
	dan.apiChat("dan's own chat", 0)
	addr := a.serveTCP()
	started := time.Now()
	for range 8 {
		stalledExport(t, addr, ann.apiKey)
	}
	time.Sleep(300 * time.Millisecond) // until they wait on their clients
	for range 3 {
		if s := promptGet(t, "http://"+addr+"/healthz", ""); s != http.StatusOK {
			t.Fatalf("/healthz: %d", s)
		}
		if s := promptGet(t, "http://"+addr+"/api/chat/history", dan.apiKey); s != http.StatusOK {
			t.Fatalf("dan's history: %d", s)
		}
	}
	if !a.checkpoint() {
		t.Fatal("a TRUNCATE checkpoint did not complete beside the stalled exports")
	}
	// Past the write deadline the exports have ended: ann may export again,
	// and reads it whole.
	time.Sleep(time.Until(started.Add(7 * time.Second)))
	res, body := ann.api(http.MethodGet, "/api/export", nil)
	if res.StatusCode != http.StatusOK || len(body) < 12<<20 {
		t.Fatalf("ann's export after the stalled ones: %d, %d bytes", res.StatusCode, len(body))
	}
}

// TestAPIExportLimits: two exports at once per user, a third answers 429
// with Retry-After; four in all, a fifth (another user's) too; once a
// stalled export's write deadline passes its place is free again.
func TestAPIExportLimits(t *testing.T) {
	a := newTestApp(t, func(d *handlers.Deps) { d.Config.ExportWriteTimeout = 2 * time.Second })
	ann, bob, cyd := a.apiClient("ann"), a.apiClient("bob"), a.apiClient("cyd")
	a.seedBulk(ann.user.ID, 40, 20, 4000)
	a.seedBulk(bob.user.ID, 40, 20, 4000)
	addr := a.serveTCP()
	get := func(key string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/export", nil)
		req.Header.Set("x-api-key", key)
		res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	stalledExport(t, addr, ann.apiKey)
	stalledExport(t, addr, ann.apiKey)
	time.Sleep(300 * time.Millisecond)
	res := get(ann.apiKey)
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("ann's third export: %d (Retry-After %q), want 429", res.StatusCode, res.Header.Get("Retry-After"))
	}
	stalledExport(t, addr, bob.apiKey)
	stalledExport(t, addr, bob.apiKey)
	time.Sleep(300 * time.Millisecond)
	res = get(cyd.apiKey)
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a fifth export in all: %d, want 429", res.StatusCode)
	}
	// The stalled ones end at their write deadline; cyd's export then runs.
	deadline := time.Now().Add(10 * time.Second)
	for {
		res = get(cyd.apiKey)
		r := bufio.NewReader(res.Body)
		first, _ := r.ReadString('\n')
		res.Body.Close()
		if res.StatusCode == http.StatusOK && len(first) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cyd's export after the deadline: %d", res.StatusCode)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestAPIExportLongLogs: logs longer than one read of the export (500
// messages), beside short ones, come out whole and in order.
func TestAPIExportLongLogs(t *testing.T) {
	a := newTestApp(t)
	ann := a.apiClient("ann")
	a.seedBulk(ann.user.ID, 3, 1100, 10)
	a.seedBulk(ann.user.ID, 7, 3, 10)
	a.seedBulk(ann.user.ID, 1, 500, 10)
	res, body := ann.api(http.MethodGet, "/api/export", nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("export: %d", res.StatusCode)
	}
	r, err := transfer.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for {
		it, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range it.Exchange.Messages {
			if m.Seq == nil || *m.Seq != int64(i) {
				t.Fatalf("exchange %d: message %d has seq %v", len(sizes), i, m.Seq)
			}
		}
		sizes = append(sizes, len(it.Exchange.Messages))
	}
	if want := []int{1100, 1100, 1100, 3, 3, 3, 3, 3, 3, 3, 500}; !slices.Equal(sizes, want) {
		t.Fatalf("logs of %v messages, want %v", sizes, want)
	}
}

// TestAPIExportEndsWhenTheClientGoes: two exports whose clients hang up
// halfway give their places back at once, not at the write deadline (a
// minute here): the third export then runs.
func TestAPIExportEndsWhenTheClientGoes(t *testing.T) {
	a := newTestApp(t, func(d *handlers.Deps) { d.Config.ExportWriteTimeout = time.Minute })
	ann := a.apiClient("ann")
	a.seedBulk(ann.user.ID, 40, 20, 4000)
	addr := a.serveTCP()
	for range 2 {
		stalledExport(t, addr, ann.apiKey).Close() // unread bytes: the close resets the connection
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/export", nil)
		req.Header.Set("x-api-key", ann.apiKey)
		res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusOK && n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after two clients hung up, a new export answers %d: their places were not given back", res.StatusCode)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
