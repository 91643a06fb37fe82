package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"syscall"
	"time"

	"palaver/models"
)

// rounds is how many times the throughput pair is measured.
const rounds = 3

// throughputFigures: POST /api/chat turns against raw inserts of the same
// rows, from as many concurrent clients, in alternating rounds (the disk's
// sync time drifts during a run): the medians are reported.
func throughputFigures(ctx context.Context, e *env, r report) error {
	var apiRates, rawRates []float64
	var sample *models.Message // a stored reply, for the raw rows to copy
	var cpu time.Duration      // this process's CPU time over the API rounds
	turns := 0
	for range rounds {
		cpu0, err := cpuTime()
		if err != nil {
			return err
		}
		turnsPerS, reply, err := e.apiThroughput(ctx)
		if err != nil {
			return fmt.Errorf("api: %w", err)
		}
		// The turns' search indexing, which the store does in batches
		// after their commits, is theirs: it ends inside their CPU time,
		// and none is left for the raw rounds.
		if err := e.store.CatchUpSearch(ctx); err != nil {
			return err
		}
		cpu1, err := cpuTime()
		if err != nil {
			return err
		}
		cpu += cpu1 - cpu0
		turns += max(e.size.Turns/e.size.Clients, 1) * e.size.Clients
		sample = reply
		rowsPerS, err := e.rawThroughput(ctx, sample, e.size.Clients)
		if err != nil {
			return fmt.Errorf("raw: %w", err)
		}
		if err := e.store.CatchUpSearch(ctx); err != nil {
			return err
		}
		apiRates, rawRates = append(apiRates, turnsPerS), append(rawRates, rowsPerS)
	}
	turnsPerS, rowsPerS := median(apiRates), median(rawRates)
	// For scale: the same raw inserts from one writer, which never waits for
	// SQLite's write lock (concurrent raw writers do, on the busy timeout),
	// and the CPU time they take.
	cpu0, err := cpuTime()
	if err != nil {
		return err
	}
	serial, err := e.rawThroughput(ctx, sample, 1)
	if err != nil {
		return fmt.Errorf("raw: %w", err)
	}
	// Their search indexing too, as for the API turns.
	if err := e.store.CatchUpSearch(ctx); err != nil {
		return err
	}
	cpu1, err := cpuTime()
	if err != nil {
		return err
	}
	rawTurns := max(e.size.Turns, 1)
	r.line("turns_per_s", turnsPerS, fmt.Sprintf("≥ %s = 0.5 × raw one-writer turns/s", num(serial/4)))
	r.anchor("raw_rows_per_s", rowsPerS, fmt.Sprintf("the turns' two rows inserted through database/sql from %d writers", e.size.Clients))
	// throughput_ratio compares turns with raw turns: a turn stores two rows
	// (user + assistant message), so raw turns per second are raw_rows_per_s/2.
	r.line("throughput_ratio", turnsPerS/(rowsPerS/2), "≥ 0.5; = turns_per_s / (raw_rows_per_s/2)")
	r.anchor("raw_rows_per_s_one_writer", serial, "the same from one writer")
	r.line("throughput_ratio_one_writer", turnsPerS/(serial/2), "≥ 0.5; = turns_per_s / (raw_rows_per_s_one_writer/2)")
	// CPU time does not swing with the disk. With the clients in a process
	// of their own (the palaver binary runs them), this process is the
	// server alone; run from a test, they share it.
	who := "the server alone: its clients run in a child process"
	if e.palaver == "" {
		who = "server and its clients in one process"
	}
	r.line("cpu_us_per_turn", float64(cpu.Microseconds())/float64(turns), "≤ 1.25 × raw_cpu_us_per_turn; "+who)
	perTurn := float64(cpu.Microseconds()) / float64(turns)
	rawPerTurn := float64((cpu1 - cpu0).Microseconds()) / float64(rawTurns)
	r.anchor("raw_cpu_us_per_turn", rawPerTurn, "CPU of one raw two-row turn commit from one writer (SQLite, sync), and of its search indexing after it")
	r.line("turn_cpu_ratio", perTurn/rawPerTurn, "≤ 1.25; = cpu_us_per_turn / raw_cpu_us_per_turn")
	// And against the SQL a turn cannot do without: what is left above it
	// is the server's own (HTTP, JSON, the agent, Go).
	floor, err := e.rawFloor(ctx, sample)
	if err != nil {
		return fmt.Errorf("raw floor: %w", err)
	}
	r.anchor("raw_floor_cpu_us_per_turn", floor, "CPU of the SQL a turn needs, from one writer: the lease and the user message in one commit, "+
		"its 48-entry context read in it; the reply, the lease's release and the usage row in a second commit; their search indexing")
	r.anchor("turn_floor_ratio", perTurn/floor, "= cpu_us_per_turn / raw_floor_cpu_us_per_turn: the turn over its own SQL")
	return nil
}

// rawFloor runs size.turns turns' SQL by hand on one connection (rawFloorTurn)
// and returns the CPU time of each, search indexing included, in µs.
func (e *env) rawFloor(ctx context.Context, reply *models.Message) (float64, error) {
	floorTurn, done, err := e.floorTurns(ctx, reply)
	if err != nil {
		return 0, err
	}
	defer done()
	turns := max(e.size.Turns, 1)
	cpu0, err := cpuTime()
	if err != nil {
		return 0, err
	}
	for i := range turns {
		if err := floorTurn(i); err != nil {
			return 0, err
		}
	}
	if err := e.store.CatchUpSearch(ctx); err != nil {
		return 0, err
	}
	cpu1, err := cpuTime()
	if err != nil {
		return 0, err
	}
	return float64((cpu1 - cpu0).Microseconds()) / float64(turns), nil
}

// rawInsertMessage inserts a message of a raw turn, its seq given.
const rawInsertMessage = `INSERT INTO messages (exchange_id, seq, role, content, agent_type, agent_response, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`

// rawExchange inserts an exchange of the bench user's for raw turns and
// gives its id.
func (e *env) rawExchange(ctx context.Context, title string) (int64, error) {
	at := time.Now().UTC().Truncate(time.Microsecond)
	res, err := e.raw.ExecContext(ctx, `INSERT INTO exchanges (user_id, scope, title, agent_type, turn_count, created_at, updated_at) VALUES (?, 'general', ?, 'router', 0, ?, ?)`, e.userID, title, at, at)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// floorTurns makes an exchange of its own for raw floor turns and returns
// a function that runs its turn'th (rawFloorTurn), on one connection kept
// for them as the group commit keeps one, and the function that lets it go.
func (e *env) floorTurns(ctx context.Context, reply *models.Message) (run func(turn int) error, done func(), err error) {
	respJSON, _ := json.Marshal(reply.AgentResponse)
	id, err := e.rawExchange(ctx, "floor")
	if err != nil {
		return nil, nil, err
	}
	conn, err := e.raw.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	run = func(turn int) error {
		return rawFloorTurn(ctx, conn, id, int64(2*turn), fmt.Sprintf("floor turn %d", turn), reply, string(respJSON))
	}
	return run, func() { conn.Close() }, nil
}

// rawFloorTurn is one turn's SQL: what a turn must store and hold (its two
// durable commits, the lease that lets another process recover it, the
// usage row) and read (its context), and no more.
func rawFloorTurn(ctx context.Context, conn *sql.Conn, exchangeID, seq int64, query string, reply *models.Message, respJSON string) error {
	now := time.Now().UTC().Truncate(time.Microsecond)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `UPDATE exchanges SET turn_status = 'running', turn_owner = 'floor', turn_heartbeat_at = ?,
		turn_attempts = 1, turn_count = turn_count + 1, updated_at = ? WHERE id = ?`, now, now, exchangeID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, rawInsertMessage, exchangeID, seq, "user", query, nil, nil, now); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, seq, role, content, tool FROM messages
		WHERE exchange_id = ? AND seq IS NOT NULL ORDER BY seq DESC LIMIT 48`, exchangeID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, seq int64
		var role, content string
		var tool sql.NullString
		if err := rows.Scan(&id, &seq, &role, &content, &tool); err != nil {
			rows.Close()
			return err
		}
	}
	if err := rows.Close(); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	tx, err = conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, rawInsertMessage, exchangeID, seq+1, "assistant", reply.Content, reply.AgentType, respJSON, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE exchanges SET turn_status = 'idle', turn_owner = NULL, turn_heartbeat_at = NULL,
		updated_at = ? WHERE id = ?`, now, exchangeID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO usage_daily (user_id, day, model, input_tokens, output_tokens, cached_tokens, cost, replies)
		SELECT user_id, ?, 'floor', 10, 20, 0, 0, 1 FROM exchanges WHERE id = ?
		ON CONFLICT (user_id, day, model) DO UPDATE SET input_tokens = usage_daily.input_tokens + excluded.input_tokens,
		output_tokens = usage_daily.output_tokens + excluded.output_tokens, replies = usage_daily.replies + 1`,
		now.Format(time.DateOnly), exchangeID); err != nil {
		return err
	}
	return tx.Commit()
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// apiThroughput runs size.turns full POST /api/chat turns from size.clients
// concurrent clients, each on its own exchange, and returns turns per second
// and one stored reply (for the raw inserts to copy).
func (e *env) apiThroughput(ctx context.Context) (float64, *models.Message, error) {
	per := max(e.size.Turns/e.size.Clients, 1)
	ids := make([]int64, e.size.Clients)
	for i := range ids { // the exchanges exist before the clock starts
		id, err := e.chat("throughput warm-up", 0)
		if err != nil {
			return 0, nil, err
		}
		ids[i] = id
	}
	var elapsed time.Duration
	var err error
	if e.palaver != "" {
		elapsed, err = e.clientsProcess(ctx, ids, per)
	} else {
		elapsed, err = clientTurns(e, ids, per)
	}
	if err != nil {
		return 0, nil, err
	}
	msgs, err := e.store.Messages(ctx, e.userID, ids[0], nil)
	if err != nil || len(msgs) < 2 {
		return 0, nil, fmt.Errorf("read back the turns: %v", err)
	}
	reply := msgs[len(msgs)-1]
	return float64(per*e.size.Clients) / elapsed.Seconds(), &reply, nil
}

// rawThroughput inserts the same rows as the API turns (a user and an
// assistant message per transaction) through database/sql from writers
// goroutines and returns rows per second.
func (e *env) rawThroughput(ctx context.Context, reply *models.Message, writers int) (float64, error) {
	per := max(e.size.Turns/writers, 1)
	respJSON, _ := json.Marshal(reply.AgentResponse)
	ids := make([]int64, writers)
	for i := range ids {
		var err error
		if ids[i], err = e.rawExchange(ctx, "raw"); err != nil {
			return 0, err
		}
	}
	elapsed, err := concurrently(writers, per, func(c, i int) error {
		return e.rawTurn(ctx, ids[c], int64(2*i), fmt.Sprintf("client %d turn %d", c, i), reply, string(respJSON))
	})
	if err != nil {
		return 0, err
	}
	return float64(2*per*writers) / elapsed.Seconds(), nil
}

func (e *env) rawTurn(ctx context.Context, exchangeID, seq int64, query string, reply *models.Message, respJSON string) error {
	tx, err := e.raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := time.Now().UTC().Truncate(time.Microsecond)
	if _, err := tx.ExecContext(ctx, rawInsertMessage, exchangeID, seq, "user", query, nil, nil, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, rawInsertMessage, exchangeID, seq+1, "assistant", reply.Content, reply.AgentType, respJSON, now); err != nil {
		return err
	}
	return tx.Commit()
}

// concurrently runs do(c, i) for i in 0..per-1 on each of clients
// goroutines c at once, and returns how long they took together, or the
// first error (a client stops at its own).
func concurrently(clients, per int, do func(c, i int) error) (time.Duration, error) {
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	t0 := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				if err := do(c, i); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	close(errc)
	return elapsed, <-errc
}
