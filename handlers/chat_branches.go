package handlers

import (
	"math"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"palaver/paths"
	"palaver/views"
)

// chatBranches draws the family of one of the user's conversations as a
// tree.
func (h *Handlers) chatBranches(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	s, err := h.screens.Branches(c.UserContext(), h.viewer(c), id)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.Branches(s))
}

// chatCompareChoose takes the tree's form, two ticked branches
// (?branch=A&branch=B), to their comparison. Anything but two different
// ids: 400.
func (h *Handlers) chatCompareChoose(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	if _, err := h.screens.GeneralExchange(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	var ids []int64
	for _, raw := range c.Context().QueryArgs().PeekMulti("branch") {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n <= 0 {
			return fiber.NewError(fiber.StatusBadRequest, "A branch is named by its number.")
		}
		ids = append(ids, n)
	}
	if len(ids) != 2 || ids[0] == ids[1] {
		// The tree again, with what was ticked and why it is not enough.
		show := func(r *Refusal) error {
			s, err := h.screens.BranchesRefused(c.UserContext(), h.viewer(c), id, ids, r.Reason)
			if err != nil {
				return err
			}
			return render(c, r.Status, views.Branches(s))
		}
		return refuse(fiber.StatusBadRequest, "Tick two branches to compare them.").onFragment(show).onPage(show)
	}
	return c.Redirect(paths.ChatCompare(ids[0], ids[1]), fiber.StatusSeeOther)
}

// chatCompare shows two branches of one family side by side from where
// they part. Two conversations of different families, or another user's:
// 404.
func (h *Handlers) chatCompare(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	other, err := pathID(c, "other")
	if err != nil {
		return err
	}
	s, err := h.screens.Compare(c.UserContext(), h.viewer(c), id, other)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, views.Compare(s))
}

// chatContinue forks a conversation where time travel shows it (the form's
// at: the fork keeps the entries up to it) and opens the new one, with its
// composer and a notice saying it is a new branch. At the log's last entry
// the conversation itself is where to continue: it opens, and nothing is
// copied (a copy of the whole log would be a branch that differs in
// nothing). A seq beyond the log: 400, nothing made.
func (h *Handlers) chatContinue(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	at, err := strconv.ParseInt(c.FormValue("at"), 10, 64)
	if err != nil || at < 0 || at == math.MaxInt64 {
		return fiber.NewError(fiber.StatusBadRequest, "at: a message's seq, an integer of at least 0.")
	}
	if _, err := h.screens.GeneralExchange(c.UserContext(), currentUser(c).ID, id); err != nil {
		return err
	}
	last, err := h.store.LastSeq(c.UserContext(), currentUser(c).ID, id)
	if err != nil {
		return err
	}
	if at > last {
		return fiber.NewError(fiber.StatusBadRequest, "That message is not in this conversation.")
	}
	if at == last {
		h.sessions.Put(c.UserContext(), sessExchange, id)
		return redirect(c, paths.Chat(id))
	}
	ex, err := h.agents.Fork(c.UserContext(), currentUser(c).ID, id, at+1)
	if err != nil {
		return err
	}
	h.sessions.Put(c.UserContext(), sessExchange, ex.ID)
	h.sessions.Put(c.UserContext(), sessBranchNotice, views.NoticeContinued)
	return redirect(c, paths.Chat(ex.ID))
}
