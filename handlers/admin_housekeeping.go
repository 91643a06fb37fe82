package handlers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// adminHousekeeping shows the database's size, the orphans and the
// retention policy with its runs.
func (h *Handlers) adminHousekeeping(c *fiber.Ctx) error {
	p, err := h.screens.AdminHousekeeping(c.UserContext(), h.adminChrome(c, "Housekeeping", views.AdminHousekeepingSection))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.AdminHousekeeping(p))
}

// adminVacuum runs VACUUM and says what it gave back.
func (h *Handlers) adminVacuum(c *fiber.Ctx) error {
	r, err := h.store.AdminVacuum(c.UserContext())
	if err != nil {
		return err
	}
	return h.adminDone(c, paths.AdminHousekeeping, fmt.Sprintf("VACUUM done in %s: %s before, %s after.",
		r.Took.Round(time.Millisecond), views.Bytes(r.Before.Bytes), views.Bytes(r.After.Bytes)), nil)
}

// adminPurgeOrphans deletes the orphaned exchanges once confirmed.
func (h *Handlers) adminPurgeOrphans(c *fiber.Ctx) error {
	if !confirmed(c) {
		_, total, err := h.store.AdminOrphans(c.UserContext(), time.Now(), 0)
		if err != nil {
			return err
		}
		return h.adminConfirmAt(c, "Purge orphaned conversations?",
			"Delete "+views.Plural(total, "orphaned conversation", "orphaned conversations")+" and their messages. This cannot be undone.",
			paths.AdminOrphans, "Purge", paths.AdminHousekeeping)
	}
	exs, msgs, err := h.store.AdminPurgeOrphans(c.UserContext(), time.Now())
	if err != nil {
		return err
	}
	return h.adminDone(c, paths.AdminHousekeeping, "Purged "+views.Plural(exs, "orphaned conversation", "orphaned conversations")+
		" with "+views.Plural(msgs, "message", "messages")+".", nil)
}

// adminPurgeBlobs deletes the blobs no file names, once confirmed.
func (h *Handlers) adminPurgeBlobs(c *fiber.Ctx) error {
	if !confirmed(c) {
		counts, err := h.store.CountBlobs(c.UserContext())
		if err != nil {
			return err
		}
		return h.adminConfirmAt(c, "Purge unreferenced blobs?",
			"Delete "+views.Plural(counts.Unreferenced, "stored blob", "stored blobs")+" that no file names. No file, message or account loses anything. This cannot be undone.",
			paths.AdminBlobs, "Purge", paths.AdminHousekeeping)
	}
	n, size, err := h.store.PurgeUnreferencedBlobs(c.UserContext())
	if err != nil {
		return err
	}
	return h.adminDone(c, paths.AdminHousekeeping, "Purged "+views.Plural(n, "unreferenced blob", "unreferenced blobs")+
		" ("+views.Bytes(size)+").", nil)
}

// adminRetentionSave turns the retention policy on or off and sets its days.
func (h *Handlers) adminRetentionSave(c *fiber.Ctx) error {
	days, err := strconv.ParseInt(strings.TrimSpace(c.FormValue("days")), 10, 64)
	if err != nil {
		days = 0 // refused below with the range
	}
	st, err := h.store.AdminSetRetention(c.UserContext(), c.FormValue("enabled") == "1", days)
	if errors.Is(err, models.ErrRetentionDays) {
		return h.adminRefuse(c, err, paths.AdminHousekeeping)
	}
	if err != nil {
		return err
	}
	msg := "Retention is off: nothing is deleted automatically."
	if st.RetentionEnabled {
		msg = "Retention is on: conversations inactive for more than " + views.Plural(st.RetentionDays, "day", "days") +
			" are deleted " + screens.RetentionEvery() + " (pinned ones are kept)."
	}
	return h.adminDone(c, paths.AdminHousekeeping, msg, nil)
}

// adminRetentionDryRun counts and lists what the policy would delete now,
// deleting nothing; the dry run is logged like any run. Posted from the
// policy's form, it tries the days typed there before they are saved.
func (h *Handlers) adminRetentionDryRun(c *fiber.Ctx) error {
	ctx := c.UserContext()
	me := currentUser(c).ID
	req := models.RetentionRequest{Source: models.RetentionManual, AdminID: &me, DryRun: true, Now: time.Now()}
	if v := strings.TrimSpace(c.FormValue("days")); v != "" {
		days, err := strconv.ParseInt(v, 10, 64)
		if err != nil || days < 1 || days > models.MaxRetentionDays {
			return h.adminRefuse(c, models.ErrRetentionDays, paths.AdminHousekeeping)
		}
		req.Days = days
	}
	run, err := h.store.RunRetention(ctx, req)
	if err != nil {
		return err
	}
	dry, err := h.screens.AdminDryRun(ctx, run)
	if err != nil {
		return err
	}
	p, err := h.screens.AdminHousekeeping(ctx, h.adminChrome(c, "Housekeeping", views.AdminHousekeepingSection))
	if err != nil {
		return err
	}
	p.DryRun = dry
	if req.Days != 0 { // the form keeps what was typed, saved or not
		p.Retention.Days, p.Retention.Enabled = dry.Days, c.FormValue("enabled") == "1"
	}
	return render(c, fiber.StatusOK, views.AdminHousekeeping(p))
}

// adminRetentionRun applies the policy now, once confirmed, whether or not
// the schedule is on, and says what went.
func (h *Handlers) adminRetentionRun(c *fiber.Ctx) error {
	ctx := untimed(c) // a run over many conversations may take a while
	if !confirmed(c) {
		st, err := h.store.Settings(ctx)
		if err != nil {
			return err
		}
		return h.adminConfirmAt(c, "Apply the retention policy now?",
			"Every conversation inactive for more than "+views.Plural(st.RetentionDays, "day", "days")+
				" will be deleted, except pinned ones. Try a dry run first to see what would go. This cannot be undone.",
			paths.AdminRetentionRun, "Delete now", paths.AdminHousekeeping)
	}
	me := currentUser(c).ID
	run, err := h.store.RunRetention(ctx, models.RetentionRequest{Source: models.RetentionManual, AdminID: &me, Now: time.Now()})
	if err != nil {
		return err
	}
	return h.adminDone(c, paths.AdminHousekeeping, "Retention deleted "+views.Plural(run.DeletedExchanges, "conversation", "conversations")+
		" with "+views.Plural(run.DeletedMessages, "message", "messages")+".", nil)
}

// adminConfirmAt is adminConfirm with an explicit way back.
func (h *Handlers) adminConfirmAt(c *fiber.Ctx, heading, message, action, confirm, cancel string) error {
	return render(c, fiber.StatusOK, views.ConfirmScreen(views.ChatConfirm{
		Base: h.base(c, heading, "admin"), Heading: heading, Message: message,
		Action: action, Confirm: confirm, Cancel: cancel,
	}))
}
