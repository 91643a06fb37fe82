package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeTurnTimeout serves with a short --turn-timeout and a builtin agent
// slower than it: the reply ends as an error row that says so.
func TestServeTurnTimeout(t *testing.T) {
	db := dbPath(t)
	palaver(t, "user", "add", "ann", "--password", "correct horse", "--db", db).ok(t, "user add")
	r := palaver(t, "user", "key", "ann", "--db", db)
	r.ok(t, "user key")
	key := strings.TrimSpace(r.stdout)

	palaver(t, "serve", "--turn-timeout", "0s", "--db", db).oneLine(t, "a zero timeout", "--turn-timeout")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--db", db,
			"--turn-timeout", "300ms", "--builtin-delay", "200ms"}, io.Discard, &logs)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	base := waitServing(t, &logs, done)
	req, err := http.NewRequest(http.MethodPost, base+"/api/chat", strings.NewReader(`{"query": "tell me a long story"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-api-key", key)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		ErrorCode    int    `json:"error_code"`
		ErrorMessage string `json:"error_message"`
		ExchangeID   *int64 `json:"exchange_id"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || out.ErrorCode != 500 || out.ExchangeID == nil ||
		out.ErrorMessage != "The reply took longer than 300ms and was stopped." {
		t.Fatalf("answer %d %+v", res.StatusCode, out)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("the timed-out turn took %s to answer", took)
	}
}
