package models

import (
	"context"
	"fmt"
	"slices"

	"gorm.io/gorm"
)

// exportBatch is how many exchanges or pages an export reads at a time: what
// an export holds in memory is one batch of headers and one exchange's log.
const exportBatch = 200

// ExportedPage is one of a user's pages as an export writes it, with its
// revisions oldest first.
type ExportedPage struct {
	Page
	Revisions []ExportedRevision `gorm:"-"`
}

// ExportedRevision is a page revision with the uid of the proposal it
// applied, for agent revisions.
type ExportedRevision struct {
	PageRevision
	MessageUID *string
}

// ExportedExchange is one of a user's exchanges as an export writes it: its
// header, the uids of its page and of the exchange it was forked from, and
// its whole log in order, error rows in their place.
type ExportedExchange struct {
	Exchange
	PageUID    *string
	ParentUID  *string
	ProjectUID *string   // the project it is in (issue 27)
	Messages   []Message `gorm:"-"`
	// StoredJSON, when set (by ExportExchanges), holds each message's
	// agent_response and tool as the database stores them (JSON text, nil
	// for none), and Messages leaves them unparsed: an export writes them
	// as they are instead of parsing and encoding them again.
	StoredJSON []StoredJSON `gorm:"-"`
	// Attachments are the uids of the files each message holds, by the
	// message's uid (issue 26).
	Attachments map[string][]string `gorm:"-"`
}

// StoredJSON is a message's agent_response and tool as stored.
type StoredJSON struct {
	AgentResponse, Tool []byte
}

// ExportPages calls fn for each of the user's pages (not deleted ones),
// oldest first, a batch at a time; it stops at fn's first error.
func (s *Store) ExportPages(ctx context.Context, userID int64, fn func(*ExportedPage) error) error {
	db := s.db.WithContext(ctx)
	var after int64
	for {
		var pages []Page
		if err := db.Where("user_id = ? AND deleted_at IS NULL AND id > ?", userID, after).
			Order("id").Limit(exportBatch).Find(&pages).Error; err != nil {
			return wrap("export pages", err)
		}
		for i := range pages {
			p := &ExportedPage{Page: pages[i]}
			err := db.Raw(`SELECT r.*, m.uid AS message_uid FROM page_revisions r
				LEFT JOIN messages m ON m.id = r.message_id WHERE r.page_id = ? ORDER BY r.id`, p.ID).
				Scan(&p.Revisions).Error
			if err != nil {
				return wrap("export page revisions", err)
			}
			if err := fn(p); err != nil {
				return err
			}
		}
		if len(pages) < exportBatch {
			return nil
		}
		after = pages[len(pages)-1].ID
	}
}

// ExportExchanges calls fn for each of the user's exchanges, oldest first,
// with its whole log; sub-runs, which belong to the exchange that spawned
// them, are left out. It stops at fn's first error.
//
// The exchanges are those the user has when it starts (their ids, 8 bytes
// each, are read first), then read a batch at a time by id. Batching with
// "id > last ORDER BY id LIMIT n" instead would sort all of the user's
// exchanges again for every batch: no index orders a user's exchanges by
// id.
//
// The logs are read ahead, up to exportAhead exchanges, while fn writes
// the ones before: reading and encoding each took about half of an
// export's time, one after the other.
func (s *Store) ExportExchanges(ctx context.Context, userID int64, fn func(*ExportedExchange) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ahead := make(chan *ExportedExchange, exportAhead)
	var readErr error
	go func() {
		defer close(ahead)
		readErr = s.readExchanges(ctx, userID, func(ex *ExportedExchange) error {
			own := *ex // the reader clears its batch's logs once given
			select {
			case ahead <- &own:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for ex := range ahead {
		if err := fn(ex); err != nil {
			cancel()
			for range ahead { // until the reader has stopped
			}
			return err
		}
	}
	return readErr // the reader's, set before it closed ahead
}

// exportAhead is how many exchanges an export reads ahead of its writing:
// what it holds in memory is that many logs more.
const exportAhead = 16

// readExchanges reads the user's exchanges for ExportExchanges, calling fn
// for each in turn.
func (s *Store) readExchanges(ctx context.Context, userID int64, fn func(*ExportedExchange) error) error {
	db := s.db.WithContext(ctx)
	var ids []int64
	err := db.Model(&Exchange{}).Where("user_id = ? AND scope <> ?", userID, ScopeSubRun).Order("id").Pluck("id", &ids).Error
	if err != nil {
		return wrap("export exchanges", err)
	}
	for len(ids) > 0 {
		page := ids[:min(exportBatch, len(ids))]
		ids = ids[len(page):]
		batch, err := exportHeaders(db, userID, page)
		if err != nil {
			return wrap("export exchanges", err)
		}
		if err := exportLogs(db, batch, fn); err != nil {
			return err
		}
	}
	return nil
}

// ExportExchange is one of the user's exchanges with its whole log, for a
// download of that conversation.
func (s *Store) ExportExchange(ctx context.Context, userID, id int64) (*ExportedExchange, error) {
	db := s.db.WithContext(ctx)
	var ex ExportedExchange
	res := exportedExchanges(db, userID).Where("e.id = ?", id).Scan(&ex)
	if res.Error != nil {
		return nil, wrap("export exchange", res.Error)
	}
	if res.RowsAffected == 0 {
		return nil, wrap("export exchange", ErrNotFound)
	}
	return &ex, s.exportLog(db, &ex)
}

// exportedExchanges selects the user's exchanges (sub-runs, which belong to
// the exchange that spawned them, left out) with the uids of their page and
// of the exchange they were forked from.
func exportedExchanges(db *gorm.DB, userID int64) *gorm.DB {
	return db.Table("exchanges AS e").Select("e.*, p.uid AS page_uid, f.uid AS parent_uid, pr.uid AS project_uid").
		Joins("LEFT JOIN pages p ON p.id = e.page_id").Joins("LEFT JOIN exchanges f ON f.id = e.forked_from_id").
		Joins("LEFT JOIN projects pr ON pr.id = e.project_id").
		Where("e.user_id = ? AND e.scope <> ?", userID, ScopeSubRun)
}

// exportHeaders reads the headers of the user's exchanges with these ids,
// in id order: the columns an export writes, scanned by hand (GORM's
// reflection over every column cost as much as reading the logs).
func exportHeaders(db *gorm.DB, userID int64, ids []int64) ([]ExportedExchange, error) {
	rows, err := db.Raw(`SELECT e.id, e.uid, e.scope, e.page_id, e.job_id, e.title, e.agent_type, e.forked_from_id, e.forked_at_seq,
		e.pinned, e.archived, e.created_at, e.updated_at, e.project_id, p.uid, f.uid, pr.uid FROM exchanges e
		LEFT JOIN pages p ON p.id = e.page_id LEFT JOIN exchanges f ON f.id = e.forked_from_id
		LEFT JOIN projects pr ON pr.id = e.project_id
		WHERE e.user_id = ? AND e.scope <> ? AND e.id IN ? ORDER BY e.id`, userID, ScopeSubRun, ids).Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	batch := make([]ExportedExchange, 0, len(ids))
	for rows.Next() {
		ex := ExportedExchange{Exchange: Exchange{UserID: userID}}
		if err := rows.Scan(&ex.ID, &ex.UID, &ex.Scope, &ex.PageID, &ex.JobID, &ex.Title, &ex.AgentType, &ex.ForkedFromID, &ex.ForkedAtSeq,
			&ex.Pinned, &ex.Archived, &ex.CreatedAt, &ex.UpdatedAt, &ex.ProjectID, &ex.PageUID, &ex.ParentUID, &ex.ProjectUID); err != nil {
			return nil, err
		}
		batch = append(batch, ex)
	}
	return batch, rows.Err()
}

// exportChunk is how many messages an export reads with one query. Each
// query is read whole and its rows closed before any exchange is handed
// on: fn may wait on a slow client, and an open cursor would hold a pooled
// connection (and, on SQLite, pin the WAL, so checkpoints cannot finish).
const exportChunk = 500

// exportLogs reads the logs of a batch of exchanges (in id order), a chunk
// of messages per query, and calls fn with each exchange and its whole
// log, in order, with no query open; it holds one log and one chunk at a
// time. A query per exchange would cost more than the rest of the export,
// and scanning by hand rather than by GORM's reflection halves what is
// left; the JSON columns are kept as stored (StoredJSON).
func exportLogs(db *gorm.DB, batch []ExportedExchange, fn func(*ExportedExchange) error) error {
	if len(batch) == 0 {
		return nil
	}
	ids := make([]int64, len(batch))
	for i := range batch {
		ids[i] = batch[i].ID
	}
	next := 0 // the exchange whose log is being read
	emit := func(upTo int64) error {
		for ; next < len(batch) && batch[next].ID != upTo; next++ {
			if err := fn(&batch[next]); err != nil {
				return err
			}
			batch[next].Messages, batch[next].StoredJSON = nil, nil // done with
		}
		return nil
	}
	// Either the rest of one exchange's log (a chunk ended inside it), or
	// the logs of the exchanges not yet started (ids[from:]).
	var within, after int64
	from := 0
	for within != 0 || from < len(ids) {
		q := db.Raw(exportLogsSQL+` WHERE exchange_id IN ? ORDER BY exchange_id, id LIMIT ?`, ids[from:], exportChunk)
		if within != 0 {
			q = db.Raw(exportLogsSQL+` WHERE exchange_id = ? AND id > ? ORDER BY id LIMIT ?`, within, after, exportChunk)
		}
		chunk, err := exportChunkRead(q)
		if err != nil {
			return wrap("export logs", err)
		}
		for i := 0; i < len(chunk); {
			m := &chunk[i]
			if err := emit(m.ExchangeID); err != nil {
				return err
			}
			if next == len(batch) {
				return wrap("export logs", fmt.Errorf("message %d of exchange %d, not of the batch", m.ID, m.ExchangeID))
			}
			// The chunk's run of this exchange's entries, added at once.
			run := i + 1
			for run < len(chunk) && chunk[run].ExchangeID == m.ExchangeID {
				run++
			}
			ex := &batch[next]
			ex.StoredJSON = slices.Grow(ex.StoredJSON, run-i)
			ex.Messages = slices.Grow(ex.Messages, run-i)
			for ; i < run; i++ {
				ex.StoredJSON = append(ex.StoredJSON, chunk[i].stored)
				ex.Messages = append(ex.Messages, chunk[i].Message)
			}
		}
		switch {
		case len(chunk) == exportChunk: // the last exchange's log may go on
			last := chunk[len(chunk)-1]
			within, after = last.ExchangeID, last.ID
			for from < len(ids) && ids[from] <= within {
				from++
			}
		case within != 0: // that log is whole: on to the next exchanges
			within = 0
		default:
			from = len(ids)
		}
	}
	return emit(0) // the rest, the last log included
}

// exportLogsSQL selects every column of Message (the column-coverage test
// checks it), in the order exportChunkRead scans them.
const exportLogsSQL = `SELECT id, uid, exchange_id, seq, role, content, agent_type, agent_response, tool, edit_mode,
	feedback, feedback_comment, created_at, copy_of FROM messages`

// exportedMessage is a message read for an export, its JSON as stored.
type exportedMessage struct {
	Message
	stored StoredJSON
}

// exportChunkRead runs q and reads its rows whole, then closes them.
func exportChunkRead(q *gorm.DB) ([]exportedMessage, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]exportedMessage, 0, exportChunk) // scanned in place: no row of its own on the heap
	for rows.Next() {
		out = append(out, exportedMessage{})
		m := &out[len(out)-1]
		var resp, tool []byte
		err := rows.Scan(&m.ID, &m.UID, &m.ExchangeID, &m.Seq, &m.Role, &m.Content, &m.AgentType, &resp, &tool, &m.EditMode,
			&m.Feedback, &m.FeedbackComment, &m.CreatedAt, &m.CopyOf)
		if err != nil {
			return nil, err
		}
		if string(resp) != "null" {
			m.stored.AgentResponse = resp
		}
		if string(tool) != "null" {
			m.stored.Tool = tool
		}
	}
	return out, rows.Err()
}

// exportLog reads an exchange's whole log, in write order.
func (s *Store) exportLog(db *gorm.DB, ex *ExportedExchange) error {
	return wrap("export log", db.Where("exchange_id = ?", ex.ID).Order("id").Find(&ex.Messages).Error)
}

// ExportedProject is one of a user's projects with its parent's uid.
type ExportedProject struct {
	Project
	ParentUID *string
	FileUIDs  []string `gorm:"-"` // the files it holds, in order
}

// ExportProjects lists the user's projects for an export: top level ones
// first, so that a parent comes before the projects inside it.
func (s *Store) ExportProjects(ctx context.Context, userID int64) ([]ExportedProject, error) {
	var out []ExportedProject
	err := s.db.WithContext(ctx).Table("projects AS p").Select("p.*, pp.uid AS parent_uid").
		Joins("LEFT JOIN projects pp ON pp.id = p.parent_id").Where("p.user_id = ?", userID).
		Order("p.parent_id IS NOT NULL, p.id").Scan(&out).Error
	if err != nil {
		return nil, wrap("export projects", err)
	}
	var rows []struct {
		ProjectID int64
		FileUID   string
	}
	err = s.db.WithContext(ctx).Table("project_files AS pf").Select("pf.project_id, f.uid AS file_uid").
		Joins("JOIN files f ON f.id = pf.file_id").Where("f.user_id = ?", userID).Order("pf.id").Scan(&rows).Error
	byProject := map[int64][]string{}
	for _, r := range rows {
		byProject[r.ProjectID] = append(byProject[r.ProjectID], r.FileUID)
	}
	for i := range out {
		out[i].FileUIDs = byProject[out[i].ID]
	}
	return out, wrap("export projects", err)
}

// ExportInstructions is the user's own instructions, nil when they never
// saved any.
func (s *Store) ExportInstructions(ctx context.Context, userID int64) (*AccountInstructions, error) {
	var rows []AccountInstructions
	if err := s.db.WithContext(ctx).Where("user_id = ?", userID).Limit(1).Find(&rows).Error; err != nil {
		return nil, wrap("export instructions", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return &rows[0], nil
}

// ExportedMemory is a memory entry with the uid of the chat it came from.
type ExportedMemory struct {
	Memory
	ExchangeUID *string
}

// ExportMemories lists the user's memory entries (at most MaxMemories),
// oldest first.
func (s *Store) ExportMemories(ctx context.Context, userID int64) ([]ExportedMemory, error) {
	var out []ExportedMemory
	err := s.db.WithContext(ctx).Table("memories AS m").Select("m.*, e.uid AS exchange_uid").
		Joins("LEFT JOIN exchanges e ON e.id = m.exchange_id").Where("m.user_id = ?", userID).
		Order("m.id").Scan(&out).Error
	return out, wrap("export memories", err)
}
