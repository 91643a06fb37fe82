package bench

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"palaver/models"
)

// searchFigures: GET /api/chat/search over the big history the history
// figures seeded, with a mix of common words, a rare one, a phrase and a
// prefix, against the bare SQL the store runs for the same searches.
func searchFigures(ctx context.Context, e *env, r report) error {
	if e.histUser.id == 0 {
		return errors.New("the history figures seed the messages searched: run them first")
	}
	queries, err := e.searchQueries(ctx)
	if err != nil {
		return err
	}
	var apiAll, bareAll []time.Duration
	for _, q := range queries {
		api, bare, hits, err := e.search(ctx, q, max(e.size.HistSamples/len(queries), 1))
		if err != nil {
			return fmt.Errorf("search %q: %w", q, err)
		}
		// How many messages match at all (the store's MATCH expression is
		// the first argument of its statements).
		_, args := models.SQLiteSnippetSQL(models.ParseSearch(q), false, nil)
		var matches int64
		if err := e.raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?`, args[0]).Scan(&matches); err != nil {
			return err
		}
		fmt.Fprintf(r.w, "# search %s: p50 %s ms, bare %s ms; %d matching messages, %d hits on the first page\n",
			q, num(ms(percentile(api, 0.5))), num(ms(percentile(bare, 0.5))), matches, hits)
		apiAll, bareAll = append(apiAll, api...), append(bareAll, bare...)
	}
	apiP50, bareP50 := percentile(apiAll, 0.5), percentile(bareAll, 0.5)
	r.line("search_p50_ms", ms(apiP50), "≤ 20")
	r.anchor("search_bare_p50_ms", ms(bareP50), "the search's SQL alone")
	r.line("search_ratio", float64(apiP50)/float64(bareP50), "≤ 2")
	return e.searchBesideOtherWords(ctx, r)
}

// searchBesideOtherWords: another user writes distinct words starting
// "zeb", a thousand to a message, one for every ten messages of the history
// (100,000 at the full size); the bench user, with a few
// messages of their own, searches for "zeb*" through the API. The index
// is shared, so what it reads for a prefix must not grow with other
// users' vocabularies (migration 00018: prefix indexes).
func (e *env) searchBesideOtherWords(ctx context.Context, r report) error {
	other, err := e.store.CreateUser(ctx, "prefix-other", "x", false)
	if err != nil {
		return err
	}
	turn := func(userID int64, query, reply string) error {
		ex, _, err := e.store.StartTurn(ctx, models.TurnStart{UserID: userID, Scope: models.ScopeGeneral, AgentType: "router", Owner: "bench", Query: query})
		if err != nil {
			return err
		}
		agent := "router"
		return e.store.FinishTurn(ctx, ex.ID, "bench", &models.Message{Role: models.RoleAssistant, Content: reply, AgentType: &agent})
	}
	otherWords := min(max(e.size.HistMessages/10, 1000), 100_000)
	rng := rand.New(rand.NewPCG(1, 2))
	for range otherWords / 1000 {
		var b strings.Builder
		for range 1000 {
			fmt.Fprintf(&b, "zeb%08x ", rng.Uint32())
		}
		if err := turn(other.ID, b.String(), "noted"); err != nil {
			return err
		}
	}
	for i := range 20 {
		if err := turn(e.userID, fmt.Sprintf("zebras at the waterhole, visit %d", i), "zebras drink at dusk"); err != nil {
			return err
		}
	}
	u := "http://" + e.addr + "/api/chat/search?q=" + url.QueryEscape("zeb*")
	var took []time.Duration
	for i := range 21 { // the first indexes what waits: not timed
		d, status, body, err := e.getTimed(ctx, u, e.apiKey)
		if err != nil {
			return err
		}
		var page []json.RawMessage
		if status != http.StatusOK || json.Unmarshal(body, &page) != nil || len(page) == 0 {
			return fmt.Errorf("GET /api/chat/search?q=zeb*: %d %.200s", status, body)
		}
		if i > 0 {
			took = append(took, d)
		}
	}
	fmt.Fprintf(r.w, "# search zeb* beside another user's %d words that start so\n", otherWords)
	r.line("search_prefix_other_user_p50_ms", ms(percentile(took, 0.5)), "≤ 20")
	return nil
}

// searchQueries are what the bench searches for: two common words, one of
// them alone, a rare word, a phrase taken from a seeded message, and a
// prefix.
func (e *env) searchQueries(ctx context.Context) ([]string, error) {
	words := e.vocabulary()
	// words[60] is in about one message in twenty, words[150] in one in
	// seventy; the rare one in a few hundred of a million.
	common, common2 := words[60], words[150]
	rare := words[len(words)-300]
	prefix := words[len(words)/3][:3] + "*"
	// Two neighbouring words of a message from the middle of the seed, the
	// first two that are not among the hundred commonest ("of the" is no
	// phrase anyone looks for).
	var content string
	err := e.raw.QueryRowContext(ctx, `SELECT content FROM messages WHERE exchange_id = (
		SELECT id FROM exchanges WHERE user_id = ? ORDER BY id LIMIT 1 OFFSET ?) AND role = 'assistant' LIMIT 1`,
		e.histUser.id, e.size.HistExchanges/2).Scan(&content)
	if err != nil {
		return nil, fmt.Errorf("a message to take a phrase from: %w", err)
	}
	rank := map[string]int{}
	for i, w := range words {
		rank[w] = i
	}
	phrase := ""
	ws := strings.FieldsFunc(strings.ToLower(content), func(r rune) bool { return r < 'a' || r > 'z' })
	for i := 1; i < len(ws) && phrase == ""; i++ {
		if rank[ws[i-1]] >= 100 && rank[ws[i]] >= 100 {
			phrase = `"` + ws[i-1] + " " + ws[i] + `"`
		}
	}
	if phrase == "" { // a short message of common words only: its first two
		if len(ws) < 2 {
			return nil, fmt.Errorf("a message too short for a phrase: %q", content)
		}
		phrase = `"` + ws[0] + " " + ws[1] + `"`
	}
	return []string{common, common + " " + common2, rare, phrase, prefix}, nil
}

// search times n searches for q through the API and n of the bare SQL,
// alternately, and returns the times and the first batch's hits.
func (e *env) search(ctx context.Context, q string, n int) (api, bare []time.Duration, hits int, err error) {
	u := "http://" + e.addr + "/api/chat/search?q=" + url.QueryEscape(q)
	for range n {
		took, status, body, err := e.getTimed(ctx, u, e.histUser.apiKey)
		if err != nil {
			return nil, nil, 0, err
		}
		api = append(api, took)
		if status != http.StatusOK {
			return nil, nil, 0, fmt.Errorf("GET /api/chat/search: %d %s", status, body)
		}
		var page []json.RawMessage
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, nil, 0, err
		}
		t0 := time.Now()
		bareHits, err := e.bareSearch(ctx, models.SearchQuery{Terms: models.ParseSearch(q), Limit: 20})
		if err != nil {
			return nil, nil, 0, err
		}
		bare = append(bare, time.Since(t0))
		if bareHits != len(page) {
			return nil, nil, 0, fmt.Errorf("the API found %d hits, the bare SQL %d", len(page), bareHits)
		}
		hits = len(page)
	}
	return api, bare, hits, nil
}

// bareSearch runs the statements models.Store.Search runs on SQLite for
// the API's first batch of the history user's search (what it names to
// the index, models.SQLiteSearchSQL, then the snippets of its message and
// title hits) through database/sql, and counts the hits.
func (e *env) bareSearch(ctx context.Context, query models.SearchQuery) (int, error) {
	scope, err := e.store.SearchIndexScope(ctx, e.histUser.id, query)
	if err != nil || scope.None() {
		return 0, err
	}
	stmt, args := models.SQLiteSearchSQL(e.histUser.id, query, scope)
	rows, err := e.rawSearches.QueryContext(ctx, stmt, args...)
	if err != nil {
		return 0, err
	}
	var msgIDs, titleIDs []int64
	for rows.Next() {
		var id, kind, exchangeID int64
		var seq, pageID sql.NullInt64
		var role, title, scope string
		var at any // the union's time column, as the driver reads it
		var rank float64
		if err := rows.Scan(&id, &kind, &exchangeID, &seq, &role, &at, &rank, &title, &scope, &pageID); err != nil {
			rows.Close()
			return 0, err
		}
		if kind == 0 {
			msgIDs = append(msgIDs, id)
		} else {
			titleIDs = append(titleIDs, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, set := range []struct {
		titles bool
		ids    []int64
	}{{false, msgIDs}, {true, titleIDs}} {
		if len(set.ids) == 0 {
			continue
		}
		stmt, args := models.SQLiteSnippetSQL(query.Terms, set.titles, set.ids)
		rows, err := e.rawSearches.QueryContext(ctx, stmt, args...)
		if err != nil {
			return 0, err
		}
		for rows.Next() {
			var id int64
			var snippet string
			if err := rows.Scan(&id, &snippet); err != nil {
				rows.Close()
				return 0, err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, err
		}
	}
	return len(msgIDs) + len(titleIDs), nil
}
