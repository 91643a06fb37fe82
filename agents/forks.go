package agents

import (
	"context"
	"fmt"
	"strings"

	"palaver/models"
)

// Branches (issue 11). An edit, a regeneration and a message written
// against an older view of the log all make a fork (models.Store.StartFork)
// and run a turn there, the fork and its first user message in one
// transaction. The turn is an ordinary one: same slots, lease, events and
// outcome as a Send; the parent is left as it was, and a turn running in it
// goes on there.

// ForkRequest is a fork of one of the user's exchanges at Seq (the fork
// keeps the entries before Seq). With Query, the fork continues with that
// user message at Seq (an edit of the message at Seq) and a turn answers
// it; without, the fork is only made.
type ForkRequest struct {
	UserID     int64
	ExchangeID int64
	Seq        int64
	Query      string
	AgentType  string // AgentAuto (or "") or a concrete type
	Context    string
}

// RegenerateRequest asks for a new answer to the user message before the
// reply at Seq (nil: the log's last reply), in a fork that ends with that
// message; the old answer stays where it was.
type RegenerateRequest struct {
	UserID     int64
	ExchangeID int64
	Seq        *int64
	AgentType  string
	Context    string
	Model      int64 // the model to answer with (0: the default)
}

// Fork makes a fork of the user's exchange at seq without a turn, and tells
// the user's tabs about the new exchange. A seq beyond the log gives
// models.ErrBadSeq; another user's exchange models.ErrNotFound.
func (s *Service) Fork(ctx context.Context, userID, exchangeID, seq int64) (*models.Exchange, error) {
	ex, err := s.store.Fork(ctx, userID, exchangeID, seq)
	if err != nil {
		return nil, err
	}
	s.publishTurn(ex)
	return ex, nil
}

// StartFork makes a fork with its first user message (req.Query, checked
// as a send's) and starts the turn that answers it; a request without a
// Query is Fork. The returned Turn is running (or, without Query, nil).
func (s *Service) StartFork(ctx context.Context, req ForkRequest) (*Turn, *models.Exchange, error) {
	if req.Query == "" {
		ex, err := s.Fork(ctx, req.UserID, req.ExchangeID, req.Seq)
		return nil, ex, err
	}
	req.Query, req.Context, req.AgentType = strings.Clone(req.Query), strings.Clone(req.Context), strings.Clone(req.AgentType)
	if err := ValidateQuery(req.Query); err != nil {
		return nil, nil, err
	}
	parent, err := s.store.Exchange(ctx, req.UserID, req.ExchangeID)
	if err != nil {
		return nil, nil, err
	}
	agentType, page, err := s.forkAgent(ctx, parent, req.AgentType)
	if err != nil {
		return nil, nil, err
	}
	t, err := s.startFork(ctx, models.ForkStart{
		UserID: req.UserID, ExchangeID: req.ExchangeID, Seq: req.Seq, Query: req.Query, AgentType: agentType,
	}, turnInput{context: req.Context, page: page, log: s.turnLogger(ctx)}, nil)
	if err != nil {
		return nil, nil, err
	}
	return t, t.Exchange, nil
}

// Regenerate answers again the user message before the reply at req.Seq,
// in a fork that ends with that message (copied, not sent again). A seq
// that names no reply gives models.ErrBadSeq.
func (s *Service) Regenerate(ctx context.Context, req RegenerateRequest) (*Turn, error) {
	req.Context, req.AgentType = strings.Clone(req.Context), strings.Clone(req.AgentType)
	parent, err := s.store.Exchange(ctx, req.UserID, req.ExchangeID)
	if err != nil {
		return nil, err
	}
	agentType, page, err := s.forkAgent(ctx, parent, req.AgentType)
	if err != nil {
		return nil, err
	}
	if err := s.checkModel(ctx, req.Model); err != nil {
		return nil, err
	}
	at, err := s.store.RegenerateSeq(ctx, req.UserID, req.ExchangeID, req.Seq)
	if err != nil {
		return nil, err
	}
	answer, err := s.nextAnswer(ctx, req.UserID, req.ExchangeID, at)
	if err != nil {
		return nil, err
	}
	// The question is an entry the fork copied, not a new one: no entry
	// event for it (as for a retry).
	return s.startFork(ctx, models.ForkStart{UserID: req.UserID, ExchangeID: req.ExchangeID, Seq: at, AgentType: agentType},
		turnInput{context: req.Context, page: page, retry: true, answer: answer, log: s.turnLogger(ctx), model: req.Model}, nil)
}

// nextAnswer is the place of a new answer at seq among the answers the
// family already holds there: the branches at that seq, or the exchange's
// own answer alone, and then one more.
func (s *Service) nextAnswer(ctx context.Context, userID, exchangeID, seq int64) (int, error) {
	points, err := s.store.BranchPoints(ctx, userID, exchangeID)
	if err != nil {
		return 0, err
	}
	for _, p := range points {
		if p.Seq == seq {
			return len(p.Branches) + 1, nil
		}
	}
	return 2, nil
}

// startFork takes a turn slot (unless release is given: the caller holds
// one), makes the fork with its turn and launches it.
func (s *Service) startFork(ctx context.Context, f models.ForkStart, in turnInput, release func()) (*Turn, error) {
	if release == nil {
		var err error
		if release, err = s.opts.Slots.Acquire(ctx, SlotTurn, f.UserID); err != nil {
			return nil, err
		}
	}
	f.Owner = s.owner
	ex, query, err := s.store.StartFork(ctx, f)
	if err != nil {
		release()
		return nil, err
	}
	in.forked = true
	return s.launch(ex, query, in, release), nil
}

// forkAgent resolves the agent of a turn in a fork of parent: a page's chat
// talks to the page assistant, about the page as it is now (returned).
func (s *Service) forkAgent(ctx context.Context, parent *models.Exchange, agentType string) (string, *models.Page, error) {
	agentType, err := resolve(agentType, parent.PageID != nil)
	if err != nil {
		return "", nil, err
	}
	if parent.PageID == nil {
		if agentType == AgentPageAssistant {
			return "", nil, &InputError{Msg: "page_assistant answers in a page's chat: send the page_id"}
		}
		return agentType, nil, nil
	}
	if agentType != AgentPageAssistant {
		return "", nil, &InputError{Msg: fmt.Sprintf("A page's chat talks to agent_type %s (or auto), not %s", AgentPageAssistant, agentType)}
	}
	page, err := s.store.Page(ctx, parent.UserID, *parent.PageID)
	if err != nil {
		return "", nil, err
	}
	return agentType, page, nil
}

// forkStale runs a send whose after_seq the log has moved past (StartTurn
// said models.ErrLogMoved) as a fork at after_seq+1, holding the slot the
// send took.
func (s *Service) forkStale(ctx context.Context, start models.TurnStart, in turnInput, release func()) (*Turn, error) {
	return s.startFork(ctx, models.ForkStart{
		UserID: start.UserID, ExchangeID: start.ExchangeID, Seq: *start.AfterSeq + 1, Query: start.Query, AgentType: start.AgentType,
		Attachments: start.Attachments,
	}, in, release)
}
