package screens

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"time"

	"palaver/models"
	"palaver/paths"
	"palaver/views"
)

// AdminExchangeResults lists every user's exchanges by the filter f, one
// keyset batch, with links that keep the filters in use (q). A batch link
// that is out of date gives the first batch, said in Error (and "after"
// goes from q); problem is what is wrong with the filters, shown instead of
// any rows.
func (s *Screens) AdminExchangeResults(ctx context.Context, q url.Values, f models.AdminExchangeFilter, problem string) (views.AdminExchangeResults, error) {
	res := views.AdminExchangeResults{Sort: AdminSortLabels[f.Sort], Error: problem}
	if problem != "" {
		return res, nil
	}
	rows, next, err := s.store.AdminListExchanges(ctx, f)
	if errors.Is(err, models.ErrBadCursor) {
		res.Error = "That page link is out of date: showing the first page instead."
		f.After = nil
		q.Del("after")
		rows, next, err = s.store.AdminListExchanges(ctx, f)
	}
	if err != nil {
		return res, err
	}
	total, err := s.store.AdminCountExchanges(ctx, f)
	if err != nil {
		return res, err
	}
	res.Rows, res.Total = adminExchangeItems(rows, time.Now()), total
	if next != nil {
		res.NextURL = AdminListURL(q, "after", next.String())
	}
	if f.After != nil {
		res.FirstURL = AdminListURL(q, "after", "")
	}
	return res, nil
}

// AdminSortLabels names the sort orders in the form and the caption.
var AdminSortLabels = map[string]string{
	models.AdminSortActivity: "last activity",
	models.AdminSortSize:     "stored size",
	models.AdminSortTurns:    "turns",
}

// AdminListURL is the list's address with the filters of q and key set to
// value ("" removes it).
func AdminListURL(q url.Values, key, value string) string {
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	v.Del(key)
	if value != "" {
		v.Set(key, value)
	}
	return paths.WithQuery(paths.AdminExchanges, v)
}

// AdminFilterForm fills the filter form's choices, the submitted ones (q)
// chosen.
func (s *Screens) AdminFilterForm(ctx context.Context, q url.Values) (views.AdminFilterForm, error) {
	users, err := s.store.AdminUsernames(ctx)
	if err != nil {
		return views.AdminFilterForm{}, err
	}
	agents, err := s.store.AdminAgentTypes(ctx)
	if err != nil {
		return views.AdminFilterForm{}, err
	}
	opt := func(name, value, label string) views.AdminOption {
		return views.AdminOption{Value: value, Label: label, Selected: q.Get(name) == value}
	}
	form := views.AdminFilterForm{
		Users:    []views.AdminOption{opt("user", "", "All users")},
		Scopes:   []views.AdminOption{opt("scope", "", "All scopes")},
		Agents:   []views.AdminOption{opt("agent", "", "All agents")},
		From:     q.Get("from"),
		To:       q.Get("to"),
		Title:    q.Get("q"),
		Project:  q.Get("project"),
		Negative: q.Get("negative") == "1",
		Errors:   q.Get("errors") == "1",
	}
	for _, u := range users {
		form.Users = append(form.Users, opt("user", strconv.FormatInt(u.ID, 10), u.Username))
	}
	for _, s := range []string{models.ScopeGeneral, models.ScopePage, models.ScopeJob} {
		form.Scopes = append(form.Scopes, opt("scope", s, s))
	}
	for _, a := range agents {
		form.Agents = append(form.Agents, opt("agent", a, a))
	}
	for _, s := range models.AdminSorts {
		o := opt("sort", s, AdminSortLabels[s])
		o.Selected = o.Selected || (s == models.AdminSortActivity && q.Get("sort") == "")
		form.Sorts = append(form.Sorts, o)
	}
	return form, nil
}

// adminExchangeItems maps rows to the list's items.
func adminExchangeItems(rows []models.AdminExchangeRow, now time.Time) []views.AdminExchangeItem {
	out := make([]views.AdminExchangeItem, len(rows))
	for i := range rows {
		r := &rows[i]
		out[i] = views.AdminExchangeItem{
			ID:         r.ID,
			URL:        paths.AdminExchange(r.ID),
			User:       r.Username,
			UserURL:    paths.AdminExchangesOf(r.UserID),
			Title:      DisplayTitle(r.Title),
			ScopeKind:  r.Scope,
			ScopeLabel: adminScopeLabel(r),
			Agent:      r.AgentType,
			Turns:      r.TurnCount,
			When:       views.RelativeTime(r.UpdatedAt, now),
			WhenFull:   adminTimeFull(r.UpdatedAt),
			Size:       views.Bytes(r.StoredBytes),
			Up:         r.FeedbackUp,
			Down:       r.FeedbackDown,
			Errors:     r.Errors,
			Accepted:   r.ProposalsAccepted,
			Rejected:   r.ProposalsRejected,
			Open:       r.ProposalsOpen,
			Pinned:     r.Pinned,
		}
		if r.ForkedFromID != nil {
			title := "an untitled conversation"
			if r.ParentTitle != nil {
				title = "“" + DisplayTitle(*r.ParentTitle) + "”"
			}
			out[i].ForkOf = &views.AdminForkOf{ID: *r.ForkedFromID, Title: title, URL: paths.AdminExchange(*r.ForkedFromID)}
		}
		if r.ProjectID != nil {
			out[i].ProjectID = *r.ProjectID
			out[i].ProjectURL = paths.WithQuery(paths.AdminExchanges, url.Values{"project": {strconv.FormatInt(*r.ProjectID, 10)}})
		}
		if r.ForkedFromID != nil || r.Forks > 0 {
			out[i].FamilyURL = paths.WithQuery(paths.AdminExchanges, url.Values{"family": {strconv.FormatInt(r.ID, 10)}})
		}
	}
	return out
}

// adminScopeLabel says where an exchange lives: general, the page by its
// title, or the job by its id.
func adminScopeLabel(r *models.AdminExchangeRow) string {
	switch r.Scope {
	case models.ScopePage:
		label := "page"
		if r.PageTitle != nil {
			label += ": " + *r.PageTitle
		}
		if r.PageDeleted {
			label += " (deleted)"
		}
		return label
	case models.ScopeJob:
		if r.JobID != nil {
			return "job #" + *r.JobID
		}
	}
	return r.Scope
}
