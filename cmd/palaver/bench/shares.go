package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"
)

// Share links and unread marks (issue 28).
const (
	shareMessages   = 1000 // the shared snapshot's size
	shareSamples    = 21
	unreadTabs      = 50 // one person's tabs that hear a read mark
	unreadRoundWait = 30 * time.Second
)

// sharesFigures: a share link of a 1,000-message conversation opened by a
// visitor (no session), and a read mark reaching 50 tabs of its owner.
func sharesFigures(ctx context.Context, e *env, r report) error {
	exID, err := e.chat("start the shared conversation", 0)
	if err != nil {
		return err
	}
	if err := e.seedLog(ctx, exID, 2, shareMessages); err != nil {
		return err
	}
	b, status, err := e.apiPost(ctx, fmt.Sprintf("/api/chat/exchange/%d/shares", exID), `{"visibility": "link"}`)
	if err != nil {
		return err
	}
	var sh struct {
		URL string `json:"url"`
	}
	if status != http.StatusCreated || json.Unmarshal(b, &sh) != nil || sh.URL == "" {
		return fmt.Errorf("create share: %d %s", status, b)
	}
	visitor := &http.Client{Timeout: 30 * time.Second} // no cookie jar: signed out
	var ds []time.Duration
	for range shareSamples {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+e.addr+sh.URL, nil)
		if err != nil {
			return err
		}
		t0 := time.Now()
		res, err := visitor.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %d", sh.URL, res.StatusCode)
		}
		ds = append(ds, time.Since(t0))
	}
	r.line("share_open_p50_ms", ms(percentile(ds, 0.5)), "≤ 20; a 1,000-message snapshot, signed out")

	p99, err := e.unreadFanout(ctx, exID)
	if err != nil {
		return err
	}
	r.line("unread_fanout_p99_ms", ms(p99), "≤ 30; a read mark reaching 50 tabs of one person")
	return nil
}

// apiPost POSTs body to the API as the bench user (its key).
func (e *env) apiPost(ctx context.Context, path, body string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+e.addr+path, strings.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", e.apiKey)
	res, err := e.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return b, res.StatusCode, err
}

// unreadRound is one mark: what the tabs wait for, and when.
type unreadRound struct {
	heard func(frame []byte) bool
	t0    time.Time
	mu    sync.Mutex
	got   map[int]time.Duration
	all   chan struct{}
}

// unreadFanout opens unreadTabs websockets of the bench user, each showing
// another conversation, then, round after round, marks exID unread (not
// timed) and read again: the time from the POST of the read mark to each
// tab's frame with the new count. The first round is a warm-up.
func (e *env) unreadFanout(ctx context.Context, exID int64) (time.Duration, error) {
	other, err := e.chat("the conversation the tabs show", 0)
	if err != nil {
		return 0, err
	}
	var cur atomic.Pointer[unreadRound]
	conns := make([]*websocket.Conn, 0, unreadTabs)
	var readers sync.WaitGroup
	defer readers.Wait()
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for i := range unreadTabs {
		conn, err := e.dial()
		if err != nil {
			return 0, err
		}
		conns = append(conns, conn)
		watch := fmt.Sprintf(`{"type":"watch","exchange_id":%d,"since":%d}`, other, 1)
		if err := conn.WriteMessage(websocket.TextMessage, []byte(watch)); err != nil {
			return 0, err
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			var buf bytes.Buffer
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
				if r == nil || !r.heard(buf.Bytes()) {
					continue
				}
				r.mu.Lock()
				if _, seen := r.got[i]; !seen {
					r.got[i] = now.Sub(r.t0)
					if len(r.got) == unreadTabs {
						close(r.all)
					}
				}
				r.mu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // let the server take every watch
	// The item of exID, with or without its mark: the tabs' count holds
	// the bench's other conversations too.
	item := []byte(fmt.Sprintf(`data-exchange-id="%d"`, exID))
	mark := func(verb string, unread bool) (*unreadRound, error) {
		heard := func(f []byte) bool {
			return bytes.Contains(f, item) && bytes.Contains(f, []byte(`data-unread="true"`)) == unread
		}
		r := &unreadRound{heard: heard, got: map[int]time.Duration{}, all: make(chan struct{})}
		r.t0 = time.Now()
		cur.Store(r)
		b, status, err := e.apiPost(ctx, fmt.Sprintf("/api/chat/exchange/%d/%s", exID, verb), "")
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("POST %s: %d %s", verb, status, b)
		}
		select {
		case <-r.all:
			return r, nil
		case <-time.After(unreadRoundWait):
			r.mu.Lock()
			defer r.mu.Unlock()
			return nil, fmt.Errorf("mark %s: %d of %d tabs heard it", verb, len(r.got), unreadTabs)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var ds []time.Duration
	for round := range e.size.FanoutRounds + 1 {
		if _, err := mark("unread", true); err != nil {
			return 0, err
		}
		r, err := mark("read", false)
		if err != nil {
			return 0, err
		}
		if round == 0 {
			continue
		}
		r.mu.Lock()
		for _, d := range r.got {
			ds = append(ds, d)
		}
		r.mu.Unlock()
	}
	return percentile(ds, 0.99), nil
}
