package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"palaver/agents"
	"palaver/models"
	"palaver/screens"
)

// apiStream streams an exchange's log as Server-Sent Events, for clients
// that are not browsers: the entries after ?since=SEQ (-1 or absent: all; a
// reconnecting EventSource's Last-Event-ID, an entry id, takes precedence)
// from the database, then the exchange's turn state, then live:
//
//	id: 42               event: delta              event: turn
//	event: entry         data: {"text": "..."}     data: {"status": "running"}
//	data: {message as GET .../messages answers}
//
// Another user's exchange or a missing one answers 404 before anything is
// streamed; a user holding 32 streams gets 429. The stream ends when the
// client goes away (noticed at the next write: keep-alives bound the wait),
// the exchange is deleted, the key or session it was opened with ends (its
// account deleted or disabled, the key revoked, the session signed out or
// ended by a password change), or the server shuts down.
func (h *Handlers) apiStream(c *fiber.Ctx) error {
	id, err := pathID(c, "id")
	if err != nil {
		return err
	}
	since, err := apiQueryInt(c, "since", -1, math.MaxInt64, "a seq: an integer of at least -1")
	if err != nil {
		return err
	}
	userID := currentUser(c).ID
	if _, err := h.store.Exchange(c.UserContext(), userID, id); err != nil {
		return err
	}
	release, err := h.slots.Acquire(c.UserContext(), agents.SlotStream, userID)
	if err != nil {
		return err
	}
	// fasthttp runs the writer at once, in its own goroutine, whatever
	// becomes of the response: run gives the slot back.
	st := &apiStreamer{h: h, userID: userID, who: h.principalOf(c), exchangeID: id, since: -1, shutdown: c.Context().Done(), release: release}
	if since != nil {
		st.since = *since
	}
	if last, err := strconv.ParseInt(c.Get("Last-Event-ID"), 10, 64); err == nil && last > 0 {
		st.lastID = last
	}
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	c.Context().SetBodyStreamWriter(st.run)
	return nil
}

// apiStreamer is one open stream. It runs after the handler returned, so it
// holds what it needs of the request.
type apiStreamer struct {
	h          *Handlers
	userID     int64
	who        principal // checked again when the account changes (principal.go)
	exchangeID int64
	since      int64 // the client has the entries up to this seq
	lastID     int64 // or up to this entry id (Last-Event-ID), when set
	shutdown   <-chan struct{}
	release    func() // the user's stream slot
	feed       *screens.LiveFeed
	reply      screens.ReplyView // what the client has of the reply being written
}

// errStreamEnded ends a stream whose exchange is gone.
var errStreamEnded = errors.New("stream: exchange deleted")

// run writes the stream until it ends. Subscribing comes first, so that
// nothing committed during the catch-up read is missed.
func (st *apiStreamer) run(w *bufio.Writer) {
	defer st.release()
	st.h.observer.LiveOpened("stream")
	defer st.h.observer.LiveClosed("stream")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := st.h.hub.Subscribe(st.userID)
	defer sub.Close()
	err := st.catchUp(ctx, w)
	keepAlive := time.NewTicker(st.h.cfg.StreamKeepAlive)
	defer keepAlive.Stop()
	for err == nil {
		if w.Flush() != nil {
			return // the client went away
		}
		select {
		case <-st.shutdown:
			return
		case <-keepAlive.C:
			if !st.signedIn(ctx) {
				return
			}
			_, err = w.WriteString(": keep-alive\n\n")
		case <-sub.Check:
			if !st.signedIn(ctx) {
				return
			}
		case e := <-sub.C:
			if sub.Lagged() {
				err = st.catchUp(ctx, w) // events were dropped: read what they pointed to
			}
			if err == nil {
				err = st.event(w, e)
			}
		}
	}
	if err != nil && !errors.Is(err, errStreamEnded) && !errors.Is(err, errStreamWrite) {
		st.h.log.Error("event stream failed", "exchange", st.exchangeID, "err", err)
	}
}

// signedIn says whether the stream may still speak as its user: its key
// was not revoked, or its session did not end, and the account is still
// there and enabled. A database that cannot say keeps the stream, to be
// checked again.
func (st *apiStreamer) signedIn(ctx context.Context) bool {
	ok, err := st.h.stillValid(ctx, st.who)
	if err != nil {
		st.h.log.Warn("event stream: check the principal", "user", st.userID, "err", err)
		return true
	}
	return ok
}

// catchUp writes the entries the client lacks, then the turn's state.
func (st *apiStreamer) catchUp(ctx context.Context, w *bufio.Writer) error {
	ex, err := st.h.store.Exchange(ctx, st.userID, st.exchangeID)
	if err != nil {
		return st.gone(err)
	}
	msgs, err := st.h.store.Messages(ctx, st.userID, st.exchangeID, nil)
	if err != nil {
		return st.gone(err)
	}
	if st.feed == nil {
		floor := st.lastID
		if floor == 0 {
			floor = screens.LiveFloor(msgs, st.since)
		}
		st.feed = screens.NewLiveFeed(st.exchangeID, floor)
	}
	for i := range msgs {
		if err := st.entry(w, &msgs[i]); err != nil {
			return err
		}
	}
	if err := writeSSE(w, "", "turn", apiTurnState{Status: ex.RunState()}); err != nil {
		return err
	}
	// A client that connects mid-reply gets the text written so far first.
	if ex.TurnStatus == models.TurnRunning && st.reply.Shown == 0 {
		if text := st.h.replySoFar(st.userID, st.exchangeID); text != "" {
			st.reply.Shown = len(text)
			return writeSSE(w, "", "delta", apiDelta{Text: text})
		}
	}
	return nil
}

// gone turns a deleted exchange into the end of the stream.
func (st *apiStreamer) gone(err error) error {
	if errors.Is(err, models.ErrNotFound) {
		return errStreamEnded
	}
	return err
}

// event writes what happened to the exchange; other exchanges' events are
// skipped.
func (st *apiStreamer) event(w *bufio.Writer, e agents.Event) error {
	if e.UserID != st.userID || e.ExchangeID != st.exchangeID {
		return nil
	}
	switch e.Kind {
	case agents.EventEntry:
		if e.Entry != nil {
			return st.entry(w, e.Entry)
		}
	case agents.EventDelta:
		// SSE has no way to replace what the client has: pieces it missed
		// stay missed, and the reply's entry brings the whole text.
		if text, _ := st.reply.Piece(e, func() string { return "" }); text != "" {
			return writeSSE(w, "", "delta", apiDelta{Text: text})
		}
	case agents.EventReasoning:
		// The reasoning as it streams; the reply's entry brings all of it.
		return writeSSE(w, "", "reasoning", apiDelta{Text: e.Delta})
	case agents.EventTurn:
		if e.Exchange == nil {
			return errStreamEnded
		}
		if e.Exchange.TurnStatus != models.TurnRunning {
			st.reply = screens.ReplyView{}
		}
		return writeSSE(w, "", "turn", apiTurnState{Status: e.Exchange.RunState()})
	}
	return nil
}

// entry writes one entry the client does not have yet.
func (st *apiStreamer) entry(w *bufio.Writer, m *models.Message) error {
	if !st.feed.Take(m) {
		return nil
	}
	if screens.IsReply(m) {
		st.reply = screens.ReplyView{} // the next reply's pieces start at 0
	}
	return writeSSE(w, strconv.FormatInt(m.ID, 10), "entry", newAPIMessage(m))
}

// apiDelta is a piece of the reply being written.
type apiDelta struct {
	Text string `json:"text"`
}

// apiTurnState is the exchange's turn: "running", "idle" or "failed".
type apiTurnState struct {
	Status string `json:"status"`
}

// errStreamWrite is a failed write: the client went away.
var errStreamWrite = errors.New("stream: write failed")

// writeSSE writes one event. JSON has no raw newlines, so data is one line.
func writeSSE(w *bufio.Writer, id, event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if id != "" {
		if _, err := fmt.Fprintf(w, "id: %s\n", id); err != nil {
			return errors.Join(errStreamWrite, err)
		}
	}
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
		return errors.Join(errStreamWrite, err)
	}
	return nil
}
