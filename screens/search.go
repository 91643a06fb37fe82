package screens

import (
	"context"
	"net/url"
	"time"

	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// SearchBatch is how many hits one page of the HTML search holds.
const SearchBatch = 20

// Search runs one page of the user's search and maps its hits to links
// that open each conversation on the message. text is what was typed (for
// the next page's address). Job chats have no screen of their own, so their
// hits are left out; the next page still starts after the last hit the store
// returned, shown or not.
func (s *Screens) Search(ctx context.Context, v Viewer, text string, q models.SearchQuery) (views.SearchResults, error) {
	q.Limit = SearchBatch
	hits, err := s.store.Search(ctx, v.UserID, q)
	if err != nil {
		return views.SearchResults{}, err
	}
	r := views.SearchResults{Query: text, More: q.Before != nil}
	now := time.Now()
	for _, h := range hits {
		link := h.Link()
		if link == "" {
			continue
		}
		hit := views.SearchHit{URL: link, Title: DisplayTitle(h.Title), Snippet: h.Snippet, Role: hitRole(h.Role),
			PageChat: h.Scope == models.ScopePage}
		hit.When, hit.WhenFull = when(h.At, now)
		r.Hits = append(r.Hits, hit)
	}
	if len(hits) == q.Limit {
		next := url.Values{"q": {text}, "before": {hits[len(hits)-1].Cursor.String()}}
		r.Next = paths.WithQuery(paths.ChatSearch, next)
	}
	return r, nil
}

// hitRole names whose words matched.
func hitRole(role string) string {
	switch role {
	case models.RoleUser:
		return "You"
	case models.RoleAssistant:
		return "Assistant"
	case models.RoleTitle:
		return "Title"
	default:
		return "Tool"
	}
}
