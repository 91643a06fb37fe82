package handlers

import (
	"context"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"palaver/screens"
)

// Per page, the scs session keeps the page's current conversation (as the
// general chat's sessExchange does; it replaces Galaxy's localStorage) and
// the proposals the person dismissed there, by server message id. The
// panel's open or closed state is one flag for all pages.
const (
	sessPanelClosed = "page_panel_closed"
	// maxDismissed bounds the dismissed ids kept per page (the oldest go
	// first); a rejection is also stored durably, so none comes back.
	maxDismissed = 500
)

func sessPageExchange(pageID int64) string { return "page_exchange:" + strconv.FormatInt(pageID, 10) }
func sessDismissed(pageID int64) string    { return "dismissed:" + strconv.FormatInt(pageID, 10) }

// pageCurrentExchange is the conversation the page's panel shows: the one
// the session names (0: a new chat), or when it names none yet, the page's
// most recent conversation (0: none).
func (h *Handlers) pageCurrentExchange(c *fiber.Ctx, pageID int64) (int64, error) {
	ctx := c.UserContext()
	if h.sessions.Exists(ctx, sessPageExchange(pageID)) {
		return h.sessions.GetInt64(ctx, sessPageExchange(pageID)), nil
	}
	return h.screens.LatestPageChat(ctx, currentUser(c).ID, pageID)
}

// panelState is what the session keeps about the page's chat panel (its
// current conversation resolved only when the panel is open).
func (h *Handlers) panelState(c *fiber.Ctx, pageID int64) (screens.PanelState, error) {
	st := screens.PanelState{Open: h.panelOpen(c)}
	if !st.Open {
		return st, nil
	}
	var err error
	st.Current, err = h.pageCurrentExchange(c, pageID)
	st.Dismissed = h.dismissed(c.UserContext(), pageID)
	return st, err
}

// setPageExchange makes id the page's current conversation (0: a new chat).
func (h *Handlers) setPageExchange(c *fiber.Ctx, pageID, id int64) {
	h.sessions.Put(c.UserContext(), sessPageExchange(pageID), id)
}

// dismissed is the set of the page's proposals dismissed in this session.
func (h *Handlers) dismissed(ctx context.Context, pageID int64) map[int64]bool {
	out := map[int64]bool{}
	for _, s := range strings.Split(h.sessions.GetString(ctx, sessDismissed(pageID)), ",") {
		if id, err := strconv.ParseInt(s, 10, 64); err == nil {
			out[id] = true
		}
	}
	return out
}

// dismiss adds a proposal to the page's dismissed ones. The ids are kept as
// a comma-joined string: no gob registration, and easy to bound.
func (h *Handlers) dismiss(ctx context.Context, pageID, messageID int64) {
	key := sessDismissed(pageID)
	ids := strings.Split(h.sessions.GetString(ctx, key), ",")
	if ids[0] == "" {
		ids = ids[:0]
	}
	id := strconv.FormatInt(messageID, 10)
	for _, s := range ids {
		if s == id {
			return
		}
	}
	ids = append(ids, id)
	if len(ids) > maxDismissed {
		ids = ids[len(ids)-maxDismissed:]
	}
	h.sessions.Put(ctx, key, strings.Join(ids, ","))
}

// forgetPage drops what the session keeps about a deleted page.
func (h *Handlers) forgetPage(ctx context.Context, pageID int64) {
	h.sessions.Remove(ctx, sessPageExchange(pageID))
	h.sessions.Remove(ctx, sessDismissed(pageID))
}

// panelOpen says whether the chat panel shows beside the editor.
func (h *Handlers) panelOpen(c *fiber.Ctx) bool {
	return !h.sessions.GetBool(c.UserContext(), sessPanelClosed)
}
