// Command pgmeasure measures what one PostgreSQL database gives Palaver as
// it grows: it seeds a database in steps (users with conversations of
// generated text, written with SQL in bulk) and, at each step, times the
// store's own calls that a request makes (a turn's two writes, the history's
// first batch, a conversation's log, a search) with one client and with
// several, and reads the tables' sizes. docs/PERFORMANCE.md ("When one
// PostgreSQL is no longer enough") quotes its output.
//
//	go run -tags=sqlite_fts5 ./internal/pgmeasure -db 'postgres://…' -steps 100000,1000000
//
// It wipes the database's public schema first: give it a database of its own.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"palaver/models"
)

func main() {
	dsn := flag.String("db", "", "postgres:// URL of a database to wipe and fill")
	steps := flag.String("steps", "100000,1000000", "message counts to measure at, comma-separated, rising")
	perUser := flag.Int("exchanges-per-user", 50, "conversations per user")
	perEx := flag.Int("messages-per-exchange", 20, "messages per conversation")
	runs := flag.Int("runs", 200, "timed calls per figure")
	clients := flag.Int("clients", 16, "concurrent clients of the throughput figures")
	heavy := flag.Int("heavy", 0, "conversations of one more user, seeded at the end and measured apart (0: none)")
	keep := flag.Bool("keep", false, "measure the database as a previous run left it, seeding only up to the steps beyond it")
	flag.Parse()
	if err := run(context.Background(), *dsn, *steps, *perUser, *perEx, *runs, *clients, *keep, *heavy); err != nil {
		fmt.Fprintln(os.Stderr, "pgmeasure:", err)
		os.Exit(1)
	}
}

type measure struct {
	store   *models.Store
	db      *sql.DB
	perUser int
	perEx   int
	runs    int
	clients int
	users   []int64 // seeded users, in order
}

func run(ctx context.Context, dsn, steps string, perUser, perEx, runs, clients int, keep bool, heavy int) error {
	if !strings.HasPrefix(dsn, "postgres") {
		return fmt.Errorf("-db must be a postgres:// URL")
	}
	store, err := models.Open(dsn, models.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	db, err := store.SQL()
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(clients + 4)
	if !keep {
		if _, err := db.ExecContext(ctx, `DROP SCHEMA public CASCADE; CREATE SCHEMA public`); err != nil {
			return err
		}
	}
	if _, err := store.Migrate(ctx); err != nil {
		return err
	}
	var version string
	if err := db.QueryRowContext(ctx, `SHOW server_version`).Scan(&version); err != nil {
		return err
	}
	var shared, fsync string
	db.QueryRowContext(ctx, `SHOW shared_buffers`).Scan(&shared)
	db.QueryRowContext(ctx, `SHOW fsync`).Scan(&fsync)
	fmt.Printf("# PostgreSQL %s, shared_buffers %s, fsync %s; %d conversations a user, %d messages each\n", version, shared, fsync, perUser, perEx)
	m := &measure{store: store, db: db, perUser: perUser, perEx: perEx, runs: runs, clients: clients}
	seeded := 0
	if keep {
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM messages`).Scan(&seeded); err != nil {
			return err
		}
		rows, err := db.QueryContext(ctx, `SELECT id FROM users ORDER BY id`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			m.users = append(m.users, id)
		}
		rows.Close()
	}
	for _, s := range strings.Split(steps, ",") {
		target, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || target < seeded || target == seeded && !keep {
			return fmt.Errorf("-steps: %q is not a rising count", s)
		}
		target = max(target, seeded)
		t0 := time.Now()
		if err := m.seed(ctx, target-seeded); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
		seeded = target
		fmt.Printf("\n## %d messages (%d users), seeded in %s\n", seeded, len(m.users), time.Since(t0).Round(time.Second))
		if err := m.report(ctx); err != nil {
			return err
		}
	}
	if heavy > 0 {
		return m.heavyUser(ctx, heavy)
	}
	return nil
}

// heavyUser seeds one user with n conversations and times what grows with
// a user's own size: the history's first batch and searches.
func (m *measure) heavyUser(ctx context.Context, n int) error {
	normal := m.perUser
	m.perUser = n
	defer func() { m.perUser = normal }()
	t0 := time.Now()
	if err := m.seed(ctx, n*m.perEx); err != nil {
		return err
	}
	u := m.users[len(m.users)-1]
	fmt.Printf("\n## one user of %d conversations (%d messages), seeded in %s\n", n, n*m.perEx, time.Since(t0).Round(time.Second))
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, f := range []struct {
		name string
		call func() error
	}{
		{"heavy_history", func() error {
			_, err := m.store.ListExchanges(ctx, u, models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 50})
			return err
		}},
		{"heavy_search_word", func() error {
			_, err := m.store.Search(ctx, u, models.SearchQuery{Terms: models.ParseSearch("w" + strconv.Itoa(rnd.IntN(5000))), Limit: 20})
			return err
		}},
		{"heavy_search_common", func() error {
			_, err := m.store.Search(ctx, u, models.SearchQuery{Terms: models.ParseSearch("common"), Limit: 20})
			return err
		}},
	} {
		var ds []time.Duration
		for range max(m.runs/5, 10) {
			t0 := time.Now()
			if err := f.call(); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			ds = append(ds, time.Since(t0))
		}
		slices.Sort(ds)
		fmt.Printf("%-20s p50 %7.2f ms  p99 %7.2f ms\n", f.name, ms(ds[len(ds)/2]), ms(ds[len(ds)*99/100]))
	}
	return nil
}

// seed adds users with their conversations, n messages in all, in bulk:
// one INSERT … SELECT per user, the text made of 30 words drawn uniformly
// from w0 … w4999 (a word is in about 1 message in 170), and one message in
// ten also has the word "common".
func (m *measure) seed(ctx context.Context, n int) error {
	perUser := m.perUser * m.perEx
	for added := 0; added < n; added += perUser {
		var id int64
		name := fmt.Sprintf("user%d", len(m.users))
		if err := m.db.QueryRowContext(ctx, `INSERT INTO users (username, username_key, password_hash, created_at) VALUES ($1, $1, 'x', now()) RETURNING id`, name).Scan(&id); err != nil {
			return err
		}
		m.users = append(m.users, id)
		_, err := m.db.ExecContext(ctx, `
WITH ex AS (
  INSERT INTO exchanges (user_id, scope, title, agent_type, turn_count, created_at, updated_at, uid)
  SELECT $1, 'general', 'conversation ' || g, 'router', $3 / 2,
         now() - (g || ' minutes')::interval, now() - (g || ' minutes')::interval, gen_random_uuid()::text
  FROM generate_series(1, $2) AS g
  RETURNING id, created_at)
INSERT INTO messages (exchange_id, seq, role, content, agent_type, created_at, uid)
SELECT ex.id, s, CASE WHEN s % 2 = 0 THEN 'user' ELSE 'assistant' END,
       (SELECT string_agg('w' || floor(random() * 5000)::int, ' ') FROM generate_series(1, 30) AS w WHERE w > s - s - 1 + ex.id - ex.id)
         || CASE WHEN random() < 0.1 THEN ' common' ELSE '' END,
       CASE WHEN s % 2 = 1 THEN 'router' END, ex.created_at, gen_random_uuid()::text
FROM ex, generate_series(0, $3 - 1) AS s`, id, m.perUser, m.perEx)
		if err != nil {
			return err
		}
	}
	_, err := m.db.ExecContext(ctx, `ANALYZE`)
	return err
}

// report prints the figures at the current size.
func (m *measure) report(ctx context.Context) error {
	rnd := rand.New(rand.NewPCG(1, 2))
	user := func() int64 { return m.users[rnd.IntN(len(m.users))] }
	var exchanges []int64 // one of each user's, for the log and the turns
	rows, err := m.db.QueryContext(ctx, `SELECT DISTINCT ON (user_id) id FROM exchanges ORDER BY user_id, id`)
	if err != nil {
		return err
	}
	owner := map[int64]int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		exchanges = append(exchanges, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for i, id := range exchanges {
		owner[id] = m.users[i]
	}
	exchange := func() (int64, int64) { id := exchanges[rnd.IntN(len(exchanges))]; return owner[id], id }

	figures := []struct {
		name string
		call func() error
	}{
		{"history_first_page", func() error {
			_, err := m.store.ListExchanges(ctx, user(), models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 50})
			return err
		}},
		{"log_read", func() error {
			u, ex := exchange()
			_, err := m.store.Messages(ctx, u, ex, nil)
			return err
		}},
		{"search_one_word", func() error {
			_, err := m.store.Search(ctx, user(), models.SearchQuery{Terms: models.ParseSearch("w" + strconv.Itoa(rnd.IntN(5000))), Limit: 20})
			return err
		}},
		{"search_common_word", func() error { // in a tenth of all messages
			_, err := m.store.Search(ctx, user(), models.SearchQuery{Terms: models.ParseSearch("common"), Limit: 20})
			return err
		}},
		{"search_two_words", func() error {
			q := fmt.Sprintf("w%d w%d", rnd.IntN(5000), rnd.IntN(5000))
			_, err := m.store.Search(ctx, user(), models.SearchQuery{Terms: models.ParseSearch(q), Limit: 20})
			return err
		}},
		{"turn_append", func() error { return m.turn(ctx, exchange) }},
	}
	for _, f := range figures {
		var ds []time.Duration
		for range m.runs {
			t0 := time.Now()
			if err := f.call(); err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			ds = append(ds, time.Since(t0))
		}
		slices.Sort(ds)
		fmt.Printf("%-20s p50 %7.2f ms  p99 %7.2f ms\n", f.name, ms(ds[len(ds)/2]), ms(ds[len(ds)*99/100]))
	}
	// Throughput: clients calling at once for a few seconds.
	for _, f := range []struct {
		name string
		call func(*rand.Rand) error
	}{
		{"turns_per_s", func(r *rand.Rand) error {
			id := exchanges[r.IntN(len(exchanges))]
			return m.turn(ctx, func() (int64, int64) { return owner[id], id })
		}},
		{"searches_per_s", func(r *rand.Rand) error {
			_, err := m.store.Search(ctx, m.users[r.IntN(len(m.users))], models.SearchQuery{Terms: models.ParseSearch("w" + strconv.Itoa(r.IntN(5000))), Limit: 20})
			return err
		}},
		{"histories_per_s", func(r *rand.Rand) error {
			_, err := m.store.ListExchanges(ctx, m.users[r.IntN(len(m.users))], models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 50})
			return err
		}},
	} {
		n, took, err := m.concurrently(f.call, 3*time.Second)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		fmt.Printf("%-20s %7.0f with %d clients\n", f.name, float64(n)/took.Seconds(), m.clients)
	}
	for _, t := range []string{"messages", "exchanges", "throttle_events", "user_slots"} {
		var table, indexes int64
		if err := m.db.QueryRowContext(ctx, `SELECT pg_table_size($1::regclass), pg_indexes_size($1::regclass)`, t).Scan(&table, &indexes); err != nil {
			return err
		}
		fmt.Printf("size_%-15s table %7.1f MB  indexes %7.1f MB\n", t, mb(table), mb(indexes))
	}
	var gin int64
	if err := m.db.QueryRowContext(ctx, `SELECT pg_relation_size('messages_content_tsv')`).Scan(&gin); err != nil {
		return err
	}
	var total int64
	if err := m.db.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&total); err != nil {
		return err
	}
	fmt.Printf("size_messages_gin    %7.1f MB; database %7.1f MB\n", mb(gin), mb(total))
	return nil
}

// turn is a turn's writes: the user message with the lease, then the reply.
func (m *measure) turn(ctx context.Context, pick func() (int64, int64)) error {
	u, ex := pick()
	for {
		_, _, err := m.store.StartTurn(ctx, models.TurnStart{UserID: u, ExchangeID: ex, AgentType: "router", Query: "w1 w2 w3 a question", Owner: "pgmeasure"})
		if errors.Is(err, models.ErrTurnRunning) {
			u, ex = pick() // another client has this one: take another
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	agent := "router"
	return m.store.FinishTurn(ctx, ex, "pgmeasure", &models.Message{Role: models.RoleAssistant, Content: strings.Repeat("w7 an answer ", 20), AgentType: &agent,
		AgentResponse: &models.AgentResponse{Content: "an answer", AgentType: agent, Suggestions: []models.Suggestion{}}})
}

// concurrently runs call from m.clients goroutines for d; it returns how
// many calls ended and the time taken.
func (m *measure) concurrently(call func(*rand.Rand) error, d time.Duration) (int, time.Duration, error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	count := 0
	var first error
	start := time.Now()
	end := start.Add(d)
	for c := range m.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 7))
			for time.Now().Before(end) {
				if err := call(r); err != nil {
					mu.Lock()
					first = err
					mu.Unlock()
					return
				}
				mu.Lock()
				count++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return count, time.Since(start), first
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mb(b int64) float64         { return float64(b) / (1 << 20) }
