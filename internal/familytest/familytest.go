// Package familytest holds the families that the store's tests and the
// handlers' tests both arrange, so that the rule "the branch active last"
// is checked on the same cases at both layers.
package familytest

// Case arranges a family of three, root ← f1 and root ← f2, and deletes
// f2: Want names the branch that must stand for the family then (0: the
// root, 1: f1), the one the sidebar shows and a tab on f2 moves to. Each is
// a case where the three rules the code had (the sidebar's head, the
// deletion's heir, the chat delete's own sibling) differed or could.
type Case struct {
	Name string
	// root, f1, f2: minutes ago last active, pinned, archived.
	Ago      [3]int
	Pinned   [3]bool
	Archived [3]bool
	PageF1   bool // f1 is a page's chat (another scope)
	Want     int
}

// Cases are the families every layer checks.
var Cases = []Case{
	{Name: "a tie goes to the younger", Ago: [3]int{5, 5, 1}, Want: 1},
	{Name: "a pinned sibling is another list", Ago: [3]int{5, 1, 9}, Pinned: [3]bool{false, true, false}, Want: 0},
	{Name: "an archived sibling is not the sidebar's", Ago: [3]int{5, 1, 9},
		Pinned: [3]bool{true, false, false}, Archived: [3]bool{false, true, false}, Want: 0},
	{Name: "an archived branch's heir is archived", Ago: [3]int{1, 5, 9}, Archived: [3]bool{false, true, true}, Want: 1},
	{Name: "a page chat is another scope", Ago: [3]int{5, 1, 9}, PageF1: true, Want: 0},
}
