package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"palaver/models"
)

// MaxQueryLength bounds a user message, in characters.
const MaxQueryLength = 100_000

// Store is what the service needs of models.Store.
type Store interface {
	Exchange(ctx context.Context, userID, id int64) (*models.Exchange, error)
	Page(ctx context.Context, userID, id int64) (*models.Page, error)
	JobExchange(ctx context.Context, userID, jobID int64) (*models.Exchange, error)
	FirstAnswer(ctx context.Context, userID, exchangeID int64) (*models.Message, error)
	StartTurn(ctx context.Context, t models.TurnStart) (*models.Exchange, *models.Message, error)
	RecentContext(ctx context.Context, userID, exchangeID int64, limit int) ([]models.Message, error)
	Heartbeat(ctx context.Context, exchangeID int64, owner string) error
	FinishTurn(ctx context.Context, exchangeID int64, owner string, entries ...*models.Message) error
	FailTurn(ctx context.Context, exchangeID int64, owner, reason string) (*models.Message, error)
	RecoverStaleTurns(ctx context.Context, staleBefore time.Time, reason string) (int, error)
}

// Options configure a Service.
type Options struct {
	// ContextMessages bounds how many recent log entries an agent sees.
	ContextMessages int
	// Heartbeat is how often a running turn renews its lease; a lease not
	// renewed for StaleAfter belongs to a dead process.
	Heartbeat  time.Duration
	StaleAfter time.Duration
	Logger     *slog.Logger
}

// Service runs agents and the turns that call them.
type Service struct {
	store    Store
	provider Provider
	owner    string // this process, as the holder of turn leases
	opts     Options
}

// New builds a service over a store and a provider.
func New(store Store, provider Provider, opts Options) *Service {
	if opts.ContextMessages <= 0 {
		opts.ContextMessages = 40
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 5 * time.Second
	}
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = 6 * opts.Heartbeat
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Service{store: store, provider: provider, owner: processOwner(), opts: opts}
}

func processOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}

// SendRequest is a user message for an exchange.
type SendRequest struct {
	UserID     int64
	ExchangeID int64  // 0 starts a new exchange
	JobID      *int64 // a job's exchange: created on first use, then cached
	PageID     *int64 // a page's chat: the page assistant sees the page's current content
	AgentType  string // AgentAuto or a concrete type
	Query      string
	Context    string
	Regenerate bool // for a job: run the agent again instead of the cached answer
}

// TurnResult is the outcome of a turn.
type TurnResult struct {
	Exchange *models.Exchange
	Query    *models.Message // the user message (nil when Cached)
	Reply    *models.Message // the assistant message, or the error row when Failed
	Failed   bool
	Cached   bool // a job's first answer, returned without running the agent
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

// Send runs one turn: the user message is committed first, then the agent
// runs under the exchange's lease and its reply (or the reason it failed, as
// an error row) is committed. An agent failure is not an error of Send: it
// comes back as a Failed result. Errors are the caller's (an *InputError, a
// models.ErrNotFound, models.ErrTurnRunning) or the database's.
func (s *Service) Send(ctx context.Context, req SendRequest) (*TurnResult, error) {
	if err := ValidateQuery(req.Query); err != nil {
		return nil, err
	}
	agentType, err := resolve(req.AgentType, req.PageID != nil)
	if err != nil {
		return nil, err
	}
	start := models.TurnStart{
		UserID: req.UserID, ExchangeID: req.ExchangeID, Scope: models.ScopeGeneral,
		AgentType: agentType, Query: req.Query, Owner: s.owner,
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
				return &TurnResult{Exchange: ex, Reply: answer, Cached: true}, nil
			} else if !errors.Is(err, models.ErrNotFound) {
				return nil, err
			}
			start.ExchangeID = ex.ID // no answer yet: try again
		default:
			start.ExchangeID = ex.ID
		}
	} else if req.ExchangeID != 0 {
		ex, err := s.store.Exchange(ctx, req.UserID, req.ExchangeID)
		if err != nil {
			return nil, err
		}
		if ex.Scope != models.ScopeGeneral {
			return nil, &InputError{Msg: fmt.Sprintf("exchange %d is a %s chat; send to it with its %s", ex.ID, ex.Scope, scopeKey(ex.Scope))}
		}
	}
	ex, userMsg, err := s.store.StartTurn(ctx, start)
	if err != nil {
		return nil, err
	}
	return s.run(ctx, req, page, ex, userMsg)
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

func scopeKey(scope string) string {
	if scope == models.ScopeJob {
		return "job_id"
	}
	return "page_id"
}

// run executes the agent for a started turn (about page, in a page's chat)
// and commits its outcome.
func (s *Service) run(ctx context.Context, req SendRequest, page *models.Page, ex *models.Exchange, userMsg *models.Message) (*TurnResult, error) {
	res := &TurnResult{Exchange: ex, Query: userMsg}
	// The turn outlives a client that goes away: its outcome is committed
	// even if the request's context ends.
	ctx = context.WithoutCancel(ctx)
	stop := s.heartbeat(ctx, ex.ID)
	defer stop()

	history, err := s.store.RecentContext(ctx, req.UserID, ex.ID, s.opts.ContextMessages+1)
	if err != nil {
		return s.fail(ctx, res, err)
	}
	if n := len(history); n > 0 && history[n-1].ID == userMsg.ID {
		history = history[:n-1] // the query travels on its own
	}
	agentReq := Request{AgentType: ex.AgentType, Query: req.Query, Context: req.Context, History: history}
	if page != nil {
		agentReq.Page = &PageContext{ID: page.ID, Title: page.Title, Content: page.Content}
	}
	resp, err := s.RouteAndExecute(ctx, agentReq, nil)
	if err != nil {
		return s.fail(ctx, res, err)
	}
	agentType := resp.AgentType
	reply := &models.Message{Role: models.RoleAssistant, Content: resp.Content, AgentType: &agentType, AgentResponse: resp}
	reply.EditMode = s.proposalMode(resp, page, ex.ID)
	if err := s.store.FinishTurn(ctx, ex.ID, s.owner, reply); err != nil {
		return nil, err
	}
	res.Reply = reply
	return res, nil
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
// result, not an error, unless recording it fails too.
func (s *Service) fail(ctx context.Context, res *TurnResult, cause error) (*TurnResult, error) {
	s.opts.Logger.Warn("turn failed", "exchange", res.Exchange.ID, "err", cause)
	row, err := s.store.FailTurn(ctx, res.Exchange.ID, s.owner, "The assistant could not answer: "+cause.Error())
	if err != nil {
		return nil, fmt.Errorf("record failed turn: %w (after: %v)", err, cause)
	}
	res.Reply, res.Failed = row, true
	return res, nil
}

// heartbeat renews the lease on the exchange until the returned func is
// called.
func (s *Service) heartbeat(ctx context.Context, exchangeID int64) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(s.opts.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := s.store.Heartbeat(ctx, exchangeID, s.owner); err != nil {
					s.opts.Logger.Warn("turn heartbeat", "exchange", exchangeID, "err", err)
				}
			}
		}
	}()
	return func() { close(done) }
}

// RecoverStaleTurns fails the turns of dead processes: those whose lease was
// not renewed for StaleAfter. Run it at start-up and periodically.
func (s *Service) RecoverStaleTurns(ctx context.Context) (int, error) {
	return s.store.RecoverStaleTurns(ctx, time.Now().Add(-s.opts.StaleAfter),
		"The server stopped while this reply was being written. Your message is kept; send it again to retry.")
}
