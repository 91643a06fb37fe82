package screens

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// SearchBatch is how many hits one batch of the HTML search holds.
const SearchBatch = 20

// Search runs one batch of the user's search and maps its hits to links
// that open each conversation on the message. text is what was typed (for
// the next batch's address). Job chats have no screen of their own, so their
// hits are left out; the next batch still starts after the last hit the store
// returned, shown or not.
//
// A family's branches show an entry they share once (familyHits). With
// q.ProjectID set it searches that project's chats (scope names it).
func (s *Screens) Search(ctx context.Context, v Viewer, text string, q models.SearchQuery, scope *views.SearchScope) (views.SearchResults, error) {
	q.Limit = SearchBatch
	hits, err := s.store.Search(ctx, v.UserID, q)
	if err != nil {
		return views.SearchResults{}, err
	}
	r := views.SearchResults{Query: text, More: q.Before != nil, Scope: scope}
	shown := hits[:0:0]
	for _, h := range hits {
		if h.Link() != "" {
			shown = append(shown, h)
		}
	}
	groups, err := s.familyHits(ctx, v.UserID, shown)
	if err != nil {
		return views.SearchResults{}, err
	}
	now := time.Now()
	for _, g := range groups {
		h := g.hit
		hit := views.SearchHit{URL: h.Link(), Title: DisplayTitle(h.Title), Snippet: h.Snippet, Role: hitRole(h),
			PageChat: h.Scope == models.ScopePage, Branches: g.branches}
		hit.When, hit.WhenFull = when(h.At, now)
		r.Hits = append(r.Hits, hit)
	}
	if len(hits) == q.Limit {
		next := url.Values{"q": {text}, "before": {hits[len(hits)-1].Cursor.String()}}
		if q.ProjectID != nil {
			next.Set("project_id", strconv.FormatInt(*q.ProjectID, 10))
		}
		r.Next = paths.WithQuery(paths.ChatSearch, next)
	}
	return r, nil
}

// hitGroup is one line of the search screen: the best of the hits that
// are one entry of a family, and how many branches show it.
type hitGroup struct {
	hit      models.SearchHit
	branches int
}

// familyHits folds the hits that are one entry of a family into one line:
// a message the family's forks copied is one hit already (copies are not
// indexed), shown "in N branches" with the forks that hold a copy; branches
// an import wrote out whole (the same text at the same place in each) and
// a title every fork carries are a hit per branch, folded here. The
// JSON API keeps one item per matching message, as its contract says.
func (s *Screens) familyHits(ctx context.Context, userID int64, hits []models.SearchHit) ([]hitGroup, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	var exchanges, messages []int64
	for _, h := range hits {
		exchanges = append(exchanges, h.ExchangeID)
		if h.MessageID != nil {
			messages = append(messages, *h.MessageID)
		}
	}
	heads, err := s.heads.FamilyHeads(ctx, userID, exchanges)
	if err != nil {
		return nil, err
	}
	copies, err := s.store.CopiedIn(ctx, userID, messages)
	if err != nil {
		return nil, err
	}
	type key struct {
		root      int64
		role, hit string
		seq       int64
	}
	var out []hitGroup
	at := map[key]int{}
	for _, h := range hits {
		root := h.ExchangeID
		if fh, ok := heads[h.ExchangeID]; ok {
			root = fh.RootID
		}
		k := key{root: root, role: h.Role, hit: h.Snippet, seq: -1}
		if h.Seq != nil {
			k.seq = *h.Seq
		}
		n := 1
		if h.MessageID != nil {
			n += copies[*h.MessageID]
		}
		if i, ok := at[k]; ok {
			out[i].branches += n // the best hit of the group leads it
			continue
		}
		at[k] = len(out)
		out = append(out, hitGroup{hit: h, branches: n})
	}
	return out, nil
}

// hitRole names whose words matched.
func hitRole(h models.SearchHit) string {
	switch {
	case h.InReasoning:
		return "Assistant's thinking"
	case h.Role == models.RoleUser:
		return "You"
	case h.Role == models.RoleAssistant:
		return "Assistant"
	case h.Role == models.RoleTitle:
		return "Title"
	default:
		return "Tool"
	}
}
