package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"palaver/models"
)

// Wake-ups across processes (issue 13). Several processes may share one
// PostgreSQL database; each holds one listening connection (a Waker).
// Every commit a live view shows notifies in its own transaction
// (migration 00013), with a pointer: ids and a kind. The waker of every
// other process re-reads what it points to, once, and fans it out on its
// hub as the turns it runs itself are fanned out; its subscribers' feeds let
// each entry through once. A reply's pieces cross too, sent by the process
// writing it in batches (deltaEvery). When the listening connection is
// lost, the waker reconnects, and every subscriber catches up from the
// database (Hub.Resync). The waker also carries Stop to the process that
// runs a turn, and says which lease owners are alive (the listening
// connection holds an advisory lock while its process lives). SQLite has
// no waker: one process tells its own subscribers in memory.

const (
	// deltaEvery spaces the notifications carrying a process's reply
	// pieces: at most about ten a second, whatever the model's pace.
	deltaEvery = 100 * time.Millisecond
	// notifyLimit bounds a payload, under PostgreSQL's 8000 bytes.
	notifyLimit = 7800
	// stopWait bounds how long a Stop asked of another process waits for
	// the turn to end.
	stopWait = 10 * time.Second
	// reconnectMax bounds the pause between attempts to listen again.
	reconnectMax = 5 * time.Second
)

// Waker is a process's listening connection and what it does with what it
// hears.
type Waker struct {
	dsn   string
	store *models.Store
	svc   *Service
	hub   *Hub
	log   *slog.Logger
	tag   string // the application_name of the store's sessions: its commits

	mu      sync.Mutex
	replies map[int64]*remoteReply // replies other processes are writing, by exchange
	out     []*models.Notice       // reply pieces to send
	kick    chan struct{}

	tries    atomic.Int64 // listening sessions begun
	connects atomic.Int64 // listening sessions that got as far as listening
}

// remoteReply is the text of a reply another process is writing, as heard.
type remoteReply struct {
	userID int64
	open   bool      // a turn runs: its pieces are taken
	broken bool      // pieces were missed: the text is not the reply's start
	text   []byte    // the pieces heard, from offset 0
	ended  time.Time // when it closed (closed ones are forgotten later)
}

// StartWaker starts svc's waker on the PostgreSQL database at dsn, for as
// long as ctx lives: it listens (reconnecting on its own), passes the
// service's reply pieces on, and from then on the service's Stop reaches
// turns of other processes, ReplySoFar their replies, and RecoverStaleTurns
// knows which owners are gone. Call it before the service runs turns.
func StartWaker(ctx context.Context, svc *Service, store *models.Store, dsn string) *Waker {
	w := &Waker{
		dsn: dsn, store: store, svc: svc, hub: svc.hub, log: svc.opts.Logger, tag: store.ProcessTag(),
		replies: map[int64]*remoteReply{}, kick: make(chan struct{}, 1),
	}
	svc.waker = w
	w.hub.SetRelay(w.relay)
	go w.listen(ctx)
	go w.send(ctx)
	return w
}

// listen holds the listening connection, reconnecting after a pause that
// grows while the database stays away.
func (w *Waker) listen(ctx context.Context) {
	const first = 100 * time.Millisecond
	pause := first
	for ctx.Err() == nil {
		before := w.connects.Load()
		err := w.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if w.connects.Load() != before {
			pause = first // it was up: try again at once
		}
		w.log.Warn("listening connection lost; reconnecting", "err", err, "in", pause)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, reconnectMax)
	}
}

// session connects, listens and handles notifications until the connection
// fails. Once listening again after a loss, every subscriber catches up.
func (w *Waker) session(ctx context.Context) error {
	try := w.tries.Add(1)
	cfg, err := pgx.ParseConfig(w.dsn)
	if err != nil {
		return err
	}
	cfg.RuntimeParams["application_name"] = fmt.Sprintf("palaver listener %d", os.Getpid())
	// A host that dies closes nothing: the server notices by TCP
	// keepalives, within about 10 s, and lets this process's liveness lock
	// go (not on a Unix socket, where a dead process's socket is closed).
	cfg.RuntimeParams["tcp_keepalives_idle"] = "5"
	cfg.RuntimeParams["tcp_keepalives_interval"] = "2"
	cfg.RuntimeParams["tcp_keepalives_count"] = "3"
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.ConnectConfig(cctx, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+models.NotifyChannel); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", models.LivenessKey(w.svc.owner)); err != nil {
		return err
	}
	w.connects.Add(1)
	if try > 1 { // not the first try: what was committed meanwhile was not heard
		w.log.Info("listening again; live views catch up from the database")
		w.mu.Lock()
		clear(w.replies)
		w.mu.Unlock()
		w.hub.Resync()
	}
	w.takeStops(ctx) // asked while we were not listening
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var notice models.Notice
		if err := json.Unmarshal([]byte(n.Payload), &notice); err != nil {
			w.log.Warn("unreadable notification", "payload", n.Payload, "err", err)
			continue
		}
		if err := w.handle(ctx, &notice); err != nil && ctx.Err() == nil {
			// What it pointed to is in the database: the subscribers
			// re-read it.
			w.log.Warn("wake-up", "kind", notice.Kind, "exchange", notice.Exchange, "err", err)
			w.hub.Resync()
		}
	}
}

// handle fans out what a notification points to.
func (w *Waker) handle(ctx context.Context, n *models.Notice) error {
	if n.Kind == models.NotifyStop {
		if n.Owner == w.svc.owner {
			return w.takeStops(ctx, n.Exchange)
		}
		return nil
	}
	if n.Origin == w.tag {
		return nil // committed here: told already
	}
	if n.Kind == models.NotifyAccount {
		w.hub.Recheck(n.User)
		return nil
	}
	if n.Kind == models.NotifyExchange {
		// Whether its reply's pieces are taken follows the turn's state,
		// whoever watches (a tab may open mid-reply).
		if n.Status == models.TurnRunning {
			w.openReply(n.Exchange, n.User)
		} else {
			w.closeReply(n.Exchange)
		}
	}
	if n.Kind != models.NotifyDelta && !w.hub.Watched(n.User) {
		return nil // nobody here shows it: nothing to read (a tab that opens later reads the database)
	}
	switch n.Kind {
	case models.NotifyEntries:
		ex, err := w.store.WakeExchange(ctx, n.Exchange)
		if errors.Is(err, models.ErrNotFound) {
			return nil // deleted since: its own notification follows
		}
		if err != nil {
			return err
		}
		entries, err := w.store.WakeEntries(ctx, n.Exchange, n.From, n.To)
		if err != nil {
			return err
		}
		for i := range entries {
			if entries[i].Role == models.RoleAssistant || entries[i].Role == models.RoleError {
				w.closeReply(ex.ID)
			}
			w.hub.PublishRemote(Event{Kind: EventEntry, UserID: ex.UserID, ExchangeID: ex.ID, PageID: pageID(ex), Exchange: ex, Entry: &entries[i]})
		}
	case models.NotifyExchange:
		ex, err := w.store.WakeExchange(ctx, n.Exchange)
		if errors.Is(err, models.ErrNotFound) {
			w.closeReply(n.Exchange)
			w.hub.PublishRemote(Event{Kind: EventTurn, UserID: n.User, ExchangeID: n.Exchange})
			return nil
		}
		if err != nil {
			return err
		}
		w.hub.PublishRemote(Event{Kind: EventTurn, UserID: ex.UserID, ExchangeID: ex.ID, PageID: pageID(ex), Exchange: ex})
	case models.NotifyFamily:
		return w.deleted(ctx, n) // deletions.go
	case models.NotifyRead:
		w.hub.PublishRemote(ReadEvent(ctx, w.store, n.User, n.Exchange))
	case models.NotifyPage:
		w.hub.PublishRemote(Event{Kind: EventPage, UserID: n.User, PageID: n.Page})
	case models.NotifyDelta:
		if w.heard(n) {
			w.hub.PublishRemote(Event{Kind: EventDelta, UserID: n.User, ExchangeID: n.Exchange, PageID: n.Page, Delta: n.Text, Offset: n.Offset})
		}
	case models.NotifyReasoning:
		if w.thinking(n) {
			w.hub.PublishRemote(Event{Kind: EventReasoning, UserID: n.User, ExchangeID: n.Exchange, PageID: n.Page, Delta: n.Text})
		}
	}
	return nil
}

// openReply starts taking the pieces of a reply another process writes.
func (w *Waker) openReply(exchangeID, userID int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.replies[exchangeID]; r != nil && r.open {
		return
	}
	w.replies[exchangeID] = &remoteReply{userID: userID, open: true}
}

// closeReply ends a reply: pieces that come after it are late, and dropped.
func (w *Waker) closeReply(exchangeID int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	w.replies[exchangeID] = &remoteReply{ended: now}
	for id, r := range w.replies { // forget replies long over
		if !r.open && now.Sub(r.ended) > time.Minute {
			delete(w.replies, id)
		}
	}
}

// heard adds a piece to its reply's text, and says whether to show it: a
// piece of a reply that ended already is late. A piece of a reply not heard
// of (the listener reconnected meanwhile) opens it.
func (w *Waker) heard(n *models.Notice) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.replies[n.Exchange]
	if r == nil {
		r = &remoteReply{userID: n.User, open: true, broken: n.Offset > 0}
		w.replies[n.Exchange] = r
	}
	if !r.open || r.userID != n.User {
		return false
	}
	switch end := n.Offset + len(n.Text); {
	case r.broken:
	case end <= len(r.text): // heard already
		return false
	case n.Offset <= len(r.text):
		r.text = append(r.text, n.Text[len(r.text)-n.Offset:]...)
	default: // pieces were missed
		r.broken = true
	}
	return true
}

// thinking says whether a piece of reasoning belongs to a reply another
// process is writing now: one that has ended (its entry came) drops it.
func (w *Waker) thinking(n *models.Notice) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.replies[n.Exchange]
	return r == nil || r.open && r.userID == n.User
}

// replySoFar is the text heard so far of the reply another process is
// writing to the user's exchange ("" when none, or when pieces were missed).
func (w *Waker) replySoFar(userID, exchangeID int64) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := w.replies[exchangeID]
	if r == nil || !r.open || r.broken || r.userID != userID {
		return ""
	}
	return string(r.text)
}

// relay queues a piece of a reply (or of its reasoning) this process
// writes for the others.
func (w *Waker) relay(e Event) {
	kind := models.NotifyDelta
	if e.Kind == EventReasoning {
		kind = models.NotifyReasoning // no offsets: pieces of one turn's thinking, in order
	}
	w.mu.Lock()
	if k := len(w.out); k > 0 {
		last := w.out[k-1]
		if last.Kind == kind && last.Exchange == e.ExchangeID &&
			(kind == models.NotifyReasoning || last.Offset+len(last.Text) == e.Offset) {
			last.Text += e.Delta
			w.mu.Unlock()
			return
		}
	}
	w.out = append(w.out, &models.Notice{Kind: kind, Exchange: e.ExchangeID, User: e.UserID, Page: e.PageID,
		Offset: e.Offset, Text: e.Delta, Origin: w.tag})
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// send notifies the queued pieces, at most once every deltaEvery: the
// first piece of a burst goes at once, the rest in the next batch.
func (w *Waker) send(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		}
		w.mu.Lock()
		out := w.out
		w.out = nil
		w.mu.Unlock()
		for _, n := range out {
			for _, p := range payloads(n) {
				if err := w.store.Notify(ctx, p); err != nil && ctx.Err() == nil {
					// Pieces are ephemeral: the reply's entry brings the text.
					w.log.Warn("send reply pieces", "exchange", n.Exchange, "err", err)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(deltaEvery):
		}
	}
}

// payloads encodes a notice as one or more payloads under notifyLimit,
// splitting its text at character boundaries.
func payloads(n *models.Notice) []string {
	b := encode(n)
	if len(b) <= notifyLimit || len(n.Text) < 8 {
		return []string{string(b)}
	}
	cut := len(n.Text) / 2
	for cut > 0 && !utf8.RuneStart(n.Text[cut]) {
		cut--
	}
	first, second := *n, *n
	first.Text, second.Text, second.Offset = n.Text[:cut], n.Text[cut:], n.Offset+cut
	return append(payloads(&first), payloads(&second)...)
}

// encode is JSON without HTML escaping (a piece's < and > stay one byte).
func encode(n *models.Notice) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(n)
	return bytes.TrimSpace(buf.Bytes())
}

// takeStops stops this process's turns that a Stop was asked of elsewhere
// (all those recorded, or those of the given exchanges).
func (w *Waker) takeStops(ctx context.Context, exchangeIDs ...int64) error {
	ids, err := w.store.TakeStopRequests(ctx, w.svc.owner, exchangeIDs...)
	if err != nil {
		w.log.Warn("stop requests", "err", err)
		return err
	}
	for _, id := range ids {
		w.svc.cancelTurn(id, errStopped)
	}
	return nil
}

// stop asks the process running the user's turn to stop it, waits for the
// turn to end, and answers as a local Stop does: what the reply held.
func (w *Waker) stop(ctx context.Context, userID, exchangeID int64) (*TurnResult, error) {
	ok, err := w.store.RequestStop(ctx, userID, exchangeID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNotRunning // it ended meanwhile
	}
	ctx, cancel := context.WithTimeout(ctx, stopWait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ErrNotHere
		case <-tick.C:
		}
		ex, err := w.store.Exchange(ctx, userID, exchangeID)
		if err != nil {
			return nil, err
		}
		if ex.TurnStatus == models.TurnRunning {
			continue
		}
		msgs, err := w.store.Messages(ctx, userID, exchangeID, nil)
		if err != nil {
			return nil, err
		}
		res := &TurnResult{Exchange: ex, Stopped: true}
		for i := len(msgs) - 1; i >= 0 && res.Reply == nil; i-- {
			switch msgs[i].Role {
			case models.RoleAssistant, models.RoleError:
				res.Reply = &msgs[i]
				res.Failed = msgs[i].Role == models.RoleError
			case models.RoleUser:
				i = 0 // the reply would be after the last user message
			}
		}
		if res.Reply == nil {
			res.Reply = &models.Message{Role: models.RoleAssistant}
		}
		return res, nil
	}
}

// ownerGone says whether the owner of a running turn is a process that is
// gone: its heartbeat is late (two beats) and it no longer holds its
// liveness lock. (Its lock alone would not do: a live process whose
// listening connection is reconnecting holds none for a moment.)
func (w *Waker) ownerGone(ctx context.Context, ex *models.Exchange) bool {
	if ex.TurnOwner == nil || *ex.TurnOwner == w.svc.owner {
		return false
	}
	if ex.TurnHeartbeatAt != nil && time.Since(*ex.TurnHeartbeatAt) < 2*w.svc.opts.Heartbeat {
		return false
	}
	alive, err := w.store.OwnerAlive(ctx, *ex.TurnOwner)
	if err != nil {
		w.log.Warn("owner alive", "owner", *ex.TurnOwner, "err", err)
		return false
	}
	return !alive
}
