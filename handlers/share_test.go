package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"palaver/handlers"
	"palaver/internal/htmltest"
	"palaver/models"
)

// shareClock is a clock a test moves (share expiry).
type shareClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *shareClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *shareClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type apiShareOut struct {
	ID         int64   `json:"id"`
	Token      string  `json:"token"`
	URL        string  `json:"url"`
	ExchangeID int64   `json:"exchange_id"`
	AtSeq      int64   `json:"at_seq"`
	Visibility string  `json:"visibility"`
	ExpiresAt  *string `json:"expires_at"`
	CreatedAt  string  `json:"created_at"`
	Views      int64   `json:"views"`
}

// shareApp is the app with a clock the test moves, alice (with a
// conversation of two turns, a rated reply and a failed third turn), bob,
// and a visitor.
func shareApp(t *testing.T) (a *testApp, clock *shareClock, alice, bob, visitor *client, ex int64) {
	clock = &shareClock{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	a = newTestApp(t, func(d *handlers.Deps) { d.Config.Now = clock.Now })
	alice, bob = a.register("alice"), a.register("bob")
	ex = a.adminExchange(alice.user.ID, adminEx{queries: []string{"first <b>question</b>", "second question", "third"}, fail: true, rate: ptrInt(1)})
	visitor = a.anon()
	visitor.get("/login")
	return a, clock, alice, bob, visitor, ex
}

func ptrInt(v int64) *int64 { return &v }

func (c *client) shareCreate(ex int64, body string) apiShareOut {
	c.a.t.Helper()
	var out apiShareOut
	c.apiJSON(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/shares", ex), body, http.StatusCreated, &out)
	return out
}

// shareNotFound checks that the page and the JSON of token answer 404 for c.
func shareNotFound(t *testing.T, c *client, token, what string) {
	t.Helper()
	for _, p := range []string{"/s/" + token, "/api/s/" + token} {
		res := c.get(p)
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: GET %s: status %d, want 404", what, p, res.StatusCode)
		}
		if got := res.Header.Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("%s: GET %s: Referrer-Policy %q", what, p, got)
		}
	}
}

func TestShareCreateOpenUpdateContinueRevoke(t *testing.T) {
	a, clock, alice, bob, visitor, ex := shareApp(t)
	ctx := context.Background()

	sh := alice.shareCreate(ex, `{"visibility": "link", "expires_in_days": 7, "show_owner": true}`)
	if sh.URL != "/s/"+sh.Token || len(sh.Token) < 22 || sh.ExchangeID != ex || sh.AtSeq != 4 || sh.ExpiresAt == nil || sh.Views != 0 {
		t.Fatalf("created %+v", sh)
	}

	// Signed out: the page, with its headers and nothing of the owner's.
	res := visitor.get(sh.URL)
	mustStatus(t, res, http.StatusOK)
	for k, want := range map[string]string{"Referrer-Policy": "no-referrer", "X-Robots-Tag": "noindex, nofollow"} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if csp, want := res.Header.Get("Content-Security-Policy"), alice.get("/chat").Header.Get("Content-Security-Policy"); csp != want || csp == "" {
		t.Errorf("CSP %q, the chat's %q", csp, want)
	}
	body := bodyOf(res)
	doc := htmltest.Parse(t, body)
	if !strings.Contains(body, `<meta name="robots" content="noindex, nofollow">`) {
		t.Error("no robots meta")
	}
	msgs := htmltest.ByTestID(doc, "message")
	var seqs []string
	for _, m := range msgs {
		r, _ := htmltest.Attr(m, "data-role")
		s, _ := htmltest.Attr(m, "data-seq")
		seqs = append(seqs, s+r)
	}
	if strings.Join(seqs, " ") != "0user 1assistant 2user 3assistant 4user" {
		t.Fatalf("shared messages %v", seqs)
	}
	if owner := htmltest.ByTestID(doc, "share-owner"); len(owner) != 1 || !strings.Contains(htmltest.Text(owner[0]), "alice") {
		t.Error("the owner's name is not shown though they chose to show it")
	}
	for _, leak := range []string{"the model endpoint timed out", "feedback", fmt.Sprintf("/chat/%d", ex), "msg-", "<b>question</b>"} {
		if strings.Contains(body, leak) {
			t.Errorf("the share page holds %q", leak)
		}
	}
	if c := htmltest.ByTestID(doc, "share-continue"); len(c) != 1 || !strings.Contains(mustHref(c[0]), "/login?next=/s/"+sh.Token) {
		t.Error("a visitor is not asked to sign in to continue")
	}

	// The JSON: exactly the listed fields.
	var raw map[string]any
	visitor.apiJSON(http.MethodGet, "/api/s/"+sh.Token, nil, http.StatusOK, &raw)
	if keys := mapKeys(raw); strings.Join(keys, ",") != "at_seq,messages,title" {
		t.Fatalf("snapshot fields %v", keys)
	}
	for _, m := range raw["messages"].([]any) {
		if keys := mapKeys(m.(map[string]any)); strings.Join(keys, ",") != "content,role,seq,timestamp" {
			t.Fatalf("message fields %v", keys)
		}
	}

	// An old viewer page (seq 4), then the owner updates the link.
	a.adminExchangeMore(alice.user.ID, ex, "fourth question")
	var up apiShareOut
	alice.apiJSON(http.MethodPatch, fmt.Sprintf("/api/shares/%d", sh.ID), `{"update": true}`, http.StatusOK, &up)
	if up.Token != sh.Token || up.AtSeq <= sh.AtSeq {
		t.Fatalf("updated %+v (was %+v)", up, sh)
	}
	if n := len(htmltest.ByTestID(htmltest.Parse(t, bodyOf(visitor.get(sh.URL))), "message")); n != 7 {
		t.Fatalf("after the update the page shows %d messages", n)
	}
	old := htmltest.Parse(t, bodyOf(visitor.get(sh.URL+"?at=4")))
	if n := len(htmltest.ByTestID(old, "message")); n != 5 {
		t.Fatalf("the old page's seq shows %d messages, want 5", n)
	}

	// Signed in, bob continues from the old page's seq: his own copy.
	page := bob.get(sh.URL + "?at=4")
	mustStatus(t, page, http.StatusOK)
	res = bob.postForm("/s/"+sh.Token+"/continue", url.Values{"at": {"4"}})
	mustStatus(t, res, http.StatusSeeOther)
	var copyID int64
	if _, err := fmt.Sscanf(res.Header.Get("Location"), "/chat/%d", &copyID); err != nil {
		t.Fatalf("continue went to %q", res.Header.Get("Location"))
	}
	copied, err := a.store.Messages(ctx, bob.user.ID, copyID, nil)
	if err != nil || len(copied) != 5 {
		t.Fatalf("bob's copy: %d entries, %v", len(copied), err)
	}
	cex, _ := a.store.Exchange(ctx, bob.user.ID, copyID)
	if cex.ForkedFromID != nil {
		t.Fatal("the copy points at the owner's exchange")
	}
	if b := bodyOf(bob.get(fmt.Sprintf("/chat/%d", copyID))); !strings.Contains(b, "from a shared link") {
		t.Error("bob's copy is not marked as from a shared link")
	}
	// The API's continue.
	var cont struct {
		ExchangeID int64 `json:"exchange_id"`
	}
	bob.apiJSON(http.MethodPost, "/api/s/"+sh.Token+"/continue", "", http.StatusCreated, &cont)
	if cont.ExchangeID == 0 || cont.ExchangeID == copyID {
		t.Fatalf("API continue: %+v", cont)
	}

	// The owner deletes hers: bob's copy stays, the link goes.
	alice.apiJSON(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", ex), nil, http.StatusOK, nil)
	if again, err := a.store.Messages(ctx, bob.user.ID, copyID, nil); err != nil || len(again) != 5 {
		t.Fatalf("bob's copy after the owner's delete: %d, %v", len(again), err)
	}
	shareNotFound(t, visitor, sh.Token, "a deleted conversation's link")

	// Views were counted; the list shows them.
	var list []apiShareOut
	alice.apiJSON(http.MethodGet, "/api/shares", nil, http.StatusOK, &list)
	if len(list) != 0 {
		t.Fatalf("the deleted conversation's share is still listed: %+v", list)
	}
	_ = clock
}

// mustHref is an element's href.
func mustHref(n *chatNode) string { h, _ := htmltest.Attr(n, "href"); return h }

func mapKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// adminExchangeMore adds a turn with a reply to an exchange (0: a new
// one) and returns the exchange's id.
func (a *testApp) adminExchangeMore(userID, ex int64, query string) int64 {
	a.t.Helper()
	ctx := context.Background()
	e, _, err := a.store.StartTurn(ctx, models.TurnStart{UserID: userID, ExchangeID: ex, Scope: models.ScopeGeneral, AgentType: "router", Query: query, Owner: "seed"})
	if err != nil {
		a.t.Fatal(err)
	}
	agent := "router"
	if err := a.store.FinishTurn(ctx, e.ID, "seed", &models.Message{Role: models.RoleAssistant, Content: "more", AgentType: &agent}); err != nil {
		a.t.Fatal(err)
	}
	return e.ID
}

func TestShareBadInput(t *testing.T) {
	a, clock, alice, bob, visitor, ex := shareApp(t)
	before := len(mustList(t, alice))

	// A share of another user's exchange: 404, nothing made.
	res, _ := bob.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/shares", ex), `{"visibility": "link"}`)
	mustStatus(t, res, http.StatusNotFound)
	res = bob.postForm(fmt.Sprintf("/chat/%d/share", ex), url.Values{"visibility": {"link"}})
	mustStatus(t, res, http.StatusNotFound)
	for _, body := range []string{`{"visibility": "everyone"}`, `{"visibility": "link", "expires_in_days": 3}`, `{"visibility": "link", "at_seq": 99}`, `{"visibility": "link", "at_seq": -1}`, `[]`} {
		res, b := alice.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/shares", ex), body)
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d %s", body, res.StatusCode, b)
		}
	}
	if after := len(mustList(t, alice)); after != before {
		t.Fatalf("bad requests made %d shares", after-before)
	}

	// A guessed token; one of the wrong shape.
	shareNotFound(t, visitor, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "a guessed token")
	shareNotFound(t, visitor, "x", "a token of the wrong shape")

	// Users-only, opened by a visitor: 404; by bob: 200.
	users := alice.shareCreate(ex, `{"visibility": "users"}`)
	shareNotFound(t, visitor, users.Token, "a users-only link for a visitor")
	mustStatus(t, bob.get(users.URL), http.StatusOK)
	bobKey := a.apiClient("bob")
	mustStatus(t, bobKey.get("/api/s/"+users.Token), http.StatusOK)

	// Expired, by the injected clock.
	day := alice.shareCreate(ex, `{"visibility": "link", "expires_in_days": 1}`)
	mustStatus(t, visitor.get(day.URL), http.StatusOK)
	clock.add(24*time.Hour + time.Second)
	shareNotFound(t, visitor, day.Token, "an expired link")

	// Revoked: 404, continue too, and another user cannot revoke it.
	link := alice.shareCreate(ex, `{"visibility": "link"}`)
	res, _ = bob.api(http.MethodDelete, fmt.Sprintf("/api/shares/%d", link.ID), nil)
	mustStatus(t, res, http.StatusNotFound)
	res, _ = bob.api(http.MethodPatch, fmt.Sprintf("/api/shares/%d", link.ID), `{"update": true}`)
	mustStatus(t, res, http.StatusNotFound)
	mustStatus(t, bob.postForm(fmt.Sprintf("/account/shares/%d/revoke", link.ID), nil), http.StatusNotFound)
	mustStatus(t, visitor.get(link.URL), http.StatusOK)
	mustStatus(t, alice.postForm(fmt.Sprintf("/account/shares/%d/revoke", link.ID), nil), http.StatusSeeOther)
	shareNotFound(t, visitor, link.Token, "a revoked link")
	exchangesBefore := countRows(t, a, "exchanges")
	res, _ = bob.api(http.MethodPost, "/api/s/"+link.Token+"/continue", "")
	mustStatus(t, res, http.StatusNotFound)
	mustStatus(t, bob.postForm("/s/"+link.Token+"/continue", nil), http.StatusNotFound)
	if n := countRows(t, a, "exchanges"); n != exchangesBefore {
		t.Fatal("continue on a revoked link made an exchange")
	}

	// A visitor's continue: to sign in, and back to the link after.
	res = visitor.postForm("/s/"+day.Token+"/continue", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Fatalf("a visitor's continue: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	live := alice.shareCreate(ex, `{"visibility": "users"}`)
	carol := a.anon()
	carol.get("/register?next=" + live.URL)
	res = carol.postForm("/register", url.Values{"username": {"carol"}, "password": {"correct horse"}, "next": {live.URL}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != live.URL {
		t.Fatalf("registering from a share link went to %q", res.Header.Get("Location"))
	}
	for _, next := range []string{"https://evil.example/", "//evil.example", "/chat/1", "/s/../admin"} {
		res = carol.get("/login?next=" + url.QueryEscape(next))
		if loc := res.Header.Get("Location"); loc != "/chat" {
			t.Errorf("next=%q sent a signed-in person to %q", next, loc)
		}
	}

	// The account page lists the links with their views; the admin list too.
	acc := htmltest.Parse(t, bodyOf(alice.get("/account")))
	rows := htmltest.ByTestID(acc, "share")
	if len(rows) < 4 || len(htmltest.ByTestID(acc, "share-revoke")) == 0 {
		t.Fatalf("account page lists %d shares", len(rows))
	}
}

func mustList(t *testing.T, c *client) []apiShareOut {
	t.Helper()
	var list []apiShareOut
	c.apiJSON(http.MethodGet, "/api/shares", nil, http.StatusOK, &list)
	return list
}

func countRows(t *testing.T, a *testApp, table string) int {
	t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The hostile titles and contents of the search tests, on the share page:
// escaped, no element or attribute the CSP would refuse.
func TestSharePageHostileInput(t *testing.T) {
	a, _, alice, _, visitor, _ := shareApp(t)
	hostile := []string{
		"<script>alert(1)</script>",
		`"><img src=x onerror=alert(1)>`,
		"[click](javascript:alert(1))",
		"<svg onload=alert(1)>",
		"' onmouseover='alert(1)",
		"```html\n<script>alert(2)</script>\n```",
		"<iframe src=//evil.example></iframe>",
	}
	for _, h := range hostile {
		ex := a.adminExchange(alice.user.ID, adminEx{queries: []string{h}})
		if _, err := a.store.RenameExchange(context.Background(), alice.user.ID, ex, h); err != nil {
			t.Fatal(err)
		}
		agent := "router"
		e, _, err := a.store.StartTurn(context.Background(), models.TurnStart{UserID: alice.user.ID, ExchangeID: ex, AgentType: agent, Query: "again " + h, Owner: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if err := a.store.FinishTurn(context.Background(), e.ID, "x", &models.Message{Role: models.RoleAssistant, Content: h, AgentType: &agent}); err != nil {
			t.Fatal(err)
		}
		sh := alice.shareCreate(ex, `{"visibility": "link"}`)
		body := bodyOf(visitor.get(sh.URL))
		if bad := headersInline(body); bad != "" {
			t.Errorf("%q: %s", h, bad)
		}
		if regexp.MustCompile(`(?i)<script>alert|href="javascript:|<svg|<iframe|<img`).MatchString(body) {
			t.Errorf("%q came through unescaped", h)
		}
		var snap struct {
			Title string `json:"title"`
		}
		visitor.apiJSON(http.MethodGet, "/api/s/"+sh.Token, nil, http.StatusOK, &snap)
		if snap.Title != h {
			t.Errorf("JSON title %q, want %q", snap.Title, h)
		}
	}
	_ = json.Valid
}

// Opens of share links are limited per address: a token guesser is
// refused with 429 after the limit, whatever the tokens.
func TestShareOpensAreThrottled(t *testing.T) {
	_, _, alice, _, visitor, ex := shareApp(t)
	sh := alice.shareCreate(ex, `{"visibility": "link"}`)
	for i := range 120 {
		path := fmt.Sprintf("/s/guess%030d", i)
		if i%2 == 0 {
			path = sh.URL
		}
		if res := visitor.get(path); res.StatusCode == http.StatusTooManyRequests {
			t.Fatalf("open %d refused", i)
		}
	}
	res := visitor.get(sh.URL)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("open 121: status %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
}
