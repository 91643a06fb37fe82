package screens

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"palaver/models"
	"palaver/views"
)

// AdminModels builds /admin/models: every connection with its models.
func (s *Screens) AdminModels(ctx context.Context, ch views.AdminChrome) (views.AdminModelsScreen, error) {
	cs, err := s.store.Connections(ctx)
	if err != nil {
		return views.AdminModelsScreen{}, err
	}
	ms, err := s.store.LLMModels(ctx)
	if err != nil {
		return views.AdminModelsScreen{}, err
	}
	p := views.AdminModelsScreen{AdminChrome: ch}
	for _, c := range cs {
		item := views.AdminConnectionItem{ID: c.ID, Name: c.Name, Kind: c.Kind, BaseURL: c.BaseURL,
			HasKey: c.APIKeyEnc != "", ReadOnly: c.Source == models.SourceFlags}
		for _, m := range ms {
			if m.ConnectionID == c.ID {
				item.Models = append(item.Models, views.AdminModelItem{ID: m.ID, Model: m.Model, Name: m.Name,
					Enabled: m.Enabled, Default: m.IsDefault, InputPrice: price(m.InputPrice), OutputPrice: price(m.OutputPrice)})
			}
		}
		p.Connections = append(p.Connections, item)
	}
	return p, nil
}

func price(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// Dollars is a cost as the usage pages show it.
func Dollars(c float64) string { return fmt.Sprintf("$%.4f", c) }

// AdminUsage builds /admin/usage for a month ("YYYY-MM", already checked):
// the sums per person, model and day, and every row.
func (s *Screens) AdminUsage(ctx context.Context, ch views.AdminChrome, month string) (views.AdminUsageScreen, error) {
	rows, err := s.store.AdminUsage(ctx, month)
	if err != nil {
		return views.AdminUsageScreen{}, err
	}
	first, _ := time.Parse("2006-01", month)
	p := views.AdminUsageScreen{AdminChrome: ch, Month: month, MonthLabel: first.Format("January 2006"),
		Prev: first.AddDate(0, -1, 0).Format("2006-01"), Next: first.AddDate(0, 1, 0).Format("2006-01")}
	byUser, byModel, byDay := usageSums{}, usageSums{}, usageSums{}
	total := 0.0
	for _, r := range rows {
		user := r.Username
		if user == "" {
			user = fmt.Sprintf("(deleted account %d)", r.UserID)
		}
		byUser.add(user, r)
		byModel.add(r.Model, r)
		byDay.add(r.Day, r)
		total += r.Cost
		p.Rows = append(p.Rows, views.AdminUsageRow{Day: r.Day, User: user, Model: r.Model, In: views.Count(r.InputTokens),
			Out: views.Count(r.OutputTokens), Replies: views.Count(r.Replies), Cost: Dollars(r.Cost)})
	}
	p.ByUser, p.ByModel, p.ByDay, p.Total = byUser.list(), byModel.list(), byDay.list(), Dollars(total)
	return p, nil
}

// usageSums adds usage rows up by a label, keeping the labels' first order.
type usageSums struct {
	order []string
	sums  map[string]*models.UsageRow
}

func (u *usageSums) add(label string, r models.UsageRow) {
	if u.sums == nil {
		u.sums = map[string]*models.UsageRow{}
	}
	s, ok := u.sums[label]
	if !ok {
		s = &models.UsageRow{}
		u.sums[label] = s
		u.order = append(u.order, label)
	}
	s.InputTokens, s.OutputTokens = s.InputTokens+r.InputTokens, s.OutputTokens+r.OutputTokens
	s.Cost, s.Replies = s.Cost+r.Cost, s.Replies+r.Replies
}

func (u *usageSums) list() []views.AdminUsageSum {
	out := make([]views.AdminUsageSum, 0, len(u.order))
	for _, l := range u.order {
		s := u.sums[l]
		out = append(out, views.AdminUsageSum{Label: l, In: views.Count(s.InputTokens), Out: views.Count(s.OutputTokens),
			Replies: views.Count(s.Replies), Cost: Dollars(s.Cost)})
	}
	return out
}
