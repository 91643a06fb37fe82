package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/gofiber/fiber/v2"

	"palaver/accounts"
	"palaver/agents"
	"palaver/handlers"
	"palaver/internal/dbtest"
	"palaver/models"
	"palaver/static"
)

// testApp is the whole app on a fresh temporary SQLite database.
type testApp struct {
	t        *testing.T
	app      *fiber.App
	store    *models.Store
	hub      *agents.Hub
	agents   *agents.Service
	sessions *scs.SessionManager
	// written is, per exchange, how many bytes of the reply liveDelta has
	// announced: the offset of the next piece, as the agent service keeps it.
	written map[int64]int
}

type appOption func(*handlers.Deps)

func withoutRegistration() appOption {
	return func(d *handlers.Deps) { d.Config.AllowRegistration = false }
}

func newTestApp(t *testing.T, opts ...appOption) *testApp {
	t.Helper()
	d, store := newDeps(t, opts...)
	return &testApp{t: t, app: handlers.New(d), store: store, hub: d.Hub, agents: d.Agents, sessions: d.Sessions}
}

// newDeps is everything the app needs, on a fresh temporary SQLite database
// (returned too) closed when tb ends.
func newDeps(tb testing.TB, opts ...appOption) (handlers.Deps, *models.Store) {
	tb.Helper()
	template, err := migratedDB()
	if err != nil {
		tb.Fatalf("the migrated database the test apps start from: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "palaver.db")
	if err := os.WriteFile(path, template, 0o644); err != nil {
		tb.Fatal(err)
	}
	store, err := models.Open(path, models.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	// Nothing is left to apply: this checks so, and starts the store as
	// after any migration.
	if _, err := store.Migrate(context.Background()); err != nil {
		tb.Fatal(err)
	}
	sqlDB, err := store.SQL()
	if err != nil {
		tb.Fatal(err)
	}
	assets, err := static.Load()
	if err != nil {
		tb.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	hub := agents.NewHub()
	d := handlers.Deps{
		Store:    store,
		Sessions: handlers.NewSessions(sqlDB, store.Dialect(), false, 0),
		Agents:   agents.New(store, &agents.Builtin{}, agents.Options{Logger: log, Hub: hub}),
		Hub:      hub,
		Assets:   assets,
		Logger:   log,
		Config:   handlers.Config{AllowRegistration: true},
	}
	for _, o := range opts {
		o(&d)
	}
	return d, store
}

// migratedDB is the file of a freshly migrated SQLite database, made once
// per test binary (dbtest.MigratedFile): each store starts from a copy.
var migratedDB = dbtest.MigratedFile(func(path string) error {
	store, err := models.Open(path, models.Options{})
	if err != nil {
		return err
	}
	if _, err := store.Migrate(context.Background()); err != nil {
		store.Close()
		return err
	}
	return store.Close()
})

// client is one browser (a cookie jar and the CSRF token it last saw) or one
// API key holder.
type client struct {
	a       *testApp
	cookies map[string]string
	csrf    string
	apiKey  string
	user    *models.User
}

func (a *testApp) anon() *client { return &client{a: a, cookies: map[string]string{}} }

// register creates an account through the HTML form and returns its browser.
func (a *testApp) register(name string) *client {
	a.t.Helper()
	c := a.anon()
	c.get("/register")
	res := c.postForm("/register", url.Values{"username": {name}, "password": {"correct horse"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/chat" {
		a.t.Fatalf("register %s: status %d, location %q", name, res.StatusCode, res.Header.Get("Location"))
	}
	c.get("/chat") // picks up the signed-in session's CSRF token
	u, err := a.store.UserByUsername(context.Background(), name)
	if err != nil {
		a.t.Fatal(err)
	}
	c.user = u
	return c
}

// apiClient is a client that authenticates with a fresh API key for name's
// account, creating the account if needed.
func (a *testApp) apiClient(name string) *client {
	a.t.Helper()
	ctx := context.Background()
	u, err := a.store.UserByUsername(ctx, name)
	if err != nil {
		hash, _ := accounts.HashPassword("correct horse")
		if u, err = a.store.CreateUser(ctx, name, hash, false); err != nil {
			a.t.Fatal(err)
		}
	}
	key := "pal_test_" + name
	if _, err := a.store.CreateAPIKey(ctx, u.ID, "test", handlers.HashAPIKey(key)); err != nil {
		a.t.Fatal(err)
	}
	return &client{a: a, cookies: map[string]string{}, apiKey: key, user: u}
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// do sends a request with the client's cookies (and API key), keeps the
// cookies it gets back and the CSRF token of any page it reads.
func (c *client) do(req *http.Request) *http.Response {
	c.a.t.Helper()
	for k, v := range c.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	if c.apiKey != "" {
		req.Header.Set("x-api-key", c.apiKey)
	}
	res, err := c.a.app.Test(req, -1)
	if err != nil {
		c.a.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	for _, ck := range res.Cookies() {
		if ck.MaxAge < 0 {
			delete(c.cookies, ck.Name)
		} else {
			c.cookies[ck.Name] = ck.Value
		}
	}
	body, _ := io.ReadAll(res.Body)
	res.Body = io.NopCloser(strings.NewReader(string(body)))
	if m := csrfField.FindSubmatch(body); m != nil {
		c.csrf = string(m[1])
	}
	return res
}

func (c *client) get(path string) *http.Response {
	return c.do(httptest.NewRequest(http.MethodGet, path, nil))
}

// htmx sends a request the way htmx does (HX-Request, the CSRF header).
func (c *client) htmx(method, path string, form url.Values) *http.Response {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", c.csrf)
	return c.do(req)
}

// postForm posts a form as a browser without JavaScript does, with the CSRF
// field unless the values already set one.
func (c *client) postForm(path string, form url.Values) *http.Response {
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf_token"]; !ok {
		form.Set("csrf_token", c.csrf)
	}
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

// api calls the JSON API; body is marshalled unless it is a string, which is
// sent as is. Browser clients send their CSRF header.
func (c *client) api(method, path string, body any) (*http.Response, []byte) {
	c.a.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			c.a.t.Fatal(err)
		}
		r = strings.NewReader(string(j))
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey == "" && c.csrf != "" {
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	res := c.do(req)
	b, _ := io.ReadAll(res.Body)
	return res, b
}

// apiJSON calls the API, checks the status and decodes the answer into out.
func (c *client) apiJSON(method, path string, body any, want int, out any) {
	c.a.t.Helper()
	res, b := c.api(method, path, body)
	if res.StatusCode != want {
		c.a.t.Fatalf("%s %s: status %d, want %d: %s", method, path, res.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.a.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

func bodyOf(res *http.Response) string {
	b, _ := io.ReadAll(res.Body)
	res.Body = io.NopCloser(strings.NewReader(string(b)))
	return string(b)
}

func mustStatus(t *testing.T, res *http.Response, want int) {
	t.Helper()
	if res.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", res.Request.Method, res.Request.URL, res.StatusCode, want, bodyOf(res))
	}
}

// waitTurns waits until no turn runs: htmx sends return before the reply is
// written.
func (a *testApp) waitTurns() {
	a.t.Helper()
	// The turns of this process, to the end of their announcements (an
	// unread mark, a title): they write after the exchange stops running.
	if a.agents != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.agents.Idle(ctx); err != nil {
			a.t.Fatalf("turns still running: %v", err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		running, err := a.store.RunningTurns(context.Background())
		if err != nil {
			a.t.Fatal(err)
		}
		if len(running) == 0 {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("%d turns still running", len(running))
		}
	}
}
