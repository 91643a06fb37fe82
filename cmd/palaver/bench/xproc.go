package bench

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5"
)

// RunPostgres measures on PostgreSQL (`palaver bench --postgres URL`): on
// a database of its own, made on that server and dropped afterwards, the
// figures that mean the same there, and xproc_fanout_p99_ms: a message
// committed through one app instance reaching the websockets held by
// another, which hears of it through the database (LISTEN/NOTIFY), beside
// fanout_p99_ms, the same within one instance. The two instances run in
// this process, each with its own pool, listening connection and hub, as
// two serve processes would (serve's per-user limit of 32 websockets would
// refuse the 200 sockets of one user).
func RunPostgres(ctx context.Context, stdout io.Writer, dsn string, size Size) error {
	fmt.Fprintf(stdout, "# palaver bench --postgres: %d CPUs, %s/%s, %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(stdout, "# sizes: append %d vs %d messages, fork %d messages, fanout %d sockets x %d rounds\n",
		size.AppendBig, size.AppendSmall, size.AppendBig, size.FanoutClients, size.FanoutRounds)
	var skipped []string
	for _, f := range figures {
		if !pgFigures[f.name] {
			skipped = append(skipped, f.name)
		}
	}
	fmt.Fprintf(stdout, "# not run here: %s (their raw baselines or seeding are SQLite's)\n", strings.Join(skipped, ", "))
	benchDSN, drop, err := scratchDatabase(ctx, stdout, dsn)
	if err != nil {
		return err
	}
	defer drop()
	u, _ := url.Parse(benchDSN)
	fmt.Fprintf(stdout, "# on a scratch database %s, dropped afterwards\n", strings.TrimPrefix(u.Path, "/"))
	e, err := start(ctx, benchDSN, size)
	if err != nil {
		return err
	}
	defer e.close()
	var misses []string
	r := report{stdout, &misses}
	for _, f := range figures {
		if !pgFigures[f.name] {
			continue
		}
		if err := f.run(ctx, e, r); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	if err := xprocFigures(ctx, e, benchDSN, r); err != nil {
		return fmt.Errorf("xproc fanout: %w", err)
	}
	if err := xprocTurnFigures(ctx, e, benchDSN, r); err != nil {
		return fmt.Errorf("xproc turns: %w", err)
	}
	return missed(misses)
}

// xprocTurnFigures: API turns per second through 1, 2 and 4 app instances
// on the one PostgreSQL, each with its own pool and listening connection
// as a serve process has; size.Clients clients post turns, spread over
// the instances. The instances run in this process, so they share its
// CPUs with the clients: on one machine the figure shows what the
// database takes, not what more machines would add.
func xprocTurnFigures(ctx context.Context, e *env, dsn string, r report) error {
	for _, n := range []int{1, 2, 4} {
		addrs := []string{e.addr}
		var peers []*env
		for range n - 1 {
			peer := &env{size: e.size}
			peers = append(peers, peer)
			if err := peer.serve(ctx, dsn); err != nil {
				for _, p := range peers {
					p.close()
				}
				return err
			}
			addrs = append(addrs, peer.addr)
		}
		rate, err := e.turnsAcross(addrs)
		for _, p := range peers {
			p.close()
		}
		if err != nil {
			return err
		}
		r.anchor(fmt.Sprintf("xproc_turns_per_s_%d", n), rate, fmt.Sprintf("POST /api/chat turns a second from %d clients through %d app instances on one PostgreSQL", e.size.Clients, n))
	}
	return nil
}

// turnsAcross runs size.Turns API turns from size.Clients clients, client
// c posting through addrs[c%len(addrs)], each on its own exchange, and
// returns turns per second.
func (e *env) turnsAcross(addrs []string) (float64, error) {
	per := max(e.size.Turns/e.size.Clients, 1)
	clients := make([]*env, e.size.Clients)
	ids := make([]int64, e.size.Clients)
	for c := range clients {
		clients[c] = &env{addr: addrs[c%len(addrs)], apiKey: e.apiKey, http: e.http}
		id, err := clients[c].chat("xproc warm-up", 0)
		if err != nil {
			return 0, err
		}
		ids[c] = id
	}
	elapsed, err := concurrently(len(clients), per, func(c, i int) error {
		_, err := clients[c].chat(fmt.Sprintf("client %d turn %d", c, i), ids[c])
		return err
	})
	if err != nil {
		return 0, err
	}
	return float64(per*len(clients)) / elapsed.Seconds(), nil
}

// pgFigures are the groups of figures that mean the same on PostgreSQL.
var pgFigures = map[string]bool{"append": true, "fork": true, "fanout": true}

// xprocFigures: the fanout, with the websockets on a second app instance
// and the turns posted through the first.
func xprocFigures(ctx context.Context, e *env, dsn string, r report) error {
	peer := &env{size: e.size, jar: e.jar, http: e.http, userID: e.userID, apiKey: e.apiKey, via: e.addr}
	defer peer.close()
	if err := peer.serve(ctx, dsn); err != nil {
		return err
	}
	p99, first, _, _, err := peer.fanout(ctx)
	if err != nil {
		return err
	}
	r.line("xproc_fanout_p99_ms", ms(p99), "≤ 100; committed through instance A, to the websockets on instance B")
	r.anchor("xproc_fanout_first_max_ms", ms(first), "the first message to B's freshly opened sockets, not in the p99")
	return nil
}

// scratchDatabase makes an empty database on dsn's server for the bench and
// returns its URL, and a func that drops it (and says so on out when it
// cannot).
func scratchDatabase(ctx context.Context, out io.Writer, dsn string) (string, func(), error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", nil, fmt.Errorf("--postgres wants a postgres:// URL")
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", nil, fmt.Errorf("connect to the --postgres server: %w", err)
	}
	name := "palaver_bench_" + randHex(4)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		conn.Close(ctx)
		return "", nil, fmt.Errorf("the bench makes a database of its own, and could not: %w", err)
	}
	drop := func() {
		dctx := context.WithoutCancel(ctx)
		if _, err := conn.Exec(dctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(out, "# could not drop the bench's database %s: %v\n", name, err)
		}
		conn.Close(dctx)
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// rebind writes a query's ? placeholders as PostgreSQL's $1, $2, … when the
// bench runs there (the seeding's raw SQL is written for SQLite).
func (e *env) rebind(query string) string {
	if e.store.Dialect() != "postgres" {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
