package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// loadOutcome is what one client saw.
type loadOutcome struct {
	statuses  map[string]int   // "op status" -> count
	transport []string         // transport errors
	sent      map[string]int64 // query -> exchange, for every chat answered 200
	bad       []string         // unexpected answers
}

// loadClient is one API client of the load test: its key, its own
// exchanges and the replies it saw.
type loadClient struct {
	id        int
	key       string
	base      string
	http      *http.Client
	rng       *rand.Rand
	exchanges []int64
	replies   []int64
	out       loadOutcome
}

// call sends one request and returns the status and body ("" on a transport
// error, which it records).
func (c *loadClient) call(op, method, path, body string) (int, []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.out.transport = append(c.out.transport, err.Error())
		return 0, nil
	}
	req.Header.Set("x-api-key", c.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		c.out.transport = append(c.out.transport, fmt.Sprintf("%s %s: %v", method, path, err))
		return 0, nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.out.transport = append(c.out.transport, fmt.Sprintf("%s %s: read: %v", method, path, err))
		return 0, nil
	}
	c.out.statuses[fmt.Sprintf("%-22s %d", op, res.StatusCode)]++
	return res.StatusCode, b
}

// unexpected records an answer the API does not document for the request.
func (c *loadClient) unexpected(op string, status int, body []byte) {
	c.out.bad = append(c.out.bad, fmt.Sprintf("%s: %d %.200s", op, status, body))
}

// chat sends a new message to a new exchange or to one of the client's own
// (a new one while it has none).
func (c *loadClient) chat(n int, existing bool) {
	existing = existing && len(c.exchanges) > 0
	op, payload := "POST chat new", map[string]any{}
	if existing {
		op = "POST chat existing"
		payload["exchange_id"] = c.exchanges[c.rng.IntN(len(c.exchanges))]
	}
	q := fmt.Sprintf("load client %d message %d", c.id, n)
	if n%3 == 0 {
		q = "hello from " + q // a greeting word in a question (each message must be unique)
	}
	payload["query"] = q
	b, _ := json.Marshal(payload)
	status, body := c.call(op, "POST", "/api/chat", string(b))
	switch {
	case status == http.StatusOK:
		var out apiChatOut
		if json.Unmarshal(body, &out) != nil || out.ExchangeID == nil || out.ErrorCode != 0 {
			c.unexpected(op, status, body)
			return
		}
		c.out.sent[q] = *out.ExchangeID
		if !existing {
			c.exchanges = append(c.exchanges, *out.ExchangeID)
		}
	case status != 0:
		// A 409 (the exchange's turn still runs) is unexpected too: a client
		// sends one request at a time, to exchanges only it created, and
		// /api/chat answers once the turn has finished, so a 409 here means
		// a turn's lease was not released.
		c.unexpected(op, status, body)
	}
}

// run sends the mix until the deadline.
func (c *loadClient) run(deadline time.Time) {
	var before string
	for n := 0; time.Now().Before(deadline); n++ {
		switch p := c.rng.IntN(100); {
		case p < 25:
			c.chat(n, false)
		case p < 50:
			c.chat(n, true)
		case p < 70:
			path := "/api/chat/history?limit=5"
			if before != "" {
				path += "&before=" + before
			}
			status, body := c.call("GET history", "GET", path, "")
			var items []apiHistoryOut
			if status == http.StatusOK && json.Unmarshal(body, &items) == nil {
				before = ""
				if len(items) == 5 {
					before = items[4].Cursor // the next batch, next time
				}
			} else if status != 0 {
				c.unexpected("GET history", status, body)
			}
		case p < 85:
			if len(c.exchanges) == 0 {
				continue
			}
			ex := c.exchanges[c.rng.IntN(len(c.exchanges))]
			status, body := c.call("GET messages", "GET", fmt.Sprintf("/api/chat/exchange/%d/messages", ex), "")
			var msgs []apiMsgOut
			if status != http.StatusOK || json.Unmarshal(body, &msgs) != nil || len(msgs) == 0 {
				if status != 0 {
					c.unexpected("GET messages", status, body)
				}
				continue
			}
			for _, m := range msgs {
				if m.Role == "assistant" {
					c.replies = append(c.replies, m.ID)
				}
			}
		default:
			if len(c.replies) == 0 {
				continue
			}
			id := c.replies[c.rng.IntN(len(c.replies))]
			body := fmt.Sprintf(`{"feedback": %d, "comment": "load %d"}`, n%2, n)
			status, out := c.call("PUT message feedback", "PUT", fmt.Sprintf("/api/chat/message/%d/feedback", id), body)
			if status != http.StatusOK && status != 0 {
				c.unexpected("PUT message feedback", status, out)
			}
		}
	}
}

// TestLoadLoopback: 8 API clients of 4 accounts on a real loopback listener
// for 20 s (3 s with -short) send a realistic mix: chats to new and existing
// exchanges, history pages, logs and ratings. No transport error, no 5xx, no
// 409 (see chat), no answer API.md does not document, and every message
// answered 200 is stored exactly once, in the exchange the answer named.
func TestLoadLoopback(t *testing.T) {
	duration := 20 * time.Second
	if testing.Short() {
		duration = 3 * time.Second
	}
	a := newTestApp(t)
	addr := a.listen()
	transport := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(transport.CloseIdleConnections)
	hc := &http.Client{Transport: transport}
	var keys []string
	for i := range 4 {
		keys = append(keys, a.apiClient(fmt.Sprintf("loader%d", i)).apiKey)
	}
	var clients []*loadClient
	for i := range 8 { // two clients per account, as a script and a notebook might be
		clients = append(clients, &loadClient{id: i, key: keys[i/2], base: "http://" + addr, http: hc,
			rng: rand.New(rand.NewPCG(uint64(i), 42)),
			out: loadOutcome{statuses: map[string]int{}, sent: map[string]int64{}}})
	}

	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); c.run(deadline) }()
	}
	wg.Wait()
	a.waitTurns()

	total := 0
	hist := map[string]int{}
	sent := map[string]int64{}
	var transportErrs, bad []string
	for _, c := range clients {
		for k, n := range c.out.statuses {
			hist[k] += n
			total += n
		}
		transportErrs = append(transportErrs, c.out.transport...)
		bad = append(bad, c.out.bad...)
		for q, ex := range c.out.sent {
			sent[q] = ex
		}
	}
	var lines []string
	for k, n := range hist {
		lines = append(lines, fmt.Sprintf("  %s  %6d", k, n))
	}
	slices.Sort(lines)
	t.Logf("load: %d requests in %v by %d clients (%.0f/s); %d chats stored\n%s",
		total, duration, len(clients), float64(total)/duration.Seconds(), len(sent), strings.Join(lines, "\n"))

	if len(transportErrs) > 0 {
		t.Errorf("%d transport errors, first: %s", len(transportErrs), transportErrs[0])
	}
	for k, n := range hist {
		var status int
		fmt.Sscanf(k[strings.LastIndex(k, " ")+1:], "%d", &status)
		if status >= 500 {
			t.Errorf("%d answers %s", n, k)
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d undocumented answers, first ones: %v", len(bad), bad[:min(5, len(bad))])
	}
	if len(sent) < 8 {
		t.Fatalf("only %d chats answered 200: the load did not run", len(sent))
	}

	// Every message answered 200 is stored once, in its exchange; nothing
	// else was stored.
	db, err := a.store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT content, exchange_id, COUNT(*) FROM messages WHERE role = 'user' GROUP BY content, exchange_id")
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string][]int64{}
	for rows.Next() {
		var q string
		var ex int64
		var n int
		if err := rows.Scan(&q, &ex, &n); err != nil {
			t.Fatal(err)
		}
		for range n {
			stored[q] = append(stored[q], ex)
		}
	}
	rows.Close()
	for q, ex := range sent {
		if got := stored[q]; len(got) != 1 || got[0] != ex {
			t.Errorf("message %q (answered 200 in exchange %d) is stored in exchanges %v", q, ex, got)
		}
	}
	if len(stored) != len(sent) {
		t.Errorf("%d user messages stored, %d answered 200", len(stored), len(sent))
	}
}
