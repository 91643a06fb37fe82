package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"palaver/agents"
	"palaver/handlers"
	"palaver/models"
)

// gateProvider holds every reply to a query starting with "hold" until it is
// let through one at a time; other queries are answered at once.
type gateProvider struct {
	started chan string
	pass    chan struct{}
}

func newGateProvider() *gateProvider {
	return &gateProvider{started: make(chan string, 16), pass: make(chan struct{})}
}

func (g *gateProvider) Name() string { return "gate" }

func (g *gateProvider) Execute(ctx context.Context, req agents.Request, _ func(string)) (*models.AgentResponse, error) {
	if strings.HasPrefix(req.Query, "hold") {
		g.started <- req.Query
		select {
		case <-g.pass:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &models.AgentResponse{Content: "answered " + req.Query}, nil
}

// waitStarted waits until n held replies have begun.
func (g *gateProvider) waitStarted(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-g.started:
		case <-time.After(liveWait):
			t.Fatal("a held reply did not begin")
		}
	}
}

func withStreamKeepAlive(d time.Duration) appOption {
	return func(d2 *handlers.Deps) { d2.Config.StreamKeepAlive = d }
}

func TestAFifthRunningTurnAnswers429AndStoresNothing(t *testing.T) {
	gate := newGateProvider()
	a := newTestApp(t, withAPIProvider(gate))
	browser := a.register("ann")
	api := a.apiClient("ann")
	bob := a.apiClient("bob")
	page, err := a.store.CreatePage(context.Background(), browser.user.ID, "Notes", "# Notes\n")
	if err != nil {
		t.Fatal(err)
	}

	// Four API turns run at once, each request waiting for its reply.
	var wg sync.WaitGroup
	codes := make(chan int, 4)
	for i := range agents.MaxTurnsPerUser {
		wg.Add(1)
		c := &client{a: a, cookies: map[string]string{}, apiKey: api.apiKey, user: api.user} // its own jar
		go func() {
			defer wg.Done()
			res, _ := c.api(http.MethodPost, "/api/chat", map[string]any{"query": fmt.Sprintf("hold %d", i)})
			codes <- res.StatusCode
		}()
	}
	gate.waitStarted(t, agents.MaxTurnsPerUser)
	rows := a.apiRows()

	// The fifth, through the API: 429 in the ChatResponse shape with the
	// API's err_code too.
	res, body := api.api(http.MethodPost, "/api/chat", map[string]any{"query": "one too many"})
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("5th turn: %d %s", res.StatusCode, body)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if out["err_code"] != 429.0 || out["error_code"] != 429.0 || !strings.Contains(out["err_msg"].(string), "4 replies") || out["exchange_id"] != nil {
		t.Fatalf("5th turn's answer %s", body)
	}

	// The composer without JavaScript: the chat page again, the text kept
	// and the reason beside it.
	res = browser.postForm("/chat/send", url.Values{"query": {"my long question"}})
	if page := bodyOf(res); res.StatusCode != http.StatusTooManyRequests ||
		!strings.Contains(page, "Four replies are already being written") || !strings.Contains(page, "my long question") {
		t.Fatalf("no-JS send: %d %s", res.StatusCode, page)
	}
	// With htmx: an alert, nothing swapped.
	res = browser.htmx(http.MethodPost, "/chat/send", url.Values{"query": {"from a tab"}})
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("HX-Reswap") != "none" || !strings.Contains(bodyOf(res), "4 replies") {
		t.Fatalf("htmx send: %d %s", res.StatusCode, bodyOf(res))
	}
	// A page's chat, without JavaScript.
	res = browser.postForm("/pages/"+strconv.FormatInt(page.ID, 10)+"/chat", url.Values{"query": {"about the page"}})
	if page := bodyOf(res); res.StatusCode != http.StatusTooManyRequests ||
		!strings.Contains(page, "Four replies are already being written") || !strings.Contains(page, "about the page") {
		t.Fatalf("no-JS page chat send: %d %s", res.StatusCode, page)
	}
	if got := a.apiRows(); got != rows {
		t.Fatalf("refused turns stored rows: %v, then %v", rows, got)
	}

	// Another user is not held back.
	if out := bob.apiChat("bob's question", 0); out.ErrorCode != 0 {
		t.Fatalf("bob: %+v", out)
	}

	// One reply finishes: a new turn is accepted.
	gate.pass <- struct{}{}
	if code := <-codes; code != http.StatusOK {
		t.Fatalf("a held turn answered %d", code)
	}
	done := make(chan int, 1)
	again := &client{a: a, cookies: map[string]string{}, apiKey: api.apiKey, user: api.user}
	go func() {
		res, _ := again.api(http.MethodPost, "/api/chat", map[string]any{"query": "hold again"})
		done <- res.StatusCode
	}()
	gate.waitStarted(t, 1)
	close(gate.pass)
	wg.Wait()
	if code := <-done; code != http.StatusOK {
		t.Fatalf("the turn after one finished: %d", code)
	}
}

func TestThe33rdWebsocketIsRefusedBeforeTheUpgrade(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	ann, bob := a.register("ann"), a.register("bob")
	// Handshakes that fail after the slot was taken (no Sec-WebSocket-Key:
	// the upgrader refuses) give it back: more of them than the limit leave
	// every slot free.
	for range agents.MaxSocketsPerUser + 8 {
		req := httptest.NewRequest(http.MethodGet, "/live", nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		if res := ann.do(req); res.StatusCode != http.StatusUpgradeRequired {
			t.Fatalf("a broken handshake: %d", res.StatusCode)
		}
	}
	var tabs []*liveTab
	for range agents.MaxSocketsPerUser {
		tabs = append(tabs, ann.openTab(t, addr))
	}
	conn, res, err := ann.dialLive(addr, "http://"+addr)
	if err == nil {
		conn.Close()
		t.Fatal("the 33rd websocket was upgraded")
	}
	if !isHandshakeStatus(err, res, http.StatusTooManyRequests) {
		t.Fatalf("33rd dial: %v (response %v)", err, res)
	}
	bob.openTab(t, addr) // another user's tabs are their own

	// Closing a tab frees its slot.
	_ = tabs[0].conn.Close()
	deadline := time.Now().Add(liveWait)
	for {
		conn, res, err := ann.dialLive(addr, "http://"+addr)
		if err == nil {
			conn.Close()
			break
		}
		if !isHandshakeStatus(err, res, http.StatusTooManyRequests) || time.Now().After(deadline) {
			t.Fatalf("dial after a close: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestThe33rdStreamIsRefused(t *testing.T) {
	a := newTestApp(t, withStreamKeepAlive(20*time.Millisecond))
	addr := a.listen()
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	ex, _ := a.liveStart(ann.user.ID, 0, "watched")
	a.liveFinish(ann.user.ID, ex.ID, "answer")
	path := "/api/chat/exchange/" + strconv.FormatInt(ex.ID, 10) + "/stream"
	var streams []*sseStream
	for range agents.MaxStreamsPerUser {
		streams = append(streams, ann.openStream(t, addr, path))
	}
	get := func(c *client, path string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-api-key", c.apiKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode == http.StatusOK {
			return res.StatusCode, "" // a stream: do not read it to its end
		}
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get(ann, path); code != http.StatusTooManyRequests || !strings.Contains(body, `"err_code":429`) {
		t.Fatalf("33rd stream: %d %s", code, body)
	}
	bobEx, _ := a.liveStart(bob.user.ID, 0, "bob's")
	bob.openStream(t, addr, "/api/chat/exchange/"+strconv.FormatInt(bobEx.ID, 10)+"/stream")

	// The client going away frees its slot once the server notices (at the
	// next keep-alive).
	streams[0].cancel()
	deadline := time.Now().Add(liveWait)
	for {
		code, body := get(ann, path)
		if code == http.StatusOK {
			break
		}
		if code != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("stream after a close: %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
