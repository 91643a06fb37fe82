package handlers

import (
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/screens"
	"palaver/views"
)

// adminListSize is how many rows one batch of an admin list shows.
const adminListSize = 50

// adminExchanges shows every user's exchanges, filtered and sorted by the
// query, one batch at a time by keyset; htmx gets the results only.
func (h *Handlers) adminExchanges(c *fiber.Ctx) error {
	q, f, problem := adminExchangeQuery(c)
	res, err := h.screens.AdminExchangeResults(c.UserContext(), q, f, problem)
	if err != nil {
		return err
	}
	show := func(status int) error {
		return fragmentOrFull(c, func() error {
			// The address bar gets the filters in use, not the form's empty fields.
			c.Set("HX-Push-Url", screens.AdminListURL(q, "", ""))
			return render(c, status, views.AdminExchangeResultsFragment(res))
		}, func() error {
			form, err := h.screens.AdminFilterForm(c.UserContext(), q)
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
	if res.Error != "" && len(res.Rows) == 0 { // only what is wrong: the filters to correct
		again := func(r *Refusal) error { return show(r.Status) }
		return refuse(fiber.StatusUnprocessableEntity, res.Error).onFragment(again).onPage(again)
	}
	return show(fiber.StatusOK)
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
	if v := keep("family"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			problems = append(problems, "The family is named by one of its conversations' numbers.")
		}
		f.Family = id
	}
	if v := keep("project"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			problems = append(problems, "The project is named by its number.")
		}
		f.Project = id
	}
	f.NegativeFeedback = keep("negative") == "1"
	f.HasErrors = keep("errors") == "1"
	if f.Title = keep("q"); utf8.RuneCountInString(f.Title) > maxTitleLength {
		problems = append(problems, "The title text is too long.")
	}
	if v := keep("sort"); v != "" {
		if _, ok := screens.AdminSortLabels[v]; !ok {
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
