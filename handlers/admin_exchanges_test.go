package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"palaver/internal/htmltest"
	"palaver/models"
)

// adminListSeed is a known set of exchanges over three accounts, with what
// each is, so the expected list of every filter is computed without SQL.
type adminListSeed struct {
	a        *testApp
	admin    *client
	ids      map[string]int64 // by name
	users    map[string]int64
	all      []adminSeeded
	roadmap  int64 // ann's page
	noteBook int64 // bob's page
}

type adminSeeded struct {
	name, user, scope, agent string
	turns                    int
	ago                      time.Duration
	down, errors             bool
	id                       int64
}

func newAdminListSeed(t *testing.T) *adminListSeed {
	a := newTestApp(t)
	s := &adminListSeed{a: a, admin: a.register("root"), ids: map[string]int64{}, users: map[string]int64{}}
	for _, name := range []string{"ann", "bob", "cyd"} {
		s.users[name] = a.register(name).user.ID
	}
	s.roadmap = a.adminPage(s.users["ann"], "Roadmap")
	down, up := int64(models.FeedbackDown), int64(models.FeedbackUp)
	h := time.Hour
	day := 24 * h
	for _, e := range []struct {
		adminSeeded
		ex adminEx
	}{
		{adminSeeded{name: "alpha", user: "ann", scope: "general", agent: "router", turns: 1, ago: h},
			adminEx{queries: []string{"Alpha plan"}}},
		{adminSeeded{name: "beta", user: "ann", scope: "general", agent: "router", turns: 3, ago: 2 * h, down: true},
			adminEx{queries: []string{"beta notes", "more", "more still"}, rate: &down}},
		{adminSeeded{name: "roadmap", user: "ann", scope: "page", agent: "page_assistant", turns: 2, ago: 2 * h},
			adminEx{scope: models.ScopePage, agent: "page_assistant", queries: []string{"Edit roadmap", "again"}}},
		{adminSeeded{name: "gamma", user: "bob", scope: "general", agent: "router", turns: 2, ago: 3 * day, errors: true},
			adminEx{queries: []string{"Gamma", "it broke"}, fail: true}},
		{adminSeeded{name: "job", user: "bob", scope: "job", agent: "router", turns: 1, ago: 10 * day},
			adminEx{scope: models.ScopeJob, job: "7", queries: []string{"Job seven question"}, rate: &up}},
		{adminSeeded{name: "coder", user: "bob", scope: "general", agent: "coder", turns: 2, ago: h, down: true, errors: true},
			adminEx{agent: "coder", queries: []string{"ALPHA again", "and fail"}, rate: &down, fail: true, tools: true}},
		{adminSeeded{name: "pct", user: "cyd", scope: "general", agent: "router", turns: 1, ago: 40 * day},
			adminEx{queries: []string{"100% done_ok"}}},
		{adminSeeded{name: "delta", user: "cyd", scope: "general", agent: "router", turns: 1, ago: 0},
			adminEx{queries: []string{"Delta plan"}, pinned: true}},
	} {
		e.ex.ago = e.ago
		if e.ex.scope == models.ScopePage {
			e.ex.page = s.roadmap
		}
		e.id = a.adminExchange(s.users[e.user], e.ex)
		s.ids[e.name] = e.id
		s.all = append(s.all, e.adminSeeded)
	}
	return s
}

// want lists the seeded exchanges that match, most recent activity first
// (then id, as the list breaks ties).
func (s *adminListSeed) want(match func(adminSeeded) bool) []int64 {
	var m []adminSeeded
	for _, e := range s.all {
		if match(e) {
			m = append(m, e)
		}
	}
	slices.SortFunc(m, func(x, y adminSeeded) int {
		if x.ago != y.ago {
			return int(x.ago - y.ago)
		}
		return int(y.id - x.id)
	})
	out := make([]int64, len(m))
	for i, e := range m {
		out[i] = e.id
	}
	return out
}

func TestAdminExchangesFilters(t *testing.T) {
	s := newAdminListSeed(t)
	today := time.Now().Format(time.DateOnly)
	twoDaysAgo := time.Now().AddDate(0, 0, -2).Format(time.DateOnly)
	fiveDaysAgo := time.Now().AddDate(0, 0, -5).Format(time.DateOnly)
	u := func(name string) string { return strconv.FormatInt(s.users[name], 10) }
	for _, tc := range []struct {
		query string
		match func(adminSeeded) bool
	}{
		{"", func(adminSeeded) bool { return true }},
		{"user=" + u("bob"), func(e adminSeeded) bool { return e.user == "bob" }},
		{"scope=page", func(e adminSeeded) bool { return e.scope == "page" }},
		{"scope=job", func(e adminSeeded) bool { return e.scope == "job" }},
		{"agent=coder", func(e adminSeeded) bool { return e.agent == "coder" }},
		{"negative=1", func(e adminSeeded) bool { return e.down }},
		{"errors=1", func(e adminSeeded) bool { return e.errors }},
		{"user=&scope=&agent=&from=&to=&q=&sort=&errors=1", func(e adminSeeded) bool { return e.errors }}, // as the form sends it
		{"q=alpha", func(e adminSeeded) bool { return e.name == "alpha" || e.name == "coder" }},
		{"q=%25", func(e adminSeeded) bool { return e.name == "pct" }},
		{"from=" + twoDaysAgo, func(e adminSeeded) bool { return e.ago < 24*time.Hour }},
		{"from=" + fiveDaysAgo + "&to=" + twoDaysAgo, func(e adminSeeded) bool { return e.name == "gamma" }},
		{"to=" + today + "&from=" + today + "&scope=general&user=" + u("ann"),
			func(e adminSeeded) bool {
				return e.user == "ann" && e.scope == "general" && e.ago < 2*time.Hour+time.Minute
			}},
		{"user=" + u("bob") + "&errors=1&negative=1", func(e adminSeeded) bool { return e.user == "bob" && e.errors && e.down }},
		{"user=" + u("cyd") + "&errors=1", func(adminSeeded) bool { return false }},
	} {
		t.Run(tc.query, func(t *testing.T) {
			want := s.want(tc.match)
			if strings.Contains(tc.query, "to="+today) {
				// "today" depends on the clock: keep only what is active today.
				var w []int64
				for _, id := range want {
					for _, e := range s.all {
						if e.id == id && time.Now().Add(-e.ago).Format(time.DateOnly) == today {
							w = append(w, id)
						}
					}
				}
				want = w
			}
			doc := s.admin.chatScreen(t, "/admin/exchanges?"+tc.query)
			if got := adminRowIDs(doc); !slices.Equal(got, want) {
				t.Fatalf("rows %s, want %s", adminIDs(got), adminIDs(want))
			}
			total := htmltest.Text(htmltest.ByTestID(doc, "admin-total")[0])
			if !strings.HasPrefix(total, strconv.Itoa(len(want))+" conversation") {
				t.Fatalf("total %q, want %d", total, len(want))
			}
			// htmx asks for the results only, and gets the same rows.
			res := s.admin.htmx("GET", "/admin/exchanges?"+tc.query, nil)
			mustStatus(t, res, http.StatusOK)
			frag := bodyOf(res)
			if strings.Contains(frag, "<html") || !strings.Contains(frag, `id="admin-results"`) {
				t.Fatalf("htmx got a whole page, or not the results: %.200s", frag)
			}
			if got := adminRowIDs(chatDoc(t, res)); !slices.Equal(got, want) {
				t.Fatalf("htmx rows %s, want %s", adminIDs(got), adminIDs(want))
			}
			// The address bar gets the filters, without the form's empty fields.
			if push := res.Header.Get("HX-Push-Url"); strings.Contains(push, "=&") || strings.HasSuffix(push, "=") ||
				!strings.HasPrefix(push, "/admin/exchanges") {
				t.Fatalf("HX-Push-Url %q", push)
			}
		})
	}
}

// TestAdminExchangesRow checks what a row says about each kind of exchange.
func TestAdminExchangesRow(t *testing.T) {
	s := newAdminListSeed(t)
	doc := s.admin.chatScreen(t, "/admin/exchanges")
	rows := map[int64]string{}
	for _, r := range htmltest.ByTestID(doc, "admin-exchange-row") {
		v, _ := htmltest.Attr(r, "data-exchange-id")
		id, _ := strconv.ParseInt(v, 10, 64)
		rows[id] = htmltest.Text(r)
	}
	for name, want := range map[string][]string{
		"roadmap": {"ann", "Edit roadmap", "page: Roadmap", "page_assistant", "▲ 0 ▼ 0"},
		"job":     {"bob", "job #7", "▲ 1 ▼ 0"},
		"coder":   {"bob", "ALPHA again", "general", "coder", "▲ 0 ▼ 1", "–"},
		"delta":   {"cyd", "Delta plan", "pinned"},
	} {
		row := rows[s.ids[name]]
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("%s row %q lacks %q", name, row, w)
			}
		}
	}
	// Errors, turns and size have their own cells.
	ex, err := s.a.store.AdminExchange(context.Background(), s.ids["coder"])
	if err != nil {
		t.Fatal(err)
	}
	row := rows[s.ids["coder"]]
	if ex.Errors != 1 || !strings.Contains(row, strconv.FormatInt(ex.TurnCount, 10)) {
		t.Fatalf("coder row %q, exchange %+v", row, ex)
	}
	link := htmltest.FindAll(doc, func(n *chatNode) bool {
		v, _ := htmltest.Attr(n, "data-testid")
		h, _ := htmltest.Attr(n, "href")
		return v == "admin-exchange-link" && h == "/admin/exchanges/"+strconv.FormatInt(s.ids["coder"], 10)
	})
	if len(link) != 1 {
		t.Fatal("no link to the exchange's admin page")
	}
}

// TestAdminExchangesBatches walks the list batch by batch, by each sort, as a
// browser without JavaScript follows "Next page", over more exchanges than a
// batch holds, with ties in every sort key.
func TestAdminExchangesBatches(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	users := []int64{a.register("ann").user.ID, a.register("bob").user.ID}
	type seeded struct {
		id, turns, size int64
		at              time.Time
	}
	var all []seeded
	base := time.Now().UTC().Truncate(time.Second)
	for i := range 120 {
		queries := []string{"question " + strings.Repeat("x", i%4)}
		for range i % 3 {
			queries = append(queries, "more")
		}
		ago := time.Duration(i%40) * time.Minute // three exchanges share each time
		id := a.adminExchange(users[i%2], adminEx{queries: queries, ago: 0})
		at := base.Add(-ago)
		a.chatExec("UPDATE exchanges SET updated_at = ? WHERE id = ?", at, id)
		ex, err := a.store.Exchange(context.Background(), users[i%2], id)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, seeded{id: id, turns: ex.TurnCount, size: ex.StoredBytes, at: at})
	}
	for sort, key := range map[string]func(seeded) int64{
		"":         func(e seeded) int64 { return e.at.UnixMicro() },
		"activity": func(e seeded) int64 { return e.at.UnixMicro() },
		"size":     func(e seeded) int64 { return e.size },
		"turns":    func(e seeded) int64 { return e.turns },
	} {
		want := slices.Clone(all)
		slices.SortFunc(want, func(x, y seeded) int {
			if kx, ky := key(x), key(y); kx != ky {
				return int(ky - kx)
			}
			return int(y.id - x.id)
		})
		wantIDs := make([]int64, len(want))
		for i, e := range want {
			wantIDs[i] = e.id
		}
		path := "/admin/exchanges"
		if sort != "" {
			path += "?sort=" + sort
		}
		if got := admin.adminWalk(t, path); !slices.Equal(got, wantIDs) {
			t.Fatalf("sort %q: walked %d rows %s,\nwant %d rows %s", sort, len(got), adminIDs(got), len(wantIDs), adminIDs(wantIDs))
		}
	}
	// Filters stay on the page links.
	doc := admin.chatScreen(t, "/admin/exchanges?sort=turns&user="+strconv.FormatInt(users[0], 10))
	next, _ := htmltest.Attr(htmltest.ByTestID(doc, "admin-next")[0], "href")
	q, _ := url.ParseQuery(strings.TrimPrefix(next, "/admin/exchanges?"))
	if q.Get("sort") != "turns" || q.Get("user") != strconv.FormatInt(users[0], 10) || q.Get("after") == "" {
		t.Fatalf("next link %q loses the filters", next)
	}
	rows := admin.adminWalk(t, "/admin/exchanges?sort=turns&user="+strconv.FormatInt(users[0], 10))
	if len(rows) != 60 {
		t.Fatalf("%d of ann's 60 exchanges walked", len(rows))
	}
}

func TestAdminExchangesBadInput(t *testing.T) {
	s := newAdminListSeed(t)
	for _, q := range []string{"from=yesterday", "to=2026-13-01", "scope=secret", "sort=colour", "user=bob",
		"from=2026-05-02&to=2026-05-01"} {
		res := s.admin.get("/admin/exchanges?" + q)
		mustStatus(t, res, http.StatusUnprocessableEntity)
		doc := chatDoc(t, res)
		if len(htmltest.ByTestID(doc, "filter-error")) != 1 || len(adminRowIDs(doc)) != 0 {
			t.Fatalf("%s: no error shown, or rows listed anyway", q)
		}
		res = s.admin.htmx("GET", "/admin/exchanges?"+q, nil)
		mustStatus(t, res, http.StatusUnprocessableEntity)
		if !strings.Contains(bodyOf(res), `data-testid="filter-error"`) {
			t.Fatalf("%s via htmx: no error in the fragment", q)
		}
	}
	// A cursor that does not parse, or belongs to another sort: the first
	// page, with a word about it.
	for _, q := range []string{"after=garbage", "sort=turns&after=" + (models.AdminCursor{Sort: "size", Key: 1, ID: 1}).String()} {
		doc := s.admin.chatScreen(t, "/admin/exchanges?"+q)
		if len(htmltest.ByTestID(doc, "filter-error")) != 1 || len(adminRowIDs(doc)) != len(s.all) {
			t.Fatalf("%s: %d rows", q, len(adminRowIDs(doc)))
		}
	}
}
