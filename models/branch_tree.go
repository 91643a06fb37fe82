package models

import (
	"context"
	"fmt"
	"strings"
)

// The family as people see it (issue 11): the tree of branches at
// /chat/{id}/branches and two branches side by side at
// /chat/{id}/compare/{other}. Both read the family's headers, each member's
// log length and at most one entry per member; never a whole log.

// excerptChars bounds the text of a branch's first differing entry read for
// the tree.
const excerptChars = 240

// Branch is one exchange of a family as the tree shows it.
type Branch struct {
	Exchange
	// Length is how many entries its log holds (its next seq).
	Length int64
	// Parts is where it parts from the exchange it was forked from: the
	// seq of its first entry that one does not share (0 for the root).
	Parts int64
	// First is its entry at Parts, its content cut to an excerpt; nil when
	// it has none there yet (a fork nothing was written to).
	First *Message
}

// FamilyBranches returns every exchange of the family the user's exchange
// belongs to, root first, each with its length, where it parts from its
// parent and the entry it parts with.
func (s *Store) FamilyBranches(ctx context.Context, userID, exchangeID int64) ([]Branch, error) {
	family, t, err := s.familyTreeOf(ctx, userID, exchangeID)
	if err != nil {
		return nil, fmt.Errorf("family branches: %w", err)
	}
	out := make([]Branch, len(family))
	where := make([]string, 0, len(family))
	args := make([]any, 0, 2*len(family))
	at := map[int64]int{}
	for i, e := range family {
		b := Branch{Exchange: e, Length: t.length[e.ID]}
		if e.ForkedFromID != nil && t.byID[*e.ForkedFromID] != nil {
			b.Parts = t.common(e.ID, *e.ForkedFromID)
		}
		out[i], at[e.ID] = b, i
		if b.Parts < b.Length {
			where = append(where, "(exchange_id = ? AND seq = ?)")
			args = append(args, e.ID, b.Parts)
		}
	}
	if len(where) == 0 {
		return out, nil
	}
	var firsts []Message
	err = s.db.WithContext(ctx).Select("id, exchange_id, seq, role, substr(content, 1, ?) AS content, created_at", excerptChars).
		Where(strings.Join(where, " OR "), args...).Find(&firsts).Error
	if err != nil {
		return nil, wrap("family branches", err)
	}
	for i := range firsts {
		out[at[firsts[i].ExchangeID]].First = &firsts[i]
	}
	return out, nil
}

// Parting is where two exchanges of one family part.
type Parting struct {
	A, B Branch // Parts is unset: see Common
	// Common is how many leading entries their logs share: they part at
	// seq Common.
	Common int64
}

// Parting says where the user's exchanges a and b part. Two exchanges of
// different families, or another user's, give ErrNotFound.
func (s *Store) Parting(ctx context.Context, userID, a, b int64) (*Parting, error) {
	_, t, err := s.familyTreeOf(ctx, userID, a)
	if err != nil {
		return nil, fmt.Errorf("parting: %w", err)
	}
	if t.byID[b] == nil {
		return nil, fmt.Errorf("parting: %d is not of %d's family: %w", b, a, ErrNotFound)
	}
	return &Parting{
		A:      Branch{Exchange: *t.byID[a], Length: t.length[a]},
		B:      Branch{Exchange: *t.byID[b], Length: t.length[b]},
		Common: t.common(a, b),
	}, nil
}

// familyTreeOf loads the family of the user's exchange and the length of
// each member's log.
func (s *Store) familyTreeOf(ctx context.Context, userID, exchangeID int64) ([]Exchange, *familyTree, error) {
	family, err := s.Family(ctx, userID, exchangeID)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.treeOf(ctx, family)
	return family, t, err
}

// treeOf is the tree of a family (as Family returns it), with the length
// of each member's log: one grouped read of the members' last seqs.
func (s *Store) treeOf(ctx context.Context, family []Exchange) (*familyTree, error) {
	ids := make([]int64, len(family))
	for i, e := range family {
		ids[i] = e.ID
	}
	var lengths []struct {
		ExchangeID int64
		Next       int64
	}
	err := s.db.WithContext(ctx).Model(&Message{}).Select("exchange_id, MAX(seq) + 1 AS next").
		Where("exchange_id IN ? AND seq IS NOT NULL", ids).Group("exchange_id").Scan(&lengths).Error
	if err != nil {
		return nil, wrap("family tree", err)
	}
	t := newFamilyTree(family)
	for _, l := range lengths {
		t.length[l.ExchangeID] = l.Next
	}
	return t, nil
}
