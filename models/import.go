package models

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
)

// ImportItem is one page or one exchange of a file being imported, in the
// shapes an export reads (ExportedPage, ExportedExchange): rows with their
// uids and times, pointing at their page, parent and proposal by uid.
// Where names its place in the file for an error ("line 5").
type ImportItem struct {
	Page     *ExportedPage
	Exchange *ExportedExchange
	File     *NewFile // a file (issue 26): its record, bytes and thumbnail
	// A project, the account's instructions or a memory entry (issue 27).
	Project      *ExportedProject
	Instructions *AccountInstructions
	Memory       *ExportedMemory
	Where        string
}

// ImportCounts says what an import stored, and what it skipped because the
// account has it already (the same uid).
type ImportCounts struct {
	Exchanges, Messages, Pages     int
	SkippedExchanges, SkippedPages int
	// Conversations and SkippedConversations count the exchanges that
	// are no fork (a family's root), as a person counts conversations.
	Conversations, SkippedConversations int
	Files, SkippedFiles                 int
	// Projects, memory entries and the account's instructions (issue 27):
	// a project of the same uid, or of the same name in the same place,
	// is the account's already; instructions the account has are kept.
	Projects, SkippedProjects int
	Memories, SkippedMemories int
	Instructions              bool
}

// ErrImport marks an item the store cannot take (a page_uid that names no
// page, a job id another chat of the account holds): the file is refused.
// The error is an *ImportError, which says where and why.
var ErrImport = errors.New("cannot import")

// ImportError is an item of the file the store refused: Where names it (a
// line, a conversation), Reason says why, for a person.
type ImportError struct {
	Where, Reason string
}

func (e *ImportError) Error() string {
	if e.Where == "" {
		return e.Reason
	}
	return e.Where + ": " + e.Reason
}

// Is makes every ImportError match ErrImport.
func (e *ImportError) Is(target error) bool { return target == ErrImport }

// refuse is an ImportError about the item being stored; Where is set by Import.
func refuse(format string, args ...any) error {
	return &ImportError{Reason: fmt.Sprintf(format, args...)}
}

// An import writes in batches of at most importBatchItems items and about
// importBatchBytes of text, each in a transaction of its own: SQLite's one
// writer is held for one batch (tens of milliseconds), then another write
// (a turn's reply, another user's message) gets it before the next batch.
const (
	importBatchItems = 100
	importBatchBytes = 4 << 20
)

// Import stores what next yields until it returns io.EOF, for the user. It
// is all or nothing: what a file stores goes in batches (importBatchItems),
// each committed on its own so that other writers are not kept waiting,
// and when anything fails (next, or the store refusing an item) the rows
// already stored are deleted again before Import returns. (A process that
// dies during an import leaves the batches it committed.) next should read
// a file already checked whole, from local disk (dataport reads it twice):
// a batch's items are read before its transaction begins, never inside.
// An exchange or page whose uid the account has already is skipped, whole,
// so importing the same file twice imports nothing the second time. Times,
// titles, pins and ratings are kept as the file has them, and nothing
// counts as new activity. References by uid (an exchange's page, a fork's
// parent, a revision's proposal) may point at rows the account had before,
// or at rows earlier or later in the file: they are resolved at the end. A
// fork's first entries, which copy its parent's, are marked as copies (as a
// fork made here would be), so that search finds each once.
func (s *Store) Import(ctx context.Context, userID int64, next func() (*ImportItem, error)) (ImportCounts, error) {
	var n ImportCounts
	im := &importer{ctx: ctx, store: s, dialect: s.dialect, userID: userID, n: &n}
	err := s.importItems(ctx, im, next)
	if err == nil {
		err = s.importResolve(ctx, im)
	}
	if err != nil {
		// Undone even when ctx has ended (a client gone): nothing stays.
		if undo := s.importUndo(context.WithoutCancel(ctx), im); undo != nil {
			err = errors.Join(err, undo)
		}
		return ImportCounts{}, wrap("import", err)
	}
	if s.index != nil {
		s.index.wrote(searchIndexBatch) // its messages are indexed now, in the background
	}
	return n, nil
}

// importItems reads the items a batch at a time and stores each batch in a
// transaction of its own.
func (s *Store) importItems(ctx context.Context, im *importer, next func() (*ImportItem, error)) error {
	for done := false; !done; {
		var batch []*ImportItem
		size := 0
		for len(batch) < importBatchItems && size < importBatchBytes {
			it, err := next()
			if errors.Is(err, io.EOF) {
				done = true
				break
			}
			if err != nil {
				return err
			}
			batch = append(batch, it)
			size += it.size()
		}
		if len(batch) == 0 {
			break
		}
		im.mark()
		// With the S3 store the batch's new blobs are put before its
		// transaction, and those no row took deleted after it.
		im.staged = map[*NewFile]*stagedBlob{}
		for _, it := range batch {
			if f := it.File; f != nil && s.objects != nil {
				b, err := s.stageBlob(ctx, im.userID, f.File.SHA256, f.Data, f.Thumbnail)
				if err != nil {
					s.settleAll(ctx, im.staged, false)
					return err
				}
				im.staged[f] = b
			}
		}
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			im.tx = tx
			for _, it := range batch {
				var err error
				switch {
				case it.Page != nil:
					err = im.page(it.Page)
				case it.Exchange != nil:
					err = im.exchange(it.Exchange)
				case it.File != nil:
					err = im.file(it.File)
				case it.Project != nil:
					err = im.project(it.Project)
				case it.Instructions != nil:
					err = im.instructions(it.Instructions)
				case it.Memory != nil:
					err = im.memory(it.Memory)
				}
				if err != nil {
					var refused *ImportError
					if errors.As(err, &refused) {
						refused.Where = it.Where
						return refused
					}
					if err := unstorable(err); err != nil {
						return &ImportError{Where: it.Where, Reason: err.Error()}
					}
					return err
				}
			}
			return nil
		})
		s.settleAll(ctx, im.staged, err == nil)
		if err != nil {
			im.rewind() // rolled back: those rows are not there to undo
			return err
		}
	}
	return nil
}

// size is about how many bytes of text an item stores.
func (it *ImportItem) size() int {
	n := 0
	if p := it.Page; p != nil {
		n += len(p.Title) + len(p.Content)
		for _, r := range p.Revisions {
			n += len(r.Content)
		}
	}
	if f := it.File; f != nil {
		n += len(f.Data)
	}
	if e := it.Exchange; e != nil {
		n += len(e.Title)
		for _, m := range e.Messages {
			n += len(m.Content)
		}
	}
	return n
}

// importUndo deletes what an import that failed had stored, in batches as
// it was stored: the exchanges (their messages and search entries with
// them, by cascade and trigger; on SQLite then their fork families, which
// a deletion otherwise leaves: fork_families), then the pages (their
// revisions). Files the account had before the import, which its
// messages attached, are held while those go (FileHold): they stay.
func (s *Store) importUndo(ctx context.Context, im *importer) error {
	for _, rows := range []struct {
		ids   []int64
		model any
	}{{im.exchangeIDs, &Exchange{}}, {im.fileIDs, &File{}}, {im.pageIDs, &Page{}}, {im.memoryIDs, &Memory{}},
		{im.projectIDs, &Project{}}, {im.instructionIDs, &AccountInstructions{}}} {
		_, exchanges := rows.model.(*Exchange)
		_, projects := rows.model.(*Project)
		for start := 0; start < len(rows.ids); start += deletionChunk {
			chunk := rows.ids[start:min(start+deletionChunk, len(rows.ids))]
			err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
				var held []int64
				if exchanges || projects {
					var err error
					if held, err = im.borrowedFiles(tx, chunk, projects); err != nil {
						return err
					}
					for _, id := range held {
						if err := tx.Create(&FileHold{FileID: id}).Error; err != nil {
							return err
						}
					}
				}
				if err := tx.Where("user_id = ? AND id IN ?", im.userID, chunk).Delete(rows.model).Error; err != nil {
					return err
				}
				if len(held) > 0 {
					if err := tx.Where("file_id IN ?", held).Delete(&FileHold{}).Error; err != nil {
						return err
					}
				}
				if !exchanges || s.dialect != "sqlite" {
					return nil
				}
				return tx.Exec("DELETE FROM fork_families WHERE exchange_id IN ? OR family_id IN ?", chunk, chunk).Error
			})
			if err != nil {
				return fmt.Errorf("undo: %w", err)
			}
		}
	}
	return nil
}

// borrowedFiles are the files the messages of the import's exchanges
// hold that the import did not store: the account had them before it (a
// file not yet attached, which a message of the file names by uid). The
// undo holds them, so that deleting the exchanges leaves them as they were.
// With projects, ids are of the import's projects, and the files are those
// they hold (project_files) that the import did not store.
func (im *importer) borrowedFiles(tx *gorm.DB, rowIDs []int64, projects bool) ([]int64, error) {
	var ids []int64
	q := `SELECT DISTINCT a.file_id FROM message_attachments a JOIN messages m ON m.id = a.message_id
		WHERE m.exchange_id IN ?`
	if projects {
		q = `SELECT DISTINCT file_id FROM project_files WHERE project_id IN ?`
	}
	err := tx.Raw(q, rowIDs).Scan(&ids).Error
	if err != nil {
		return nil, err
	}
	mine := make(map[int64]bool, len(im.fileIDs))
	for _, id := range im.fileIDs {
		mine[id] = true
	}
	out := ids[:0]
	for _, id := range ids {
		if !mine[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// unstorable makes the database's refusal of a value that it cannot hold
// the file's fault: PostgreSQL stores no NUL character in text (22021) or
// as a JSON escape (22P05), which SQLite keeps.
// (An import replaces NUL with U+FFFD before it gets here: this is the
// last guard.) Nil: the error is not the file's fault.
func unstorable(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && (pg.Code == "22021" || pg.Code == "22P05") {
		return fmt.Errorf("text the database cannot store (PostgreSQL holds no NUL character): %s", pg.Message)
	}
	return nil
}

// uidIs matches a row by uid so that the uid indexes serve it: they are
// partial (they leave the empty uid out), and a database uses one only for
// a condition that implies theirs, which "uid = ?" alone does not (the
// value is not known when the plan is made). Without it each lookup scans
// the user's rows, and an import of n exchanges takes time in n².
const uidIs = "uid = ? AND uid <> ''"

// importer is one import: the transaction of its current batch, what it
// stored (to undo on failure) and what it must resolve at the end.
type importer struct {
	tx      *gorm.DB
	ctx     context.Context
	store   *Store
	staged  map[*NewFile]*stagedBlob // the batch's files' bytes, readied before its transaction
	dialect string
	userID  int64
	n       *ImportCounts
	// What this import stored, and the batch being stored (ids and counts
	// a rolled-back batch takes back: forget).
	exchangeIDs, pageIDs []int64
	fileIDs              []int64
	projectIDs           []int64
	memoryIDs            []int64
	instructionIDs       []int64
	projectUIDs          map[string]int64 // a project's uid in the file → the account's project
	marked               importMark
	// What points at rows by uid, to resolve once every row is in.
	proposals []pendingProposal // revision id → its proposal's uid
	forks     []pendingFork
}

// importMark is where an importer stood before a batch.
type importMark struct {
	exchanges, pages, proposals, forks, files int
	projects, memories, instructions          int
	n                                         ImportCounts
}

func (im *importer) mark() {
	im.marked = importMark{len(im.exchangeIDs), len(im.pageIDs), len(im.proposals), len(im.forks), len(im.fileIDs),
		len(im.projectIDs), len(im.memoryIDs), len(im.instructionIDs), *im.n}
}

func (im *importer) rewind() {
	m := im.marked
	im.exchangeIDs, im.pageIDs, im.fileIDs = im.exchangeIDs[:m.exchanges], im.pageIDs[:m.pages], im.fileIDs[:m.files]
	im.projectIDs, im.memoryIDs, im.instructionIDs = im.projectIDs[:m.projects], im.memoryIDs[:m.memories], im.instructionIDs[:m.instructions]
	im.proposals, im.forks, *im.n = im.proposals[:m.proposals], im.forks[:m.forks], m.n
}

type pendingProposal struct {
	revisionID int64
	messageUID string
	where      string
}

type pendingFork struct {
	exchangeID int64
	parentUID  string
	seq        int64
}

func (im *importer) page(p *ExportedPage) error {
	var have int64
	if err := im.tx.Model(&Page{}).Where("user_id = ? AND "+uidIs, im.userID, p.UID).Count(&have).Error; err != nil {
		return err
	}
	if have > 0 {
		im.n.SkippedPages++
		return nil
	}
	row := Page{UID: p.UID, UserID: im.userID, Title: p.Title, Content: p.Content, CreatedAt: p.CreatedAt.UTC(), UpdatedAt: p.UpdatedAt.UTC()}
	if err := im.tx.Create(&row).Error; err != nil {
		return err
	}
	im.pageIDs = append(im.pageIDs, row.ID)
	for _, r := range p.Revisions {
		rev := PageRevision{UID: r.UID, PageID: row.ID, Content: r.Content, EditSource: r.EditSource, CreatedAt: r.CreatedAt.UTC()}
		if err := im.tx.Create(&rev).Error; err != nil {
			return err
		}
		if r.MessageUID != nil && *r.MessageUID != "" {
			im.proposals = append(im.proposals, pendingProposal{rev.ID, *r.MessageUID, p.Title})
		}
	}
	im.n.Pages++
	return nil
}

func (im *importer) exchange(e *ExportedExchange) error {
	var have int64
	if err := im.tx.Model(&Exchange{}).Where("user_id = ? AND "+uidIs, im.userID, e.UID).Count(&have).Error; err != nil {
		return err
	}
	root := e.ParentUID == nil || *e.ParentUID == ""
	if have > 0 {
		im.n.SkippedExchanges++
		if root {
			im.n.SkippedConversations++
		}
		return nil
	}
	ex := Exchange{
		UID: e.UID, UserID: im.userID, Scope: e.Scope, JobID: e.JobID, Title: e.Title, AgentType: e.AgentType,
		ForkedAtSeq: e.ForkedAtSeq, Pinned: e.Pinned, Archived: e.Archived,
		CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(), TurnStatus: TurnIdle,
	}
	if e.Scope == ScopePage {
		if e.PageUID == nil {
			return refuse("a page chat without its page")
		}
		var page Page
		err := im.tx.Select("id").Where("user_id = ? AND "+uidIs+" AND deleted_at IS NULL", im.userID, *e.PageUID).Take(&page).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return refuse("page_uid %s names no page of the file or the account", *e.PageUID)
		}
		if err != nil {
			return err
		}
		ex.PageID = &page.ID
	}
	if e.ProjectUID != nil && *e.ProjectUID != "" {
		id, err := im.projectByUID(*e.ProjectUID)
		if err != nil {
			return err
		}
		ex.ProjectID = &id
	}
	if e.JobID != nil {
		var taken int64
		if err := im.tx.Model(&Exchange{}).Where("user_id = ? AND job_id = ?", im.userID, *e.JobID).Count(&taken).Error; err != nil {
			return err
		}
		if taken > 0 {
			return refuse("the account already has a chat about job %q", *e.JobID)
		}
	}
	for i := range e.Messages {
		if e.Messages[i].Role == RoleUser {
			ex.TurnCount++
		}
	}
	if err := im.tx.Create(&ex).Error; err != nil {
		return err
	}
	im.exchangeIDs = append(im.exchangeIDs, ex.ID)
	msgs := make([]Message, len(e.Messages))
	for i, m := range e.Messages {
		m.ID, m.ExchangeID, m.CopyOf, m.CreatedAt = 0, ex.ID, nil, m.CreatedAt.UTC()
		msgs[i] = m
	}
	if len(msgs) > 0 {
		if err := im.tx.CreateInBatches(msgs, 500).Error; err != nil {
			return err
		}
	}
	if err := im.attachments(e, msgs); err != nil {
		return err
	}
	if e.ParentUID != nil && *e.ParentUID != "" && e.ForkedAtSeq != nil {
		// Linked now when its parent is in (earlier in the file, as
		// exports and ChatGPT's branches have it, or in the account);
		// otherwise once every row is.
		f := pendingFork{ex.ID, *e.ParentUID, *e.ForkedAtSeq}
		linked, err := im.fork(f)
		if err != nil {
			return err
		}
		if !linked {
			im.forks = append(im.forks, f)
		}
	}
	im.n.Exchanges++
	if root {
		im.n.Conversations++
	}
	im.n.Messages += len(msgs)
	return nil
}

// importResolveBatch bounds the links one transaction of the resolution
// makes (a fork's costs reading two logs' starts).
const importResolveBatch = 100

// importResolve links what pointed at rows by uid, once every row is in:
// forks to their parents (their shared first entries become copies of the
// parent's), revisions to the proposals they applied; a batch of links per
// transaction. A parent or proposal the account does not have (deleted
// before the export) leaves the link empty, as a delete would have.
func (s *Store) importResolve(ctx context.Context, im *importer) error {
	for start := 0; start < len(im.forks); start += importResolveBatch {
		chunk := im.forks[start:min(start+importResolveBatch, len(im.forks))]
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			im.tx = tx
			for _, f := range chunk {
				if _, err := im.fork(f); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for start := 0; start < len(im.proposals); start += importResolveBatch {
		chunk := im.proposals[start:min(start+importResolveBatch, len(im.proposals))]
		err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			im.tx = tx
			for _, p := range chunk {
				if err := im.proposal(p); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// fork links a fork to its parent, if the account has it (false: not yet).
func (im *importer) fork(f pendingFork) (bool, error) {
	var parent Exchange
	err := im.tx.Select("id").Where("user_id = ? AND "+uidIs, im.userID, f.parentUID).Take(&parent).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := im.tx.Model(&Exchange{}).Where("id = ?", f.exchangeID).UpdateColumn("forked_from_id", parent.ID).Error; err != nil {
		return false, err
	}
	if err := joinFamily(im.tx, im.dialect, f.exchangeID, parent.ID); err != nil {
		return false, err
	}
	return true, im.markCopies(f.exchangeID, parent.ID, f.seq)
}

func (im *importer) proposal(p pendingProposal) error {
	var ids []int64
	err := im.tx.Raw(`SELECT m.id FROM messages m JOIN exchanges e ON e.id = m.exchange_id
		WHERE e.user_id = ? AND m.uid = ? ORDER BY m.copy_of IS NOT NULL, m.id LIMIT 1`, im.userID, p.messageUID).Scan(&ids).Error
	if err != nil || len(ids) == 0 {
		return err
	}
	return im.tx.Model(&PageRevision{}).Where("id = ?", p.revisionID).UpdateColumn("message_id", ids[0]).Error
}

// markCopies makes the fork's entries before seq copies of the parent's, in
// log order, where the two logs agree (role and content): those are the
// entries the fork shares.
func (im *importer) markCopies(forkID, parentID, seq int64) error {
	load := func(id int64) ([]Message, error) {
		var ms []Message
		err := im.tx.Select("id, seq, role, content, copy_of").
			Where("exchange_id = ? AND (seq IS NULL OR seq < ?)", id, seq).Order("id").Find(&ms).Error
		return ms, err
	}
	mine, err := load(forkID)
	if err != nil {
		return err
	}
	theirs, err := load(parentID)
	if err != nil {
		return err
	}
	for i := range min(len(mine), len(theirs)) {
		if mine[i].Role != theirs[i].Role || mine[i].Content != theirs[i].Content {
			break
		}
		original := theirs[i].ID
		if theirs[i].CopyOf != nil {
			original = *theirs[i].CopyOf
		}
		if err := im.tx.Model(&Message{}).Where("id = ?", mine[i].ID).UpdateColumn("copy_of", original).Error; err != nil {
			return err
		}
	}
	return nil
}
