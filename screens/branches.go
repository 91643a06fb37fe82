package screens

import (
	"context"
	"slices"
	"strings"
	"time"

	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// Branches builds /chat/{id}/branches: the family of one of the user's
// general exchanges as a tree, id marked.
func (s *Screens) Branches(ctx context.Context, v Viewer, id int64) (views.BranchesScreen, error) {
	ex, err := s.GeneralExchange(ctx, v.UserID, id)
	if err != nil {
		return views.BranchesScreen{}, err
	}
	family, err := s.store.FamilyBranches(ctx, v.UserID, id)
	if err != nil {
		return views.BranchesScreen{}, err
	}
	now := time.Now()
	nodes := make(map[int64]*views.BranchNode, len(family))
	children := map[int64][]int64{}
	var root int64
	for i := range family {
		b := &family[i]
		n := &views.BranchNode{ID: b.ID, Title: ChatTitle(&b.Exchange), URL: paths.Chat(b.ID), Current: b.ID == id,
			Number: i + 1, Parts: b.Parts, Length: b.Length, Turns: b.TurnCount}
		n.When, n.WhenFull = when(b.UpdatedAt, now)
		if b.First != nil {
			n.Role, n.Excerpt = roleName(b.First.Role), excerpt(b.First.Content)
		}
		nodes[b.ID] = n
		if p := b.ForkedFromID; p != nil && i > 0 {
			children[*p] = append(children[*p], b.ID)
		} else if root == 0 {
			root = b.ID
		}
	}
	var build func(id int64) views.BranchNode
	build = func(id int64) views.BranchNode {
		n := *nodes[id]
		for _, c := range children[id] {
			n.Children = append(n.Children, build(c))
		}
		return n
	}
	tree := build(root)
	tree.Root = true
	return views.BranchesScreen{
		Base: v.base("Branches · "+ChatTitle(ex), "chat"), Title: ChatTitle(ex), Back: paths.Chat(id),
		Root: tree, Count: len(family), Compare: paths.ChatCompareChoose(id),
	}, nil
}

// compareShown bounds each side of a comparison, and the shared entries
// shown above them.
const (
	compareShown = 100
	sharedShown  = 6
)

// BranchesRefused is the tree shown again for a compare form that did not
// tick two branches: those it ticked stay ticked, and why sits beside the
// button.
func (s *Screens) BranchesRefused(ctx context.Context, v Viewer, id int64, picked []int64, why string) (views.BranchesScreen, error) {
	out, err := s.Branches(ctx, v, id)
	if err != nil {
		return out, err
	}
	var pick func(n *views.BranchNode)
	pick = func(n *views.BranchNode) {
		n.Picked = slices.Contains(picked, n.ID)
		for i := range n.Children {
			pick(&n.Children[i])
		}
	}
	pick(&out.Root)
	out.Error = why
	return out, nil
}

// Compare builds /chat/{a}/compare/{b}: two of the user's general
// exchanges of one family side by side from where they part. Exchanges of
// two families, or another user's: models.ErrNotFound.
func (s *Screens) Compare(ctx context.Context, v Viewer, a, b int64) (views.CompareScreen, error) {
	for _, id := range []int64{a, b} {
		if _, err := s.GeneralExchange(ctx, v.UserID, id); err != nil {
			return views.CompareScreen{}, err
		}
	}
	p, err := s.store.Parting(ctx, v.UserID, a, b)
	if err != nil {
		return views.CompareScreen{}, err
	}
	family, err := s.store.FamilyBranches(ctx, v.UserID, a)
	if err != nil {
		return views.CompareScreen{}, err
	}
	number := func(id int64) int { // as the tree numbers them, root first
		return slices.IndexFunc(family, func(b models.Branch) bool { return b.ID == id }) + 1
	}
	out := views.CompareScreen{Base: v.base("Compare branches", "chat"), Tree: paths.ChatBranches(a), Shared: p.Common}
	if p.Common > 0 {
		shared, err := s.store.MessagesBefore(ctx, v.UserID, a, &p.Common, sharedShown)
		if err != nil {
			return out, err
		}
		out.SharedTail = readOnly(s.Messages(v, shared))
		if first, _ := seqSpan(shared); first > 0 {
			out.SharedAll = paths.ChatAt(a, p.Common-1)
		}
	}
	for i, side := range []*views.CompareSide{&out.A, &out.B} {
		br := []models.Branch{p.A, p.B}[i]
		msgs, err := s.store.MessagesAfter(ctx, v.UserID, br.ID, p.Common-1, compareShown)
		if err != nil {
			return out, err
		}
		*side = views.CompareSide{ID: br.ID, Title: ChatTitle(&br.Exchange), Number: number(br.ID), URL: paths.Chat(br.ID),
			Length: br.Length, Messages: readOnly(s.Messages(v, msgs))}
		if _, last := seqSpan(msgs); last >= 0 {
			side.More = br.Length - 1 - last
		}
	}
	return out, nil
}

// readOnly takes the controls off transcript entries shown for reading.
func readOnly(ms []views.ChatMessage) []views.ChatMessage {
	for i := range ms {
		ms[i].Feedback, ms[i].Retry, ms[i].ReadOnly = views.FeedbackView{}, views.RetryView{}, true
	}
	return ms
}

// roleName is who wrote an entry, as the tree says it.
func roleName(role string) string {
	switch role {
	case models.RoleUser:
		return "You"
	case models.RoleAssistant:
		return "Assistant"
	case models.RoleError:
		return "Error"
	default:
		return "Tool"
	}
}

// excerpt is the start of a text on one line, cut at a word near 140
// characters.
func excerpt(text string) string {
	const n = 140
	t := strings.Join(strings.Fields(text), " ")
	r := []rune(t)
	if len(r) <= n {
		return t
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + "…"
}
