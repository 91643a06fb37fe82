package screens

import (
	"context"
	"strconv"
	"time"

	"palaver/models"
	"palaver/views"
)

// Housekeeping limits.
const (
	adminOrphansShown  = 50  // orphans listed before the purge button
	adminDryRunShown   = 100 // candidates a dry run lists
	adminRetentionRuns = 20  // runs in the log table
)

// RetentionEvery says how often the retention job runs.
func RetentionEvery() string {
	if models.RetentionEvery == time.Hour {
		return "every hour"
	}
	return "every " + models.RetentionEvery.String()
}

// AdminHousekeeping gathers what the housekeeping screen shows: the
// database's size, the orphans and the retention policy with its runs, in
// the frame ch.
func (s *Screens) AdminHousekeeping(ctx context.Context, ch views.AdminChrome) (views.AdminHousekeepingScreen, error) {
	p := views.AdminHousekeepingScreen{
		AdminChrome: ch,
		Dialect:     s.store.Dialect(), OrphanGrace: "an hour", ScheduleEvery: RetentionEvery(),
	}
	size, err := s.store.AdminDatabaseSize(ctx)
	if err != nil {
		return p, err
	}
	p.Size = adminSize(size, p.Dialect)
	blobs, err := s.store.CountBlobs(ctx)
	if err != nil {
		return p, err
	}
	p.Files, p.Blobs, p.Unreferenced, p.BlobBytes = blobs.Files, blobs.Blobs, blobs.Unreferenced, HumanBytes(blobs.Bytes)
	orphans, total, err := s.store.AdminOrphans(ctx, time.Now(), adminOrphansShown)
	if err != nil {
		return p, err
	}
	p.OrphanTotal = total
	for _, o := range orphans {
		why := "no messages"
		if !o.Empty {
			why = "its page was deleted"
			if o.PageTitle != nil {
				why = "page “" + *o.PageTitle + "” was deleted"
			}
		}
		p.Orphans = append(p.Orphans, views.AdminOrphanItem{ID: o.ID, User: o.Username, Title: DisplayTitle(o.Title),
			Why: why, When: AdminTime(o.UpdatedAt), Messages: o.Messages})
	}
	st, err := s.store.Settings(ctx)
	if err != nil {
		return p, err
	}
	days := strconv.FormatInt(st.RetentionDays, 10)
	p.Retention = views.AdminRetentionForm{Enabled: st.RetentionEnabled, Days: days, Saved: days, MaxDays: models.MaxRetentionDays}
	runs, err := s.store.AdminRetentionRuns(ctx, adminRetentionRuns)
	if err != nil {
		return p, err
	}
	for _, r := range runs {
		p.Runs = append(p.Runs, adminRunItem(r))
	}
	return p, nil
}

func adminSize(s models.DatabaseSize, dialect string) views.AdminSize {
	out := views.AdminSize{Total: views.Bytes(s.Bytes)}
	if dialect == "sqlite" {
		out.File, out.WAL, out.Free = views.Bytes(s.FileBytes), views.Bytes(s.WALBytes), views.Bytes(s.FreeBytes)
	}
	return out
}

func adminRunItem(r models.RetentionRunRow) views.AdminRunItem {
	it := views.AdminRunItem{
		Started: AdminTime(r.StartedAt), Source: "schedule", Dry: r.DryRun, Days: r.Days,
		Cutoff: AdminTime(r.Cutoff), Exchanges: r.DeletedExchanges, Messages: r.DeletedMessages, Took: "running",
	}
	switch {
	case r.Source == models.RetentionManual && r.AdminName != nil:
		it.Source = *r.AdminName
	case r.Source == models.RetentionManual:
		it.Source = "an administrator (deleted)"
	}
	if r.FinishedAt != nil {
		it.Took = r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
	}
	if r.Error != nil {
		it.Error = *r.Error
	}
	return it
}

// AdminDryRun lists what a dry run of the retention policy found.
func (s *Screens) AdminDryRun(ctx context.Context, run *models.RetentionRun) (*views.AdminDryRun, error) {
	cands, err := s.store.AdminRetentionCandidates(ctx, run.Cutoff, adminDryRunShown)
	if err != nil {
		return nil, err
	}
	dry := &views.AdminDryRun{Days: strconv.FormatInt(run.Days, 10), Exchanges: run.DeletedExchanges,
		Messages: run.DeletedMessages, Cutoff: AdminTime(run.Cutoff)}
	for _, e := range cands {
		dry.Items = append(dry.Items, views.AdminRetentionItem{ID: e.ID, User: e.Username, Title: DisplayTitle(e.Title),
			Scope: e.Scope, When: AdminTime(e.UpdatedAt), Size: views.Bytes(e.StoredBytes)})
	}
	return dry, nil
}
