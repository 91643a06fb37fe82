package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"

	"palaver/models"
)

// benchProjects is how many projects the history's person gets.
const benchProjects = 1000

// projectsFigures: the history page and a search scoped to a project once
// the history's person has benchProjects projects, one exchange in ten of
// theirs moved into one of them (the first hundred projects hold them).
func projectsFigures(ctx context.Context, e *env, r report) error {
	if e.histUser.id == 0 {
		return errors.New("the history figures seed the exchanges moved into projects: run them first")
	}
	pids, err := e.seedProjects(ctx, e.histUser.id)
	if err != nil {
		return err
	}
	const samples = 20 // enough for a p50; a slow scoped search must not stretch the run
	var hist []time.Duration
	for range samples {
		d, status, body, err := e.getTimed(ctx, "http://"+e.addr+"/api/chat/history?limit=50", e.histUser.apiKey)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("GET /api/chat/history: %d %.200s", status, body)
		}
		hist = append(hist, d)
	}
	r.line("history_p50_ms_projects", ms(percentile(hist, 0.5)), fmt.Sprintf("≤ 2; history_p50_ms with %d projects", benchProjects))
	// Each search through the API, then its statements by hand (as
	// search_bare_p50_ms is for the unscoped search).
	words := e.vocabulary()
	var found, bare []time.Duration
	for i := range samples {
		word, pid := words[60+i%5], pids[i%100]
		q := url.Values{"q": {word}, "project_id": {fmt.Sprint(pid)}}
		d, status, body, err := e.getTimed(ctx, "http://"+e.addr+"/api/chat/search?"+q.Encode(), e.histUser.apiKey)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("GET /api/chat/search (project): %d %.200s", status, body)
		}
		found = append(found, d)
		var page []json.RawMessage
		if err := json.Unmarshal(body, &page); err != nil {
			return err
		}
		t0 := time.Now()
		hits, err := e.bareSearch(ctx, models.SearchQuery{Terms: models.ParseSearch(word), ProjectID: &pid, Limit: 20})
		if err != nil {
			return err
		}
		bare = append(bare, time.Since(t0))
		if hits != len(page) {
			return fmt.Errorf("the API found %d hits in project %d, the bare SQL %d", len(page), pid, hits)
		}
	}
	p50, bareP50 := percentile(found, 0.5), percentile(bare, 0.5)
	r.line("search_p50_ms_project", ms(p50), "≤ 20; a search scoped to one project")
	r.anchor("search_bare_p50_ms_project", ms(bareP50), "its SQL alone")
	r.anchor("search_ratio_project", float64(p50)/float64(bareP50), "= search_p50_ms_project / search_bare_p50_ms_project")
	return nil
}

// seedProjects gives userID benchProjects projects and moves one of their
// exchanges in ten into the first hundred, and returns the projects' ids.
func (e *env) seedProjects(ctx context.Context, userID int64) ([]int64, error) {
	tx, err := e.raw.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	at := time.Now().UTC().Truncate(time.Microsecond)
	ids := make([]int64, benchProjects)
	for i := range ids {
		err := tx.QueryRowContext(ctx, e.rebind(`INSERT INTO projects (uid, user_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id`),
			uuid.Must(uuid.NewV7()).String(), userID, fmt.Sprintf("Project %04d", i), at, at).Scan(&ids[i])
		if err != nil {
			return nil, err
		}
	}
	// Exchange n of the person (by id) goes to project (n/10)%100 when n%10
	// is 0. On SQLite each moved title is indexed again with its project
	// (migration 00034), under the index's secure-delete: about 20 s for
	// these 10,000 chats of a person with 100,000.
	_, err = tx.ExecContext(ctx, e.rebind(`UPDATE exchanges SET project_id = ? + ((rn / 10) % 100)
		FROM (SELECT id AS xid, ROW_NUMBER() OVER (ORDER BY id) - 1 AS rn FROM exchanges WHERE user_id = ?) AS n
		WHERE exchanges.id = n.xid AND n.rn % 10 = 0`), ids[0], userID)
	if err != nil {
		return nil, err
	}
	return ids, tx.Commit()
}
