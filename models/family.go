package models

import (
	"slices"
	"time"
)

// The branch active last (issue 24). Three things ask which branch of a
// family stands for it: the sidebar, which shows one item per family and
// list (FamilyHeads); a deletion, which names the branch that stands for
// the family once a branch went (Deletion.Heir, which the live tabs and
// the tab that deleted the branch on screen follow); and a branch switcher,
// which links to the branch last used behind each alternative entry
// (BranchPoints). Family holds the one rule they all use, so a tab never
// moves to another branch than the sidebar shows.
//
// The rule: the later updated_at, ties going to the younger exchange (the
// higher id). A list is a scope, pinned or not, archived or not: the
// sidebar's two sections and the archive.

// Family is a root exchange and its forks, as much of each as the rule
// reads.
type Family struct {
	Root    int64
	Members []FamilyMember
}

// FamilyMember is one exchange of a family.
type FamilyMember struct {
	Root      int64 // its family's root (filled by the reads that scan it)
	ID        int64
	UserID    int64
	PageID    *int64
	Scope     string
	Pinned    bool
	Archived  bool
	UpdatedAt time.Time
}

// sameList says whether m and o are listed together (one sidebar section,
// or the archive, of one scope).
func (m *FamilyMember) sameList(o *FamilyMember) bool {
	return m.Scope == o.Scope && m.Pinned == o.Pinned && m.Archived == o.Archived
}

// activeAfter is the rule: whether the exchange id, updated at at, was
// active after the one updated at than with id thanID.
func activeAfter(at time.Time, id int64, than time.Time, thanID int64) bool {
	a, b := at.UTC(), than.UTC()
	return a.After(b) || (a.Equal(b) && id > thanID)
}

// lastActive is the member among those keep takes that was active last;
// nil when it takes none.
func (f *Family) lastActive(keep func(*FamilyMember) bool) *FamilyMember {
	var best *FamilyMember
	for i := range f.Members {
		m := &f.Members[i]
		if keep(m) && (best == nil || activeAfter(m.UpdatedAt, m.ID, best.UpdatedAt, best.ID)) {
			best = m
		}
	}
	return best
}

// familyOf is the family of exchanges as Store.Family returns them (the
// root first).
func familyOf(exchanges []Exchange) Family {
	f := Family{Members: make([]FamilyMember, len(exchanges))}
	for i, e := range exchanges {
		if i == 0 {
			f.Root = e.ID
		}
		f.Members[i] = FamilyMember{Root: f.Root, ID: e.ID, UserID: e.UserID, PageID: e.PageID, Scope: e.Scope,
			Pinned: e.Pinned, Archived: e.Archived, UpdatedAt: e.UpdatedAt}
	}
	return f
}

// lastUsed is the member among ids active last: the branch last used of
// those holding one entry, which a branch switcher links to.
func (f *Family) lastUsed(ids []int64) *FamilyMember {
	return f.lastActive(func(m *FamilyMember) bool { return slices.Contains(ids, m.ID) })
}

// Head is the member of m's list that the list shows for the family: the
// one of the list active last.
func (f *Family) Head(m *FamilyMember) *FamilyMember {
	return f.lastActive(m.sameList)
}

// Branches counts the family's members of a scope (a job chat's forks are
// general chats: the job's own exchange is not one of their branches).
func (f *Family) Branches(scope string) int {
	n := 0
	for i := range f.Members {
		if f.Members[i].Scope == scope {
			n++
		}
	}
	return n
}

// Heir is the member that stands for the family in x's place once the
// members gone names (x among them) are gone: of those left of x's user
// and scope, the head of x's list; else the head of the sidebar's other
// section (pinned or not, archived as x is); else the one active last of
// the scope (the family lives on only in the archive, or only outside
// it). Each is the head of its own list after the deletion, so the
// sidebar shows the heir. Nil: none of x's scope is left.
func (f *Family) Heir(x *FamilyMember, gone func(id int64) bool) *FamilyMember {
	left := func(m *FamilyMember) bool { return !gone(m.ID) && m.UserID == x.UserID && m.Scope == x.Scope }
	if h := f.lastActive(func(m *FamilyMember) bool { return left(m) && m.sameList(x) }); h != nil {
		return h
	}
	if h := f.lastActive(func(m *FamilyMember) bool { return left(m) && m.Archived == x.Archived }); h != nil {
		return h
	}
	return f.lastActive(left)
}
