package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"palaver/models"
)

// buildBinary compiles palaver once per test into a temporary folder.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "palaver")
	cmd := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
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
