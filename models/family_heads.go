package models

import (
	"context"
	"fmt"
	"time"
)

// FamilyHead is where an exchange stands in its family, for a list that
// shows one item per family (the HTML sidebar).
type FamilyHead struct {
	RootID int64
	// Branches counts the family's exchanges of the exchange's scope (a
	// job chat's forks are general chats: the job's own exchange is not
	// one of their branches in the sidebar).
	Branches int
	// Head says no other member of the same list (scope, pinned, archived)
	// was active later: the one the list shows for the family. Activity is
	// updated_at, ties going to the younger exchange.
	Head bool
}

// FamilyHeads returns, for each of ids that is the user's, its family's
// root, size, and whether it heads its family in its list. An exchange
// that is neither a fork nor forked is a family of one, its own head.
func (s *Store) FamilyHeads(ctx context.Context, userID int64, ids []int64) (map[int64]FamilyHead, error) {
	out := map[int64]FamilyHead{}
	if len(ids) == 0 {
		return out, nil
	}
	db := s.db.WithContext(ctx)
	// +user_id: the ids are primary-key reads. Selecting only what the
	// user's activity index covers, SQLite would otherwise walk all of the
	// user's exchanges through that index (every live event of a tab paid
	// for the size of its user's history).
	var roots []struct {
		Start int64
		Root  int64
	}
	err := db.Raw(`WITH RECURSIVE up(start, id, parent, depth) AS (
			SELECT id, id, forked_from_id, 0 FROM exchanges WHERE +user_id = ? AND id IN ?
			UNION ALL
			SELECT up.start, e.id, e.forked_from_id, up.depth + 1 FROM exchanges e JOIN up ON e.id = up.parent
			WHERE up.depth < ?
		) SELECT start, id AS root FROM up WHERE parent IS NULL OR depth = ?`, userID, ids, MaxForkDepth, MaxForkDepth).Scan(&roots).Error
	if err != nil {
		return nil, wrap("family heads", err)
	}
	if len(roots) == 0 {
		return out, nil
	}
	rootIDs := make([]int64, 0, len(roots))
	for _, r := range roots {
		rootIDs = append(rootIDs, r.Root)
	}
	var members []struct {
		Root      int64
		ID        int64
		Scope     string
		Pinned    bool
		Archived  bool
		UpdatedAt time.Time
	}
	err = db.Raw(`WITH RECURSIVE down(root, id, depth) AS (
			SELECT id, id, 0 FROM exchanges WHERE id IN ? AND +user_id = ?
			UNION ALL
			SELECT down.root, e.id, down.depth + 1 FROM exchanges e JOIN down ON e.forked_from_id = down.id
			WHERE down.depth < ? AND e.id <> down.root
		) SELECT down.root, down.id, e.scope, e.pinned, e.archived, e.updated_at
		FROM down JOIN exchanges e ON e.id = down.id`, rootIDs, userID, MaxForkDepth).Scan(&members).Error
	if err != nil {
		return nil, wrap("family heads", err)
	}
	type list struct {
		root     int64
		scope    string
		pinned   bool
		archived bool
	}
	type latest struct {
		id int64
		at time.Time
	}
	size := map[[2]any]int{}   // (root, scope) → members
	heads := map[list]latest{} // each list's most recently active member
	byID := map[int64]list{}   // the list each member is in
	for _, m := range members {
		l := list{m.Root, m.Scope, m.Pinned, m.Archived}
		byID[m.ID] = l
		size[[2]any{m.Root, m.Scope}]++
		at := m.UpdatedAt.UTC()
		if h, ok := heads[l]; !ok || at.After(h.at) || (at.Equal(h.at) && m.ID > h.id) {
			heads[l] = latest{m.ID, at}
		}
	}
	for _, r := range roots {
		l, ok := byID[r.Start]
		if !ok {
			continue // deleted between the two reads
		}
		out[r.Start] = FamilyHead{RootID: r.Root, Branches: size[[2]any{l.root, l.scope}], Head: heads[l].id == r.Start}
	}
	return out, nil
}

// MessagesAtSeqs returns the entries of the user's exchange at the given
// seqs, in seq order (seqs it does not hold are left out).
func (s *Store) MessagesAtSeqs(ctx context.Context, userID, exchangeID int64, seqs []int64) ([]Message, error) {
	if _, err := s.Exchange(ctx, userID, exchangeID); err != nil {
		return nil, fmt.Errorf("messages at seqs: %w", err)
	}
	var out []Message
	if len(seqs) == 0 {
		return out, nil
	}
	err := s.db.WithContext(ctx).Where("exchange_id = ? AND seq IN ?", exchangeID, seqs).Order("seq").Find(&out).Error
	return out, wrap("messages at seqs", err)
}
