package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"palaver/internal/pgtest"
	"palaver/migrations"
	"palaver/models"
)

// startServe runs serve in-process with args until it logs that it serves
// (or fails), and stops it when the test ends; it returns its base URL and
// the log, which goes on growing.
func startServe(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var logs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), io.Discard, &logs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	})
	return waitServing(t, &logs, done), &logs
}

// servingLine is serve's "serving" line in the text log format.
var servingLine = regexp.MustCompile(`msg=serving url=(http://127\.0\.0\.1:\d+)`)

// waitServing waits for serve's "serving" line (text or JSON) and returns
// its base URL; serve returning first (its exit code on done) fails the
// test.
func waitServing(t *testing.T, logs *syncBuffer, done <-chan int) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		out := logs.String()
		if m := servingLine.FindStringSubmatch(out); m != nil {
			return m[1]
		}
		for _, line := range strings.Split(out, "\n") {
			var l struct{ Msg, URL string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "serving" {
				return l.URL
			}
		}
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d before serving: %s", code, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", out)
		}
	}
}

func TestRedactDSN(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"data/palaver.db", "data/palaver.db"},
		{"postgres://ann:s3cret@db.example:5432/palaver?sslmode=disable", "postgres://ann:xxxxx@db.example:5432/palaver?sslmode=disable"},
		{"postgresql://ann@db.example/palaver?password=s3cret&sslmode=require", "postgresql://ann@db.example/palaver?password=xxxxx&sslmode=require"},
		{"postgres://ann:p%40ss@/palaver?host=/run/pg", "postgres://ann:xxxxx@/palaver?host=/run/pg"},
		{"host=db user=ann password=s3cret dbname=palaver", "host=db user=ann password=xxxxx dbname=palaver"},
		{"host=db password='s3 cret' dbname=palaver", "host=db password=xxxxx dbname=palaver"},
		{"postgres://ann:s3cret@db.example:bad/x", "(a database URL that does not parse)"},
	} {
		if got := redactDSN(tc.in); got != tc.want {
			t.Errorf("redactDSN(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestServeLogsNoDatabasePassword: a --db URL's password is neither in the
// start-up log nor in the error when the database cannot be reached.
func TestServeLogsNoDatabasePassword(t *testing.T) {
	r := palaver(t, "serve", "--addr", "127.0.0.1:0", "--db", "postgres://ann:s3cret-pw@127.0.0.1:1/palaver?sslmode=disable&connect_timeout=2")
	if r.code == 0 || strings.Contains(r.stderr, "s3cret-pw") {
		t.Fatalf("serve on an unreachable database: exit %d, stderr %q (the password must not be in it)", r.code, r.stderr)
	}

	dsn := pgtest.Take(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "s3cret-pw") // the test cluster trusts, so any password does
	_, logs := startServe(t, "--db", u.String())
	if got := logs.String(); strings.Contains(got, "s3cret-pw") || !strings.Contains(got, ":xxxxx@") {
		t.Fatalf("the start-up log shows the password, or not where it was: %s", got)
	}
}

// TestServeWarnsOfUsernameClashes: accounts made before migration 00004
// whose names are now one name are both kept and named in a warning.
func TestServeWarnsOfUsernameClashes(t *testing.T) {
	db := dbPath(t)
	s, err := models.Open(db, models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.UpTo(context.Background(), sqlDB, "sqlite", 3); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ann", "Ann"} {
		if _, err := sqlDB.Exec("INSERT INTO users (username, password_hash, is_admin, created_at) VALUES (?, 'h', 0, CURRENT_TIMESTAMP)", name); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	_, logs := startServe(t, "--db", db)
	if !strings.Contains(logs.String(), `level=WARN msg="two accounts' names are the same name in another case or Unicode form: both kept, each signs in by its exact name" username=Ann same_as=ann`) {
		t.Fatalf("no warning naming the clash: %s", logs.String())
	}
}

func TestServeTrustedProxiesFlag(t *testing.T) {
	palaver(t, "serve", "--db", dbPath(t), "--trusted-proxies", "10.0.0.1, nonsense").oneLine(t, "bad --trusted-proxies", `--trusted-proxies: "nonsense" is not an IP address or CIDR range`)
	palaver(t, "serve", "--db", dbPath(t), "--trusted-proxies", "10.0.0.0/33").oneLine(t, "bad CIDR", `"10.0.0.0/33"`)
	startServe(t, "--db", dbPath(t), "--trusted-proxies", "127.0.0.1, 10.0.0.0/8, ::1")
}

// TestUserAddUsernameRules: user add applies the rules of registering.
func TestUserAddUsernameRules(t *testing.T) {
	db := dbPath(t)
	add := func(name string) result {
		return palaver(t, "user", "add", name, "--password", "correct horse", "--db", db)
	}
	add("alice").ok(t, "user add alice")
	add("алиса").ok(t, "user add алиса (all Cyrillic)")
	for _, tc := range []struct{ name, want string }{
		{"Alice", `"Alice" already exists`},
		{"ＡＬＩＣＥ", `"ALICE" already exists`},
		{"alice\u200b", "only contain letters, digits"},
		{"\u202eecila", "only contain letters, digits"},
		{"ali\x07ce", "only contain letters, digits"},
		{"\u0430lice", "cannot mix letters of different alphabets"},
		{"al", "3 to 32 characters"},
	} {
		add(tc.name).oneLine(t, fmt.Sprintf("user add %q", tc.name), tc.want)
	}
	sqlDB, err := openDB(t, db).SQL()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := sqlDB.QueryRow("SELECT count(*) FROM users").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d accounts (%v), want alice and алиса only", n, err)
	}
}
