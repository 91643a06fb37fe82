package models

import (
	"encoding/json"

	"gorm.io/gorm"
)

// Deletions as the open tabs hear of them (issue 11). A deleted exchange's
// sidebar item goes; when it was a branch of a family, the family stays in
// the sidebar, shown by another branch with one branch fewer, and the
// switchers of the family's other branches lose it. The rows are gone once
// the deletion commits, so the store reads before the delete what the tabs
// will need (the family, as the sidebar knew it), and after it, in the same
// transaction, the branch that stands for the family now; it tells this
// process through OnDeleted once committed, and on PostgreSQL the other
// processes through a notification of kind NotifyFamily sent in the
// transaction (so it comes before the deletion's own, which migration
// 00013 sends at commit).

// Deletion is an exchange deleted, as the live views must hear of it.
type Deletion struct {
	UserID     int64
	ExchangeID int64
	PageID     int64 // the page of a page chat; 0: none
	// Family is the root of the family it belonged to before it went (the
	// key the sidebar knows the family by; itself when it had no branches).
	Family int64
	// Heir is the member of the family that now stands for it, as
	// Family.Heir chooses it (the sidebar shows it for the family); read
	// after the deletion. Nil: none of its scope is left.
	Heir *Exchange
}

// OnDeleted makes f hear the exchanges deleted from now on (by any method
// of the store), after each deletion commits. One listener: a later call
// replaces it. f must not block.
func (s *Store) OnDeleted(f func([]Deletion)) { s.onDeleted.Store(&f) }

// tellDeleted passes committed deletions to the listener.
func (s *Store) tellDeleted(ds []Deletion) {
	if f := s.onDeleted.Load(); f != nil && len(ds) > 0 {
		(*f)(ds)
	}
}

// doomed is what a deletion's transaction reads of the exchanges about to go.
type doomed struct {
	list    map[int64]FamilyMember // the deleted, by id
	members map[int64]*Family      // each family touched, by root (before)
}

// deletionChunk bounds the ids of one statement of the reads below (the
// databases' bound parameters).
const deletionChunk = 1000

// beforeDelete reads, in the deleting transaction, what the tabs must hear
// of the exchanges ids (all of which are about to go): their users, and the
// families they belong to.
func (s *Store) beforeDelete(tx *gorm.DB, ids []int64) (*doomed, error) {
	d := &doomed{list: map[int64]FamilyMember{}, members: map[int64]*Family{}}
	for start := 0; start < len(ids); start += deletionChunk {
		chunk := ids[start:min(start+deletionChunk, len(ids))]
		var rows []FamilyMember
		err := tx.Raw(`WITH RECURSIVE up(start, id, parent, depth) AS (
				SELECT id, id, forked_from_id, 0 FROM exchanges WHERE id IN ?
				UNION ALL
				SELECT up.start, e.id, e.forked_from_id, up.depth + 1 FROM exchanges e JOIN up ON e.id = up.parent
				WHERE up.depth < ?
			) SELECT up.id AS root, x.id, x.user_id, x.page_id, x.scope, x.pinned, x.archived, x.updated_at
			FROM up `+s.orderedJoin()+` exchanges x ON x.id = up.start WHERE up.parent IS NULL OR up.depth = ?`, chunk, MaxForkDepth, MaxForkDepth).Scan(&rows).Error
		if err != nil {
			return nil, err
		}
		var forked []int64 // roots of the families not read yet
		for _, r := range rows {
			d.list[r.ID] = r
			if _, seen := d.members[r.Root]; !seen {
				d.members[r.Root] = &Family{Root: r.Root}
				forked = append(forked, r.Root)
			}
		}
		if len(forked) == 0 {
			continue
		}
		var members []FamilyMember
		err = tx.Raw(`WITH RECURSIVE down(root, id, depth) AS (
				SELECT id, id, 0 FROM exchanges WHERE id IN ?
				UNION ALL
				SELECT down.root, e.id, down.depth + 1 FROM down `+s.orderedJoin()+` exchanges e ON e.forked_from_id = down.id
				WHERE down.depth < ? AND e.id <> down.root
			) SELECT down.root, e.id, e.user_id, e.page_id, e.scope, e.pinned, e.archived, e.updated_at
			FROM down `+s.orderedJoin()+` exchanges e ON e.id = down.id`, forked, MaxForkDepth).Scan(&members).Error
		if err != nil {
			return nil, err
		}
		for _, m := range members {
			f := d.members[m.Root]
			f.Members = append(f.Members, m)
		}
	}
	return d, nil
}

// afterDelete chooses, still in the deleting transaction, each deleted
// exchange's heir among what is left of its family and reads it; on
// PostgreSQL it notifies the other processes of the deletions that have
// one. The deletions are what to tell once the transaction commits.
func (s *Store) afterDelete(tx *gorm.DB, d *doomed) ([]Deletion, error) {
	heirs := map[int64]int64{} // deleted → heir
	var want []int64
	gone := func(id int64) bool { _, ok := d.list[id]; return ok }
	for id, x := range d.list {
		if h := d.members[x.Root].Heir(&x, gone); h != nil {
			heirs[id] = h.ID
			want = append(want, h.ID)
		}
	}
	byID := map[int64]*Exchange{}
	for start := 0; start < len(want); start += deletionChunk {
		var rows []Exchange
		if err := tx.Where("id IN ?", want[start:min(start+deletionChunk, len(want))]).Find(&rows).Error; err != nil {
			return nil, err
		}
		for i := range rows {
			byID[rows[i].ID] = &rows[i]
		}
	}
	out := make([]Deletion, 0, len(d.list))
	for id, x := range d.list {
		del := Deletion{UserID: x.UserID, ExchangeID: id, Family: x.Root, Heir: byID[heirs[id]]}
		if x.PageID != nil {
			del.PageID = *x.PageID
		}
		out = append(out, del)
		if s.dialect != "postgres" || del.Heir == nil {
			continue // without an heir, the deletion's own notification says all
		}
		payload, _ := json.Marshal(Notice{Kind: NotifyFamily, Exchange: id, User: x.UserID, Page: del.PageID,
			Heir: del.Heir.ID, Root: x.Root, Origin: s.tag})
		if err := tx.Exec("SELECT pg_notify(?, ?)", NotifyChannel, string(payload)).Error; err != nil {
			return nil, err
		}
	}
	return out, nil
}
