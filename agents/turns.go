package agents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"palaver/models"
)

// Turn is a turn running on the server, detached from the request that
// started it: its user message is committed, its reply is being written.
type Turn struct {
	Exchange *models.Exchange // the header as the turn started
	Query    *models.Message  // the user message it answers
	Forked   bool             // Exchange is a fork made for this turn
	done     chan struct{}
	res      *TurnResult
	err      error
	header   *models.Exchange // the header as the reply's commit left it, for the outcome's events
	marked   bool             // the reply's commit recorded it in the read mark (markReply)
	// spent is how long the turn ran before this stretch (it paused and
	// was resumed), began when this stretch started: the turn timeout
	// counts both, never the waits between.
	spent time.Duration
	began time.Time
}

// Wait returns the turn's outcome once it is committed, or ctx's error.
func (t *Turn) Wait(ctx context.Context) (*TurnResult, error) {
	select {
	case <-t.done:
		return t.res, t.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// StartResult starts a turn (as Start does) and returns what is known at
// once: the exchange and the user message, with the reply to come (nil) over
// the hub; or the whole outcome when there was no agent to run (a job's
// cached answer). It has Send's signature, for callers that choose.
func (s *Service) StartResult(ctx context.Context, req SendRequest) (*TurnResult, error) {
	t, err := s.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	return t.Started()
}

// Started is what is known of the turn as it starts: the exchange and the
// user message, with the reply to come (nil) over the hub; or the whole
// outcome when there was no agent to run (a job's cached answer).
func (t *Turn) Started() (*TurnResult, error) {
	if t.Query == nil { // cached: already finished
		return t.res, t.err
	}
	return &TurnResult{Exchange: t.Exchange, Query: t.Query, Forked: t.Forked}, nil
}

// finished makes a Turn that is already over (a job's cached answer).
func finished(res *TurnResult) *Turn {
	t := &Turn{Exchange: res.Exchange, Query: res.Query, done: make(chan struct{}), res: res}
	close(t.done)
	return t
}

// running is a turn this process is executing.
type running struct {
	userID int64
	cancel context.CancelCauseFunc
	turn   *Turn
	reply  replySoFar
}

// replySoFar is the text of a reply being written. A piece is added and
// published under its lock, so a reader of the text has seen every piece
// published before: it can tell from an event's Offset which part of a
// piece is in what it read (screens.ReplyView).
//
// Pieces that come faster than one a replyFrame are published together:
// the first at once, the ones after it within the frame as one piece at
// its end (or when the turn publishes anything else, flush). A model that
// sends its words in bursts, or the builtin agent that sends them all at
// once, would otherwise wake every tab of the person once per word; a
// person sees no difference within a frame.
type replySoFar struct {
	mu        sync.Mutex
	text      strings.Builder
	published int         // bytes of text published
	last      time.Time   // when a piece was last published
	timer     *time.Timer // publishes the rest at the frame's end, when set
	publish   func(offset int, piece string)
}

// replyFrame is the least time between two published pieces of a reply.
const replyFrame = 16 * time.Millisecond

// add appends d; it is published now, or with what follows it within the
// frame.
func (r *replySoFar) add(d string, publish func(offset int, piece string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.text.WriteString(d)
	r.publish = publish
	switch wait := replyFrame - time.Since(r.last); {
	case r.timer != nil: // the frame's end publishes d too
	case wait <= 0:
		r.publishLocked()
	default:
		r.timer = time.AfterFunc(wait, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.timer = nil
			r.publishLocked()
		})
	}
}

// flush publishes what waits for its frame's end now: before the turn
// publishes anything else, so that the pieces come first.
func (r *replySoFar) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer != nil {
		r.timer.Stop() // when it has fired already, it finds nothing left
		r.timer = nil
	}
	r.publishLocked()
}

func (r *replySoFar) publishLocked() {
	if r.text.Len() == r.published {
		return
	}
	offset := r.published
	r.published = r.text.Len()
	r.last = time.Now()
	r.publish(offset, r.text.String()[offset:])
}

func (r *replySoFar) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.text.String()
}

// ReplySoFar is the text written so far of the reply to the user's
// exchange, when this process is writing one ("" otherwise). A tab that
// starts watching mid-reply shows it before the pieces that follow.
func (s *Service) ReplySoFar(userID, exchangeID int64) string {
	s.mu.Lock()
	r := s.running[exchangeID]
	s.mu.Unlock()
	if r == nil || r.userID != userID {
		return s.remoteReplySoFar(userID, exchangeID) // hook: wake_hooks.go
	}
	return r.reply.String()
}

// Why a turn's context ends early.
var (
	errStopped   = errors.New("stopped by the user")
	errShutdown  = errors.New("the server is shutting down")
	errLeaseLost = errors.New("the turn's lease was taken over")
	errTimedOut  = errors.New("the turn took longer than its deadline")
)

// turnInput is what a turn needs besides its exchange and user message.
type turnInput struct {
	context string
	page    *models.Page      // the page of a page chat, as first read
	retry   bool              // the user message was there already: no entry event for it
	forked  bool              // the exchange is a fork made for this turn
	answer  int               // a regeneration's place among the answers to its message (0: the first)
	resumed bool              // the turn goes on after its waiting calls were answered
	turnLog []models.Message  // a resumed turn's entries so far, as the answer left them (nil: read them)
	model   int64             // the model picked (0: the default)
	log     *slog.Logger      // the turn's lines, with the starting request's id
	reads   *models.TurnReads // read with the user message's commit (nil: the turn reads)
}

// launch runs a started turn in the background and returns at once. The
// turn holds its user's slot (release) until it ends, however it ends.
func (s *Service) launch(ex *models.Exchange, query *models.Message, in turnInput, release func()) *Turn {
	if in.log == nil {
		in.log = s.opts.Logger
	}
	t := &Turn{Exchange: ex, Query: query, Forked: in.forked, done: make(chan struct{}), began: time.Now()}
	if in.resumed {
		t.spent = time.Duration(ex.TurnActiveMS) * time.Millisecond
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	deadline := time.AfterFunc(s.opts.TurnTimeout-t.spent, func() { cancel(errTimedOut) })
	r := &running{userID: ex.UserID, cancel: cancel, turn: t}
	s.mu.Lock()
	s.running[ex.ID] = r
	s.mu.Unlock()
	s.wg.Add(1)
	if !in.retry {
		s.publishEntry(ex, query)
	}
	s.publishTurn(ex)
	go func() {
		defer s.wg.Done()
		defer close(t.done)
		defer release()
		defer cancel(nil)
		defer deadline.Stop()
		started := time.Now()
		s.opts.Observer.TurnStarted()
		in.log.Debug("turn started", "exchange", ex.ID)
		t.res, t.err = s.executeGuarded(ctx, t, &r.reply, in)
		s.mu.Lock()
		delete(s.running, ex.ID)
		s.mu.Unlock()
		if t.err != nil {
			in.log.Error("turn", "exchange", ex.ID, "err", t.err)
		}
		end := outcome(t.res, t.err)
		s.opts.Observer.TurnEnded(end, time.Since(started))
		in.log.Info("turn ended", "exchange", ex.ID, "outcome", end, "took", time.Since(started))
		s.publishOutcome(ex, t.header, t.res, t.marked)
		if t.err == nil {
			s.titleFor(ex, query, t.res)
		}
	}()
	return t
}

// executeGuarded is execute, with a panic (a provider's bug) turned into the
// turn's failure: the server goes on, the lease and the slot are given back
// and the user message is kept with an error row.
func (s *Service) executeGuarded(ctx context.Context, t *Turn, partial *replySoFar, in turnInput) (res *TurnResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			in.log.Error("turn panicked", "exchange", t.Exchange.ID, "panic", p, "stack", string(debug.Stack()))
			res, err = s.fail(context.WithoutCancel(ctx), &TurnResult{Exchange: t.Exchange, Query: t.Query, Forked: t.Forked},
				&FailureError{Reason: "The assistant failed unexpectedly. It has been logged; please try again.", Err: fmt.Errorf("panic: %v", p)})
		}
	}()
	return s.execute(ctx, t, partial, in)
}

// execute runs the agent for a turn and commits its outcome: the reply, the
// partial reply of a stopped turn, or an error row.
func (s *Service) execute(ctx context.Context, t *Turn, partial *replySoFar, in turnInput) (*TurnResult, error) {
	ex := t.Exchange
	res := &TurnResult{Exchange: ex, Query: t.Query, Forked: t.Forked}
	// Database writes outlive the turn's context: a stopped or failing turn
	// still records its outcome.
	db := context.WithoutCancel(ctx)
	stop := s.heartbeat(ctx, ex.ID, func(err error) { s.cancelTurn(ex.ID, fmt.Errorf("%w: %w", errLeaseLost, err)) })
	defer stop()

	req, page, err := s.turnRequest(db, t, in)
	if err != nil {
		return s.fail(db, res, err)
	}
	req.OnEntry = func(m *models.Message) error {
		if _, err := s.store.AppendEntry(db, ex.ID, s.owner, m); err != nil {
			return err
		}
		partial.flush()
		s.publishEntry(ex, m)
		return nil
	}
	if in.retry && in.turnLog != nil { // resumed: the answer read them
		req.TurnLog = in.turnLog
	} else if in.retry { // tried again: the turn's earlier entries
		if req.TurnLog, err = s.store.TurnEntries(db, ex.UserID, ex.ID); err != nil {
			return s.fail(db, res, err)
		}
	}
	composed, err := s.composeInstructions(db, ex, in.reads)
	if err != nil {
		return s.fail(db, res, err)
	}
	req.System = composed.Text
	tools := s.newToolRunner(ex, req.OnEntry, req.TurnLog)
	req.CallTool, req.AdmitTool, req.Tools = tools.Call, tools.Admit, s.tools
	if ex.Scope == models.ScopeGeneral {
		req.SearchChats = s.searchTool(ex, req.OnEntry, tools.Admit)
	}
	req.OnReasoning = func(d string) {
		s.hub.Publish(Event{Kind: EventReasoning, UserID: ex.UserID, ExchangeID: ex.ID, PageID: pageID(ex), Delta: d})
	}
	model, err := s.pickModel(db, ex, &req, in.model, in.reads)
	if err != nil {
		if errors.Is(err, errOverBudget) {
			res.OverBudget = true
		}
		return s.fail(db, res, err)
	}
	resp, err := s.RouteAndExecute(ctx, req, func(d string) {
		partial.add(d, func(offset int, piece string) {
			s.hub.Publish(Event{Kind: EventDelta, UserID: ex.UserID, ExchangeID: ex.ID, PageID: pageID(ex), Delta: piece, Offset: offset})
		})
	})
	partial.flush()
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errLeaseLost):
		lost := models.ErrLeaseLost
		if errors.Is(cause, models.ErrExchangeGone) { // deleted, maybe with its account: 410, not 500
			lost = models.ErrExchangeGone
		}
		return nil, fmt.Errorf("turn on exchange %d: %w", ex.ID, lost)
	case errors.Is(cause, errStopped):
		res.Stopped = true
		resp = &models.AgentResponse{
			Content: partial.String(), AgentType: ex.AgentType, Suggestions: []models.Suggestion{},
			Metadata: map[string]any{"stopped": true},
		}
	case errors.Is(cause, errShutdown):
		return s.fail(db, res, errors.New("the server restarted while this reply was being written"))
	case errors.Is(cause, errTimedOut):
		return s.fail(db, res, &FailureError{
			Reason: fmt.Sprintf("The reply took longer than %s and was stopped.", s.opts.TurnTimeout), Err: errTimedOut,
		})
	case errors.Is(err, ErrPaused) && len(tools.waiting) > 0:
		return s.pause(db, t, res, tools.waiting, partial.String())
	case err != nil:
		return s.fail(db, res, model.blame(err))
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]any{}
	}
	resp.Metadata["instructions"] = composed.Metadata() // what the agent was told
	model.note(resp)
	agentType := resp.AgentType
	reply := &models.Message{Role: models.RoleAssistant, Content: resp.Content, AgentType: &agentType, AgentResponse: resp}
	reply.EditMode = s.proposalMode(resp, page, ex.ID)
	header, marked, err := s.store.FinishReply(db, ex.ID, s.owner, s.replyMark(ex), reply)
	if err != nil {
		if models.Unavailable(err) { // the reply is lost with the connection: an error row once the database is back
			return s.fail(db, res, err)
		}
		return nil, err
	}
	t.header, t.marked = header, marked
	res.Reply = reply
	return res, nil
}

// turnRequest builds what the agent is asked: the bounded log before the
// user message (a retried turn's leftovers after it are not shown), and, in
// a page's chat, the page as it is now (returned too: proposals are made
// against it).
func (s *Service) turnRequest(ctx context.Context, t *Turn, in turnInput) (req Request, _ *models.Page, err error) {
	ex := t.Exchange
	var recent []models.Message
	if in.reads != nil {
		recent = in.reads.Recent
	} else if recent, err = s.store.RecentContext(ctx, ex.UserID, ex.ID, contextRead(s.opts)); err != nil {
		return Request{}, nil, err
	}
	history := recent[:0]
	for _, m := range recent {
		if m.ID < t.Query.ID {
			history = append(history, m)
		}
	}
	if n := len(history); n > s.opts.ContextMessages {
		history = history[n-s.opts.ContextMessages:]
	}
	req = Request{AgentType: ex.AgentType, Query: t.Query.Content, Context: in.context, History: history,
		Turn: ex.TurnCount, Answer: in.answer}
	// A file deleted meanwhile (its conversation went) is simply not there.
	if in.reads == nil || in.reads.Attached {
		if req.Attachments, err = s.store.MessageFiles(ctx, ex.UserID, t.Query.ID); err != nil {
			return Request{}, nil, err
		}
	}
	if ex.PageID == nil {
		return req, nil, nil
	}
	page := in.page
	if page == nil { // a retry: read the page as it is now
		if page, err = s.store.Page(ctx, ex.UserID, *ex.PageID); err != nil {
			return Request{}, nil, err
		}
	}
	req.Page = &PageContext{ID: page.ID, Title: page.Title, Content: page.Content}
	return req, page, nil
}

func pageID(ex *models.Exchange) int64 {
	if ex.PageID == nil {
		return 0
	}
	return *ex.PageID
}

// Stop cancels the user's running turn on the exchange and waits for it to
// commit what was written so far, marked as stopped.
func (s *Service) Stop(ctx context.Context, userID, exchangeID int64) (*TurnResult, error) {
	s.mu.Lock()
	r := s.running[exchangeID]
	s.mu.Unlock()
	if r == nil || r.userID != userID {
		ex, err := s.store.Exchange(ctx, userID, exchangeID)
		if err != nil {
			return nil, err
		}
		if ex.TurnStatus == models.TurnRunning {
			return s.stopElsewhere(ctx, userID, exchangeID) // hook: wake_hooks.go
		}
		if ex.TurnWaiting {
			return s.stopPaused(ctx, userID, exchangeID) // tools.go
		}
		return nil, ErrNotRunning
	}
	r.cancel(errStopped)
	return r.turn.Wait(ctx)
}

// ErrNotRunning means there is no reply being written to stop.
var ErrNotRunning = errors.New("no reply is being written in this conversation")

// ErrNotHere means the turn runs in another server process, which this one
// cannot stop.
var ErrNotHere = errors.New("the reply is being written by another server; it cannot be stopped from here")

func (s *Service) cancelTurn(exchangeID int64, cause error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.running[exchangeID]; r != nil {
		r.cancel(cause)
	}
}

// Retry answers the last user message of the user's failed exchange again.
func (s *Service) Retry(ctx context.Context, userID, exchangeID int64) (*Turn, error) {
	release, err := s.opts.Slots.Acquire(ctx, SlotTurn, userID)
	if err != nil {
		return nil, err
	}
	ex, query, err := s.store.RetryTurn(ctx, userID, exchangeID, s.owner, s.opts.MaxAttempts)
	if err != nil {
		release()
		return nil, err
	}
	return s.launch(ex, query, turnInput{retry: true, log: s.turnLogger(ctx)}, release), nil
}

// Idle waits until this process runs no turn and no background work (a
// title being made) is under way, the end of each turn's announcements
// included, up to ctx's deadline. It is for tests and tools that must see
// the database settle; a turn launched while it waits may or may not be
// waited for.
func (s *Service) Idle(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the running turns (each records that the server restarted,
// so it can be retried) and the background work (titles being made), and
// waits for them, up to ctx's deadline.
func (s *Service) Close(ctx context.Context) error {
	s.stopBg()
	s.mu.Lock()
	for _, r := range s.running {
		r.cancel(errShutdown)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RecoverStaleTurns fails the turns of dead processes with an error row, then
// retries those that have automatic attempts left. A turn's process is dead
// when its lease was not renewed for StaleAfter, or at once when it ran on
// this host and its process is gone (a crash, then a restart). Run it at
// start-up and periodically.
func (s *Service) RecoverStaleTurns(ctx context.Context) (int, error) {
	const reason = "The server stopped while this reply was being written. Your message is kept: retry it."
	running, err := s.store.RunningTurns(ctx)
	if err != nil {
		return 0, err
	}
	var failed []models.Exchange
	for _, ex := range running {
		if ex.TurnOwner == nil || !(s.ownerDead(*ex.TurnOwner) || s.ownerGone(ctx, &ex)) { // hook: wake_hooks.go
			continue
		}
		if _, err := s.store.FailTurn(ctx, ex.ID, *ex.TurnOwner, reason); err != nil {
			if errors.Is(err, models.ErrLeaseLost) {
				continue // it ended meanwhile
			}
			return len(failed), err
		}
		failed = append(failed, ex)
	}
	stale, err := s.store.RecoverStaleTurns(ctx, time.Now().Add(-s.opts.StaleAfter), reason)
	failed = append(failed, stale...)
	s.announceFailed(ctx, failed) // hook: wake_hooks.go
	for _, ex := range failed {
		// A sub-run is its parent turn's business, which failed with it.
		if ex.TurnAttempts > s.opts.AutoRetries || ex.Scope == models.ScopeSubRun {
			continue
		}
		if _, err := s.Retry(ctx, ex.UserID, ex.ID); err != nil {
			s.opts.Logger.Warn("automatic retry", "exchange", ex.ID, "err", err)
		}
	}
	return len(failed), err
}

// publishEntry tells the user's tabs that an entry was committed.
func (s *Service) publishEntry(ex *models.Exchange, m *models.Message) {
	s.hub.Publish(Event{Kind: EventEntry, UserID: ex.UserID, ExchangeID: ex.ID, PageID: pageID(ex), Exchange: ex, Entry: m})
}

// publishTurn tells the user's tabs the exchange's header changed.
func (s *Service) publishTurn(ex *models.Exchange) {
	e := Event{Kind: EventTurn, UserID: ex.UserID, ExchangeID: ex.ID, PageID: pageID(ex), Exchange: ex}
	if ex.Scope == models.ScopeGeneral && s.hub.Subscribed(ex.UserID) {
		// Once here, not once per tab (the sidebar's marks and count);
		// not at all when no tab of the user is here to draw them (a tab
		// that comes meanwhile reads them itself: Unread nil).
		if unread, err := s.store.Unread(context.Background(), ex.UserID); err == nil {
			e.Unread = unread
		}
	}
	s.hub.Publish(e)
}

// ReadEvent is the EventRead of a change of the user's read marks (of
// exchangeID; 0: of any number), with what every tab needs read once for
// all of them: the unread set and the exchange's header. What cannot be
// read is left for each tab to read.
func ReadEvent(ctx context.Context, store *models.Store, userID, exchangeID int64) Event {
	e := Event{Kind: EventRead, UserID: userID, ExchangeID: exchangeID}
	if unread, err := store.Unread(ctx, userID); err == nil {
		e.Unread = unread
	}
	if exchangeID != 0 {
		if ex, err := store.Exchange(ctx, userID, exchangeID); err == nil {
			e.Exchange = ex
		}
	}
	return e
}

// publishOutcome announces a finished turn: its reply (or error row) and the
// exchange's header as it now stands: header, when the reply's commit
// returned it, else read again.
func (s *Service) publishOutcome(ex, header *models.Exchange, res *TurnResult, marked bool) {
	if header != nil {
		ex = header
	} else if fresh, err := s.store.Exchange(context.Background(), ex.UserID, ex.ID); err == nil {
		ex = fresh
	}
	if res != nil && res.Reply != nil {
		if !marked {
			s.markReply(ex)
		}
		s.publishEntry(ex, res.Reply)
	}
	s.publishTurn(ex)
}

// markReply records a general chat's finished reply as seen when a tab of
// the user here shows the exchange, else as unread (models.ReplyFinished),
// before the tabs hear of it: their sidebars draw the mark as it stands.
// A tab of another process that shows it marks it read when it hears
// (handlers/live_socket.go). A mark that cannot be written is logged: the
// reply itself is stored.
func (s *Service) markReply(ex *models.Exchange) {
	seen := s.replyMark(ex)
	if seen == nil {
		return
	}
	if err := s.store.ReplyFinished(context.Background(), ex.UserID, ex.ID, *seen, time.Now().UTC()); err != nil {
		s.opts.Logger.Warn("unread mark", "exchange", ex.ID, "err", err)
	}
}

// replyMark is how a reply in ex goes into its read mark: seen when a tab
// of the user here shows the exchange, else unread; nil outside general
// chats, which have no mark.
func (s *Service) replyMark(ex *models.Exchange) *bool {
	if ex.Scope != models.ScopeGeneral {
		return nil
	}
	seen := s.hub.Watching(ex.UserID, ex.ID)
	return &seen
}

// contextRead is how many of the log's latest entries a turn reads: its
// context, and room for the turn's own entries after the user message.
func contextRead(o Options) int { return o.ContextMessages + 8 }

// composeInstructions is the instructions in force for the turn: as read
// with its user message (reads), or composed now.
func (s *Service) composeInstructions(ctx context.Context, ex *models.Exchange, reads *models.TurnReads) (models.Composed, error) {
	if reads != nil && reads.Composed != nil {
		return *reads.Composed, nil
	}
	return s.store.ComposeInstructions(ctx, ex.UserID, ex.ID)
}
