package models

import (
	"context"
	"encoding/base64"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"

	"palaver/paths"
)

// SearchQuery is one batch of a user's search over their own messages and
// exchange titles.
type SearchQuery struct {
	Terms     []SearchTerm // from ParseSearch; none finds nothing
	Scope     string       // ScopeGeneral, ScopePage or ScopeJob; "" for all
	AgentType string       // the exchange's agent; "" for any
	Archived  bool         // include archived exchanges
	// Exclude, when set, leaves out one exchange (a search made from a
	// chat does not find the chat it is made from).
	Exclude int64
	// ProjectID set: that project's chats only.
	ProjectID *int64
	Before    *SearchCursor
	Limit     int
	// Reasoning also matches the reasoning of replies (the person opted
	// in: User.SearchReasoning); a reply whose text matches too is one
	// hit, on its text.
	Reasoning bool
}

// RoleTitle is the role of a hit on an exchange's title.
const RoleTitle = "title"

// SearchHit is a matching message, or an exchange whose title matches
// (MessageID and Seq nil, Role RoleTitle).
type SearchHit struct {
	ExchangeID int64
	MessageID  *int64
	Seq        *int64
	Role       string
	Title      string
	Scope      string
	PageID     *int64
	// Snippet is HTML: the text around the match, escaped, with each
	// matched term in <mark>…</mark>; nothing else is markup.
	Snippet string
	At      time.Time // the message's time, or the exchange's last activity
	Cursor  SearchCursor
	// InReasoning says the match is in the reply's reasoning, which the
	// snippet quotes (SearchQuery.Reasoning).
	InReasoning bool
}

// Link is where the hit leads, for the search screen and for the agents'
// search alike: its conversation on its message (a title's hit: the
// conversation), a page's chat in the page's editor; "" for a chat no
// screen shows (a job's, or a page chat without its page).
func (h SearchHit) Link() string {
	switch {
	case h.Scope == ScopeGeneral && h.Seq != nil:
		return paths.ChatAtSeq(h.ExchangeID, *h.Seq)
	case h.Scope == ScopeGeneral:
		return paths.Chat(h.ExchangeID)
	case h.Scope == ScopePage && h.PageID != nil && h.Seq != nil:
		return paths.PageChatAtSeq(*h.PageID, h.ExchangeID, *h.Seq)
	case h.Scope == ScopePage && h.PageID != nil:
		return paths.PageChatOpen(*h.PageID, h.ExchangeID)
	}
	return ""
}

// SearchCursor is a keyset position in a search's order: best rank first
// (lower is better), newest first among equals, then messages before titles,
// higher ids first.
type SearchCursor struct {
	Rank float64
	At   time.Time
	Kind int // searchKindMessage or searchKindTitle
	ID   int64
}

const (
	searchKindMessage   = 0
	searchKindTitle     = 1
	searchKindReasoning = 2 // a reply's reasoning
)

// String encodes the cursor as an opaque token.
func (c SearchCursor) String() string {
	raw := strconv.FormatFloat(c.Rank, 'g', -1, 64) + "." + strconv.FormatInt(c.At.UnixMicro(), 10) +
		"." + strconv.Itoa(c.Kind) + "." + strconv.FormatInt(c.ID, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// ParseSearchCursor decodes a token made by SearchCursor.String.
func ParseSearchCursor(token string) (SearchCursor, error) {
	bad := fmt.Errorf("%w: %q", ErrBadCursor, token)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return SearchCursor{}, bad
	}
	// The rank may itself hold a dot: the other three parts are the last.
	parts := strings.Split(string(raw), ".")
	if len(parts) < 4 {
		return SearchCursor{}, bad
	}
	n := len(parts)
	rank, err1 := strconv.ParseFloat(strings.Join(parts[:n-3], "."), 64)
	micros, err2 := strconv.ParseInt(parts[n-3], 10, 64)
	kind, err3 := strconv.Atoi(parts[n-2])
	id, err4 := strconv.ParseInt(parts[n-1], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || math.IsNaN(rank) || math.IsInf(rank, 0) ||
		kind < searchKindMessage || kind > searchKindReasoning || id <= 0 {
		return SearchCursor{}, bad
	}
	return SearchCursor{Rank: rank, At: time.UnixMicro(micros).UTC(), Kind: kind, ID: id}, nil
}

// Markers the engines put around matched terms in a snippet; the snippet is
// then escaped and they become <mark> (searchSnippet). Control characters a
// message could hold too: they never make more than balanced marks.
const (
	markOpen  = "\x01"
	markClose = "\x02"
)

// searchRow is one hit as the search query returns it.
type searchRow struct {
	ID         int64
	Kind       int
	ExchangeID int64
	Seq        *int64
	Role       string
	At         time.Time
	Rank       float64
	Title      string
	Scope      string
	PageID     *int64
}

// Search returns one keyset batch of the user's hits for q, best first. The
// terms are the engine's query in full: they were parsed (ParseSearch), and
// whatever was typed cannot reach the engine as syntax.
func (s *Store) Search(ctx context.Context, userID int64, q SearchQuery) ([]SearchHit, error) {
	if len(q.Terms) == 0 || q.Limit <= 0 {
		return []SearchHit{}, nil
	}
	// Whatever was written before is found (search_index.go).
	if err := s.CatchUpSearch(ctx); err != nil {
		return nil, wrap("search", err)
	}
	db := s.searches.WithContext(ctx)
	var rows []searchRow
	var err error
	if s.dialect == "postgres" {
		rows, err = s.searchPostgres(db, userID, q)
	} else {
		rows, err = s.searchSQLite(ctx, db, userID, q)
	}
	if err != nil {
		return nil, wrap("search", err)
	}
	snippets, err := s.snippets(db, q.Terms, rows)
	if err != nil {
		return nil, wrap("search: snippets", err)
	}
	hits := make([]SearchHit, len(rows))
	for i, r := range rows {
		h := SearchHit{
			ExchangeID: r.ExchangeID, Seq: r.Seq, Role: r.Role, Title: r.Title, Scope: r.Scope, PageID: r.PageID,
			At: r.At.UTC(), Cursor: SearchCursor{Rank: r.Rank, At: r.At.UTC(), Kind: r.Kind, ID: r.ID},
		}
		if r.Kind != searchKindTitle {
			h.MessageID = &rows[i].ID
			h.InReasoning = r.Kind == searchKindReasoning
			h.Snippet = searchSnippet(snippets[searchKey{r.Kind, r.ID}])
		} else {
			h.Role = RoleTitle
			h.Snippet = searchSnippet(snippets[searchKey{r.Kind, r.ID}])
		}
		hits[i] = h
	}
	return hits, nil
}

// searchFilters is the WHERE clause on the exchange (alias e) every hit
// shares, and its arguments.
func searchFilters(userID int64, q SearchQuery) (string, []any) {
	where, args := "e.user_id = ?", []any{userID}
	if q.Scope != "" {
		where += " AND e.scope = ?"
		args = append(args, q.Scope)
	} else {
		// Sub-runs are agents' work, reached through their parent.
		where += " AND e.scope <> ?"
		args = append(args, ScopeSubRun)
	}
	if q.Exclude != 0 {
		where += " AND e.id <> ?"
		args = append(args, q.Exclude)
	}
	if q.AgentType != "" {
		where += " AND e.agent_type = ?"
		args = append(args, q.AgentType)
	}
	if !q.Archived {
		where += " AND e.archived = ?"
		args = append(args, false)
	}
	if q.ProjectID != nil {
		where += " AND e.project_id = ?"
		args = append(args, *q.ProjectID)
	}
	// Temporary chats are never found.
	where += " AND e.temporary = ?"
	args = append(args, false)
	return where, args
}

// searchKeyset is the condition for rows after the cursor in the search's
// order (rank, at DESC, kind, id DESC), over the columns of the union.
func searchKeyset(c *SearchCursor) (string, []any) {
	if c == nil {
		return "1 = 1", nil
	}
	at := c.At.UTC()
	return `(rank > ? OR (rank = ? AND (at < ? OR (at = ? AND (kind > ? OR (kind = ? AND id < ?))))))`,
		[]any{c.Rank, c.Rank, at, at, c.Kind, c.Kind, c.ID}
}

// searchChatsMax and searchChatsTurns bound the chats a search on SQLite
// names to the full-text index (SearchIndexScope). Named, the index lists
// their matches alone, where the join drops every other chat's at about
// 5 us a match; but each name is one more term for the index to look up
// in each of its segments (about 35 us a name on the bench's unmerged
// index of a million messages, 3-5 us once merged into one segment by
// AdminVacuum), bm25 counts each named chat's rows for its weights, and
// the query grows with the list. A project of 100 chats: its search's SQL
// takes 15-35 ms for a common word on that index (0.3-0.5 s unnamed),
// 4-9 ms once merged; a word in none of them, 10 ms and 2 ms.
//
// Past them, the person is named instead when their indexed rows are at
// most searchPersonRows: one term, whose rows bm25 counts (a person's
// million rows cost 30 ms; 100,000 about 3). What was found of a person
// is kept for searchPersonFor.
const (
	searchChatsMax   = 200
	searchChatsTurns = 10_000
	searchPersonRows = 100_000
	searchPersonFor  = time.Minute
)

// IndexScope is what a search on SQLite names to the full-text index:
// the chats it can find (nil: not named; empty: there are none), or else
// the person whose chats they are (0: not named).
type IndexScope struct {
	Chats  []int64
	Person int64
}

// None says that the search can find no chat at all: nothing to run.
func (sc IndexScope) None() bool { return sc.Chats != nil && len(sc.Chats) == 0 }

// personRows is what SearchIndexScope found of a person's indexed rows.
type personRows struct {
	few bool
	at  time.Time
}

// SearchIndexScope says what a search by the user for q names to SQLite's
// full-text index (SQLiteSearchSQL): the chats it can find when they are
// at most searchChatsMax holding at most searchChatsTurns turns, else the
// person when their indexed rows are few, else nothing. On PostgreSQL,
// whose search filters by the join alone, it names nothing.
func (s *Store) SearchIndexScope(ctx context.Context, userID int64, q SearchQuery) (IndexScope, error) {
	if s.dialect != "sqlite" {
		return IndexScope{}, nil
	}
	chats, err := s.searchChats(ctx, userID, q)
	if err != nil || chats != nil {
		return IndexScope{Chats: chats}, err
	}
	v, ok := s.people.Load(userID)
	known, _ := v.(personRows)
	if !ok || time.Since(known.at) >= searchPersonFor {
		var n int64
		err = s.searches.WithContext(ctx).Raw(`SELECT COUNT(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)`,
			"scope : "+personToken(userID), searchPersonRows+1).Scan(&n).Error
		if err != nil {
			return IndexScope{}, wrap("search scope", err)
		}
		known = personRows{few: n <= searchPersonRows, at: time.Now()}
		s.people.Store(userID, known)
	}
	if known.few {
		return IndexScope{Person: userID}, nil
	}
	return IndexScope{}, nil
}

// searchChats lists the chats a search by the user for q can find, or
// returns nil when naming them would not pay (searchChatsMax,
// searchChatsTurns). An empty list says nothing can be found.
func (s *Store) searchChats(ctx context.Context, userID int64, q SearchQuery) ([]int64, error) {
	db := s.searches.WithContext(ctx)
	// Counted in the index alone first: a person with many chats pays for
	// a few hundred index entries, not a row read for each.
	stmt, args := searchChatsCountSQL(userID, q)
	var n int64
	if err := db.Raw(stmt, args...).Scan(&n).Error; err != nil || n > searchChatsMax {
		return nil, wrap("search chats", err)
	}
	stmt, args = searchChatsSQL(userID, q)
	var chats []struct{ ID, TurnCount int64 }
	if err := db.Raw(stmt, args...).Scan(&chats).Error; err != nil {
		return nil, wrap("search chats", err)
	}
	ids, turns := make([]int64, len(chats)), int64(0)
	for i, c := range chats {
		if turns += c.TurnCount; turns > searchChatsTurns {
			return nil, nil
		}
		ids[i] = c.ID
	}
	return ids, nil
}

// searchChatsIndex is the index searchChats reads, with the condition on
// its first column. INDEXED BY: with statistics taken while one person
// held nearly every chat, SQLite scanned the whole table for another
// person's twenty (30 ms on the bench's database).
func searchChatsIndex(userID int64, q SearchQuery) (index, key string, arg int64) {
	if q.ProjectID != nil {
		return "exchanges_project", "e.project_id = ?", *q.ProjectID
	}
	return "exchanges_user_scope_activity", "e.user_id = ?", userID
}

// searchChatsCountSQL counts up to searchChatsMax + 1 chats of the person
// (or the project) in its index alone: at least as many as the search can
// find.
func searchChatsCountSQL(userID int64, q SearchQuery) (string, []any) {
	index, key, arg := searchChatsIndex(userID, q)
	return `SELECT COUNT(*) FROM (SELECT 1 FROM exchanges e INDEXED BY ` + index + ` WHERE ` + key + ` LIMIT ?)`,
		[]any{arg, searchChatsMax + 1}
}

// searchChatsSQL lists the chats the search can find, and their turns:
// no more than searchChatsCountSQL counted.
func searchChatsSQL(userID int64, q SearchQuery) (string, []any) {
	index, _, _ := searchChatsIndex(userID, q)
	filter, args := searchFilters(userID, q)
	return `SELECT e.id, e.turn_count FROM exchanges e INDEXED BY ` + index + ` WHERE ` + filter, args
}

// searchSQLite ranks with FTS5's bm25 (lower is better), within what it
// names to the index; no chat the search could find: no statement.
func (s *Store) searchSQLite(ctx context.Context, db *gorm.DB, userID int64, q SearchQuery) ([]searchRow, error) {
	scope, err := s.SearchIndexScope(ctx, userID, q)
	if err != nil || scope.None() {
		return nil, err
	}
	sql, args := SQLiteSearchSQL(userID, q, scope)
	var rows []searchRow
	return rows, db.Raw(sql, args...).Scan(&rows).Error
}

// SQLiteSearchSQL is the statement Search runs on SQLite for one batch of
// the user's hits, within what it names to the index (SearchIndexScope),
// and its arguments (for database/sql as they are):
// palaver bench times it bare beside the store's whole search. LIMIT ?+0:
// SQLite prepares a statement with a bare bound LIMIT again on every run.
// CROSS JOIN keeps the full-text match first: scoped to a project, SQLite
// otherwise led with the project's chats (exchanges_project) and ran the
// whole MATCH again for each of them (0.5-0.7 s for a common word in the
// bench's search_p50_ms_project). NOT INDEXED keeps each hit's exchange a
// lookup by its id: with statistics taken before chats moved into
// projects (as in the bench), SQLite read it through exchanges_project,
// walking the project's chats for each hit.
func SQLiteSearchSQL(userID int64, q SearchQuery, scope IndexScope) (string, []any) {
	in := ftsScope(scope)
	titlesIn := in
	if q.ProjectID != nil {
		// A title names its project (migration 00034): one name in place
		// of the project's chats.
		titlesIn = " AND scope : " + projectToken(*q.ProjectID)
	}
	match, reasoning, titles := ftsIn("content", q.Terms)+in, ftsIn("reasoning", q.Terms)+in, ftsIn("title", q.Terms)+titlesIn
	filter, fargs := searchFilters(userID, q)
	keyset, kargs := searchKeyset(q.Before)
	sql := `SELECT * FROM (
		SELECT m.id AS id, 0 AS kind, m.exchange_id AS exchange_id, m.seq AS seq, m.role AS role, m.created_at AS at,
			bm25(messages_fts, 1, 0) AS rank, e.title AS title, e.scope AS scope, e.page_id AS page_id
		FROM messages_fts CROSS JOIN messages m ON m.id = messages_fts.rowid CROSS JOIN exchanges e NOT INDEXED ON e.id = m.exchange_id
		WHERE messages_fts MATCH ? AND ` + filter + `
		UNION ALL
		SELECT e.id, 1, e.id, NULL, 'title', e.updated_at, bm25(exchanges_fts, 1, 0), e.title, e.scope, e.page_id
		FROM exchanges_fts CROSS JOIN exchanges e NOT INDEXED ON e.id = exchanges_fts.rowid
		WHERE exchanges_fts MATCH ? AND ` + filter
	args := append([]any{match}, fargs...)
	args = append(append(args, titles), fargs...)
	if q.Reasoning {
		// A reply whose text matches is found by its text already.
		sql += `
		UNION ALL
		SELECT m.id, 2, m.exchange_id, m.seq, m.role, m.created_at, bm25(messages_reasoning_fts, 1, 0), e.title, e.scope, e.page_id
		FROM messages_reasoning_fts CROSS JOIN messages m ON m.id = messages_reasoning_fts.rowid CROSS JOIN exchanges e NOT INDEXED ON e.id = m.exchange_id
		WHERE messages_reasoning_fts MATCH ? AND ` + filter + `
			AND m.id NOT IN (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?)`
		args = append(append(append(args, reasoning), fargs...), match)
	}
	sql += `
	) WHERE ` + keyset + ` ORDER BY rank, at DESC, kind, id DESC LIMIT ?+0`
	args = append(append(args, kargs...), q.Limit)
	return sql, args
}

// sqliteReasoningSnippetSQL is SQLiteSnippetSQL for hits on replies'
// reasoning.
func sqliteReasoningSnippetSQL(terms []SearchTerm, ids []int64) (string, []any) {
	sql, args := SQLiteSnippetSQL(terms, false, ids)
	args[0] = ftsIn("reasoning", terms)
	return strings.ReplaceAll(sql, "messages_fts", "messages_reasoning_fts"), args
}

// SQLiteSnippetSQL is the statement Search runs on SQLite for the snippets
// of a page's hits on messages (or, with titles, on exchange titles), ids
// being theirs, and its arguments (for database/sql as they are).
func SQLiteSnippetSQL(terms []SearchTerm, titles bool, ids []int64) (string, []any) {
	sql := `SELECT rowid AS id, snippet(messages_fts, 0, char(1), char(2), '…', 24) AS snippet
		FROM messages_fts WHERE messages_fts MATCH ? AND rowid IN (`
	match := ftsIn("content", terms)
	if titles {
		sql = `SELECT rowid AS id, highlight(exchanges_fts, 0, char(1), char(2)) AS snippet
		FROM exchanges_fts WHERE exchanges_fts MATCH ? AND rowid IN (`
		match = ftsIn("title", terms)
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, match)
	for i, id := range ids {
		if i > 0 {
			sql += ", "
		}
		sql += "?"
		args = append(args, id)
	}
	return sql + ")", args
}

// searchPostgres ranks with ts_rank_cd, negated so that lower is better as
// on SQLite and the cursor reads the same.
func (s *Store) searchPostgres(db *gorm.DB, userID int64, q SearchQuery) ([]searchRow, error) {
	tsq, qargs := tsQuerySQL(q.Terms)
	filter, fargs := searchFilters(userID, q)
	keyset, kargs := searchKeyset(q.Before)
	sql := `WITH query AS (SELECT ` + tsq + ` AS q)
	SELECT * FROM (
		SELECT m.id AS id, 0 AS kind, m.exchange_id AS exchange_id, m.seq AS seq, m.role AS role, m.created_at AS at,
			-ts_rank_cd(m.content_tsv, query.q)::float8 AS rank, e.title AS title, e.scope AS scope, e.page_id AS page_id
		FROM query, messages m JOIN exchanges e ON e.id = m.exchange_id
		WHERE m.content_tsv @@ query.q AND ` + filter + `
		UNION ALL
		SELECT e.id, 1, e.id, NULL, 'title', e.updated_at, -ts_rank_cd(e.title_tsv, query.q)::float8, e.title, e.scope, e.page_id
		FROM query, exchanges e
		WHERE e.title_tsv @@ query.q AND ` + filter
	args := append(append(qargs, fargs...), fargs...)
	if q.Reasoning {
		// The index's expression and predicate (migration 00030), word for
		// word; a reply whose text matches is found by its text already.
		sql += `
		UNION ALL
		SELECT m.id, 2, m.exchange_id, m.seq, m.role, m.created_at,
			-ts_rank_cd(` + pgReasoningTSV + `, query.q)::float8, e.title, e.scope, e.page_id
		FROM query, messages m JOIN exchanges e ON e.id = m.exchange_id
		WHERE ` + pgReasoningTSV + ` @@ query.q AND ` + pgReasoningRows + `
			AND NOT COALESCE(m.content_tsv @@ query.q, FALSE) AND ` + filter
		args = append(args, fargs...)
	}
	sql += `
	) hits WHERE ` + keyset + ` ORDER BY rank, at DESC, kind, id DESC LIMIT ?` // bound: PostgreSQL does not prepare again
	args = append(append(args, kargs...), q.Limit)
	var rows []searchRow
	return rows, db.Raw(sql, args...).Scan(&rows).Error
}

// pgReasoningTSV and pgReasoningRows are the expression and the predicate
// of PostgreSQL's index of replies' reasoning (migration 00030).
const (
	pgReasoningTSV  = `to_tsvector('palaver'::regconfig, (m.agent_response::jsonb) ->> 'reasoning')`
	pgReasoningRows = `m.copy_of IS NULL AND m.role = 'assistant' AND strpos(m.agent_response, '"reasoning":') > 0` +
		` AND strpos(m.agent_response, E'\\u0000') = 0`
)

// tsQuerySQL is the SQL expression of the tsquery for terms, each term a
// bound parameter (tsQueryParts), all of them required.
func tsQuerySQL(terms []SearchTerm) (string, []any) {
	parts := tsQueryParts(terms)
	exprs := make([]string, len(parts))
	args := make([]any, len(parts))
	for i, p := range parts {
		if p.prefix {
			exprs[i] = "to_tsquery('palaver', ?)"
		} else {
			exprs[i] = "phraseto_tsquery('palaver', ?)"
		}
		args[i] = p.text
	}
	return "(" + strings.Join(exprs, " && ") + ")", args
}

// searchKey names a hit: a message's id or an exchange's (for its title).
type searchKey struct {
	kind int
	id   int64
}

// snippets makes the page's snippets, for its hits alone: the engines'
// snippet functions read and tokenize each text again, which costs too
// much to run over every match before the page is cut.
func (s *Store) snippets(db *gorm.DB, terms []SearchTerm, rows []searchRow) (map[searchKey]string, error) {
	var msgIDs, exIDs, reasonIDs []int64
	for _, r := range rows {
		switch r.Kind {
		case searchKindMessage:
			msgIDs = append(msgIDs, r.ID)
		case searchKindReasoning:
			reasonIDs = append(reasonIDs, r.ID)
		default:
			exIDs = append(exIDs, r.ID)
		}
	}
	type snip struct {
		ID      int64
		Snippet string
	}
	out := map[searchKey]string{}
	read := func(kind int, ids []int64, postgres string) error {
		if len(ids) == 0 {
			return nil
		}
		var got []snip
		var err error
		if s.dialect == "postgres" {
			tsq, args := tsQuerySQL(terms)
			err = db.Raw(strings.Replace(postgres, "QUERY", tsq, 1), append(args, ids)...).Scan(&got).Error
		} else {
			sql, args := SQLiteSnippetSQL(terms, kind == searchKindTitle, ids)
			if kind == searchKindReasoning {
				sql, args = sqliteReasoningSnippetSQL(terms, ids)
			}
			err = db.Raw(sql, args...).Scan(&got).Error
		}
		for _, g := range got {
			out[searchKey{kind, g.ID}] = g.Snippet
		}
		return err
	}
	const headline = `'StartSel=` + markOpen + `, StopSel=` + markClose + `, MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "'`
	if err := read(searchKindMessage, msgIDs,
		`SELECT m.id, ts_headline('palaver', m.content, QUERY, `+headline+`) AS snippet
			FROM messages m WHERE m.id IN ?`); err != nil {
		return nil, err
	}
	if err := read(searchKindReasoning, reasonIDs,
		`SELECT m.id, ts_headline('palaver', (m.agent_response::jsonb) ->> 'reasoning', QUERY, `+headline+`) AS snippet
			FROM messages m WHERE m.id IN ?`); err != nil {
		return nil, err
	}
	err := read(searchKindTitle, exIDs,
		`SELECT e.id, ts_headline('palaver', e.title, QUERY, 'StartSel=`+markOpen+`, StopSel=`+markClose+`, HighlightAll=true') AS snippet
			FROM exchanges e WHERE e.id IN ?`)
	return out, err
}

// searchSnippet turns an engine's snippet, its matches between markOpen and
// markClose, into HTML: the text escaped, each match in <mark>, the marks
// balanced whatever the text held.
func searchSnippet(raw string) string {
	var b strings.Builder
	open := false
	for {
		i := strings.IndexAny(raw, markOpen+markClose)
		if i < 0 {
			break
		}
		b.WriteString(html.EscapeString(raw[:i]))
		switch {
		case raw[i] == markOpen[0] && !open:
			b.WriteString("<mark>")
			open = true
		case raw[i] == markClose[0] && open:
			b.WriteString("</mark>")
			open = false
		}
		raw = raw[i+1:]
	}
	b.WriteString(html.EscapeString(raw))
	if open {
		b.WriteString("</mark>")
	}
	return b.String()
}

// searchCopyDepth bounds the walk down a family's forks when copies are
// counted: no data can make it loop.
const searchCopyDepth = 1000

// CopiedIn counts, for each of the user's messages ids (search hits), the
// exchanges that hold a copy of it: the forks made after it, whose copied
// prefix shows it too (copies are not indexed: a shared entry is one hit,
// at its original). Copies live in forks that descend from the original's
// exchange, so only those are read.
func (s *Store) CopiedIn(ctx context.Context, userID int64, messageIDs []int64) (map[int64]int, error) {
	out := map[int64]int{}
	if len(messageIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		ID int64
		N  int
	}
	err := s.db.WithContext(ctx).Raw(`WITH RECURSIVE down(id, depth) AS (
			SELECT DISTINCT e.id, 0 FROM exchanges e JOIN messages o ON o.exchange_id = e.id
			WHERE o.id IN ? AND e.user_id = ?
			UNION
			SELECT e.id, down.depth + 1 FROM down `+s.orderedJoin()+` exchanges e ON e.forked_from_id = down.id WHERE down.depth < ?
		) SELECT m.copy_of AS id, COUNT(DISTINCT m.exchange_id) AS n FROM messages m
		WHERE m.exchange_id IN (SELECT id FROM down) AND m.copy_of IN ? GROUP BY m.copy_of`,
		messageIDs, userID, searchCopyDepth, messageIDs).Scan(&rows).Error
	if err != nil {
		return nil, wrap("search: copies", err)
	}
	for _, r := range rows {
		out[r.ID] = r.N
	}
	return out, nil
}
