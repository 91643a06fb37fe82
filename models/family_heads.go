package models

import (
	"context"
	"fmt"
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
	// was active later: the one the list shows for the family (Family.Head).
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
	// The members' columns are carried down the recursion, not joined
	// after it: SQLite's planner took the join's exchanges for the outer
	// loop and scanned them all (26 ms a call in a 100,000-chat database,
	// at every live event), and SQLite reads the recursive step in the
	// order written (CROSS JOIN), the forks found by their parent's id.
	var members []FamilyMember
	err = db.Raw(familyMembersSQL(s.orderedJoin()), rootIDs, userID, MaxForkDepth).Scan(&members).Error
	if err != nil {
		return nil, wrap("family heads", err)
	}
	families := map[int64]*Family{}
	for _, m := range members {
		f := families[m.Root]
		if f == nil {
			f = &Family{Root: m.Root}
			families[m.Root] = f
		}
		f.Members = append(f.Members, m)
	}
	for _, r := range roots {
		f := families[r.Root]
		if f == nil {
			continue // deleted between the two reads
		}
		for i := range f.Members {
			if m := &f.Members[i]; m.ID == r.Start {
				out[r.Start] = FamilyHead{RootID: r.Root, Branches: f.Branches(m.Scope), Head: f.Head(m).ID == m.ID}
			}
		}
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

// orderedJoin is the join that SQLite reads in the order written (CROSS
// JOIN); PostgreSQL plans a plain JOIN well, and takes no ON after CROSS
// JOIN.
func (s *Store) orderedJoin() string { return orderedJoin(s.dialect) }

func orderedJoin(dialect string) string {
	if dialect == "postgres" {
		return "JOIN"
	}
	return "CROSS JOIN"
}

// familyMembersSQL reads the members of the families whose roots are
// bound first (IN ?), of the user bound second, to the depth bound third,
// join being orderedJoin's.
func familyMembersSQL(join string) string {
	return `WITH RECURSIVE down(root, id, user_id, scope, pinned, archived, updated_at, depth) AS (
			SELECT id, id, user_id, scope, pinned, archived, updated_at, 0 FROM exchanges WHERE id IN ? AND +user_id = ?
			UNION ALL
			SELECT down.root, e.id, e.user_id, e.scope, e.pinned, e.archived, e.updated_at, down.depth + 1
			FROM down ` + join + ` exchanges e ON e.forked_from_id = down.id
			WHERE down.depth < ? AND e.id <> down.root
		) SELECT root, id, user_id, scope, pinned, archived, updated_at FROM down`
}
