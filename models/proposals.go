package models

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Proposal kinds (messages.edit_mode).
const (
	EditFullReplacement = "full_replacement"
	EditSectionPatch    = "section_patch"
)

// ErrStale means a proposal was made for content the page no longer has.
var ErrStale = errors.New("the page changed since this was proposed")

// ErrAlreadyApplied means a proposal was accepted before: it applies once.
var ErrAlreadyApplied = errors.New("this proposal has already been applied")

// pageProposal scopes a query to the proposals (assistant messages with an
// edit mode) of the user's page pageID.
func pageProposal(tx *gorm.DB, userID, pageID, messageID int64) *gorm.DB {
	return tx.Where(`id = ? AND role = ? AND edit_mode IS NOT NULL
		AND exchange_id IN (SELECT id FROM exchanges WHERE user_id = ? AND page_id = ?)`,
		messageID, RoleAssistant, userID, pageID)
}

// ApplyFunc computes a page's new content from its current content and the
// proposal being accepted; it returns ErrStale when the proposal was made
// for other content, or an error saying why it cannot apply.
type ApplyFunc func(content string, proposal *Message) (string, error)

// AcceptProposal applies a proposal of one of the user's pages in one
// transaction: it re-reads the page (locked), checks the message is a
// proposal made in one of that page's chats and not applied yet, computes
// the new content with apply, saves it and records a revision of edit source
// agent that names the message. Anything that fails changes nothing: a
// missing page, message or proposal is ErrNotFound, an applied one
// ErrAlreadyApplied, a stale one whatever apply says (ErrStale).
func (s *Store) AcceptProposal(ctx context.Context, userID, pageID, messageID int64, apply ApplyFunc) (*Page, error) {
	var p *Page
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		page, err := s.lockPage(tx, userID, pageID)
		if err != nil {
			return err
		}
		var m Message
		if err := pageProposal(tx, userID, pageID, messageID).Take(&m).Error; err != nil {
			return err
		}
		// A fork's copy of a proposal is the same proposal: applied once,
		// wherever it was accepted.
		// Read from the page's revisions: copies have no index of their own
		// on SQLite (migration 00016).
		var n int64
		if err := tx.Raw(`SELECT COUNT(*) FROM page_revisions r JOIN messages m ON m.id = r.message_id
			WHERE r.page_id = ? AND (m.id = ? OR m.copy_of = ?)`, pageID, proposalOf(&m), proposalOf(&m)).Scan(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return ErrAlreadyApplied
		}
		content, err := apply(page.Content, &m)
		if err != nil {
			return err
		}
		p, err = s.setContent(tx, userID, pageID, nil, content, PageRevision{EditSource: EditAgent, MessageID: &m.ID})
		return err
	})
	return p, wrap("accept proposal", err)
}

// PageProposal loads a proposal made in one of the chats of the user's page.
func (s *Store) PageProposal(ctx context.Context, userID, pageID, messageID int64) (*Message, error) {
	if _, err := s.Page(ctx, userID, pageID); err != nil {
		return nil, fmt.Errorf("page proposal: %w", err)
	}
	var m Message
	err := pageProposal(s.db.WithContext(ctx), userID, pageID, messageID).Take(&m).Error
	return &m, wrap("page proposal", err)
}

// RejectProposal records that the user dismissed a proposal of their page
// (once; a second rejection changes nothing). Stale and applied proposals
// can be rejected too: dismissing is only about what the person sees.
func (s *Store) RejectProposal(ctx context.Context, userID, pageID, messageID int64) error {
	m, err := s.PageProposal(ctx, userID, pageID, messageID)
	if err != nil {
		return fmt.Errorf("reject proposal: %w", err)
	}
	err = s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).
		Create(&ProposalRejection{MessageID: m.ID, UserID: userID, CreatedAt: now()}).Error
	return wrap("reject proposal", err)
}

// ProposalStates says which of the given messages of the user's page have
// been applied (a revision names them) and which rejected. A proposal a
// fork copied (messages.copy_of) shares its state with the one it copies
// and with every other copy: accepted or dismissed in one branch of a
// family, it is so in all of them.
func (s *Store) ProposalStates(ctx context.Context, userID, pageID int64, messageIDs []int64) (applied, rejected map[int64]bool, err error) {
	applied, rejected = map[int64]bool{}, map[int64]bool{}
	if len(messageIDs) == 0 {
		return applied, rejected, nil
	}
	if _, err := s.Page(ctx, userID, pageID); err != nil {
		return nil, nil, fmt.Errorf("proposal states: %w", err)
	}
	db := s.db.WithContext(ctx)
	var msgs []Message
	if err := db.Select("id, copy_of").Where("id IN ?", messageIDs).Find(&msgs).Error; err != nil {
		return nil, nil, wrap("proposal states", err)
	}
	if len(msgs) == 0 {
		return applied, rejected, nil
	}
	ids := make([]int64, len(msgs))
	for i := range msgs {
		ids[i] = proposalOf(&msgs[i])
	}
	// Each query answers with the proposals (originals' ids) it finds.
	var found []int64
	if err := db.Raw(`SELECT COALESCE(m.copy_of, m.id) FROM page_revisions r JOIN messages m ON m.id = r.message_id
		WHERE r.page_id = ? AND (m.id IN ? OR m.copy_of IN ?)`, pageID, ids, ids).Scan(&found).Error; err != nil {
		return nil, nil, wrap("proposal states: applied", err)
	}
	appliedTo := map[int64]bool{}
	for _, id := range found {
		appliedTo[id] = true
	}
	found = nil
	// Copies of the page's proposals are in the page's chats: looked up
	// there, by the index of copies (migration 00016).
	if err := db.Raw(`SELECT COALESCE(m.copy_of, m.id) FROM proposal_rejections j JOIN messages m ON m.id = j.message_id
		WHERE j.user_id = ? AND (m.id IN ? OR (m.copy_of IN ? AND m.exchange_id IN (
			SELECT id FROM exchanges WHERE user_id = ? AND page_id = ?)))`, userID, ids, ids, userID, pageID).Scan(&found).Error; err != nil {
		return nil, nil, wrap("proposal states: rejected", err)
	}
	rejectedTo := map[int64]bool{}
	for _, id := range found {
		rejectedTo[id] = true
	}
	for i := range msgs {
		if appliedTo[proposalOf(&msgs[i])] {
			applied[msgs[i].ID] = true
		}
		if rejectedTo[proposalOf(&msgs[i])] {
			rejected[msgs[i].ID] = true
		}
	}
	return applied, rejected, nil
}

// proposalOf is the row that stands for a proposal in its family: the
// original a copy names, or the message itself.
func proposalOf(m *Message) int64 {
	if m.CopyOf != nil {
		return *m.CopyOf
	}
	return m.ID
}
