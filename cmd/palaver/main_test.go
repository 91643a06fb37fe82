package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"palaver/handlers"
	"palaver/models"
)

// result is what one in-process run of the command printed and returned.
type result struct {
	code           int
	stdout, stderr string
}

func palaver(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// oneLine asserts the run failed with exactly one line on stderr containing
// want, and printed nothing on stdout.
func (r result) oneLine(t *testing.T, what, want string) {
	t.Helper()
	if r.code == 0 {
		t.Errorf("%s: exit status 0, want non-zero", what)
	}
	if lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n"); len(lines) != 1 || !strings.HasSuffix(r.stderr, "\n") {
		t.Errorf("%s: stderr is %d lines, want one: %q", what, len(lines), r.stderr)
	}
	if !strings.Contains(r.stderr, want) {
		t.Errorf("%s: stderr %q does not say %q", what, r.stderr, want)
	}
	if r.stdout != "" {
		t.Errorf("%s: stdout %q, want nothing", what, r.stdout)
	}
}

func (r result) ok(t *testing.T, what string) {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%s: exit %d, stderr %q; want 0 and nothing", what, r.code, r.stderr)
	}
}

func dbPath(t *testing.T) string {
	return filepath.Join(t.TempDir(), "data", "palaver.db")
}

// openDB opens a database the command wrote, to check what it did.
func openDB(t *testing.T, path string) *models.Store {
	t.Helper()
	s, err := models.Open(path, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMigrate(t *testing.T) {
	db := dbPath(t)
	r := palaver(t, "migrate", "--db", db)
	r.ok(t, "first migrate")
	if !regexp.MustCompile(`^applied [1-9][0-9]* migration\(s\)\n$`).MatchString(r.stdout) {
		t.Errorf("first migrate printed %q", r.stdout)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the database was not created with its folder: %v", err)
	}
	r = palaver(t, "migrate", "--db", db)
	r.ok(t, "second migrate")
	if r.stdout != "applied 0 migration(s)\n" {
		t.Errorf("second migrate printed %q", r.stdout)
	}
	palaver(t, "migrate", "--db", db, "extra").oneLine(t, "migrate with an argument", "no arguments")
}

func TestFlagsReadTheEnvironment(t *testing.T) {
	db := dbPath(t)
	t.Setenv("PALAVER_DB", db)
	palaver(t, "migrate").ok(t, "migrate with $PALAVER_DB")
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("$PALAVER_DB was not used: %v", err)
	}
	t.Setenv("PALAVER_PASSWORD", "from-the-env")
	t.Setenv("PALAVER_ADMIN", "false")
	palaver(t, "user", "add", "ann").ok(t, "user add with $PALAVER_PASSWORD")
	u, err := openDB(t, db).UserByUsername(context.Background(), "ann")
	if err != nil {
		t.Fatal(err)
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte("from-the-env")) != nil {
		t.Error("the password from $PALAVER_PASSWORD was not used")
	}
	// A flag given on the command line wins over its variable.
	other := dbPath(t)
	palaver(t, "migrate", "--db", other).ok(t, "migrate --db over $PALAVER_DB")
	if _, err := os.Stat(other); err != nil {
		t.Errorf("--db did not win over $PALAVER_DB: %v", err)
	}
	t.Setenv("PALAVER_ADMIN", "maybe")
	palaver(t, "user", "add", "bob").oneLine(t, "bad $PALAVER_ADMIN", "PALAVER_ADMIN")
}

func TestUserAdd(t *testing.T) {
	db := dbPath(t)
	ctx := context.Background()
	r := palaver(t, "user", "add", "ann", "--password", "correct horse", "--db", db)
	r.ok(t, "user add ann")
	if !strings.Contains(r.stdout, "admin") || !strings.Contains(r.stdout, "ann") {
		t.Errorf("user add printed %q, want it to say ann is admin", r.stdout)
	}
	// Flags before the name work as well as after it.
	palaver(t, "user", "add", "--db", db, "--password", "battery staple", "bob").ok(t, "user add bob")
	palaver(t, "user", "add", "cat", "--admin", "--db", db, "--password", "a long password").ok(t, "user add cat --admin")

	s := openDB(t, db)
	for name, admin := range map[string]bool{"ann": true, "bob": false, "cat": true} {
		u, err := s.UserByUsername(ctx, name)
		if err != nil {
			t.Fatalf("user %s: %v", name, err)
		}
		if u.IsAdmin != admin {
			t.Errorf("user %s admin = %v, want %v", name, u.IsAdmin, admin)
		}
	}
	ann, _ := s.UserByUsername(ctx, "ann")
	if bcrypt.CompareHashAndPassword([]byte(ann.PasswordHash), []byte("correct horse")) != nil {
		t.Error("ann's stored hash does not match her password")
	}

	palaver(t, "user", "add", "ann", "--password", "another one", "--db", db).oneLine(t, "duplicate user", `"ann" already exists`)
	palaver(t, "user", "add", "dan", "--password", "short", "--db", db).oneLine(t, "short password", "too short")
	palaver(t, "user", "add", "--password", "long enough", "--db", db).oneLine(t, "no name", "NAME")
	palaver(t, "user", "add", "a", "b", "--password", "long enough", "--db", db).oneLine(t, "two names", "NAME")
	palaver(t, "user", "add", "eve", "--password", "long enough", "--db", db, "--bogus").oneLine(t, "unknown flag", "bogus")
	if _, err := s.UserByUsername(ctx, "dan"); !errors.Is(err, models.ErrNotFound) {
		t.Error("a refused user add created the account")
	}
}

func TestUserKey(t *testing.T) {
	db := dbPath(t)
	palaver(t, "user", "add", "ann", "--password", "correct horse", "--db", db).ok(t, "user add")
	palaver(t, "user", "add", "bob", "--password", "correct horse", "--db", db).ok(t, "user add")

	r := palaver(t, "user", "key", "bob", "--db", db)
	r.ok(t, "user key bob")
	key, found := strings.CutSuffix(r.stdout, "\n")
	if !found || key == "" || strings.ContainsAny(key, " \t\n") {
		t.Fatalf("user key printed %q, want exactly one line holding the key", r.stdout)
	}
	s := openDB(t, db)
	u, err := s.UserByAPIKey(context.Background(), handlers.HashAPIKey(key))
	if err != nil || u.Username != "bob" {
		t.Fatalf("the printed key authenticates as %+v, %v; want bob", u, err)
	}
	// Each call makes a new key; the old one keeps working.
	r2 := palaver(t, "user", "key", "--db", db, "bob")
	r2.ok(t, "second user key")
	if r2.stdout == r.stdout {
		t.Error("two calls printed the same key")
	}
	if u, err := s.UserByAPIKey(context.Background(), handlers.HashAPIKey(key)); err != nil || u.Username != "bob" {
		t.Errorf("the first key stopped working: %v", err)
	}
	if _, err := s.UserByAPIKey(context.Background(), handlers.HashAPIKey(key+"x")); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("a wrong key authenticates: %v", err)
	}

	// Keys are named: "cli" unless --key-name says otherwise.
	palaver(t, "user", "key", "bob", "--key-name", "  backup job ", "--db", db).ok(t, "named user key")
	keys, err := s.APIKeys(context.Background(), u.ID)
	if err != nil || len(keys) != 3 || keys[0].Name != "cli" || keys[1].Name != "cli" || keys[2].Name != "backup job" {
		t.Fatalf("bob's keys %+v, %v", keys, err)
	}
	palaver(t, "user", "key", "bob", "--key-name", " ", "--db", db).oneLine(t, "empty key name", "--key-name")

	palaver(t, "user", "key", "nobody", "--db", db).oneLine(t, "unknown user", `no user named "nobody"`)
	palaver(t, "user", "key", "--db", db).oneLine(t, "no name", "NAME")
}

func TestCommandLineMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"user"}, "add or key"},
		{[]string{"user", "delete", "ann"}, `unknown user subcommand "delete"`},
		{[]string{"migrate", "--nope"}, "nope"},
		{[]string{"migrate", "--db"}, "db"},
	} {
		r := palaver(t, tc.args...)
		r.oneLine(t, strings.Join(tc.args, " "), tc.want)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (a usage mistake)", tc.args, r.code)
		}
	}
	r := palaver(t)
	if r.code != 2 || !strings.Contains(r.stderr, "usage:") {
		t.Errorf("no command: exit %d, stderr %q; want 2 and the usage", r.code, r.stderr)
	}
}

func TestHelp(t *testing.T) {
	r := palaver(t, "help")
	r.ok(t, "help")
	for _, cmd := range []string{"serve", "migrate", "user add", "user key"} {
		if !strings.Contains(r.stdout, cmd) {
			t.Errorf("help does not mention %q", cmd)
		}
	}
	r = palaver(t, "migrate", "-h")
	if r.code != 0 || !strings.Contains(r.stderr, "-db") || !strings.Contains(r.stderr, "PALAVER_DB") {
		t.Errorf("migrate -h: exit %d, stderr %q; want 0 and the flags with their variables", r.code, r.stderr)
	}
}

func TestDatabaseErrorIsOneLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := palaver(t, "migrate", "--db", filepath.Join(file, "sub", "x.db"))
	r.oneLine(t, "database under a file", "palaver:")
	if r.code != 1 {
		t.Errorf("exit %d, want 1", r.code)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's logger and the test to
// share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe runs the server in-process on a free port, checks it answers and
// that it stops cleanly when its context ends.
func TestServe(t *testing.T) {
	db := dbPath(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db}, io.Discard, &logs) }()

	base := waitServing(t, &logs, done)
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "ok") {
		t.Errorf("/healthz = %d %s", resp.StatusCode, body)
	}
	overSizeAnswered(t, strings.TrimPrefix(base, "http://"))
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve exited with %d after shutdown: %s", code, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop after its context ended")
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("serve did not create and migrate the database: %v", err)
	}
}

// overSizeAnswered posts a 6 MiB body to the server at addr as a client that
// writes its whole request before it reads, 10 times: serve's listener
// lingers on the refused connection (handlers.Listener), so the client
// reads the 413 every time instead of a reset.
func overSizeAnswered(t *testing.T, addr string) {
	t.Helper()
	body := strings.Repeat("a", 6<<20)
	req := []byte(fmt.Sprintf("POST /api/chat HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		addr, len(body), body))
	for i := range 10 {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write(req); err != nil {
			conn.Close()
			t.Fatalf("over-size body, try %d: write: %v", i+1, err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			conn.Close()
			t.Fatalf("over-size body, try %d: read: %v", i+1, err)
		}
		res.Body.Close()
		conn.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("over-size body, try %d: status %d, want 413", i+1, res.StatusCode)
		}
	}
}
