package models

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestSearchScopedToAProjectLeadsWithTheMatch: the search's statement
// reads the full-text match first, also scoped to a project. Led by the
// project's chats (its index names project_id), SQLite ran the whole
// MATCH once per chat of the project. Each hit's chat is then read by its
// id: read through exchanges_project, it cost a walk of the project's
// chats a hit.
func TestSearchScopedToAProjectLeadsWithTheMatch(t *testing.T) {
	ctx := context.Background()
	s := newSQLite(t, Options{})
	u := mustUser(t, s, "plan")
	if err := s.db.Exec(`INSERT INTO projects (uid, user_id, name, created_at, updated_at) VALUES ('p-1', ?, 'P', ?, ?)`, u.ID, now(), now()).Error; err != nil {
		t.Fatal(err)
	}
	var pid int64
	if err := s.db.Raw(`SELECT id FROM projects WHERE user_id = ?`, u.ID).Row().Scan(&pid); err != nil {
		t.Fatal(err)
	}
	// A history big enough for the planner to weigh (the bench's shape:
	// a tenth of the chats in projects, ten to a project).
	conn := planConn(t, s,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
		 INSERT INTO exchanges (uid, user_id, scope, title, agent_type, turn_count, created_at, updated_at)
		 SELECT 'x-' || i, `+fmt.Sprint(u.ID)+`, 'general', 'chat ' || i, 'router', 1, datetime('now'), datetime('now') FROM n`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
		 INSERT INTO projects (uid, user_id, name, created_at, updated_at)
		 SELECT 'p-x-' || i, `+fmt.Sprint(u.ID)+`, 'P ' || i, datetime('now'), datetime('now') FROM n`,
		`INSERT INTO messages (uid, exchange_id, seq, role, content, created_at)
		 SELECT 'm-' || id, id, 0, 'user', 'tea and talk ' || id, datetime('now') FROM exchanges`,
		// Analysed before chats moved into projects, as in the bench: the
		// statistics have exchanges_project empty.
		`ANALYZE`,
		`UPDATE exchanges SET project_id = (SELECT MIN(id) FROM projects) + (id / 10) % 30 WHERE id % 10 = 0`)
	q := SearchQuery{Terms: ParseSearch("tea"), Limit: 20, ProjectID: &pid}
	// Led by the match also when the project's chats are too many to be
	// named to the index (SearchIndexScope).
	stmt, args := SQLiteSearchSQL(u.ID, q, IndexScope{})
	steps := queryPlan(t, conn, stmt, args...)
	// In each half of the union, the first table read is the match's.
	var firstReads []string
	for i, step := range steps {
		if strings.HasPrefix(step, "SCAN ") || strings.HasPrefix(step, "SEARCH ") {
			if i == 0 || !(strings.HasPrefix(steps[i-1], "SCAN ") || strings.HasPrefix(steps[i-1], "SEARCH ")) {
				firstReads = append(firstReads, step)
			}
		}
	}
	if len(firstReads) < 2 || !strings.Contains(firstReads[0], "messages_fts") || !strings.Contains(firstReads[1], "exchanges_fts") {
		t.Fatalf("a project's search does not lead with the match:\n%s", strings.Join(steps, "\n"))
	}
	for _, step := range steps {
		if strings.HasPrefix(step, "SEARCH e ") && step != "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)" {
			t.Fatalf("a project's search reads its hits' chats by an index:\n%s", strings.Join(steps, "\n"))
		}
	}
	// And it still finds the project's messages only.
	in := mustExchangeIn(t, s, u.ID, &pid, "tea in the project")
	out := mustExchangeIn(t, s, u.ID, nil, "tea elsewhere")
	hits, err := s.Search(ctx, u.ID, q)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.ExchangeID == out {
			t.Fatalf("a project's search found a chat outside it: %+v", hits)
		}
	}
	if len(hits) == 0 || hits[0].ExchangeID != in {
		t.Fatalf("a project's search = %+v; want the chat %d", hits, in)
	}
}

// mustExchangeIn starts a chat of the user in the project (nil: none)
// with the message query, and returns its id.
func mustExchangeIn(t *testing.T, s *Store, userID int64, projectID *int64, query string) int64 {
	t.Helper()
	ex, _ := mustStart(t, s, TurnStart{UserID: userID, Query: query, ProjectID: projectID, Owner: "plan"})
	if err := s.CatchUpSearch(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ex.ID
}

// TestSearchChatsReadTheirIndex: the chats a search names to the index
// are counted and listed through the person's (or the project's) index,
// also with statistics taken while one person held every chat and no chat
// was in a project: SQLite then scanned the table for another person's
// few.
func TestSearchChatsReadTheirIndex(t *testing.T) {
	s := newSQLite(t, Options{})
	big, small := mustUser(t, s, "big"), mustUser(t, s, "small")
	conn := planConn(t, s,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
		 INSERT INTO exchanges (uid, user_id, scope, title, agent_type, turn_count, created_at, updated_at)
		 SELECT 'x-' || i, `+fmt.Sprint(big.ID)+`, 'general', 'chat ' || i, 'router', 1, datetime('now'), datetime('now') FROM n`,
		`ANALYZE`,
		`INSERT INTO projects (uid, user_id, name, created_at, updated_at) VALUES ('p-1', `+fmt.Sprint(small.ID)+`, 'P', datetime('now'), datetime('now'))`,
		`INSERT INTO exchanges (uid, user_id, scope, title, agent_type, turn_count, created_at, updated_at, project_id)
		 SELECT 'y-' || id, `+fmt.Sprint(small.ID)+`, 'general', 'mine', 'router', 1, datetime('now'), datetime('now'), (SELECT MAX(id) FROM projects)
		 FROM exchanges WHERE id % 100 = 0`)
	var pid int64
	if err := conn.QueryRowContext(context.Background(), `SELECT MAX(id) FROM projects`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	for _, q := range []SearchQuery{{Terms: ParseSearch("mine")}, {Terms: ParseSearch("mine"), ProjectID: &pid}} {
		index, _, _ := searchChatsIndex(small.ID, q)
		for _, stmt := range []func(int64, SearchQuery) (string, []any){searchChatsCountSQL, searchChatsSQL} {
			sqlText, args := stmt(small.ID, q)
			steps := queryPlan(t, conn, sqlText, args...)
			if len(steps) == 0 || !strings.Contains(strings.Join(steps, "\n"), "USING INDEX "+index+" (") &&
				!strings.Contains(strings.Join(steps, "\n"), "USING COVERING INDEX "+index+" (") {
				t.Fatalf("%s\nreads:\n%s", sqlText, strings.Join(steps, "\n"))
			}
		}
	}
	chats, err := s.searchChats(context.Background(), small.ID, SearchQuery{Terms: ParseSearch("mine"), ProjectID: &pid})
	if err != nil || len(chats) != 30 {
		t.Fatalf("the project's chats: %d, %v; want 30", len(chats), err)
	}
}
