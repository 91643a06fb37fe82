package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/fasthttp/websocket"

	"palaver/handlers"
)

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// signUp registers the bench user through the form (a session cookie for the
// websockets) and gives it an API key.
func (e *env) signUp(ctx context.Context) error {
	base := "http://" + e.addr
	res, err := e.http.Get(base + "/register")
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := csrfField.FindSubmatch(body)
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

// chat posts one turn through the API and returns its exchange.
func (e *env) chat(query string, exchangeID int64) (int64, error) {
	body := map[string]any{"query": query}
	if exchangeID != 0 {
		body["exchange_id"] = exchangeID
	}
	j, _ := json.Marshal(body)
	addr := e.addr
	if e.via != "" {
		addr = e.via // hook: the cross-process fanout (xproc.go)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/chat", strings.NewReader(string(j)))
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

// getTimed GETs u (with the API key key, or the session cookie when key is
// "") and reads the whole answer: how long that took, the status and the
// body.
func (e *env) getTimed(ctx context.Context, u, key string) (time.Duration, int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, 0, nil, err
	}
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	t0 := time.Now()
	res, err := e.http.Do(req)
	if err != nil {
		return 0, 0, nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	return time.Since(t0), res.StatusCode, body, err
}

// seedLog appends messages with seqs from..n-1, alternating user and
// assistant, in one transaction, and keeps the header's turn count.
func (e *env) seedLog(ctx context.Context, exchangeID int64, from, n int) error {
	db, err := e.store.SQL()
	if err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, e.rebind(`INSERT INTO messages (exchange_id, seq, role, content, agent_type, created_at) VALUES (?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return err
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	text := newTextGen(e.vocabulary(), uint64(exchangeID))
	for seq := from; seq < n; seq++ {
		role, agent := "user", any(nil)
		if seq%2 == 1 {
			role, agent = "assistant", "router"
		}
		if _, err := st.ExecContext(ctx, exchangeID, seq, role, text.message(seq%2 == 1), agent, at); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, e.rebind(`UPDATE exchanges SET turn_count = ? WHERE id = ?`), (n+1)/2, exchangeID); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// Indexed for search now, as the seed's own cost (the store indexes in
	// batches after the commit: models/search_index.go).
	return e.store.CatchUpSearch(ctx)
}

// dial opens /live as the signed-in bench user, from the server's origin.
func (e *env) dial() (*websocket.Conn, error) {
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
