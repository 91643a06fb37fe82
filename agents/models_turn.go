package agents

import (
	"context"
	"errors"
	"fmt"
	"time"

	"palaver/models"
)

// errOverBudget is a turn refused because the person's tokens are spent.
var errOverBudget = errors.New("over the token budget")

// checkModel refuses, before anything is stored, a model that is not one
// of the choices (an *InputError naming them).
func (s *Service) checkModel(ctx context.Context, id int64) error {
	if s.opts.Catalog == nil {
		if id != 0 {
			return &InputError{Msg: fmt.Sprintf("Unknown model %d: this server offers no choice of models", id)}
		}
		return nil
	}
	return s.opts.Catalog.Check(ctx, id)
}

// Catalog is the models people pick from (nil: none set up).
func (s *Service) Catalog() *Catalog { return s.opts.Catalog }

// turnModel is the model a turn runs on, for its metadata, its usage and
// the wording of its failure.
type turnModel struct {
	row  *models.LLMModel
	conn string
}

// pickModel points req at the turn's model and refuses the turn when the
// person's token budget is spent. A quota changed while a turn streams
// does not touch that turn: the check is made once, here.
func (s *Service) pickModel(ctx context.Context, ex *models.Exchange, req *Request, id int64, reads *models.TurnReads) (turnModel, error) {
	c := s.opts.Catalog
	if c == nil {
		return turnModel{}, nil
	}
	if reads == nil || !reads.Unlimited {
		if err := s.checkBudget(ctx, ex.UserID); err != nil {
			return turnModel{}, err
		}
	}
	if id == 0 { // none picked: the conversation's, the project's or the person's
		prefs, err := s.modelPreferences(ctx, ex, reads)
		if err != nil {
			return turnModel{}, err
		}
		id = c.Prefer(ctx, prefs)
	}
	p, row, err := c.Resolve(ctx, id)
	var in *InputError
	if errors.As(err, &in) { // disabled since the request was checked: the default answers
		p, row, err = c.Resolve(ctx, 0)
	}
	if err != nil || row == nil {
		return turnModel{}, err
	}
	req.provider = p
	conns, _, _ := c.load(ctx)
	return turnModel{row: row, conn: conns[row.ConnectionID].Name}, nil
}

// modelPreferences is the turn's model preferences: as read with its user
// message (reads), or read now.
func (s *Service) modelPreferences(ctx context.Context, ex *models.Exchange, reads *models.TurnReads) (models.ModelPreferences, error) {
	if reads != nil {
		return reads.Prefs, nil
	}
	return s.store.ModelPreferencesOf(ctx, ex.UserID, ex.ID, nil)
}

// checkBudget refuses a turn once the person's daily or monthly tokens
// are spent, naming the budget and when it resets.
func (s *Service) checkBudget(ctx context.Context, userID int64) error {
	st, err := s.store.BudgetStatusOf(ctx, userID, time.Now())
	if err != nil || !st.Spent {
		return err
	}
	return &FailureError{Reason: st.Message, Err: errOverBudget}
}

// note names the model in the reply's metadata and prices its tokens at
// the administrator's prices now (kept with the usage row).
func (m turnModel) note(resp *models.AgentResponse) {
	if m.row == nil || resp == nil {
		return
	}
	if resp.Metadata == nil {
		resp.Metadata = map[string]any{}
	}
	md := resp.Metadata
	if served, ok := md["model"].(string); ok && served != m.row.Model {
		md["served_model"] = served
	}
	md["model"], md["model_id"], md["model_name"], md["connection"] = m.row.Model, m.row.ID, m.row.Name, m.conn
	in, out := tokens(md["prompt_tokens"]), tokens(md["completion_tokens"])
	md["cost"] = m.row.Cost(in, out)
}

// blame names the connection in a failure's reason.
func (m turnModel) blame(err error) error {
	var fe *FailureError
	if m.row == nil || !errors.As(err, &fe) {
		return err
	}
	return &FailureError{Reason: fmt.Sprintf("%s (connection %q)", fe.Reason, m.conn), Err: fe.Err}
}

func tokens(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}
