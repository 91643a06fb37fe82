package models

import (
	"context"
	"sync"
	"time"

	"gorm.io/gorm"
)

// Search indexing on SQLite, off the turn's commit (migration 00015). A
// message is not indexed by the transaction that writes it: the index is a
// watermark behind, and catches up in batches (indexSearch), each batch
// indexing the messages above the watermark and moving it in one
// transaction. A batch runs
//   - before every search (CatchUpSearch): a message is found as soon as
//     the write that stored it has returned; with nothing waiting this is
//     one read;
//   - in the background, when enough writes have been committed since the
//     last batch (searchIndexBatch), or when writes have been quiet for a
//     moment (searchIndexQuiet): a lone turn does not buy a commit right
//     after its own, and many turns share one segment of the index;
//   - at start-up (Migrate), for what a stopped process left waiting.
// Batches go through the group commit (commit.go) like the turn's writes,
// so that they queue with them rather than for SQLite's lock.
// PostgreSQL indexes in the row's own transaction (a generated tsvector
// column): none of this runs there.

const (
	// searchIndexQuiet is how long writes must pause before the background
	// batch runs.
	searchIndexQuiet = 500 * time.Millisecond
	// searchIndexBatch is how many committed writes start a batch at once.
	searchIndexBatch = 512
	// searchIndexChunk bounds the ids one indexing transaction covers, so
	// that a long backlog (an import) does not hold the writer for long.
	searchIndexChunk = 5000
)

// searchIndexer runs the background batches of one store.
type searchIndexer struct {
	s     *Store
	quiet time.Duration
	batch int64

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	pending int64       // writes committed since the last batch began
	timer   *time.Timer // the quiet delay's
	running bool        // a batch runs
	again   bool        // and another is wanted after it
	closed  bool
}

func newSearchIndexer(s *Store) *searchIndexer {
	x := &searchIndexer{s: s, quiet: searchIndexQuiet, batch: searchIndexBatch}
	x.ctx, x.cancel = context.WithCancel(context.Background())
	x.timer = time.AfterFunc(time.Hour, x.start)
	x.timer.Stop()
	return x
}

// wrote hears that n writes were committed: a batch starts at once when
// enough are waiting, else once writes have paused. It runs on the
// writer's goroutine and only sets a timer: no goroutine is woken per
// commit.
func (x *searchIndexer) wrote(n int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return
	}
	x.pending += int64(n)
	if x.pending >= x.batch {
		x.startLocked()
		return
	}
	x.timer.Reset(x.quiet)
}

func (x *searchIndexer) start() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.closed {
		x.startLocked()
	}
}

func (x *searchIndexer) startLocked() {
	x.timer.Stop()
	x.pending = 0
	if x.running {
		x.again = true
		return
	}
	x.running = true
	x.wg.Add(1)
	go x.run()
}

func (x *searchIndexer) run() {
	defer x.wg.Done()
	for {
		// A failure waits for the next batch; the next search catches up
		// itself and reports it.
		_ = x.s.CatchUpSearch(x.ctx)
		x.mu.Lock()
		if !x.again || x.closed {
			x.running = false
			x.mu.Unlock()
			return
		}
		x.again = false
		x.mu.Unlock()
	}
}

// close stops the background batches and waits for the one that runs.
// What is left waiting is indexed by the next process.
func (x *searchIndexer) close() {
	x.mu.Lock()
	x.closed = true
	x.timer.Stop()
	x.mu.Unlock()
	x.cancel()
	x.wg.Wait()
}

// CatchUpSearch indexes for search every message written before it was
// called that is not indexed yet; Search does it first. With nothing
// waiting it is one read. On PostgreSQL it does nothing: a message is
// indexed in its own transaction there.
func (s *Store) CatchUpSearch(ctx context.Context) error {
	if s.dialect != "sqlite" {
		return nil
	}
	w, target, err := searchWatermark(s.db.WithContext(ctx))
	if err != nil {
		return wrap("search index", err)
	}
	// Up to the highest id now, or less if the highest are deleted first.
	top := target
	for w < target && w < top {
		err := s.transact(ctx, func(tx *gorm.DB) error {
			var err error
			w, top, err = indexSearch(tx, searchIndexChunk)
			return err
		})
		if err != nil {
			return wrap("search index", err)
		}
	}
	return nil
}

// searchWatermark reads the watermark and the highest message id.
func searchWatermark(db *gorm.DB) (w, top int64, err error) {
	err = db.Raw(`SELECT indexed_through, (SELECT COALESCE(MAX(id), 0) FROM messages) FROM messages_fts_state`).
		Row().Scan(&w, &top)
	return w, top, err
}

// indexedScope is a message's scope in the indexes (migration 00032, whose
// views and triggers write the same): its chat's token and its owner's,
// over messages m joined to their exchange e.
const indexedScope = `'c' || m.exchange_id || ' u' || e.user_id`

// indexSearch indexes the searchable messages of up to chunk ids above the
// watermark and moves the watermark past them, in the caller's transaction,
// and returns the new watermark and the highest message id. The messages
// are read as they are now: a deleted one is simply not there, a promoted
// copy is an original.
func indexSearch(tx *gorm.DB, chunk int64) (w, top int64, err error) {
	if w, top, err = searchWatermark(tx); err != nil || top <= w {
		return w, top, err
	}
	hi := min(top, w+chunk)
	err = tx.Exec(`INSERT INTO messages_fts (rowid, content, scope)
		SELECT m.id, m.content, `+indexedScope+` FROM messages m JOIN exchanges e ON e.id = m.exchange_id
		WHERE m.id > ? AND m.id <= ? AND m.copy_of IS NULL AND m.role IN ('user', 'assistant', 'tool_result')`, w, hi).Error
	if err != nil {
		return w, top, err
	}
	// Reasoning's own index (migration 00030), filled by the same batch.
	err = tx.Exec(`INSERT INTO messages_reasoning_fts (rowid, reasoning, scope)
		SELECT m.id, json_extract(m.agent_response, '$.reasoning'), `+indexedScope+`
		FROM messages m JOIN exchanges e ON e.id = m.exchange_id
		WHERE m.id > ? AND m.id <= ? AND m.copy_of IS NULL AND m.role = 'assistant'
			AND COALESCE(json_extract(m.agent_response, '$.reasoning'), '') <> ''`, w, hi).Error
	if err != nil {
		return w, top, err
	}
	if err := tx.Exec(`UPDATE messages_fts_state SET indexed_through = ?`, hi).Error; err != nil {
		return w, top, err
	}
	return hi, top, nil
}
