package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// privateCluster is a PostgreSQL server of the test's own, which it may stop
// and start (the shared test cluster must stay up for the other tests).
type privateCluster struct {
	t     *testing.T
	bin   string // the server's bin folder
	dir   string // data, log and socket
	dsn   string
	admin string // the DSN of its postgres database
}

// startPrivateCluster makes and starts a cluster listening on a Unix socket
// only, as make test does; it skips when it cannot (not root, no server).
func startPrivateCluster(t *testing.T) *privateCluster {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("a private PostgreSQL cluster is made as root (runuser -u postgres)")
	}
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	if len(bins) == 0 {
		t.Skip("no PostgreSQL server installed (/usr/lib/postgresql/*/bin)")
	}
	sort.Strings(bins)
	dir, err := os.MkdirTemp("", "palaver-pg-")
	if err != nil {
		t.Fatal(err)
	}
	c := &privateCluster{t: t, bin: bins[len(bins)-1], dir: dir}
	if out, err := exec.Command("chown", "postgres:postgres", dir).CombinedOutput(); err != nil {
		t.Skipf("chown to postgres: %v %s", err, out)
	}
	c.asPostgres("initdb", "-D", dir+"/data", "-U", "postgres", "-A", "trust", "--no-sync")
	c.start()
	t.Cleanup(func() {
		_ = c.pgCtl("-m", "immediate", "stop")
		os.RemoveAll(dir)
	})
	c.admin = "postgres://postgres@/postgres?host=" + dir + "&sslmode=disable"
	conn, err := pgx.Connect(context.Background(), c.admin)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "CREATE DATABASE palaver"); err != nil {
		t.Fatal(err)
	}
	c.dsn = "postgres://postgres@/palaver?host=" + dir + "&sslmode=disable"
	return c
}

func (c *privateCluster) asPostgres(tool string, args ...string) {
	c.t.Helper()
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, tool)}, args...)...)
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		c.t.Fatalf("%s: %v\n%s", tool, err, out)
	}
}

func (c *privateCluster) pgCtl(args ...string) error {
	cmd := exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, "pg_ctl"), "-D", c.dir + "/data", "-w"}, args...)...)
	cmd.Dir = "/"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("pg_ctl %v: %v\n%s", args, err, out.String())
	}
	return nil
}

func (c *privateCluster) start() {
	c.t.Helper()
	if err := c.pgCtl("-l", c.dir+"/log", "-o", "-c listen_addresses='' -k "+c.dir+" -c fsync=off", "start"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *privateCluster) stop() {
	c.t.Helper()
	if err := c.pgCtl("-m", "fast", "stop"); err != nil {
		c.t.Fatal(err)
	}
}

// TestListenerRecoversFromAnOutage: the database stops for a few seconds
// and starts again; the listening connections of both processes come back
// by themselves (no restart), and a turn sent to A is followed again by a
// stream on B.
func TestListenerRecoversFromAnOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary, and a PostgreSQL server")
	}
	pg := startPrivateCluster(t)
	bin := buildBinary(t)
	cli(t, bin, "migrate", "--db", pg.dsn)
	cli(t, bin, "user", "add", "ann", "--password", "correct horse", "--db", pg.dsn)
	ts := &twoServers{t: t, bin: bin, dsn: pg.dsn, key: cli(t, bin, "user", "key", "ann", "--db", pg.dsn)}
	ts.aAddr, ts.bAddr = freeAddr(t), freeAddr(t)
	ts.a = startServer(t, bin, pg.dsn, ts.aAddr, "--builtin-delay", "20ms")
	ts.b = startServer(t, bin, pg.dsn, ts.bAddr, "--builtin-delay", "20ms")
	ex := ts.chat(ts.a, 0, "hello").ExchangeID

	listeners := func() int {
		conn, err := pgx.Connect(context.Background(), pg.admin)
		if err != nil {
			return -1
		}
		defer conn.Close(context.Background())
		var n int
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'palaver listener %'").Scan(&n); err != nil {
			return -1
		}
		return n
	}
	if n := listeners(); n != 2 {
		t.Fatalf("%d listening connections before the outage, want 2", n)
	}
	pg.stop()
	time.Sleep(3 * time.Second) // the database is away; the listeners try again meanwhile
	pg.start()
	for deadline := time.Now().Add(xprocWait); listeners() != 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d listening connections after the outage, want 2 again\nA:\n%s\nB:\n%s", listeners(), ts.a.log, ts.b.log)
		}
	}
	for _, s := range []*server{ts.a, ts.b} {
		if !strings.Contains(s.log.String(), "listening again") {
			t.Fatalf("a process does not say it listens again:\n%s", s.log)
		}
	}
	// The pools may hand out a connection that died with the server (that
	// is the pools' business, not the listeners'): wait until both
	// processes say they are healthy, then send the turn until it is taken.
	for _, s := range []*server{ts.a, ts.b} {
		for deadline := time.Now().Add(xprocWait); ; time.Sleep(200 * time.Millisecond) {
			res, err := http.Get(s.base + "/healthz")
			if err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s/healthz does not answer 200 after the outage", s.base)
			}
		}
	}
	st := ts.openStream(ts.b, ex, 1)
	st.until("the turn state", func(e sseEvent) bool { return e.kind == "turn" })
	var answer apiAnswer
	for tries := 0; ; tries++ {
		code := ts.a.api(http.MethodPost, "/api/chat", ts.key, map[string]any{"query": "back again", "exchange_id": ex}, &answer)
		if code == http.StatusOK {
			break
		}
		if tries == 10 {
			t.Fatalf("POST /api/chat after the outage: %d", code)
		}
		time.Sleep(500 * time.Millisecond)
	}
	st.until("the reply", func(e sseEvent) bool { return e.kind == "entry" && e.entry.Content == answer.Response })
	log := ts.messages(ts.b, ex)
	onceEach(t, "the stream's entries", st.entries(), []int64{log[len(log)-2].ID, log[len(log)-1].ID})
}
