package screens

import (
	"context"
	"time"

	"palaver/models"
	"palaver/views"
)

// ProjectLinks are the user's projects as the sidebar and the lists show
// them: top level by name, each with its own projects under it; current
// (0: none) marked.
func (s *Screens) ProjectLinks(ctx context.Context, v Viewer, current int64) ([]views.ProjectLink, error) {
	ps, err := s.store.Projects(ctx, v.UserID)
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	unread, err := s.store.UnreadByProject(ctx, v.UserID)
	if err != nil {
		return nil, err
	}
	return projectLinks(ps, unread, current), nil
}

func projectLinks(ps []models.ProjectSummary, unread map[int64]int64, current int64) []views.ProjectLink {
	var out []views.ProjectLink
	at := map[int64]int{}
	link := func(p models.ProjectSummary) views.ProjectLink {
		return views.ProjectLink{ID: p.ID, Name: p.Name, Count: p.ExchangeCount, Unread: unread[p.ID], Current: p.ID == current}
	}
	for _, p := range ps {
		if p.ParentID == nil {
			at[p.ID] = len(out)
			out = append(out, link(p))
		}
	}
	for _, p := range ps {
		if p.ParentID != nil {
			if i, ok := at[*p.ParentID]; ok {
				out[i].Children = append(out[i].Children, link(p))
			}
		}
	}
	return out
}

// SearchScope is the user's project as a search's scope.
func (s *Screens) SearchScope(ctx context.Context, v Viewer, projectID int64) (*views.SearchScope, error) {
	p, err := s.store.Project(ctx, v.UserID, projectID)
	if err != nil {
		return nil, err
	}
	return &views.SearchScope{ProjectID: p.ID, Name: p.Name}, nil
}

// ProjectChats bounds the chats a project's page lists.
const ProjectChats = 200

// Project builds a project's page: its instructions and its chats.
func (s *Screens) Project(ctx context.Context, v Viewer, base views.Base, id int64) (views.ProjectScreen, error) {
	p, err := s.store.Project(ctx, v.UserID, id)
	if err != nil {
		return views.ProjectScreen{}, err
	}
	sums, err := s.store.ListExchanges(ctx, v.UserID, models.ExchangeQuery{Scope: models.ScopeGeneral, ProjectID: &id, Limit: ProjectChats})
	if err != nil {
		return views.ProjectScreen{}, err
	}
	out := views.ProjectScreen{Base: base, ID: p.ID, Name: p.Name, Instructions: p.Instructions, Memory: p.Memory}
	if p.DefaultModelID != nil {
		out.DefaultModel = *p.DefaultModelID
	}
	files, err := s.store.ProjectFiles(ctx, v.UserID, id)
	if err != nil {
		return views.ProjectScreen{}, err
	}
	for _, f := range files {
		out.Files = append(out.Files, views.ProjectFile{ID: f.ID, Name: f.Name, Size: HumanBytes(f.Size), Kind: f.Kind})
	}
	now := time.Now()
	for _, e := range sums {
		title := e.Title
		if title == "" {
			title = "Untitled"
		}
		w, _ := when(e.UpdatedAt, now)
		out.Chats = append(out.Chats, views.ProjectChat{ID: e.ID, Title: title, When: w})
	}
	return out, nil
}

// AccountMemory builds the account page's instructions and memory.
func (s *Screens) AccountMemory(ctx context.Context, v Viewer) (views.AccountMemory, error) {
	ai, err := s.store.Instructions(ctx, v.UserID)
	if err != nil {
		return views.AccountMemory{}, err
	}
	mems, err := s.store.Memories(ctx, v.UserID)
	if err != nil {
		return views.AccountMemory{}, err
	}
	out := views.AccountMemory{About: ai.About, Style: ai.Style, Memory: ai.Memory}
	for _, m := range mems {
		e := views.MemoryEntry{ID: m.ID, Content: m.Content, Source: "You added this", Created: m.CreatedAt.UTC().Format("2 Jan 2006")}
		if m.Source == models.MemoryExchange {
			e.Source = "From a chat"
			if m.ExchangeID != nil {
				e.Chat = *m.ExchangeID
			}
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}
