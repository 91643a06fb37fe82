package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"palaver/models"
)

// MaxQueryLength bounds a user message, in characters.
const MaxQueryLength = 100_000

// Options configure a Service.
type Options struct {
	// ContextMessages bounds how many recent log entries an agent sees.
	ContextMessages int
	// Heartbeat is how often a running turn renews its lease; a lease not
	// renewed for StaleAfter belongs to a dead process.
	Heartbeat  time.Duration
	StaleAfter time.Duration
	// MaxAttempts bounds how often one user message is answered (the first
	// try and its retries); AutoRetries is how many of those the server makes
	// by itself after a crash.
	MaxAttempts int64
	AutoRetries int64
	// TurnTimeout bounds a whole turn: past it the turn ends as an error row
	// saying so. It counts the turn's running time only: the waits of a
	// paused turn for the person or the browser do not tick, and a resumed
	// turn gets what is left. 0 means 10 minutes.
	TurnTimeout time.Duration
	// Slots bounds the turns running at once per user; nil counts them in
	// this process's memory.
	Slots Slots
	// Hub receives the turns' events for live subscribers; nil makes one.
	Hub    *Hub
	Logger *slog.Logger
	// Observer hears how turns go (metrics); nil: nobody.
	Observer Observer
	// Tools are registered besides the builtin ones (tests add some).
	Tools []*Tool
	// Catalog, when set, is the models people pick from (catalog.go):
	// a turn runs on the one it names, its usage counts against the
	// person's token budget.
	Catalog *Catalog
}

// Service runs agents and the turns that call them.
type Service struct {
	store    *models.Store
	provider Provider
	hub      *Hub
	owner    string // this process, as the holder of turn leases
	opts     Options

	mu      sync.Mutex
	running map[int64]*running // by exchange id: the turns this process runs
	wg      sync.WaitGroup     // the turns and the background work
	// bg is the context of background work that outlives its turn (titles,
	// counted in background too); Close ends it.
	bg         context.Context
	stopBg     context.CancelFunc
	background sync.WaitGroup
	// waker carries the service's turns to and from other processes on
	// PostgreSQL (wake.go); nil on SQLite.
	waker *Waker
	// tools is every tool an agent can call (tools.go).
	tools *Registry
}

// New builds a service over a store and a provider.
func New(store *models.Store, provider Provider, opts Options) *Service {
	if opts.ContextMessages <= 0 {
		opts.ContextMessages = 40
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 5 * time.Second
	}
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = 6 * opts.Heartbeat
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 3
	}
	if opts.AutoRetries < 0 || opts.AutoRetries >= opts.MaxAttempts {
		opts.AutoRetries = 0
	}
	if opts.TurnTimeout <= 0 {
		opts.TurnTimeout = 10 * time.Minute
	}
	if opts.Slots == nil {
		opts.Slots = NewMemorySlots()
	}
	if opts.Hub == nil {
		opts.Hub = NewHub()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Observer == nil {
		opts.Observer = noObserver{}
	}
	bg, stopBg := context.WithCancel(context.Background())
	s := &Service{
		store: store, provider: provider, hub: opts.Hub, owner: processOwner(), opts: opts,
		running: map[int64]*running{}, bg: bg, stopBg: stopBg,
		tools: NewRegistry(append(builtinTools().All(), opts.Tools...)...),
	}
	store.OnDeleted(s.publishDeletions)   // deletions.go
	store.OnAccountChanged(s.hub.Recheck) // the account's sockets and streams check who they speak as
	return s
}

// Hub is where the service publishes its turns' events.
func (s *Service) Hub() *Hub { return s.hub }

// processOwner names this process as a lease holder: host/pid/nonce. The
// nonce tells this process from an earlier one that had the same pid.
func processOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}

// ownerDead says whether a lease owner is a process known to be gone: one of
// this host whose pid no longer runs. Owners on other hosts, and any with
// this process's pid (another service in this process, or a rare pid reuse),
// are judged by their heartbeat only.
func (s *Service) ownerDead(owner string) bool {
	if owner == s.owner {
		return false
	}
	parts := strings.Split(owner, "/")
	host, _ := os.Hostname()
	if len(parts) != 3 || parts[0] != host {
		return false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return false
	}
	return pid != os.Getpid() && !processAlive(pid)
}

// SendRequest is a user message for an exchange.
type SendRequest struct {
	UserID     int64
	ExchangeID int64   // 0 starts a new exchange
	JobID      *string // a job's exchange: created on first use, then cached
	PageID     *int64  // a page's chat: the page assistant sees the page's current content
	AgentType  string  // AgentAuto or a concrete type
	Query      string
	Context    string
	Regenerate bool // for a job: run the agent again instead of the cached answer
	// AfterSeq is the last seq the writer has seen of ExchangeID's log
	// (-1: none). If the log holds entries after it, the message does not
	// land after someone else's newer ones: it forks at AfterSeq+1 and the
	// turn runs in the fork (TurnResult.Forked). Not for job chats.
	AfterSeq *int64
	// Attachments are the user's files the message holds (issue 26),
	// committed with it; a file that is not the user's: not found.
	Attachments []int64
	// ProjectID and Temporary are for a new general exchange: the user's
	// project it starts in, and whether it is a temporary chat.
	ProjectID *int64
	Temporary bool
	// Model is the id of the model to answer with (0: the default).
	Model int64
}

// TurnResult is the outcome of a turn.
type TurnResult struct {
	Exchange *models.Exchange
	Query    *models.Message // the user message (nil when Cached)
	Reply    *models.Message // the assistant message, or the error row when Failed
	Failed   bool
	Stopped  bool // the user stopped it: Reply holds what was written so far
	Cached   bool // a job's first answer, returned without running the agent
	Forked   bool // Exchange is a fork made for this turn (an edit, a regeneration, a stale AfterSeq)
	// Paused says the turn waits for tool answers (Pending): Reply is nil
	// and Text holds what was written before it paused.
	Paused  bool
	Pending []PendingCall
	Text    string
	// OverBudget says the turn was refused at once: the person's token
	// budget is spent (Reply is the error row naming it).
	OverBudget bool
}

// ValidateQuery checks a user message before anything is stored.
func ValidateQuery(query string) error {
	if strings.TrimSpace(query) == "" {
		return &InputError{Msg: "No query provided"}
	}
	if n := utf8.RuneCountInString(query); n > MaxQueryLength {
		return &InputError{Msg: fmt.Sprintf("The message is %d characters long; the limit is %d", n, MaxQueryLength)}
	}
	return nil
}

// TurnTimeout is the longest a turn runs: a wait for one needs no longer.
func (s *Service) TurnTimeout() time.Duration { return s.opts.TurnTimeout }

// Send runs one turn to its end and returns its outcome (Start, then Wait).
// An agent failure is not an error of Send: it comes back as a Failed
// result. Errors are the caller's (an *InputError, a models.ErrNotFound,
// models.ErrTurnRunning, ErrTooManyTurns) or the database's.
func (s *Service) Send(ctx context.Context, req SendRequest) (*TurnResult, error) {
	t, err := s.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	return t.Wait(ctx)
}

// Start commits the user message and takes the exchange's lease, then runs
// the agent in the background, detached from ctx, and returns at once. The
// reply (or the reason it failed, as an error row) is committed when it is
// done; meanwhile the hub carries its progress to live subscribers.
func (s *Service) Start(ctx context.Context, req SendRequest) (*Turn, error) {
	// The turn outlives the request, whose strings may alias buffers the
	// server reuses for the next one (fiber's zero-copy values): keep copies.
	req.Query, req.Context, req.AgentType = strings.Clone(req.Query), strings.Clone(req.Context), strings.Clone(req.AgentType)
	if err := ValidateQuery(req.Query); err != nil {
		return nil, err
	}
	if req.ExchangeID == 0 && req.ProjectID != nil && (req.AgentType == "" || req.AgentType == AgentAuto) {
		// A new chat in a project starts with the project's agent, if it
		// names one (a project of another user: not found, as below).
		p, err := s.store.Project(ctx, req.UserID, *req.ProjectID)
		if err != nil {
			return nil, err
		}
		if p.AgentType != "" {
			req.AgentType = p.AgentType
		}
	}
	agentType, err := resolve(req.AgentType, req.PageID != nil)
	if err != nil {
		return nil, err
	}
	if req.AfterSeq != nil && *req.AfterSeq < -1 {
		return nil, &InputError{Msg: "after_seq is the last seq seen: -1 or more"}
	}
	start := models.TurnStart{
		UserID: req.UserID, ExchangeID: req.ExchangeID, Scope: models.ScopeGeneral,
		AgentType: agentType, Query: req.Query, Owner: s.owner, Attachments: req.Attachments,
		ProjectID: req.ProjectID, Temporary: req.Temporary,
	}
	if (req.ProjectID != nil || req.Temporary) && (req.PageID != nil || req.JobID != nil) {
		return nil, &InputError{Msg: "project_id and temporary are for a new general chat, not a page's or a job's"}
	}
	var page *models.Page
	if req.PageID != nil {
		if page, err = s.pageStart(ctx, req, agentType, &start); err != nil {
			return nil, err
		}
	} else if agentType == AgentPageAssistant {
		return nil, &InputError{Msg: "page_assistant answers in a page's chat: send the page_id"}
	} else if req.JobID != nil {
		ex, err := s.store.JobExchange(ctx, req.UserID, *req.JobID)
		switch {
		case errors.Is(err, models.ErrNotFound):
			if req.ExchangeID != 0 {
				// The job has no exchange yet, so the one named is another
				// conversation (or none of the user's: not found).
				if _, err := s.store.Exchange(ctx, req.UserID, req.ExchangeID); err != nil {
					return nil, err
				}
				return nil, &InputError{Msg: "exchange_id belongs to another conversation than job_id"}
			}
			start.Scope, start.JobID = models.ScopeJob, req.JobID
		case err != nil:
			return nil, err
		case req.ExchangeID != 0 && req.ExchangeID != ex.ID:
			return nil, &InputError{Msg: "exchange_id belongs to another conversation than job_id"}
		case !req.Regenerate:
			if answer, err := s.store.FirstAnswer(ctx, req.UserID, ex.ID); err == nil {
				return finished(&TurnResult{Exchange: ex, Reply: answer, Cached: true}), nil
			} else if !errors.Is(err, models.ErrNotFound) {
				return nil, err
			}
			start.ExchangeID = ex.ID // no answer yet: try again
		default:
			start.ExchangeID = ex.ID
		}
	} else if req.ExchangeID != 0 {
		start.CheckScope = true // a general chat: read with the message's commit
	}
	if req.JobID == nil && start.ExchangeID != 0 {
		start.AfterSeq = req.AfterSeq
	}
	if err := s.checkModel(ctx, req.Model); err != nil {
		return nil, err
	}
	// The slot is taken before anything is stored: a user at the limit
	// gets ErrTooManyTurns and no message of theirs is kept.
	release, err := s.opts.Slots.Acquire(ctx, SlotTurn, req.UserID)
	if err != nil {
		return nil, err
	}
	in := turnInput{context: req.Context, page: page, log: s.turnLogger(ctx), model: req.Model}
	ex, userMsg, reads, err := s.store.StartTurnReading(ctx, start, contextRead(s.opts))
	in.reads = reads
	if errors.Is(err, models.ErrLogMoved) {
		return s.forkStale(ctx, start, in, release)
	}
	if err != nil {
		release()
		if se := (*models.ScopeError)(nil); errors.As(err, &se) {
			return nil, scopeMistake(req.ExchangeID, se.Scope)
		}
		return nil, err
	}
	for _, m := range ex.Cancelled { // calls that waited, cancelled by this message: their cards go
		s.publishEntry(ex, m)
	}
	ex.Cancelled = nil
	return s.launch(ex, userMsg, in, release), nil
}

// pageStart checks a message for a page's chat and points start at it: the
// page must be the user's (else not found), the agent the page assistant,
// and a named exchange one of that page's chats.
func (s *Service) pageStart(ctx context.Context, req SendRequest, agentType string, start *models.TurnStart) (*models.Page, error) {
	if req.JobID != nil {
		return nil, &InputError{Msg: "send a page_id or a job_id, not both"}
	}
	page, err := s.store.Page(ctx, req.UserID, *req.PageID)
	if err != nil {
		return nil, err
	}
	if agentType != AgentPageAssistant {
		return nil, &InputError{Msg: fmt.Sprintf("A page's chat talks to agent_type %s (or auto), not %s", AgentPageAssistant, agentType)}
	}
	if req.ExchangeID != 0 {
		ex, err := s.store.Exchange(ctx, req.UserID, req.ExchangeID)
		if err != nil {
			return nil, err
		}
		if ex.Scope != models.ScopePage || ex.PageID == nil || *ex.PageID != page.ID {
			return nil, &InputError{Msg: "exchange_id belongs to another conversation than page_id"}
		}
	}
	start.Scope, start.PageID = models.ScopePage, &page.ID
	return page, nil
}

// scopeMistake is a message sent to an exchange that is not a general chat.
func scopeMistake(exchangeID int64, scope string) error {
	if scope == models.ScopeSubRun {
		return &InputError{Msg: fmt.Sprintf("exchange %d is the record of an agent's sub-run; it takes no messages", exchangeID)}
	}
	return &InputError{Msg: fmt.Sprintf("exchange %d is a %s chat; send to it with its %s", exchangeID, scope, scopeKey(scope))}
}

func scopeKey(scope string) string {
	if scope == models.ScopeJob {
		return "job_id"
	}
	return "page_id"
}

// proposalMode marks a page chat's reply that proposes an edit: it returns
// the proposal's edit mode, after stamping it with the hash of the content the
// agent was shown (the service knows it; a model may not). A reply outside a
// page's chat, or with a malformed proposal, proposes nothing: its edit_mode
// is removed, so no client takes it for one.
func (s *Service) proposalMode(resp *models.AgentResponse, page *models.Page, exchangeID int64) *string {
	if resp.Metadata == nil || resp.Metadata["edit_mode"] == nil {
		return nil
	}
	if page != nil {
		resp.Metadata["original_content_hash"] = DJB2(page.Content)
		if p, ok := ProposalOf(resp); ok {
			return &p.Mode
		}
	}
	s.opts.Logger.Warn("reply with an unusable proposal", "exchange", exchangeID, "edit_mode", resp.Metadata["edit_mode"])
	delete(resp.Metadata, "edit_mode")
	return nil
}

// fail records an agent failure as an error row: the failure is the turn's
// result, not an error, unless recording it fails too. The log has the whole
// cause; the row has a *FailureError's plain reason when there is one (the
// details may name hosts the user must not see).
func (s *Service) fail(ctx context.Context, res *TurnResult, cause error) (*TurnResult, error) {
	s.opts.Logger.Warn("turn failed", "exchange", res.Exchange.ID, "err", cause)
	reason := "The assistant could not answer: " + cause.Error()
	var fe *FailureError
	if errors.As(cause, &fe) {
		reason = fe.Reason
	} else if models.Unavailable(cause) {
		reason = dbAwayReason
	}
	row, err := s.recordFailure(ctx, res.Exchange.ID, reason)
	if err != nil {
		return nil, fmt.Errorf("record failed turn: %w (after: %v)", err, cause)
	}
	res.Reply, res.Failed = row, true
	return res, nil
}

// dbAwayReason is the error row of a turn the database went away under.
const dbAwayReason = "The database could not be reached while this reply was being written, so the reply was not saved. Your message is kept: retry it."

// recordWithin bounds how long a turn waits for the database to come back
// to record its failure; past it the turn is left to the stale-lease sweep
// (RecoverStaleTurns) of whichever process sees the database first.
const recordWithin = 10 * time.Minute

// recordFailure writes a turn's error row. While the database is away it
// tries again, less and less often (up to every 5 s), so that the row is
// written once it is back: the turn's heartbeat goes on renewing the lease
// meanwhile, so no other process takes the turn over. It gives up at
// recordWithin, when the service closes, or on any other error.
func (s *Service) recordFailure(ctx context.Context, exchangeID int64, reason string) (*models.Message, error) {
	wait, giveUp := 250*time.Millisecond, time.Now().Add(recordWithin)
	for {
		row, err := s.store.FailTurn(ctx, exchangeID, s.owner, reason)
		if err == nil || !models.Unavailable(err) || time.Now().After(giveUp) {
			return row, err
		}
		select {
		case <-time.After(wait):
		case <-s.bg.Done():
			return row, err
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// heartbeat renews the lease on the exchange until the returned func is
// called; if the lease turns out to be lost (another process judged this
// one dead and failed the turn), it calls lost. It is a timer, not a
// goroutine: most turns end before the first beat, and a goroutine per
// turn, started and woken to stop, cost each turn two trips through the
// scheduler.
func (s *Service) heartbeat(ctx context.Context, exchangeID int64, lost func(error)) (stop func()) {
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	beat := func() {
		if ctx.Err() != nil {
			return
		}
		started := time.Now()
		err := s.store.Heartbeat(ctx, exchangeID, s.owner)
		if errors.Is(err, models.ErrLeaseLost) {
			lost(err)
			return
		}
		if err != nil {
			s.opts.Logger.Warn("turn heartbeat", "exchange", exchangeID, "err", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped { // the next beat a period after this one began, as a ticker's
			t.Reset(max(s.opts.Heartbeat-time.Since(started), 0))
		}
	}
	mu.Lock()
	t = time.AfterFunc(s.opts.Heartbeat, beat)
	mu.Unlock()
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
	}
}
