package handlers

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// adminListSize is how many exchanges one page of the admin list shows.
const adminListSize = 50

// adminSortLabels names the sort orders in the form and the caption.
var adminSortLabels = map[string]string{
	models.AdminSortActivity: "last activity",
	models.AdminSortSize:     "stored size",
	models.AdminSortTurns:    "turns",
}

// adminExchanges shows every user's exchanges, filtered and sorted by the
// query, one keyset page at a time; htmx gets the results only.
func (h *Handlers) adminExchanges(c *fiber.Ctx) error {
	ctx := c.UserContext()
	q, f, problem := adminExchangeQuery(c)
	res := views.AdminExchangeResults{Sort: adminSortLabels[f.Sort]}
	status := fiber.StatusOK
	if problem == "" {
		rows, next, err := h.store.AdminListExchanges(ctx, f)
		if errors.Is(err, models.ErrBadCursor) {
			problem = "That page link is out of date: showing the first page instead."
			f.After = nil
			q.Del("after")
			rows, next, err = h.store.AdminListExchanges(ctx, f)
		}
		if err != nil {
			return err
		}
		total, err := h.store.AdminCountExchanges(ctx, f)
		if err != nil {
			return err
		}
		res.Rows, res.Total = adminExchangeItems(rows, time.Now()), total
		if next != nil {
			res.NextURL = adminListURL(q, "after", next.String())
		}
		if f.After != nil {
			res.FirstURL = adminListURL(q, "after", "")
		}
	}
	if problem != "" {
		res.Error = problem
		if len(res.Rows) == 0 {
			status = fiber.StatusUnprocessableEntity
		}
	}
	return fragmentOrFull(c, func() error {
		// The address bar gets the filters in use, not the form's empty fields.
		c.Set("HX-Push-Url", adminListURL(q, "", ""))
		return render(c, status, views.AdminExchangeResultsFragment(res))
	}, func() error {
		form, err := h.adminFilterForm(c, q)
		if err != nil {
			return err
		}
		return render(c, status, views.AdminExchanges(views.AdminExchangesScreen{
			AdminChrome: h.adminChrome(c, "Conversations", views.AdminExchangesSection),
			Filter:      form,
			Results:     res,
		}))
	})
}

// adminExchangeQuery reads the filters from the query string: the values to
// keep in the page links, the store's filter, and what is wrong with them
// in words ("" when nothing is).
func adminExchangeQuery(c *fiber.Ctx) (url.Values, models.AdminExchangeFilter, string) {
	q := url.Values{}
	f := models.AdminExchangeFilter{Sort: models.AdminSortActivity, Limit: adminListSize}
	var problems []string
	keep := func(name string) string {
		v := strings.TrimSpace(c.Query(name))
		if v != "" {
			q.Set(name, v)
		}
		return v
	}
	if v := keep("user"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			problems = append(problems, "Choose a user from the list.")
		}
		f.UserID = id
	}
	switch v := keep("scope"); v {
	case "", models.ScopeGeneral, models.ScopePage, models.ScopeJob:
		f.Scope = v
	default:
		problems = append(problems, "The scope is general, page or job.")
	}
	f.Agent = keep("agent")
	from, to := keep("from"), keep("to")
	if from != "" {
		t, err := time.ParseInLocation(time.DateOnly, from, time.Local)
		if err != nil {
			problems = append(problems, "“Active from” is not a date.")
		}
		f.ActiveFrom = &t
	}
	if to != "" {
		t, err := time.ParseInLocation(time.DateOnly, to, time.Local)
		if err != nil {
			problems = append(problems, "“Active to” is not a date.")
		}
		end := t.AddDate(0, 0, 1) // the whole day
		f.ActiveBefore = &end
	}
	if f.ActiveFrom != nil && f.ActiveBefore != nil && !f.ActiveFrom.Before(*f.ActiveBefore) {
		problems = append(problems, "“Active from” is after “Active to”.")
	}
	f.NegativeFeedback = keep("negative") == "1"
	f.HasErrors = keep("errors") == "1"
	if f.Title = keep("q"); utf8.RuneCountInString(f.Title) > maxTitleLength {
		problems = append(problems, "The title text is too long.")
	}
	if v := keep("sort"); v != "" {
		if _, ok := adminSortLabels[v]; !ok {
			problems = append(problems, "Sort by last activity, stored size or turns.")
		} else {
			f.Sort = v
		}
	}
	if v := keep("after"); v != "" {
		cur, err := models.ParseAdminCursor(v)
		if err != nil {
			cur = models.AdminCursor{Sort: "invalid"} // the store refuses it: back to page one
		}
		f.After = &cur
	}
	return q, f, strings.Join(problems, " ")
}

// adminListURL is the list's address with the filters of q and key set to
// value ("" removes it).
func adminListURL(q url.Values, key, value string) string {
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

// adminFilterForm fills the filter form's choices, the submitted ones chosen.
func (h *Handlers) adminFilterForm(c *fiber.Ctx, q url.Values) (views.AdminFilterForm, error) {
	ctx := c.UserContext()
	users, err := h.store.AdminUsernames(ctx)
	if err != nil {
		return views.AdminFilterForm{}, err
	}
	agents, err := h.store.AdminAgentTypes(ctx)
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
		o := opt("sort", s, adminSortLabels[s])
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
			Title:      screens.DisplayTitle(r.Title),
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
