package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"palaver/models"
)

// The binary the tests run, built once for all of them.
var palaverBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain removes the binary built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if palaverBin.dir != "" {
		os.RemoveAll(palaverBin.dir)
	}
	os.Exit(code)
}

// buildBinary compiles palaver once for the package's tests.
func buildBinary(t *testing.T) string {
	t.Helper()
	palaverBin.once.Do(func() {
		if palaverBin.dir, palaverBin.err = os.MkdirTemp("", "palaver-test-"); palaverBin.err != nil {
			return
		}
		palaverBin.path = filepath.Join(palaverBin.dir, "palaver")
		out, err := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", palaverBin.path, ".").CombinedOutput()
		if err != nil {
			palaverBin.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if palaverBin.err != nil {
		t.Fatal(palaverBin.err)
	}
	return palaverBin.path
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// server is a real palaver process.
type server struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string
	log  *bytes.Buffer
}

func startServer(t *testing.T, bin, db, addr string, extra ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--addr", addr, "--db", db}, extra...)
	cmd := exec.Command(bin, args...)
	log := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, cmd: cmd, base: "http://" + addr, log: log}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if res, err := http.Get(s.base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not come up:\n%s", log)
		}
	}
}

func (s *server) api(method, path, key string, body any, out any) int {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.base+path, r)
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %s: %v", method, path, b, err)
		}
	}
	return res.StatusCode
}

func cli(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("palaver %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// TestKillMidTurnThenRetry kills a real server with SIGKILL while a reply is
// being written, restarts it on the same database and checks that the user
// message is kept, nothing is left running, an error row explains, and Retry
// completes the turn.
func TestKillMidTurnThenRetry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "palaver.db")
	cli(t, bin, "user", "add", "ann", "--password", "correct horse", "--db", db)
	key := cli(t, bin, "user", "key", "ann", "--db", db)
	addr := freeAddr(t)
	// A slow builtin agent (100 ms a word) and no automatic retry: the retry
	// is the person's.
	flags := []string{"--builtin-delay", "100ms", "--turn-auto-retries", "0"}
	srv := startServer(t, bin, db, addr, flags...)

	go func() { // the reply never comes: the server dies first
		req, _ := http.NewRequest(http.MethodPost, srv.base+"/api/chat", strings.NewReader(`{"query":"tell me a long story"}`))
		req.Header.Set("x-api-key", key)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()

	store, err := models.Open(db, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	u, err := store.UserByUsername(ctx, "ann")
	if err != nil {
		t.Fatal(err)
	}
	var exID int64
	for deadline := time.Now().Add(10 * time.Second); exID == 0; time.Sleep(20 * time.Millisecond) {
		running, err := store.RunningTurns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(running) == 1 {
			exID = running[0].ID
		}
		if time.Now().After(deadline) {
			t.Fatalf("no turn started:\n%s", srv.log)
		}
	}
	time.Sleep(300 * time.Millisecond) // a few words in
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = srv.cmd.Wait()

	srv = startServer(t, bin, db, addr, flags...)
	if running, _ := store.RunningTurns(ctx); len(running) != 0 {
		t.Fatalf("after restart %d exchanges are still running", len(running))
	}
	var msgs []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Seq     *int64 `json:"seq"`
	}
	path := fmt.Sprintf("/api/chat/exchange/%d/messages", exID)
	if st := srv.api(http.MethodGet, path, key, nil, &msgs); st != http.StatusOK {
		t.Fatalf("messages: %d", st)
	}
	if len(msgs) != 2 || msgs[0].Role != "user" || msgs[0].Content != "tell me a long story" ||
		msgs[1].Role != "error" || msgs[1].Seq != nil || !strings.Contains(msgs[1].Content, "server stopped") {
		t.Fatalf("log after the crash: %+v", msgs)
	}

	var out struct {
		Response   string `json:"response"`
		ErrorCode  int    `json:"error_code"`
		ExchangeID int64  `json:"exchange_id"`
	}
	if st := srv.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/retry", exID), key, nil, &out); st != http.StatusOK {
		t.Fatalf("retry: %d %+v", st, out)
	}
	if out.ErrorCode != 0 || out.ExchangeID != exID || !strings.Contains(out.Response, `"tell me a long story"`) {
		t.Fatalf("retry answer %+v", out)
	}
	srv.api(http.MethodGet, path, key, nil, &msgs)
	if len(msgs) != 3 || msgs[2].Role != "assistant" {
		t.Fatalf("log after retry: %+v", msgs)
	}
	ex, err := store.Exchange(ctx, u.ID, exID)
	if err != nil || ex.TurnStatus != models.TurnIdle {
		t.Fatalf("exchange after retry: %+v %v", ex, err)
	}
	if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("graceful shutdown: %v\n%s", err, srv.log)
	}
}

// keyedUsers adds n users (user0, user1, …) to db with bin and gives each
// one's API key.
func keyedUsers(t *testing.T, bin, db string, n int) []string {
	t.Helper()
	keys := make([]string, n)
	for i := range keys {
		name := fmt.Sprintf("user%d", i)
		cli(t, bin, "user", "add", name, "--password", "correct horse", "--db", db)
		keys[i] = cli(t, bin, "user", "key", name, "--db", db)
	}
	return keys
}

// TestCrashLoop kills a real server with SIGKILL again and again while
// clients run turns through the API, restarting it on the same database each
// time. Afterwards the database is whole (SQLite's and the full-text index's
// integrity checks, foreign keys), nothing is left running, every log is a
// gapless run of seqs with error rows outside it, and every turn a client was
// answered for is there word for word, its reply right after its question.
func TestCrashLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "palaver.db")
	const clients, rounds = 4, 5
	keys := keyedUsers(t, bin, db, clients)
	addr := freeAddr(t)
	// 5 ms a word: a reply takes a few hundred milliseconds, so every kill
	// lands while turns are being written. No automatic retry: what a crash
	// leaves is seen as it is.
	flags := []string{"--builtin-delay", "5ms", "--turn-auto-retries", "0"}

	type answered struct {
		exchangeID      int64
		query, response string
	}
	var (
		mu   sync.Mutex
		acks []answered
		sent int
	)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range rounds {
		srv := startServer(t, bin, db, addr, flags...)
		stop := make(chan struct{})
		var killing atomic.Bool // from here on a failed request is the kill's doing
		// fail reports a request that failed while the server should be up.
		fail := func(query string, err error) {
			if !killing.Load() {
				t.Errorf("%s failed before the kill: %v\n%s", query, err, srv.log)
			}
		}
		var answeredOnce sync.WaitGroup // every client has had an answer this round
		answeredOnce.Add(clients)
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				var exchangeID int64 // a new exchange each round, then follow-ups
				first := sync.OnceFunc(answeredOnce.Done)
				defer first() // a client that stops early releases the wait
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					query := fmt.Sprintf("round %d client %d turn %d: %s", round, c, i, strings.Repeat("é✓", i%7))
					body := map[string]any{"query": query}
					if i%2 == 0 {
						// Every other turn attaches a file uploaded just
						// before: kills land in uploads and in the turns
						// that attach them (issue 26).
						id, err := crashUpload(srv.base, keys[c], fmt.Sprintf("c%d-%d.txt", c, i), query)
						if err != nil {
							fail("upload for "+query, err)
							return
						}
						body["attachments"] = []int64{id}
					}
					if exchangeID != 0 {
						body["exchange_id"] = exchangeID
					}
					b, _ := json.Marshal(body)
					req, _ := http.NewRequest(http.MethodPost, srv.base+"/api/chat", bytes.NewReader(b))
					req.Header.Set("x-api-key", keys[c])
					req.Header.Set("Content-Type", "application/json")
					mu.Lock()
					sent++
					mu.Unlock()
					res, err := http.DefaultClient.Do(req)
					if err != nil {
						fail(query, err) // the server died under the request
						return
					}
					var out struct {
						Response   string `json:"response"`
						ErrorCode  int    `json:"error_code"`
						ExchangeID int64  `json:"exchange_id"`
					}
					err = json.NewDecoder(res.Body).Decode(&out)
					res.Body.Close()
					if err != nil {
						fail(query, err) // cut off mid-answer
						return
					}
					if res.StatusCode != http.StatusOK || out.ErrorCode != 0 {
						t.Errorf("%s: status %d, error_code %d", query, res.StatusCode, out.ErrorCode)
						return
					}
					exchangeID = out.ExchangeID
					mu.Lock()
					acks = append(acks, answered{out.ExchangeID, query, out.Response})
					mu.Unlock()
					first()
				}
			})
		}
		// Kill once every client has been answered, at a random point of
		// the turns that follow (each takes a few hundred milliseconds).
		answered := make(chan struct{})
		go func() { answeredOnce.Wait(); close(answered) }()
		select {
		case <-answered:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: not every client was answered within 30 s:\n%s", round, srv.log)
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		killing.Store(true)
		if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = srv.cmd.Wait()
		if ws, ok := srv.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: the server ended by itself (%v), not by the kill:\n%s", round, srv.cmd.ProcessState, srv.log)
		}
		close(stop)
		wg.Wait()
	}
	if t.Failed() {
		return
	}
	// The last restart recovers the last crash's turns.
	srv := startServer(t, bin, db, addr, flags...)
	if len(acks) < rounds*clients {
		t.Fatalf("only %d turns answered in %d rounds, want one per client and round at least", len(acks), rounds)
	}
	t.Logf("%d turns sent, %d answered before a kill", sent, len(acks))

	store, err := models.Open(db, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	sqlDB, err := store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	// No orphan blob, no file without its blob, no attachment without
	// its file, whatever the kills interrupted.
	for _, q := range []string{
		"SELECT COUNT(*) FROM blobs b WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.blob_id = b.id)",
		"SELECT COUNT(*) FROM files f WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.id = f.blob_id)",
		"SELECT COUNT(*) FROM message_attachments a WHERE NOT EXISTS (SELECT 1 FROM files f WHERE f.id = a.file_id)",
	} {
		var n int64
		if err := sqlDB.QueryRowContext(ctx, q).Scan(&n); err != nil || n != 0 {
			t.Fatalf("%s: %d %v", q, n, err)
		}
	}
	var attached int64
	if err := sqlDB.QueryRowContext(ctx, "SELECT COUNT(*) FROM message_attachments").Scan(&attached); err != nil || attached == 0 {
		t.Fatalf("no message holds a file (%v): the check proves nothing", err)
	}
	var integrity string
	if err := sqlDB.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&integrity); err != nil || integrity != "ok" {
		t.Fatalf("integrity_check: %q %v", integrity, err)
	}
	if _, err := sqlDB.ExecContext(ctx, "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)"); err != nil {
		t.Fatalf("full-text index: %v", err)
	}
	var orphans int
	if err := sqlDB.QueryRowContext(ctx, "SELECT count(*) FROM pragma_foreign_key_check").Scan(&orphans); err != nil || orphans != 0 {
		t.Fatalf("foreign_key_check: %d rows, %v", orphans, err)
	}
	if running, err := store.RunningTurns(ctx); err != nil || len(running) != 0 {
		t.Fatalf("after the last restart %d exchanges are running (%v)", len(running), err)
	}

	// Every log: seqs 0..n-1, each user message answered by the entry after
	// it or by an error row; replies parse.
	rows, err := sqlDB.QueryContext(ctx, `SELECT exchange_id, seq, role, content, COALESCE(agent_response, '') FROM messages ORDER BY exchange_id, id`)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		seq               *int64
		role, content, ar string
	}
	logs := map[int64][]entry{}
	for rows.Next() {
		var exID int64
		var e entry
		if err := rows.Scan(&exID, &e.seq, &e.role, &e.content, &e.ar); err != nil {
			t.Fatal(err)
		}
		logs[exID] = append(logs[exID], e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	errorRows := 0
	for exID, log := range logs {
		next := int64(0)
		for i, e := range log {
			if e.role == "error" {
				errorRows++
				if e.seq != nil {
					t.Errorf("exchange %d: error row at seq %d", exID, *e.seq)
				}
				continue
			}
			if e.seq == nil || *e.seq != next {
				t.Errorf("exchange %d: entry %d (%s) has seq %v, want %d", exID, i, e.role, e.seq, next)
			}
			next++
			if e.role == "user" && (i+1 == len(log) || (log[i+1].role != "assistant" && log[i+1].role != "error")) {
				t.Errorf("exchange %d: user message %q is neither answered nor failed", exID, e.content)
			}
			if e.role == "assistant" {
				var resp map[string]any
				if err := json.Unmarshal([]byte(e.ar), &resp); err != nil || resp["content"] != e.content {
					t.Errorf("exchange %d: reply %q has a torn agent_response %q", exID, e.content, e.ar)
				}
			}
		}
	}
	byQuery := map[string]int{}
	for _, log := range logs {
		for _, e := range log {
			if e.role == "user" {
				byQuery[e.content]++
			}
		}
	}
	for _, a := range acks {
		log := logs[a.exchangeID]
		found := false
		for i := 0; i+1 < len(log); i++ {
			if log[i].role == "user" && log[i].content == a.query {
				found = log[i+1].role == "assistant" && log[i+1].content == a.response
				break
			}
		}
		if !found {
			t.Errorf("answered turn %q is not in exchange %d with its reply", a.query, a.exchangeID)
		}
		if byQuery[a.query] != 1 {
			t.Errorf("answered turn %q is stored %d times", a.query, byQuery[a.query])
		}
	}
	if errorRows == 0 {
		t.Error("no turn was cut by a kill: the test proves nothing")
	}
	t.Logf("%d exchanges, %d error rows left by the kills", len(logs), errorRows)
	if err := srv.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("graceful shutdown: %v\n%s", err, srv.log)
	}
}

// crashUpload uploads text as a file named name and gives its id.
func crashUpload(base, key, name, text string) (int64, error) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, _ := w.CreateFormFile("file", name)
	_, _ = part.Write([]byte(text + "\n"))
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/files", &b)
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var out struct {
		ID int64 `json:"id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return 0, err
	}
	if res.StatusCode != http.StatusCreated {
		return 0, fmt.Errorf("upload: status %d", res.StatusCode)
	}
	return out.ID, nil
}
