package handlers

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"palaver/models"
	"palaver/paths"
	"palaver/screens"
	"palaver/views"
)

// chatNew starts a new, empty chat: the session's current exchange becomes 0.
func (h *Handlers) chatNew(c *fiber.Ctx) error {
	h.sessions.Put(c.UserContext(), sessExchange, int64(0))
	return redirect(c, paths.ChatHome)
}

// errChatTitle is the answer to a rename without a usable title.
var errChatTitle = fiber.NewError(fiber.StatusUnprocessableEntity,
	fmt.Sprintf("A title needs 1 to %d characters.", maxTitleLength))

// chatRename sets a conversation's title. htmx gets the updated history
// item; a plain form goes back where it came from.
func (h *Handlers) chatRename(c *fiber.Ctx) error {
	ex, err := h.chatExchange(c)
	if err != nil {
		return err
	}
	title := strings.TrimSpace(c.FormValue("title"))
	if title == "" || utf8.RuneCountInString(title) > maxTitleLength {
		return errChatTitle
	}
	ex, err = h.store.RenameExchange(c.UserContext(), currentUser(c).ID, ex.ID, title)
	if err != nil {
		return err
	}
	h.publishHeader(ex) // every tab: the sidebar item, and where it is open, its name
	return done(c, chatBackTo(c, paths.Chat(ex.ID)), func() error {
		current := h.chatCurrentID(c)
		it, err := h.screens.FamilyItem(c.UserContext(), h.viewer(c), ex, ex.ID) // the item shows this branch
		if err != nil {
			return err
		}
		it.Current = ex.ID == current
		it.Group = "" // the header above it stays where it is
		return render(c, fiber.StatusOK, views.HistoryEntry(it))
	})
}

// chatDelete deletes a conversation once confirmed (htmx confirms with the
// browser's dialog; a plain form first gets a confirmation page).
func (h *Handlers) chatDelete(c *fiber.Ctx) error {
	ex, err := h.chatExchange(c)
	if err != nil {
		return err
	}
	self := paths.Chat(ex.ID)
	if !confirmed(c) {
		family, err := h.store.Family(c.UserContext(), currentUser(c).ID, ex.ID)
		if err != nil {
			return err
		}
		return render(c, fiber.StatusOK, views.ConfirmScreen(views.ChatConfirm{
			Base: h.base(c, "Delete conversation", "chat"), Heading: views.DeleteHeading(len(family)),
			Message: views.DeleteQuestion(screens.ChatTitle(ex), len(family)),
			Action:  self + "/delete", Confirm: "Delete", Cancel: self,
		}))
	}
	current := h.chatCurrentID(c)
	gone, err := h.store.DeleteExchange(c.UserContext(), currentUser(c).ID, ex.ID)
	if err != nil {
		return err
	}
	if current == ex.ID {
		h.sessions.Put(c.UserContext(), sessExchange, int64(0))
	}
	if current == ex.ID || chatTabShows(c, self) {
		// The tab showed it: to the branch that stands for the family now
		// (the one the sidebar shows), when it was a branch, else to a new
		// chat.
		next := paths.ChatHome
		if gone.Heir != nil {
			h.sessions.Put(c.UserContext(), sessExchange, gone.Heir.ID)
			next = paths.Chat(gone.Heir.ID)
		}
		return redirect(c, next)
	}
	if gone.Heir != nil {
		// A branch of a family: the family's item stays, showing another
		// branch; the sidebar's lists come again.
		return done(c, paths.ChatHome, func() error {
			side, err := h.chatSidebar(c)
			if err != nil {
				return err
			}
			c.Set("HX-Retarget", "#history")
			c.Set("HX-Reswap", "outerHTML")
			return render(c, fiber.StatusOK, views.HistoryNav(side))
		})
	}
	return done(c, paths.ChatHome, removed(c)) // hx-swap="delete" removes the item
}

// chatClear deletes all the user's general conversations once confirmed;
// page and job chats stay.
func (h *Handlers) chatClear(c *fiber.Ctx) error {
	if !confirmed(c) {
		return render(c, fiber.StatusOK, views.ConfirmScreen(views.ChatConfirm{
			Base: h.base(c, "Clear all conversations", "chat"), Heading: "Delete all your conversations?",
			Message: "Every conversation in your chat history will be deleted. " + views.ClearAllKept + " This cannot be undone.",
			Action:  paths.ChatClear, Confirm: "Delete all", Cancel: paths.ChatHome,
		}))
	}
	if _, _, err := h.store.ClearExchanges(c.UserContext(), currentUser(c).ID, models.ScopeGeneral, 0); err != nil {
		return err
	}
	h.sessions.Put(c.UserContext(), sessExchange, int64(0))
	return redirect(c, paths.ChatHome)
}

// chatExchange is the general exchange the :id route parameter names.
func (h *Handlers) chatExchange(c *fiber.Ctx) (*models.Exchange, error) {
	id, err := pathID(c, "id")
	if err != nil {
		return nil, err
	}
	return h.screens.GeneralExchange(c.UserContext(), currentUser(c).ID, id)
}

// chatTabShows says whether the htmx request came from a tab showing path.
func chatTabShows(c *fiber.Ctx, path string) bool {
	u, err := url.Parse(c.Get("HX-Current-URL"))
	return err == nil && u.Path == path
}

// chatBackPath matches the chat pages a form may send the browser back to.
var chatBackPath = regexp.MustCompile(`^/chat(/[1-9][0-9]*|/archived)?$`)

// chatBackTo is where a plain form goes after it is done: the chat page it was
// posted from (the Referer, if it is one of this server's chat pages, keeping
// only its history cursor), else fallback.
func chatBackTo(c *fiber.Ctx, fallback string) string {
	ref, err := url.Parse(c.Get(fiber.HeaderReferer))
	if err != nil || !chatBackPath.MatchString(ref.Path) || (ref.Host != "" && ref.Host != c.Hostname()) {
		return fallback
	}
	if before := ref.Query().Get("before"); before != "" {
		return ref.Path + "?before=" + url.QueryEscape(before)
	}
	return ref.Path
}
