package handlers

import (
	"palaver/agents"
	"palaver/models"
)

// Live updates: one websocket per tab at /live. The tab says which exchange
// it shows, and the highest seq it has, in a watch message:
//
//	{"type": "watch", "exchange_id": N, "since": S, "page_id": P, "switches": [Q, …]}   // S = -1: none
//
// sent on open, on a switch of conversation, and after a reconnect.
//   - Q (optional) are the seqs of the entries on which the tab shows a
//     branch switcher: one that goes when its branch is deleted elsewhere
//     is taken away.
//   - P is the page whose editor the tab shows (absent or 0: none): when it
//     changes (a save, an accepted proposal, a restore, in any tab or the
//     API), the server pushes its text, preview, revisions and the watched
//     chat's proposal cards. The entries of a page's chat come as the panel
//     shows them, a proposal with its card.
//
// The server answers with rendered fragments that htmx swaps out of band by
// element id (views.LiveMessage): the entries past S, then as they happen
// the watched exchange's new entries, the text of the reply being written,
// and its turn state; and for every general exchange of the user, its
// sidebar item. The connection subscribes to the user's hub events before
// it reads anything, so what the catch-up read misses arrives as an event,
// and what both bring is sent once.
//
// Send a message and see it live in another tab, in four steps (five
// files: the agents' step is two):
//  1. handlers/chat_send.go: chatSend starts the turn (agents.Service,
//     through sendTurn) and answers the tab that sent it (chatSent, its
//     entries from screens.NewEntries).
//  2. agents/service.go: Start commits the user message (store.StartTurn)
//     and launches the turn; agents/turns.go: launch publishes the message
//     on the user's hub, and the turn later commits the reply and publishes
//     it (publishEntry, publishTurn).
//  3. handlers/live_socket.go: the other tab's connection hears the event
//     (run, events, event) and writes what screens returns (send, flush).
//  4. screens/live.go: LiveEvent, from what the tab watches and has been
//     sent (LiveTab) and the event, builds the parts it lacks: the entries
//     by NewEntries, as (1) built them, rendered by views.LiveMessage.
//
// This file holds what the handlers publish beside the agents (a header
// changed, a page saved).

// publishHeader tells the user's open tabs that an exchange's header
// changed (a title, a pin, an archive), as a turn's change is told.
func (h *Handlers) publishHeader(ex *models.Exchange) {
	var page int64
	if ex.PageID != nil {
		page = *ex.PageID
	}
	h.hub.Publish(agents.Event{Kind: agents.EventTurn, UserID: ex.UserID, ExchangeID: ex.ID, PageID: page, Exchange: ex})
}

// publishRegroup tells the user's open tabs that an exchange changed its
// place among the sidebar's lists (a pin, an archive): they draw the lists
// again, as a reload would.
func (h *Handlers) publishRegroup(ex *models.Exchange) {
	var page int64
	if ex.PageID != nil {
		page = *ex.PageID
	}
	h.hub.Publish(agents.Event{Kind: agents.EventTurn, UserID: ex.UserID, ExchangeID: ex.ID, PageID: page, Exchange: ex, Regroup: true})
}

// publishProjects tells the user's open tabs that their projects changed.
func (h *Handlers) publishProjects(userID int64) {
	h.hub.Publish(agents.Event{Kind: agents.EventProjects, UserID: userID})
}

// publishPage tells the user's open tabs that a page changed.
func (h *Handlers) publishPage(userID, pageID int64) {
	h.hub.Publish(agents.Event{Kind: agents.EventPage, UserID: userID, PageID: pageID})
}

// replySoFar is the text written so far of a reply this process is writing.
func (h *Handlers) replySoFar(userID, exchangeID int64) string {
	if h.agents == nil {
		return ""
	}
	return h.agents.ReplySoFar(userID, exchangeID)
}
