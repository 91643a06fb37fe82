package models

import (
	"context"
	"fmt"
	"slices"
)

// A family's tree (issue 11): its members, read by walking the forks up to
// the root and down again (each walk bounded by MaxForkDepth), and where
// their logs part, worked out from the fork points alone (familyTree): the
// branch switchers (BranchPoints), the tree page and the comparison
// (branch_tree.go) read no log to find it.

// MaxForkDepth bounds every walk of a family's forks (each recursive
// query's depth): no data, a fork cycle included, can make one loop. A
// walk up that reaches it takes the exchange it stopped at as the family's
// root; a walk down never passes its root again. An import refuses a file
// whose forks nest deeper, or form a cycle.
const MaxForkDepth = 1000

// Family returns every exchange of the family the user's exchange belongs
// to: its root first, then every fork at any depth, in the order they were
// made (a fork is always younger than its parent).
func (s *Store) Family(ctx context.Context, userID, exchangeID int64) ([]Exchange, error) {
	db := s.db.WithContext(ctx)
	var ids []int64
	err := db.Raw(`WITH RECURSIVE up(id, parent, depth) AS (
			SELECT id, forked_from_id, 0 FROM exchanges WHERE id = ? AND user_id = ?
			UNION ALL
			SELECT e.id, e.forked_from_id, up.depth + 1 FROM exchanges e JOIN up ON e.id = up.parent
			WHERE up.depth < ?
		), down(root, id, depth) AS (
			SELECT id, id, 0 FROM up WHERE parent IS NULL OR depth = ?
			UNION ALL
			SELECT down.root, e.id, down.depth + 1 FROM down `+s.orderedJoin()+` exchanges e ON e.forked_from_id = down.id
			WHERE down.depth < ? AND e.id <> down.root
		) SELECT id FROM down`, exchangeID, userID, MaxForkDepth, MaxForkDepth, MaxForkDepth).Scan(&ids).Error
	if err != nil {
		return nil, wrap("family", err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("family: %w", ErrNotFound)
	}
	var out []Exchange
	err = db.Where("id IN ? AND user_id = ?", ids, userID).Order("id").Find(&out).Error
	return out, wrap("family", err)
}

// BranchPoint is a position of an exchange's log where its family's
// branches part: the entry at Seq differs between them (or one of them has
// none there yet). It is what the "‹ 2 / 3 ›" switcher on that message
// shows.
type BranchPoint struct {
	Seq int64
	// Branches holds one exchange per different entry at Seq, the one
	// entered first (the oldest exchange holding it) first; for another
	// entry than this exchange's, the exchange of the family that holds it
	// and was active last (the branch last used, by Family's rule).
	Branches []int64
	// Current is the index of this exchange in Branches.
	Current int
}

// BranchPoints returns, for the user's exchange, every seq where another
// member of its family shares all the entries before it but not the entry
// at it, in seq order. It reads the family and each member's log length,
// not the logs: the fork points say where logs part.
func (s *Store) BranchPoints(ctx context.Context, userID, exchangeID int64) ([]BranchPoint, error) {
	_, points, err := s.FamilyBranchPoints(ctx, userID, exchangeID)
	return points, err
}

// FamilyBranchPoints is BranchPoints with the family it read (as Family
// returns it), for a caller that needs the members too.
func (s *Store) FamilyBranchPoints(ctx context.Context, userID, exchangeID int64) ([]Exchange, []BranchPoint, error) {
	family, err := s.Family(ctx, userID, exchangeID)
	if err != nil {
		return nil, nil, fmt.Errorf("branch points: %w", err)
	}
	if len(family) == 1 {
		return family, []BranchPoint{}, nil
	}
	t, err := s.treeOf(ctx, family)
	if err != nil {
		return nil, nil, err
	}
	return family, t.branchPoints(exchangeID), nil
}

// familyTree answers where two members' logs part, from the fork points.
type familyTree struct {
	family Family // whose rule picks the branch a switcher links to
	byID   map[int64]*Exchange
	chain  map[int64][]int64 // root … member
	length map[int64]int64   // entries in the log (its next seq)
}

func newFamilyTree(family []Exchange) *familyTree {
	t := &familyTree{family: familyOf(family), byID: map[int64]*Exchange{}, chain: map[int64][]int64{}, length: map[int64]int64{}}
	for i := range family {
		t.byID[family[i].ID] = &family[i]
	}
	for _, e := range family {
		var c []int64
		// At most one step per member: a fork cycle (data no fork makes,
		// which an import refuses) ends the chain rather than the process.
		for id := e.ID; len(c) < len(family); {
			c = append(c, id)
			p := t.byID[id].ForkedFromID
			if p == nil || t.byID[*p] == nil {
				break
			}
			id = *p
		}
		slices.Reverse(c)
		t.chain[e.ID] = c
	}
	return t
}

// common is how many leading entries the logs of a and b share. A fork
// shares with its parent the entries before its fork seq, so below their
// last common ancestor each path keeps the smallest fork seq on it.
func (t *familyTree) common(a, b int64) int64 {
	ca, cb := t.chain[a], t.chain[b]
	i := 0
	for i < len(ca) && i < len(cb) && ca[i] == cb[i] {
		i++
	}
	n := min(t.length[a], t.length[b])
	for _, c := range [][]int64{ca[i:], cb[i:]} {
		for _, id := range c {
			if s := t.byID[id].ForkedAtSeq; s != nil {
				n = min(n, *s)
			}
		}
	}
	return n
}

func (t *familyTree) branchPoints(x int64) []BranchPoint {
	groups := map[int64][]int64{} // seq → members that part from x there
	for id := range t.byID {
		if id == x {
			continue
		}
		d := t.common(x, id)
		if d >= t.length[x] && d >= t.length[id] {
			continue // the same log: nothing to switch between
		}
		groups[d] = append(groups[d], id)
	}
	out := []BranchPoint{}
	for d, members := range groups {
		slices.Sort(members)
		type alt struct {
			first int64 // the oldest member holding the entry: the order
			rep   int64
		}
		// x's own entry at d is also held by every member sharing more
		// than d entries with it.
		own := alt{first: x, rep: x}
		for id := range t.byID {
			if id != x && t.common(x, id) > d {
				own.first = min(own.first, id)
			}
		}
		alts := []alt{own}
		var held [][]int64
		for _, m := range members {
			placed := false
			for i, h := range held {
				if t.sameAt(h[0], m, d) {
					held[i] = append(h, m)
					placed = true
					break
				}
			}
			if !placed {
				held = append(held, []int64{m})
			}
		}
		for _, h := range held {
			alts = append(alts, alt{first: h[0], rep: t.family.lastUsed(h).ID})
		}
		slices.SortFunc(alts, func(a, b alt) int { return int(a.first - b.first) })
		p := BranchPoint{Seq: d}
		for i, a := range alts {
			if a.rep == x {
				p.Current = i
			}
			p.Branches = append(p.Branches, a.rep)
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b BranchPoint) int { return int(a.Seq - b.Seq) })
	return out
}

// sameAt says whether a and b hold the same entry at seq d, or both none.
func (t *familyTree) sameAt(a, b, d int64) bool {
	if d >= t.length[a] || d >= t.length[b] {
		return d >= t.length[a] && d >= t.length[b]
	}
	return t.common(a, b) > d
}
