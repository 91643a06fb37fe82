package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"

	"palaver/agents"
	"palaver/handlers"
	"palaver/models"
	"palaver/static"
)

// benchSize is how much data and work one bench run uses.
type benchSize struct {
	appendSmall, appendBig int // messages already in the exchange a turn is appended to
	appendTurns            int // turns timed at each size
	clients                int // concurrent API clients and raw-insert goroutines
	turns                  int // API turns (and raw turns) in all, over the clients
	histExchanges          int
	histMessages           int
	histSamples            int
	fanoutClients          int
	fanoutRounds           int
	idleSockets            int
}

var (
	benchFull  = benchSize{10, 10_000, 50, 8, 800, 100_000, 1_000_000, 200, 200, 20, 1000}
	benchQuick = benchSize{10, 1_000, 20, 8, 200, 10_000, 100_000, 100, 200, 8, 200}
)

func bench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newFlags("bench", stderr)
	quick := f.bool("quick", false, "shrink the data and the work to finish in under a minute")
	dbDir := f.string("db-dir", os.TempDir(), "folder for the temporary database (removed afterwards)")
	cpuProfile := f.string("cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof reads it)")
	if pos, err := f.parse(args); err != nil {
		return err
	} else if len(pos) > 0 {
		return fmt.Errorf("%w: bench takes no arguments, got %q", errUsage, pos[0])
	}
	size := benchFull
	if *quick {
		size = benchQuick
	}
	if *cpuProfile != "" {
		out, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	return runBench(ctx, stdout, *dbDir, size)
}

// benchEnv is the seeded database, the server on a loopback listener and
// the clients' credentials.
type benchEnv struct {
	size   benchSize
	store  *models.Store
	raw    *sql.DB // a second pool on the same file, same SQLite settings
	svc    *agents.Service
	addr   string
	http   *http.Client
	jar    http.CookieJar
	userID int64
	apiKey string
}

func runBench(ctx context.Context, stdout io.Writer, dbDir string, size benchSize) (err error) {
	fmt.Fprintf(stdout, "# palaver bench: %d CPUs, %s/%s, %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(stdout, "# sizes: append %d vs %d messages, %d turns from %d clients, history %d exchanges / %d messages, fanout %d sockets x %d rounds, %d idle sockets\n",
		size.appendBig, size.appendSmall, size.turns, size.clients, size.histExchanges, size.histMessages, size.fanoutClients, size.fanoutRounds, size.idleSockets)
	dir, err := os.MkdirTemp(dbDir, "palaver-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bench.db")

	store, _, err := openStore(ctx, path, models.Options{Synchronous: "full"})
	if err != nil {
		return err
	}
	defer store.Close()
	// The raw baseline: plain database/sql on a second pool opened with the
	// very same DSN and pool settings as the app's (models.Open builds it).
	rawStore, err := models.Open(path, models.Options{Synchronous: "full"})
	if err != nil {
		return err
	}
	defer rawStore.Close()
	raw, err := rawStore.SQL()
	if err != nil {
		return err
	}

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := agents.New(store, &agents.Builtin{}, agents.Options{Logger: log})
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = svc.Close(cctx)
	}()
	assets, err := static.Load()
	if err != nil {
		return err
	}
	sqlDB, err := store.SQL()
	if err != nil {
		return err
	}
	app := handlers.New(handlers.Deps{
		Store:    store,
		Sessions: handlers.NewSessions(sqlDB, store.Dialect(), false, 10*time.Minute),
		Agents:   svc,
		Assets:   assets,
		Logger:   log,
		Config:   handlers.Config{AllowRegistration: true},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go func() { _ = app.Listener(ln) }()
	defer func() { _ = app.ShutdownWithTimeout(2 * time.Second) }()

	jar, _ := cookiejar.New(nil)
	e := &benchEnv{
		size: size, store: store, raw: raw, svc: svc, addr: ln.Addr().String(), jar: jar,
		http: &http.Client{Jar: jar, Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
	}
	if err := e.signUp(ctx); err != nil {
		return fmt.Errorf("sign up: %w", err)
	}

	line := func(name string, v float64, target string) {
		if target != "" {
			fmt.Fprintf(stdout, "%s: %s (target %s)\n", name, benchNum(v), target)
		} else {
			fmt.Fprintf(stdout, "%s: %s\n", name, benchNum(v))
		}
	}

	// append_ratio: p50 of a turn appended to a big exchange over the same
	// at a small one, through agents.Service.Send (no HTTP).
	small, big, err := e.appendP50s(ctx)
	if err != nil {
		return fmt.Errorf("append: %w", err)
	}
	line("append_p50_ms_small", ms(small), "")
	line("append_p50_ms_big", ms(big), "")
	line("append_ratio", float64(big)/float64(small), "≤ 1.3")

	// Throughput: POST /api/chat turns against raw inserts of the same rows,
	// from as many concurrent clients, in alternating rounds (the disk's sync
	// time drifts during a run): the medians are reported.
	var apiRates, rawRates []float64
	var sample *models.Message // a stored reply, for the raw rows to copy
	for range benchRounds {
		turnsPerS, reply, err := e.apiThroughput(ctx)
		if err != nil {
			return fmt.Errorf("api throughput: %w", err)
		}
		sample = reply
		rowsPerS, err := e.rawThroughput(ctx, sample, e.size.clients)
		if err != nil {
			return fmt.Errorf("raw throughput: %w", err)
		}
		apiRates, rawRates = append(apiRates, turnsPerS), append(rawRates, rowsPerS)
	}
	turnsPerS, rowsPerS := median(apiRates), median(rawRates)
	line("turns_per_s", turnsPerS, "")
	line("raw_rows_per_s", rowsPerS, "")
	// throughput_ratio compares turns with raw turns: a turn stores two rows
	// (user + assistant message), so raw turns per second are raw_rows_per_s/2.
	line("throughput_ratio", turnsPerS/(rowsPerS/2), "≥ 0.5; = turns_per_s / (raw_rows_per_s/2)")
	// For scale: the same raw inserts from one writer, which never waits for
	// SQLite's write lock (concurrent raw writers do, on the busy timeout).
	serial, err := e.rawThroughput(ctx, sample, 1)
	if err != nil {
		return fmt.Errorf("raw throughput: %w", err)
	}
	line("raw_rows_per_s_one_writer", serial, "")

	// History over a big table, against the bare SQL it runs.
	apiP50, bareP50, err := e.history(ctx)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	line("history_p50_ms", ms(apiP50), "≤ 5")
	line("history_bare_sql_p50_ms", ms(bareP50), "")
	line("history_ratio", float64(apiP50)/float64(bareP50), "")

	p99, first, err := e.fanout(ctx)
	if err != nil {
		return fmt.Errorf("fanout: %w", err)
	}
	line("fanout_p99_ms", ms(p99), "≤ 50; the rounds after the first")
	fmt.Fprintf(stdout, "fanout_first_max_ms: %s (the first message to the freshly opened sockets, not in the p99)\n", benchNum(ms(first)))

	delta, total, err := e.idleRSS(ctx)
	if err != nil {
		return fmt.Errorf("websocket rss: %w", err)
	}
	// The clients run in the same process as the server, so the delta counts
	// both ends of every websocket: an upper bound on the server's share.
	line("ws_rss_mb", delta, fmt.Sprintf("≤ 150; %d idle websockets, server and clients in one process", size.idleSockets))
	line("rss_mb", total, "")
	return nil
}

// benchRounds is how many times the throughput pair is measured.
const benchRounds = 3

// median of a few figures.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func benchNum(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s)-1) + 0.5)
	return max(s[i], time.Nanosecond) // a positive figure even on a coarse clock
}

var benchCSRF = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// signUp registers the bench user through the form (a session cookie for the
// websockets) and gives it an API key.
func (e *benchEnv) signUp(ctx context.Context) error {
	base := "http://" + e.addr
	res, err := e.http.Get(base + "/register")
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := benchCSRF.FindSubmatch(body)
	if m == nil {
		return errors.New("no CSRF token on /register")
	}
	form := url.Values{"username": {"bench"}, "password": {"bench-password"}, "csrf_token": {string(m[1])}}
	res, err = e.http.PostForm(base+"/register", form)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	u, err := e.store.UserByUsername(ctx, "bench")
	if err != nil {
		return fmt.Errorf("register (status %d): %w", res.StatusCode, err)
	}
	e.userID = u.ID
	e.apiKey = randHex(16)
	_, err = e.store.CreateAPIKey(ctx, u.ID, "bench", handlers.HashAPIKey(e.apiKey))
	return err
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// chat posts one turn through the API and returns its exchange.
func (e *benchEnv) chat(query string, exchangeID int64) (int64, error) {
	body := map[string]any{"query": query}
	if exchangeID != 0 {
		body["exchange_id"] = exchangeID
	}
	j, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, "http://"+e.addr+"/api/chat", strings.NewReader(string(j)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", e.apiKey)
	res, err := e.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var out struct {
		ExchangeID *int64 `json:"exchange_id"`
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("POST /api/chat: %d %s", res.StatusCode, b)
	}
	if err := json.Unmarshal(b, &out); err != nil || out.ExchangeID == nil {
		return 0, fmt.Errorf("POST /api/chat: bad answer %s", b)
	}
	return *out.ExchangeID, nil
}

// seedLog appends messages with seqs from..n-1, alternating user and
// assistant, in one transaction, and keeps the header's turn count.
func (e *benchEnv) seedLog(ctx context.Context, exchangeID int64, from, n int) error {
	db, err := e.store.SQL()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO messages (exchange_id, seq, role, content, agent_type, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	for seq := from; seq < n; seq++ {
		role, agent := "user", any(nil)
		if seq%2 == 1 {
			role, agent = "assistant", "general"
		}
		if _, err := st.ExecContext(ctx, exchangeID, seq, role, fmt.Sprintf("seeded message %d of the bench exchange", seq), agent, at); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE exchanges SET turn_count = ? WHERE id = ?`, (n+1)/2, exchangeID); err != nil {
		return err
	}
	return tx.Commit()
}

// appendP50s is the median time to append one turn through the agent
// service to an exchange of size.appendSmall messages and to one of
// size.appendBig. Both exchanges are seeded first and the turns alternate
// between them, so that both meet the same database (its full-text index
// merging what the seeding wrote, the disk's mood): only the exchange's
// size differs.
func (e *benchEnv) appendP50s(ctx context.Context) (small, big time.Duration, err error) {
	sizes := []int{e.size.appendSmall, e.size.appendBig}
	ids := make([]int64, len(sizes))
	for i, n := range sizes {
		first, err := e.svc.Send(ctx, agents.SendRequest{UserID: e.userID, AgentType: agents.AgentAuto, Query: "start the bench exchange"})
		if err != nil {
			return 0, 0, err
		}
		if first.Failed {
			return 0, 0, errors.New("the first turn failed")
		}
		ids[i] = first.Exchange.ID
		if n > 2 {
			if err := e.seedLog(ctx, ids[i], 2, n); err != nil {
				return 0, 0, err
			}
		}
	}
	ds := make([][]time.Duration, len(sizes))
	for turn := range e.size.appendTurns {
		for i, id := range ids {
			t0 := time.Now()
			res, err := e.svc.Send(ctx, agents.SendRequest{UserID: e.userID, ExchangeID: id, AgentType: agents.AgentAuto, Query: fmt.Sprintf("append turn %d", turn)})
			if err != nil {
				return 0, 0, err
			}
			ds[i] = append(ds[i], time.Since(t0))
			if res.Failed {
				return 0, 0, errors.New("a bench turn failed")
			}
		}
	}
	return percentile(ds[0], 0.5), percentile(ds[1], 0.5), nil
}

// apiThroughput runs size.turns full POST /api/chat turns from size.clients
// concurrent clients, each on its own exchange, and returns turns per second
// and one stored reply (for the raw inserts to copy).
func (e *benchEnv) apiThroughput(ctx context.Context) (float64, *models.Message, error) {
	per := max(e.size.turns/e.size.clients, 1)
	ids := make([]int64, e.size.clients)
	for i := range ids { // the exchanges exist before the clock starts
		id, err := e.chat("throughput warm-up", 0)
		if err != nil {
			return 0, nil, err
		}
		ids[i] = id
	}
	var wg sync.WaitGroup
	errc := make(chan error, e.size.clients)
	t0 := time.Now()
	for c := range e.size.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if _, err := e.chat(fmt.Sprintf("client %d turn %d", c, i), ids[c]); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	close(errc)
	if err := <-errc; err != nil {
		return 0, nil, err
	}
	msgs, err := e.store.Messages(ctx, e.userID, ids[0], nil)
	if err != nil || len(msgs) < 2 {
		return 0, nil, fmt.Errorf("read back the turns: %v", err)
	}
	reply := msgs[len(msgs)-1]
	return float64(per*e.size.clients) / elapsed.Seconds(), &reply, nil
}

// rawThroughput inserts the same rows as the API turns (a user and an
// assistant message per transaction) through database/sql from writers
// goroutines and returns rows per second.
func (e *benchEnv) rawThroughput(ctx context.Context, reply *models.Message, writers int) (float64, error) {
	per := max(e.size.turns/writers, 1)
	respJSON, _ := json.Marshal(reply.AgentResponse)
	at := time.Now().UTC().Truncate(time.Microsecond)
	ids := make([]int64, writers)
	for i := range ids {
		r, err := e.raw.ExecContext(ctx, `INSERT INTO exchanges (user_id, scope, title, agent_type, turn_count, created_at, updated_at) VALUES (?, 'general', 'raw', 'general', 0, ?, ?)`, e.userID, at, at)
		if err != nil {
			return 0, err
		}
		if ids[i], err = r.LastInsertId(); err != nil {
			return 0, err
		}
	}
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	t0 := time.Now()
	for c := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if err := e.rawTurn(ctx, ids[c], int64(2*i), fmt.Sprintf("client %d turn %d", c, i), reply, string(respJSON)); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	close(errc)
	if err := <-errc; err != nil {
		return 0, err
	}
	return float64(2*per*writers) / elapsed.Seconds(), nil
}

func (e *benchEnv) rawTurn(ctx context.Context, exchangeID, seq int64, query string, reply *models.Message, respJSON string) error {
	tx, err := e.raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now().UTC().Truncate(time.Microsecond)
	const ins = `INSERT INTO messages (exchange_id, seq, role, content, agent_type, agent_response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`
	if _, err := tx.ExecContext(ctx, ins, exchangeID, seq, "user", query, nil, nil, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, ins, exchangeID, seq+1, "assistant", reply.Content, reply.AgentType, respJSON, now); err != nil {
		return err
	}
	return tx.Commit()
}

// history seeds a second user with size.histExchanges exchanges holding
// size.histMessages messages, then times GET /api/chat/history?limit=50
// against the two queries models.ListExchanges runs, bare.
func (e *benchEnv) history(ctx context.Context) (api, bare time.Duration, err error) {
	u, err := e.store.CreateUser(ctx, "bench-history", "x", false)
	if err != nil {
		return 0, 0, err
	}
	key := randHex(16)
	if _, err := e.store.CreateAPIKey(ctx, u.ID, "bench", handlers.HashAPIKey(key)); err != nil {
		return 0, 0, err
	}
	if err := e.seedHistory(ctx, u.ID); err != nil {
		return 0, 0, err
	}
	var apiDs, bareDs []time.Duration
	for range e.size.histSamples {
		req, _ := http.NewRequest(http.MethodGet, "http://"+e.addr+"/api/chat/history?limit=50", nil)
		req.Header.Set("x-api-key", key)
		t0 := time.Now()
		res, err := e.http.Do(req)
		if err != nil {
			return 0, 0, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		apiDs = append(apiDs, time.Since(t0))
		if res.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("GET /api/chat/history: %d", res.StatusCode)
		}
		t0 = time.Now()
		if err := e.bareHistory(ctx, u.ID); err != nil {
			return 0, 0, err
		}
		bareDs = append(bareDs, time.Since(t0))
	}
	return percentile(apiDs, 0.5), percentile(bareDs, 0.5), nil
}

func (e *benchEnv) seedHistory(ctx context.Context, userID int64) error {
	perEx := max(e.size.histMessages/e.size.histExchanges, 2)
	var next int64
	if err := e.raw.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM exchanges`).Scan(&next); err != nil {
		return err
	}
	base := time.Now().UTC().Truncate(time.Microsecond)
	const batch = 2000 // exchanges per transaction
	for done := 0; done < e.size.histExchanges; done += batch {
		err := func() error {
			tx, err := e.raw.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			exSt, err := tx.PrepareContext(ctx, `INSERT INTO exchanges (id, user_id, scope, title, agent_type, turn_count, created_at, updated_at) VALUES (?, ?, 'general', ?, 'general', ?, ?, ?)`)
			if err != nil {
				return err
			}
			msgSt, err := tx.PrepareContext(ctx, `INSERT INTO messages (exchange_id, seq, role, content, agent_type, created_at) VALUES (?, ?, ?, ?, ?, ?)`)
			if err != nil {
				return err
			}
			for i := done; i < min(done+batch, e.size.histExchanges); i++ {
				id := next + int64(i)
				at := base.Add(-time.Duration(e.size.histExchanges-i) * time.Second)
				if _, err := exSt.ExecContext(ctx, id, userID, fmt.Sprintf("exchange %d", i), perEx/2, at, at); err != nil {
					return err
				}
				for seq := range perEx {
					role, agent := "user", any(nil)
					if seq%2 == 1 {
						role, agent = "assistant", "general"
					}
					if _, err := msgSt.ExecContext(ctx, id, seq, role, fmt.Sprintf("message %d of exchange %d", seq, i), agent, at); err != nil {
						return err
					}
				}
			}
			return tx.Commit()
		}()
		if err != nil {
			return err
		}
	}
	_, err := e.raw.ExecContext(ctx, `ANALYZE`)
	return err
}

// bareHistory runs models.ListExchanges's two queries through database/sql.
func (e *benchEnv) bareHistory(ctx context.Context, userID int64) error {
	rows, err := e.raw.QueryContext(ctx, `SELECT * FROM exchanges WHERE user_id = ? AND scope = ? ORDER BY updated_at DESC, id DESC LIMIT 50`, userID, models.ScopeGeneral)
	if err != nil {
		return err
	}
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var ids []any
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, vals[0])
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return err
	}
	in := strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")
	args := append(slices.Clone(ids), ids...)
	rows, err = e.raw.QueryContext(ctx, `SELECT id, exchange_id, role, content, agent_response, feedback FROM messages WHERE id IN (SELECT MIN(id) FROM messages WHERE exchange_id IN (`+in+`) AND role IN ('user', 'assistant') GROUP BY exchange_id, role)
			OR id IN (SELECT MAX(id) FROM messages WHERE exchange_id IN (`+in+`) AND role = 'assistant' GROUP BY exchange_id) ORDER BY id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, exID int64
		var role, content string
		var resp sql.NullString
		var fb sql.NullInt64
		if err := rows.Scan(&id, &exID, &role, &content, &resp, &fb); err != nil {
			return err
		}
	}
	return rows.Err()
}

// dial opens /live as the signed-in bench user, from the server's origin.
func (e *benchEnv) dial() (*websocket.Conn, error) {
	h := http.Header{}
	h.Set("Origin", "http://"+e.addr)
	var parts []string
	for _, c := range e.jar.Cookies(&url.URL{Scheme: "http", Host: e.addr, Path: "/"}) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	h.Set("Cookie", strings.Join(parts, "; "))
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, res, err := d.Dial("ws://"+e.addr+"/live", h)
	if err != nil {
		if res != nil {
			return nil, fmt.Errorf("dial /live: %w (status %d)", err, res.StatusCode)
		}
		return nil, fmt.Errorf("dial /live: %w", err)
	}
	return conn, nil
}

// fanoutRound is one published message: its marker and when it was sent.
type fanoutRound struct {
	marker string
	t0     time.Time
	mu     sync.Mutex
	got    map[int]time.Duration
	all    chan struct{}
	want   int
}

// fanout opens size.fanoutClients websockets watching one exchange, posts a
// turn on it size.fanoutRounds times and measures, per client, the time from
// the POST to the frame carrying the new user message. It returns the p99,
// and apart the slowest delivery of a first round, which meets connections
// that have sent nothing yet (their buffers and stacks not grown): the
// steady state is the target, the first message is shown beside it.
func (e *benchEnv) fanout(ctx context.Context) (p99, first time.Duration, err error) {
	exID, err := e.chat("fanout start", 0)
	if err != nil {
		return 0, 0, err
	}
	var cur atomic.Pointer[fanoutRound]
	conns := make([]*websocket.Conn, 0, e.size.fanoutClients)
	var readers sync.WaitGroup
	defer readers.Wait()
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for i := range e.size.fanoutClients {
		conn, err := e.dial()
		if err != nil {
			return 0, 0, err
		}
		conns = append(conns, conn)
		watch := fmt.Sprintf(`{"type":"watch","exchange_id":%d,"since":%d}`, exID, 1)
		if err := conn.WriteMessage(websocket.TextMessage, []byte(watch)); err != nil {
			return 0, 0, err
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			var buf bytes.Buffer // reused: the clients' own cost stays small
			for {
				_, rd, err := conn.NextReader()
				if err != nil {
					return
				}
				buf.Reset()
				if _, err := buf.ReadFrom(rd); err != nil {
					return
				}
				now := time.Now()
				r := cur.Load()
				if r == nil || !bytes.Contains(buf.Bytes(), []byte(r.marker)) {
					continue
				}
				r.mu.Lock()
				if _, seen := r.got[i]; !seen {
					r.got[i] = now.Sub(r.t0)
					if len(r.got) == r.want {
						close(r.all)
					}
				}
				r.mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // let the server take every watch
	var ds []time.Duration
	for round := range e.size.fanoutRounds + 1 {
		r := &fanoutRound{marker: fmt.Sprintf("fanout-%d-%s", round, randHex(4)), got: map[int]time.Duration{}, all: make(chan struct{}), want: len(conns)}
		r.t0 = time.Now()
		cur.Store(r)
		if _, err := e.chat(r.marker, exID); err != nil {
			return 0, 0, err
		}
		select {
		case <-r.all:
		case <-time.After(10 * time.Second):
			r.mu.Lock()
			n := len(r.got)
			r.mu.Unlock()
			return 0, 0, fmt.Errorf("round %d: %d of %d subscribers got the message", round, n, r.want)
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		}
		r.mu.Lock()
		for _, d := range r.got {
			if round == 0 {
				first = max(first, d)
			} else {
				ds = append(ds, d)
			}
		}
		r.mu.Unlock()
	}
	return percentile(ds, 0.99), first, nil
}

// idleRSS opens size.idleSockets idle websockets and returns the growth of
// the process's RSS and its total, in MiB.
func (e *benchEnv) idleRSS(ctx context.Context) (delta, total float64, err error) {
	settle := func() {
		runtime.GC()
		debug.FreeOSMemory()
		time.Sleep(200 * time.Millisecond)
	}
	settle()
	before, err := rssMB()
	if err != nil {
		return 0, 0, err
	}
	conns := make([]*websocket.Conn, 0, e.size.idleSockets)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range e.size.idleSockets {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		c, err := e.dial()
		if err != nil {
			return 0, 0, err
		}
		conns = append(conns, c)
	}
	time.Sleep(500 * time.Millisecond) // the server's side settles too
	settle()
	after, err := rssMB()
	if err != nil {
		return 0, 0, err
	}
	return max(after-before, 0.0001), after, nil
}

// rssMB is VmRSS from /proc/self/status in MiB (Linux only).
func rssMB() (float64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read RSS: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				return 0, fmt.Errorf("read RSS: %w", err)
			}
			return kb / 1024, nil
		}
	}
	return 0, errors.New("read RSS: no VmRSS in /proc/self/status")
}
