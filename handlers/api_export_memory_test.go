package handlers_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"palaver/handlers"
)

// seedBulk gives userID exchanges × perExchange messages of about size
// bytes each, written with plain SQL in one transaction (turns would take
// minutes).
func (a *testApp) seedBulk(userID int64, exchanges, perExchange, size int) {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		a.t.Fatal(err)
	}
	defer tx.Rollback()
	exStmt, err := tx.Prepare(`INSERT INTO exchanges (uid, user_id, scope, title, agent_type, pinned, archived, turn_count,
		created_at, updated_at, turn_status, turn_attempts) VALUES (?, ?, 'general', ?, 'router', false, false, ?, ?, ?, 'idle', 0)`)
	if err != nil {
		a.t.Fatal(err)
	}
	// One statement per exchange's log: a row per statement is several
	// times slower.
	tuples := strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?),", perExchange), ",")
	msgStmt, err := tx.Prepare(`INSERT INTO messages (uid, exchange_id, seq, role, content, created_at) VALUES ` + tuples)
	if err != nil {
		a.t.Fatal(err)
	}
	words := strings.Repeat("pelicans winter harbour ", size/24+1)[:size]
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	args := make([]any, 0, 6*perExchange)
	for e := range exchanges {
		res, err := exStmt.Exec(uuid.Must(uuid.NewV7()).String(), userID, fmt.Sprintf("bulk chat %d", e), perExchange/2, at, at)
		if err != nil {
			a.t.Fatal(err)
		}
		exID, _ := res.LastInsertId()
		args = args[:0]
		for m := range perExchange {
			role := "user"
			if m%2 == 1 {
				role = "assistant"
			}
			args = append(args, uuid.Must(uuid.NewV7()).String(), exID, m, role, fmt.Sprintf("%d.%d %s", e, m, words), at)
		}
		if _, err := msgStmt.Exec(args...); err != nil {
			a.t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		a.t.Fatal(err)
	}
}

// TestAPIExportBoundedMemory: an account of 100,000 messages (about 60 MB
// of text) exports through GET /api/export on a real listener while the
// server's heap (HeapInuse, sampled during the stream) stays under 64 MiB
// above its idle size; the stream holds every message.
func TestAPIExportBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds 100,000 messages")
	}
	const exchanges, perExchange, size = 1000, 100, 600
	a := newTestApp(t)
	ann := a.apiClient("ann")
	start := time.Now()
	a.seedBulk(ann.user.ID, exchanges, perExchange, size)
	t.Logf("seeded %d messages in %v", exchanges*perExchange, time.Since(start).Round(time.Millisecond))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.app.Listener(handlers.Listener(ln)) }()
	t.Cleanup(func() { _ = a.app.ShutdownWithTimeout(2 * time.Second) })

	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	idle := m.HeapInuse
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var s runtime.MemStats
			runtime.ReadMemStats(&s)
			peak = max(peak, s.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/api/export", nil)
	req.Header.Set("x-api-key", ann.apiKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 1<<20), 4<<20)
	var lines, messages, bytes int
	for sc.Scan() {
		lines++
		bytes += len(sc.Bytes()) + 1
		var line struct {
			Type     string            `json:"type"`
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		messages += len(line.Messages)
	}
	close(stop)
	wg.Wait()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || lines != exchanges+1 || messages != exchanges*perExchange {
		t.Fatalf("status %d: %d lines, %d messages; want %d and %d", res.StatusCode, lines, messages, exchanges+1, exchanges*perExchange)
	}
	grew := int64(peak) - int64(idle)
	t.Logf("exported %d MiB; heap in use idle %d MiB, peak %d MiB (+%d MiB)", bytes>>20, idle>>20, peak>>20, grew>>20)
	if grew >= 64<<20 {
		t.Fatalf("the heap grew by %d MiB during the export (limit 64 MiB)", grew>>20)
	}
	if bytes < 64<<20 {
		t.Fatalf("the export is only %d MiB: smaller than the bound, it proves nothing", bytes>>20)
	}
}
