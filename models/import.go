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
	Where    string
}

// ImportCounts says what an import stored, and what it skipped because the
// account has it already (the same uid).
type ImportCounts struct {
	Exchanges, Messages, Pages     int
	SkippedExchanges, SkippedPages int
}

// ErrImport marks an item the store cannot take (a page_uid that names no
// page, a job id another chat of the account holds): the file is refused.
var ErrImport = errors.New("cannot import")

// Import stores what next yields until it returns io.EOF, for the user, in
// one transaction: a file that fails anywhere stores nothing. An exchange or
// page whose uid the account has already is skipped, whole, so importing
// the same file twice imports nothing the second time. Times, titles, pins
// and ratings are kept as the file has them, and nothing counts as new
// activity. References by uid (an exchange's page, a fork's parent, a
// revision's proposal) may point at rows the account had before, or at
// rows earlier or later in the file: they are resolved at the end. A fork's
// first entries, which copy its parent's, are marked as copies (as a fork
// made here would be), so that search finds each once.
//
// The transaction holds SQLite's one writer for the whole import.
func (s *Store) Import(ctx context.Context, userID int64, next func() (*ImportItem, error)) (ImportCounts, error) {
	var n ImportCounts
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		im := &importer{tx: tx, dialect: s.dialect, userID: userID, n: &n}
		for {
			it, err := next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			switch {
			case it.Page != nil:
				err = im.page(it.Page)
			case it.Exchange != nil:
				err = im.exchange(it.Exchange)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", it.Where, unstorable(err))
			}
		}
		return im.resolve()
	})
	if err != nil {
		return ImportCounts{}, wrap("import", err)
	}
	if s.index != nil {
		s.index.wrote(searchIndexBatch) // its messages are indexed now, in the background
	}
	return n, nil
}

// unstorable makes the database's refusal of a value that it cannot hold
// the file's fault: PostgreSQL stores no NUL character in text (22021) or
// as a JSON escape (22P05), which SQLite keeps.
func unstorable(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && (pg.Code == "22021" || pg.Code == "22P05") {
		return fmt.Errorf("%w: text the database cannot store (PostgreSQL holds no NUL character): %s", ErrImport, pg.Message)
	}
	return err
}

// uidIs matches a row by uid so that the uid indexes serve it: they are
// partial (they leave the empty uid out), and a database uses one only for
// a condition that implies theirs, which "uid = ?" alone does not (the
// value is not known when the plan is made). Without it each lookup scans
// the user's rows, and an import of n exchanges takes time in n².
const uidIs = "uid = ? AND uid <> ''"

// importer is one import's transaction and what it must resolve at the end.
type importer struct {
	tx      *gorm.DB
	dialect string
	userID  int64
	n       *ImportCounts
	// What points at rows by uid, to resolve once every row is in.
	proposals []pendingProposal // revision id → its proposal's uid
	forks     []pendingFork
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
	if have > 0 {
		im.n.SkippedExchanges++
		return nil
	}
	ex := Exchange{
		UID: e.UID, UserID: im.userID, Scope: e.Scope, JobID: e.JobID, Title: e.Title, AgentType: e.AgentType,
		ForkedAtSeq: e.ForkedAtSeq, Pinned: e.Pinned, Archived: e.Archived,
		CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(), TurnStatus: TurnIdle,
	}
	if e.Scope == ScopePage {
		if e.PageUID == nil {
			return fmt.Errorf("%w: a page chat without its page", ErrImport)
		}
		var page Page
		err := im.tx.Select("id").Where("user_id = ? AND "+uidIs+" AND deleted_at IS NULL", im.userID, *e.PageUID).Take(&page).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return fmt.Errorf("%w: page_uid %s names no page of the file or the account", ErrImport, *e.PageUID)
		}
		if err != nil {
			return err
		}
		ex.PageID = &page.ID
	}
	if e.JobID != nil {
		var taken int64
		if err := im.tx.Model(&Exchange{}).Where("user_id = ? AND job_id = ?", im.userID, *e.JobID).Count(&taken).Error; err != nil {
			return err
		}
		if taken > 0 {
			return fmt.Errorf("%w: the account already has a chat about job %q", ErrImport, *e.JobID)
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
	if e.ParentUID != nil && *e.ParentUID != "" && e.ForkedAtSeq != nil {
		im.forks = append(im.forks, pendingFork{ex.ID, *e.ParentUID, *e.ForkedAtSeq})
	}
	im.n.Exchanges++
	im.n.Messages += len(msgs)
	return nil
}

// resolve links what pointed at rows by uid: forks to their parents (their
// shared first entries become copies of the parent's), revisions to the
// proposals they applied. A parent or proposal the account does not have
// (deleted before the export) leaves the link empty, as a delete would have.
func (im *importer) resolve() error {
	for _, f := range im.forks {
		var parent Exchange
		err := im.tx.Select("id").Where("user_id = ? AND "+uidIs, im.userID, f.parentUID).Take(&parent).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := im.tx.Model(&Exchange{}).Where("id = ?", f.exchangeID).UpdateColumn("forked_from_id", parent.ID).Error; err != nil {
			return err
		}
		if err := joinFamily(im.tx, im.dialect, f.exchangeID, parent.ID); err != nil {
			return err
		}
		if err := im.markCopies(f.exchangeID, parent.ID, f.seq); err != nil {
			return err
		}
	}
	for _, p := range im.proposals {
		var ids []int64
		err := im.tx.Raw(`SELECT m.id FROM messages m JOIN exchanges e ON e.id = m.exchange_id
			WHERE e.user_id = ? AND m.uid = ? ORDER BY m.copy_of IS NOT NULL, m.id LIMIT 1`, im.userID, p.messageUID).Scan(&ids).Error
		if err != nil {
			return err
		}
		if len(ids) == 1 {
			if err := im.tx.Model(&PageRevision{}).Where("id = ?", p.revisionID).UpdateColumn("message_id", ids[0]).Error; err != nil {
				return err
			}
		}
	}
	return nil
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
