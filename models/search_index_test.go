package models

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// The search index follows the messages a watermark behind (00015,
// search_index.go). These tests catch it at each point: messages written
// and not indexed yet, deleted or promoted before or after their batch,
// a restart with messages waiting. After each step FTS5's integrity-check
// compares the index with what it should hold (rank 1: with its content,
// the searchable messages at or below the watermark); a 'delete' of a row
// it never held, or a row it misses, fails it.

// quietIndexer stops a SQLite store's background batches, so that only
// what the test does moves the watermark.
func quietIndexer(s *Store) { s.index.close() }

// watermark reads the index's watermark and the highest message id.
func watermark(t *testing.T, s *Store) (w, top int64) {
	t.Helper()
	w, top, err := searchWatermark(s.db)
	if err != nil {
		t.Fatal(err)
	}
	return w, top
}

// indexIntact runs FTS5's integrity-check of each full-text index against
// its content: the messages', their reasoning's and the titles'.
func indexIntact(t *testing.T, s *Store) {
	t.Helper()
	for _, index := range []string{"messages_fts", "messages_reasoning_fts", "exchanges_fts"} {
		if err := s.db.Exec("INSERT INTO " + index + " (" + index + ", rank) VALUES ('integrity-check', 1)").Error; err != nil {
			t.Fatalf("full-text index %s: %v", index, err)
		}
	}
}

// waiting says that the messages up to id are not indexed yet: the test
// is about to exercise the path it means to.
func waiting(t *testing.T, s *Store, id int64) {
	t.Helper()
	if w, _ := watermark(t, s); w >= id {
		t.Fatalf("message %d is indexed already (watermark %d)", id, w)
	}
}

// hitMessages lists the messages (not titles) a search finds.
func hitMessages(t *testing.T, s *Store, userID int64, q string) []int64 {
	t.Helper()
	var ids []int64
	for _, h := range search(t, s, userID, q) {
		if h.MessageID != nil {
			ids = append(ids, *h.MessageID)
		}
	}
	return ids
}

// TestSearchFindsWhatWasJustWritten: a message is found the moment its
// write returns, though the write did not index it; the search indexes
// what waits, and then nothing more.
func TestSearchFindsWhatWasJustWritten(t *testing.T) {
	s := newSQLite(t, Options{})
	quietIndexer(s)
	ann := mustUser(t, s, "ann")
	_, q, a := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "where do pelicans winter"}, "on warm coasts")
	waiting(t, s, q.ID)
	if n := count(t, s, "messages_fts", "messages_fts MATCH 'pelicans OR coasts'"); n != 0 {
		t.Fatalf("the index holds %d of the turn's messages before any search", n)
	}
	indexIntact(t, s)
	if got := hitMessages(t, s, ann.ID, "pelicans"); len(got) != 1 || got[0] != q.ID {
		t.Fatalf("search pelicans found %v, want the user message %d", got, q.ID)
	}
	if got := hitMessages(t, s, ann.ID, "coasts"); len(got) != 1 || got[0] != a.ID {
		t.Fatalf("search coasts found %v, want the reply %d", got, a.ID)
	}
	if w, top := watermark(t, s); w != top {
		t.Fatalf("after a search the watermark is %d, the last message %d", w, top)
	}
	indexIntact(t, s)
	// A later turn waits again, and is found again.
	_, q2, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "and the pelicans of peru"}, "the same")
	waiting(t, s, q2.ID)
	if got := hitMessages(t, s, ann.ID, "pelicans"); len(got) != 2 {
		t.Fatalf("search pelicans found %v, want both user messages", got)
	}
	indexIntact(t, s)
}

// TestSearchIndexDeletes: messages deleted before their batch never enter
// the index (and are not 'deleted' from it, which would corrupt it);
// messages deleted after it leave the index in the delete's transaction.
func TestSearchIndexDeletes(t *testing.T) {
	ctx := context.Background()
	s := newSQLite(t, Options{})
	quietIndexer(s)
	ann := mustUser(t, s, "ann")
	early, q, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "pelicans before the batch"}, "coasts")
	waiting(t, s, q.ID)
	if _, err := s.DeleteExchange(ctx, ann.ID, early.ID); err != nil {
		t.Fatal(err)
	}
	indexIntact(t, s)
	if got := hitMessages(t, s, ann.ID, "pelicans OR coasts"); len(got) != 0 {
		t.Fatalf("deleted before its batch, still found: %v", got)
	}
	indexIntact(t, s)

	late, q, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "pelicans after the batch"}, "coasts")
	if got := hitMessages(t, s, ann.ID, "pelicans"); len(got) != 1 || got[0] != q.ID {
		t.Fatalf("search found %v, want %d", got, q.ID)
	}
	if _, err := s.DeleteExchange(ctx, ann.ID, late.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "messages_fts", "messages_fts MATCH 'pelicans OR coasts'"); n != 0 {
		t.Fatalf("the delete left %d rows in the index", n)
	}
	indexIntact(t, s)
	if got := hitMessages(t, s, ann.ID, "pelicans OR coasts"); len(got) != 0 {
		t.Fatalf("deleted after its batch, still found: %v", got)
	}
}

// TestSearchIndexPromotedCopies: a fork's copies are not indexed (their
// original is); when the original is deleted, a copy is promoted and
// enters the index, whichever side of the watermark the original and the
// copy are on.
func TestSearchIndexPromotedCopies(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// Catch the index up after the original's turn, after the fork.
		afterTurn, afterFork bool
	}{
		{"both waiting", false, false},
		{"original indexed, copy waiting", true, false},
		{"both indexed", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSQLite(t, Options{})
			quietIndexer(s)
			ann := mustUser(t, s, "ann")
			root, q, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "where do pelicans winter"}, "on warm coasts")
			mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: root.ID, Query: "and then"}, "ok")
			if tc.afterTurn {
				if err := s.CatchUpSearch(ctx); err != nil {
					t.Fatal(err)
				}
			}
			fork, err := s.Fork(ctx, ann.ID, root.ID, 2)
			if err != nil {
				t.Fatal(err)
			}
			var copyID int64
			if err := s.db.Raw("SELECT id FROM messages WHERE copy_of = ?", q.ID).Scan(&copyID).Error; err != nil || copyID == 0 {
				t.Fatalf("the fork's copy of %d: %d, %v", q.ID, copyID, err)
			}
			if tc.afterFork {
				// Everything is indexed: the original once, the copy not.
				if got := hitMessages(t, s, ann.ID, "pelicans"); len(got) != 1 || got[0] != q.ID {
					t.Fatalf("before the delete search found %v, want the original %d once", got, q.ID)
				}
			} else {
				waiting(t, s, copyID)
			}
			if w, _ := watermark(t, s); tc.afterTurn != (w >= q.ID) {
				t.Fatalf("watermark %d, original %d: not the case under test", w, q.ID)
			}
			indexIntact(t, s)
			if _, err := s.DeleteExchange(ctx, ann.ID, root.ID); err != nil {
				t.Fatal(err)
			}
			indexIntact(t, s)
			var hits []SearchHit // the messages found (the fork's title matches too)
			for _, h := range search(t, s, ann.ID, "pelicans") {
				if h.MessageID != nil {
					hits = append(hits, h)
				}
			}
			if len(hits) != 1 || hits[0].MessageID == nil || *hits[0].MessageID != copyID || hits[0].ExchangeID != fork.ID {
				t.Fatalf("after the delete search found %v, want the promoted copy %d in fork %d", hitRoles(hits), copyID, fork.ID)
			}
			indexIntact(t, s)
		})
	}
}

// TestSearchIndexAfterRestart: messages a process left waiting are indexed
// by the next one at start-up, in the background, without a search.
func TestSearchIndexAfterRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "palaver.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	quietIndexer(s)
	ann := mustUser(t, s, "ann")
	_, q, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "where do pelicans winter"}, "on warm coasts")
	waiting(t, s, q.ID)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	waiting(t, s, q.ID) // nothing indexes before the store is migrated
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if w, top := watermark(t, s); w == top {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the messages left waiting were not indexed after the restart")
		}
	}
	if n := count(t, s, "messages_fts", "messages_fts MATCH 'pelicans OR coasts'"); n != 2 {
		t.Fatalf("the index holds %d of the turn's two messages", n)
	}
	indexIntact(t, s)
	if got := hitMessages(t, s, ann.ID, "pelicans"); len(got) != 1 || got[0] != q.ID {
		t.Fatalf("search found %v, want %d", got, q.ID)
	}
}

// TestSearchIndexBatchIsAtomic: a batch whose transaction is rolled back
// (a crash before its commit) leaves neither index rows nor a moved
// watermark, and the next batch does it again.
func TestSearchIndexBatchIsAtomic(t *testing.T) {
	s := newSQLite(t, Options{})
	quietIndexer(s)
	ann := mustUser(t, s, "ann")
	_, q, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "where do pelicans winter"}, "on warm coasts")
	w0, _ := watermark(t, s)
	err := s.db.Transaction(func(tx *gorm.DB) error {
		if w, _, err := indexSearch(tx, searchIndexChunk); err != nil || w < q.ID {
			t.Fatalf("the batch moved the watermark to %d (%v)", w, err)
		}
		return context.Canceled // the crash
	})
	if err == nil {
		t.Fatal("the transaction was committed")
	}
	if w, _ := watermark(t, s); w != w0 {
		t.Fatalf("watermark %d after the rollback, want %d", w, w0)
	}
	if n := count(t, s, "messages_fts", "messages_fts MATCH 'pelicans OR coasts'"); n != 0 {
		t.Fatalf("the rolled-back batch left %d rows in the index", n)
	}
	indexIntact(t, s)
	if got := hitMessages(t, s, ann.ID, "pelicans"); len(got) != 1 || got[0] != q.ID {
		t.Fatalf("search found %v, want %d", got, q.ID)
	}
	indexIntact(t, s)
}

// TestSearchIndexReusedIDs: SQLite gives a new message the id after the
// highest, so when the newest messages are deleted after their batch, a
// new one gets an id at or below the watermark; it is indexed at once
// (the batches only look above the watermark).
func TestSearchIndexReusedIDs(t *testing.T) {
	ctx := context.Background()
	s := newSQLite(t, Options{})
	quietIndexer(s)
	ann := mustUser(t, s, "ann")
	mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "an older chat"}, "kept")
	last, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "a newer chat"}, "deleted")
	if err := s.CatchUpSearch(ctx); err != nil {
		t.Fatal(err)
	}
	w, _ := watermark(t, s)
	if _, err := s.DeleteExchange(ctx, ann.ID, last.ID); err != nil {
		t.Fatal(err)
	}
	_, q, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "where do pelicans winter"}, "on warm coasts")
	if q.ID > w {
		t.Skipf("SQLite gave id %d above the watermark %d: no reused id to test", q.ID, w)
	}
	if n := count(t, s, "messages_fts", "messages_fts MATCH 'pelicans'"); n != 1 {
		t.Fatalf("a message with a reused id %d (watermark %d) is not indexed at once", q.ID, w)
	}
	indexIntact(t, s)
	if got := hitMessages(t, s, ann.ID, "pelicans"); len(got) != 1 || got[0] != q.ID {
		t.Fatalf("search found %v, want %d", got, q.ID)
	}
	indexIntact(t, s)
}

// TestSearchIndexUpdates: a message's text or role changed in place is
// indexed as it is now, on either side of the watermark.
func TestSearchIndexUpdates(t *testing.T) {
	ctx := context.Background()
	s := newSQLite(t, Options{})
	quietIndexer(s)
	ann := mustUser(t, s, "ann")
	_, q1, a1 := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "where do pelicans winter"}, "on warm coasts")
	if err := s.CatchUpSearch(ctx); err != nil {
		t.Fatal(err)
	}
	_, q2, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "where do herons winter"}, "inland")
	waiting(t, s, q2.ID)
	for _, u := range []struct {
		sql  string
		args []any
	}{
		{"UPDATE messages SET content = 'where do penguins winter' WHERE id = ?", []any{q1.ID}}, // indexed
		{"UPDATE messages SET role = 'error', seq = NULL WHERE id = ?", []any{a1.ID}},           // indexed, leaves
		{"UPDATE messages SET content = 'where do storks winter' WHERE id = ?", []any{q2.ID}},   // waiting
	} {
		if err := s.db.Exec(u.sql, u.args...).Error; err != nil {
			t.Fatal(err)
		}
		indexIntact(t, s)
	}
	for word, want := range map[string][]int64{"pelicans": nil, "coasts": nil, "herons": nil, "penguins": {q1.ID}, "storks": {q2.ID}} {
		if got := hitMessages(t, s, ann.ID, word); len(got) != len(want) || (len(want) == 1 && got[0] != want[0]) {
			t.Errorf("search %s found %v, want %v", word, got, want)
		}
	}
	indexIntact(t, s)
}

// TestSearchIndexInTheBackground: without a search, committed turns are
// indexed a moment after the writes pause.
func TestSearchIndexInTheBackground(t *testing.T) {
	s := newSQLite(t, Options{})
	ann := mustUser(t, s, "ann")
	_, q, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "where do pelicans winter"}, "on warm coasts")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if w, _ := watermark(t, s); w >= q.ID+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the turn was not indexed in the background")
		}
	}
	if n := count(t, s, "messages_fts", "messages_fts MATCH 'pelicans OR coasts'"); n != 2 {
		t.Fatalf("the index holds %d of the turn's two messages", n)
	}
	indexIntact(t, s)
}

// TestSearchIndexUnderConcurrentWrites: turns, forks, deletes (which
// promote copies) and searches at once, with background batches after
// every few writes, leave an index that passes the integrity-check and
// finds every searchable message that is left, once.
func TestSearchIndexUnderConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	s := newSQLite(t, Options{})
	s.index.mu.Lock()
	s.index.quiet, s.index.batch = 5*time.Millisecond, 20
	s.index.mu.Unlock()
	ann := mustUser(t, s, "ann")
	const writers, rounds = 4, 12
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			errs <- func() error {
				var exID, turns int64
				for i := range rounds {
					ts := TurnStart{UserID: ann.ID, ExchangeID: exID, Scope: ScopeGeneral, AgentType: "router", Owner: "o",
						Query: fmt.Sprintf("pelican writer%d round%d", w, i)}
					ex, _, err := s.StartTurn(ctx, ts)
					if err != nil {
						return err
					}
					if err := s.FinishTurn(ctx, ex.ID, "o", assistant(fmt.Sprintf("heron writer%d round%d", w, i))); err != nil {
						return err
					}
					exID, turns = ex.ID, turns+1
					switch i % 4 {
					case 1: // a fork of the chat so far, whose copies wait for promotion
						if _, err := s.Fork(ctx, ann.ID, ex.ID, 2*turns-1); err != nil {
							return err
						}
					case 2: // a search (half the writers), which catches the index up
						if w%2 == 1 {
							break
						}
						if _, err := s.Search(ctx, ann.ID, SearchQuery{Terms: ParseSearch("pelican"), Limit: 5}); err != nil {
							return err
						}
					case 3: // the chat deleted (its forks' copies promoted), a new one begun
						if _, err := s.DeleteExchange(ctx, ann.ID, ex.ID); err != nil {
							return err
						}
						exID, turns = 0, 0
					}
				}
				return nil
			}()
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	indexIntact(t, s)
	// Every searchable message left, found once: by its own words, which
	// only it and its copies (not indexed) hold.
	var want []struct {
		ID      int64
		Content string
	}
	if err := s.db.Raw(`SELECT id, content FROM messages WHERE copy_of IS NULL AND role IN ('user', 'assistant')`).Scan(&want).Error; err != nil {
		t.Fatal(err)
	}
	// Each writer's three forks keep three entries each, promoted when
	// their chat was deleted.
	if len(want) != writers*3*3 {
		t.Fatalf("%d searchable messages are left, want %d", len(want), writers*3*3)
	}
	for _, m := range want {
		if got := hitMessages(t, s, ann.ID, `"`+m.Content+`"`); len(got) != 1 || got[0] != m.ID {
			t.Errorf("search %q found %v, want %d", m.Content, got, m.ID)
		}
	}
	indexIntact(t, s)
}

// TestSearchIndexFollowsProjects: each indexed message and title carries
// its chat (migration 00032), and a search in a project names the
// project's chats to the index, which lists their rows alone. A chat that
// moves between projects, leaves one (also when the project is deleted
// under it) or is deleted is found where it is, whichever side of the
// watermark its messages are on, and the index stays equal to its content
// throughout.
func TestSearchIndexFollowsProjects(t *testing.T) {
	ctx := context.Background()
	s := newSQLite(t, Options{})
	quietIndexer(s)
	mustUser(t, s, "root") // the first account is the administrator, who stays
	ann := mustUser(t, s, "ann")
	project := func(name string) *int64 {
		p, err := s.CreateProject(ctx, ann.ID, ProjectInput{Name: &name})
		if err != nil {
			t.Fatal(err)
		}
		return &p.ID
	}
	birds, seas := project("Birds"), project("Seas")
	in := func(p *int64) func(*SearchQuery) { return func(q *SearchQuery) { q.ProjectID = p } }
	// found lists what a search in p finds, and checks that the index
	// itself listed no other rows: the statement's MATCH, run alone, finds
	// exactly the messages of p's chats holding the word.
	found := func(word string, p *int64) []string {
		t.Helper()
		hits := hitRoles(search(t, s, ann.ID, word, in(p)))
		q := SearchQuery{Terms: ParseSearch(word), ProjectID: p, Limit: 50}
		scope, err := s.SearchIndexScope(ctx, ann.ID, q)
		if err != nil || scope.Chats == nil {
			t.Fatalf("the chats of project %d: %v, %v", *p, scope, err)
		}
		var listed int64
		if len(scope.Chats) > 0 {
			_, args := SQLiteSearchSQL(ann.ID, q, scope)
			if err := s.db.Raw("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?", args[0]).Scan(&listed).Error; err != nil {
				t.Fatal(err)
			}
		}
		var messages int64
		for _, h := range hits {
			if !strings.HasPrefix(h, RoleTitle+":") {
				messages++
			}
		}
		if listed != messages {
			t.Fatalf("search %q in project %d: the index listed %d rows for %d hits on messages", word, *p, listed, messages)
		}
		// The titles' index is asked for the project itself (migration
		// 00034), and lists the project's titles holding the word alone.
		_, args := SQLiteSearchSQL(ann.ID, q, scope)
		var titles string
		for _, a := range args {
			if m, ok := a.(string); ok && strings.HasPrefix(m, "title : ") {
				titles = m
			}
		}
		if !strings.HasSuffix(titles, " AND scope : "+projectToken(*p)) {
			t.Fatalf("the titles' match %q does not name project %d", titles, *p)
		}
		if err := s.db.Raw("SELECT COUNT(*) FROM exchanges_fts WHERE exchanges_fts MATCH ?", titles).Scan(&listed).Error; err != nil {
			t.Fatal(err)
		}
		if n := int64(len(hits)) - messages; listed != n {
			t.Fatalf("search %q in project %d: the titles' index listed %d rows for %d hits on titles", word, *p, listed, n)
		}
		return hits
	}
	inBirds, q1, a1 := mustTurn(t, s, TurnStart{UserID: ann.ID, ProjectID: birds, Query: "pelicans on the pier"}, "pelicans fish")
	_, elsewhere, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "pelicans without a project"}, "fine")
	want := []string{"assistant:" + fmt.Sprint(a1.ID), RoleTitle + ":" + fmt.Sprint(inBirds.ID), "user:" + fmt.Sprint(q1.ID)}
	if got := found("pelicans", birds); !slices.Equal(got, want) {
		t.Fatalf("in Birds: %v, want %v", got, want)
	}
	// One more message, left waiting for its batch when the chat moves.
	ex2, q2, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: inBirds.ID, Query: "pelicans at dusk"}, "ok")
	if ex2.ID != inBirds.ID {
		t.Fatalf("the turn went to exchange %d, not %d", ex2.ID, inBirds.ID)
	}
	waiting(t, s, q2.ID)
	if _, err := s.MoveToProject(ctx, ann.ID, inBirds.ID, seas); err != nil {
		t.Fatal(err)
	}
	indexIntact(t, s)
	if got := found("pelicans", birds); len(got) != 0 {
		t.Fatalf("moved out of Birds, still found there: %v", got)
	}
	if got := found("pelicans", seas); len(got) != 4 || !slices.Contains(got, "user:"+fmt.Sprint(q2.ID)) {
		t.Fatalf("moved into Seas, found there: %v", got)
	}
	if got := hitMessages(t, s, ann.ID, "pelicans"); len(got) != 4 || !slices.Contains(got, elsewhere.ID) {
		t.Fatalf("search everywhere found %v", got)
	}
	// The title moves with the chat.
	title := RoleTitle + ":" + fmt.Sprint(inBirds.ID)
	if got := found("pier", seas); !slices.Contains(got, title) {
		t.Fatalf("the title is not found in Seas: %v", got)
	}
	if got := found("pier", birds); len(got) != 0 {
		t.Fatalf("the title is still found in Birds: %v", got)
	}

	// Out of a project, and a project deleted under its chats by the
	// database's ON DELETE SET NULL.
	if _, err := s.MoveToProject(ctx, ann.ID, inBirds.ID, nil); err != nil {
		t.Fatal(err)
	}
	indexIntact(t, s)
	if got := found("pelicans", seas); len(got) != 0 {
		t.Fatalf("out of Seas, still found there: %v", got)
	}
	if _, err := s.MoveToProject(ctx, ann.ID, inBirds.ID, birds); err != nil {
		t.Fatal(err)
	}
	if err := s.db.Exec("DELETE FROM projects WHERE id = ?", *birds).Error; err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "exchanges", "id = ? AND project_id IS NULL", inBirds.ID); n != 1 {
		t.Fatal("the chat did not leave the deleted project")
	}
	indexIntact(t, s)
	if got := found("pelicans", birds); len(got) != 0 {
		t.Fatalf("the deleted project still finds: %v", got)
	}

	// A chat in a project deleted with messages indexed and waiting, then
	// an account with chats in projects.
	sea, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, ProjectID: seas, Query: "waves at the pier"}, "waves")
	found("waves", seas)
	_, q3, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, ExchangeID: sea.ID, Query: "more waves"}, "ok")
	waiting(t, s, q3.ID)
	if _, err := s.DeleteExchange(ctx, ann.ID, sea.ID); err != nil {
		t.Fatal(err)
	}
	indexIntact(t, s)
	if n := count(t, s, "messages_fts", "messages_fts MATCH 'waves'"); n != 0 {
		t.Fatalf("the deleted chat left %d rows in the index", n)
	}
	gulls, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, ProjectID: seas, Query: "gulls over the pier"}, "gulls")
	found("gulls", seas)
	// The project deleted by the store, its chats moved out; then an
	// account with a chat in a project.
	if moved, _, err := s.DeleteProject(ctx, ann.ID, *seas, false); err != nil || moved != 1 {
		t.Fatalf("delete Seas: moved %d, %v", moved, err)
	}
	indexIntact(t, s)
	if got := hitRoles(search(t, s, ann.ID, "gulls")); !slices.Contains(got, RoleTitle+":"+fmt.Sprint(gulls.ID)) {
		t.Fatalf("the moved-out chat's title is not found: %v", got)
	}
	if _, err := s.MoveToProject(ctx, ann.ID, gulls.ID, project("Gulls")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteOwnAccount(ctx, ann.ID); err != nil {
		t.Fatal(err)
	}
	indexIntact(t, s)
	if n := count(t, s, "messages_fts", "messages_fts MATCH 'pelicans OR gulls OR pier'"); n != 0 {
		t.Fatalf("the deleted account left %d rows in the index", n)
	}
}

// TestSearchChatsBounds: a search names its chats to the index while they
// are few (searchChats), and finds the same whether it names them or not.
func TestSearchChatsBounds(t *testing.T) {
	ctx := context.Background()
	s := newSQLite(t, Options{})
	ann := mustUser(t, s, "ann")
	q := SearchQuery{Terms: ParseSearch("pelicans"), Limit: 50}
	if chats, err := s.searchChats(ctx, ann.ID, q); err != nil || chats == nil || len(chats) != 0 {
		t.Fatalf("no chats: %v, %v; want an empty list", chats, err)
	}
	ex, _, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "pelicans"}, "yes")
	if chats, err := s.searchChats(ctx, ann.ID, q); err != nil || !slices.Equal(chats, []int64{ex.ID}) {
		t.Fatalf("one chat: %v, %v", chats, err)
	}
	// Too many turns between them, then too many chats.
	if err := s.db.Exec("UPDATE exchanges SET turn_count = ? WHERE id = ?", searchChatsTurns+1, ex.ID).Error; err != nil {
		t.Fatal(err)
	}
	if chats, err := s.searchChats(ctx, ann.ID, q); err != nil || chats != nil {
		t.Fatalf("%d turns: %v, %v; want nil", searchChatsTurns+1, chats, err)
	}
	if err := s.db.Exec("UPDATE exchanges SET turn_count = 1 WHERE id = ?", ex.ID).Error; err != nil {
		t.Fatal(err)
	}
	err := s.db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
		INSERT INTO exchanges (uid, user_id, scope, title, agent_type, turn_count, created_at, updated_at)
		SELECT 'x-' || i, ?, 'general', 'chat ' || i, 'router', 0, datetime('now'), datetime('now') FROM n`,
		searchChatsMax, ann.ID).Error
	if err != nil {
		t.Fatal(err)
	}
	if chats, err := s.searchChats(ctx, ann.ID, q); err != nil || chats != nil {
		t.Fatalf("%d chats: %d named, %v; want nil", searchChatsMax+1, len(chats), err)
	}
	if got := hitRoles(search(t, s, ann.ID, "pelicans")); len(got) != 2 {
		t.Fatalf("without the chats named, found %v", got)
	}
}

// TestSearchNamesAPersonWithFewRows: past searchChatsMax chats, a search
// names its person to the index while their indexed rows are at most
// searchPersonRows (the index then lists their matches alone, not another
// person's), and nothing past that; it finds the same either way.
func TestSearchNamesAPersonWithFewRows(t *testing.T) {
	ctx := context.Background()
	s := newSQLite(t, Options{})
	ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
	mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "zebras at the waterhole"}, "zebras drink")
	mustTurn(t, s, TurnStart{UserID: bob.ID, Query: "zebras of bob"}, "zebras")
	chats := func(userID int64, n int, messages int) {
		t.Helper()
		err := s.db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
			INSERT INTO exchanges (uid, user_id, scope, title, agent_type, turn_count, created_at, updated_at)
			SELECT 'x-' || ? || '-' || i, ?, 'general', 'chat ' || i, 'router', 0, datetime('now'), datetime('now') FROM n`,
			n, userID, userID).Error
		if err == nil && messages > 0 {
			err = s.db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
				INSERT INTO messages (uid, exchange_id, seq, role, content, created_at)
				SELECT 'm-' || ? || '-' || i, (SELECT MAX(id) FROM exchanges WHERE user_id = ?), i, 'user', 'filler ' || i, datetime('now') FROM n`,
				messages, userID, userID).Error
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	chats(ann.ID, searchChatsMax, 0)
	if err := s.CatchUpSearch(ctx); err != nil {
		t.Fatal(err)
	}
	q := SearchQuery{Terms: ParseSearch("zeb*"), Limit: 50}
	scope, err := s.SearchIndexScope(ctx, ann.ID, q)
	if err != nil || scope.Chats != nil || scope.Person != ann.ID {
		t.Fatalf("ann with %d chats and few rows: %+v, %v; want her person named", searchChatsMax+1, scope, err)
	}
	_, args := SQLiteSearchSQL(ann.ID, q, scope)
	if n := count(t, s, "messages_fts", "messages_fts MATCH ?", args[0]); n != 2 {
		t.Fatalf("the index listed %d rows for ann's two messages with zebras", n)
	}
	if got := hitMessages(t, s, ann.ID, "zeb*"); len(got) != 2 {
		t.Fatalf("ann's search found %v", got)
	}
	// Bob, past both bounds, names nothing and finds the same.
	chats(bob.ID, searchChatsMax, searchPersonRows)
	if err := s.CatchUpSearch(ctx); err != nil {
		t.Fatal(err)
	}
	if scope, err := s.SearchIndexScope(ctx, bob.ID, q); err != nil || scope.Chats != nil || scope.Person != 0 {
		t.Fatalf("bob with %d rows: %+v, %v; want nothing named", searchPersonRows+2, scope, err)
	}
	if got := hitMessages(t, s, bob.ID, "zeb*"); len(got) != 2 {
		t.Fatalf("bob's search found %v", got)
	}
}

// TestSearchPool: on SQLite a search reads through a pool of its own
// (searchPool), read-only and with a page cache of 32 MiB, while the
// main pool keeps SQLite's default; a search through it finds what was
// just written.
func TestSearchPool(t *testing.T) {
	s := newSQLite(t, Options{})
	var main, searches int
	if err := s.db.Raw("PRAGMA cache_size").Scan(&main).Error; err != nil {
		t.Fatal(err)
	}
	if err := s.searches.Raw("PRAGMA cache_size").Scan(&searches).Error; err != nil {
		t.Fatal(err)
	}
	if searches != -32768 || main != -2000 {
		t.Fatalf("cache_size: searches %d, main %d; want -32768 and SQLite's -2000", searches, main)
	}
	if err := s.searches.Exec("UPDATE users SET id = id").Error; err == nil || !strings.Contains(err.Error(), "readonly") {
		t.Fatalf("a write through the search pool: %v, want it refused", err)
	}
	// Written, left waiting for its batch: the search catches it up through
	// the main pool, then finds it through its own.
	quietIndexer(s)
	ann := mustUser(t, s, "ann")
	ex, q, _ := mustTurn(t, s, TurnStart{UserID: ann.ID, Query: "pelicans"}, "yes")
	waiting(t, s, q.ID)
	if got := hitRoles(search(t, s, ann.ID, "pelicans")); !slices.Contains(got, "user:"+fmt.Sprint(q.ID)) {
		t.Fatalf("search in chat %d found %v", ex.ID, got)
	}
	pool, err := s.SearchSQL()
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	if _, err := s.Search(context.Background(), ann.ID, SearchQuery{Terms: ParseSearch("pelicans"), Limit: 10}); err == nil {
		t.Fatal("the search pool closed, a search still answered: it reads elsewhere")
	}
}
