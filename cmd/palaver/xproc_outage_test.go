package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"palaver/internal/pgtest"
)

// TestListenerRecoversFromAnOutage: the database stops for a few seconds
// and starts again; the listening connections of both processes come back
// by themselves (no restart), and a turn sent to A is followed again by a
// stream on B.
func TestListenerRecoversFromAnOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary, and a PostgreSQL server")
	}
	pg := pgtest.NewCluster(t) // its own server, which it stops: the shared one stays up
	bin := buildBinary(t)
	cli(t, bin, "migrate", "--db", pg.DSN)
	cli(t, bin, "user", "add", "ann", "--password", "correct horse", "--db", pg.DSN)
	ts := &twoServers{t: t, bin: bin, dsn: pg.DSN, key: cli(t, bin, "user", "key", "ann", "--db", pg.DSN)}
	ts.aAddr, ts.bAddr = freeAddr(t), freeAddr(t)
	ts.a = startServer(t, bin, pg.DSN, ts.aAddr, "--builtin-delay", "20ms")
	ts.b = startServer(t, bin, pg.DSN, ts.bAddr, "--builtin-delay", "20ms")
	ex := ts.chat(ts.a, 0, "hello").ExchangeID

	listeners := func() int {
		conn, err := pgx.Connect(context.Background(), pg.DSN)
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
	pg.Stop()
	time.Sleep(3 * time.Second) // the database is away; the listeners try again meanwhile
	pg.Start()
	for deadline := time.Now().Add(xprocWait); listeners() != 2; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d listening connections after the outage, want 2 again\nA:\n%s\nB:\n%s", listeners(), ts.a.log, ts.b.log)
		}
	}
	// The connection shows in pg_stat_activity before its LISTEN has
	// answered and the process has said so: wait for the words too.
	for _, s := range []*server{ts.a, ts.b} {
		for deadline := time.Now().Add(xprocWait); !strings.Contains(s.log.String(), "listening again"); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("a process does not say it listens again:\n%s", s.log)
			}
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
