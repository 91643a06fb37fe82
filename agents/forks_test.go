package agents

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"palaver/models"
)

// twoTurns sends "q0" and "q2" to a new exchange and returns it: its log is
// user:q0, assistant:answer to q0, user:q2, assistant:answer to q2.
func twoTurns(t *testing.T, svc *Service, userID int64) int64 {
	t.Helper()
	ctx := context.Background()
	res, err := svc.Send(ctx, SendRequest{UserID: userID, Query: "q0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Send(ctx, SendRequest{UserID: userID, ExchangeID: res.Exchange.ID, Query: "q2"}); err != nil {
		t.Fatal(err)
	}
	return res.Exchange.ID
}

func contentsOf(msgs []models.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ":" + m.Content
	}
	return out
}

func TestEditForksAndAnswersInTheFork(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	p := &fakeProvider{}
	svc := New(s, p, Options{Logger: quiet})
	ctx := context.Background()
	parent := twoTurns(t, svc, ann)
	before := logOf(t, s, ann, parent)
	sub := svc.Hub().Subscribe(ann)
	defer sub.Close()

	turn, fork, err := svc.StartFork(ctx, ForkRequest{UserID: ann, ExchangeID: parent, Seq: 2, Query: "q2 edited"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := turn.Wait(ctx)
	if err != nil || res.Failed || !res.Forked || res.Exchange.ID != fork.ID || fork.ID == parent {
		t.Fatalf("edit = %+v, %v", res, err)
	}
	want := []string{"user:q0", "assistant:answer to q0", "user:q2 edited", "assistant:answer to q2 edited"}
	if got := logOf(t, s, ann, fork.ID); !slices.Equal(got, want) {
		t.Errorf("fork's log %v, want %v", got, want)
	}
	if got := logOf(t, s, ann, parent); !slices.Equal(got, before) {
		t.Errorf("the parent changed: %v, want %v", got, before)
	}
	// The agent saw exactly the fork's log before the edited message.
	req := p.last(t)
	if got := contentsOf(req.History); !slices.Equal(got, want[:2]) || req.Query != "q2 edited" {
		t.Errorf("the agent saw %v and %q, want %v and the edit", got, req.Query, want[:2])
	}
	var kinds []string
	for _, e := range events(sub) {
		if e.ExchangeID != fork.ID {
			t.Errorf("event about exchange %d, want only the fork %d", e.ExchangeID, fork.ID)
		}
		switch e.Kind {
		case EventEntry:
			kinds = append(kinds, "entry:"+e.Entry.Role)
		case EventTurn:
			kinds = append(kinds, "turn:"+e.Exchange.TurnStatus)
		}
	}
	if got := strings.Join(kinds, ","); got != "entry:user,turn:running,entry:assistant,turn:idle" {
		t.Errorf("events %s", got)
	}
	fam, err := s.Family(ctx, ann, fork.ID)
	if err != nil || len(fam) != 2 || fam[0].ID != parent {
		t.Errorf("family %v, %v", fam, err)
	}
}

func TestEditRefusalsMakeNothing(t *testing.T) {
	s := newStore(t)
	ann, bob := newUser(t, s, "ann"), newUser(t, s, "bob")
	slots := NewMemorySlots()
	svc := New(s, &fakeProvider{}, Options{Logger: quiet, Slots: slots})
	ctx := context.Background()
	parent := twoTurns(t, svc, ann)
	n := countMessages(t, s)
	for name, req := range map[string]ForkRequest{
		"too long":     {UserID: ann, ExchangeID: parent, Seq: 2, Query: strings.Repeat("x", MaxQueryLength+1)},
		"blank":        {UserID: ann, ExchangeID: parent, Seq: 2, Query: "  \n "},
		"beyond":       {UserID: ann, ExchangeID: parent, Seq: 5, Query: "q"},
		"other user's": {UserID: bob, ExchangeID: parent, Seq: 2, Query: "q"},
		"bad agent":    {UserID: ann, ExchangeID: parent, Seq: 2, Query: "q", AgentType: AgentPageAssistant},
	} {
		_, _, err := svc.StartFork(ctx, req)
		var in *InputError
		if !errors.As(err, &in) && !errors.Is(err, models.ErrBadSeq) && !errors.Is(err, models.ErrNotFound) {
			t.Errorf("%s: err %v, want an input error, ErrBadSeq or ErrNotFound", name, err)
		}
	}
	if _, _, err := svc.StartFork(ctx, ForkRequest{UserID: bob, ExchangeID: parent, Seq: 2}); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("a fork of another user's exchange: %v", err)
	}
	if got := countMessages(t, s); got != n {
		t.Errorf("%d messages after refused edits, want %d", got, n)
	}
	if fam, _ := s.Family(ctx, ann, parent); len(fam) != 1 {
		t.Errorf("refused edits made forks: %v", fam)
	}
	if held := slots.Held(SlotTurn, ann); held != 0 {
		t.Errorf("%d turn slots held after refused edits", held)
	}
}

func TestRegenerateKeepsTheOldAnswerInTheParent(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	calls := 0
	p := &fakeProvider{}
	p.exec = func(_ context.Context, req Request) (*models.AgentResponse, error) {
		calls++
		if calls > 2 {
			return &models.AgentResponse{Content: "another answer to " + req.Query}, nil
		}
		return &models.AgentResponse{Content: "answer to " + req.Query}, nil
	}
	svc := New(s, p, Options{Logger: quiet})
	ctx := context.Background()
	parent := twoTurns(t, svc, ann)
	before := logOf(t, s, ann, parent)

	turn, err := svc.Regenerate(ctx, RegenerateRequest{UserID: ann, ExchangeID: parent}) // the last reply
	if err != nil {
		t.Fatal(err)
	}
	res, err := turn.Wait(ctx)
	if err != nil || res.Failed || !res.Forked || res.Exchange.ID == parent {
		t.Fatalf("regenerate = %+v, %v", res, err)
	}
	want := []string{"user:q0", "assistant:answer to q0", "user:q2", "assistant:another answer to q2"}
	if got := logOf(t, s, ann, res.Exchange.ID); !slices.Equal(got, want) {
		t.Errorf("regenerated log %v, want %v", got, want)
	}
	if got := logOf(t, s, ann, parent); !slices.Equal(got, before) {
		t.Errorf("the old answer moved: %v, want %v", got, before)
	}
	// The question was copied, not sent again; the agent saw the fork's log.
	if req := p.last(t); req.Query != "q2" || !slices.Equal(contentsOf(req.History), want[:2]) {
		t.Errorf("the agent was asked %q after %v", req.Query, contentsOf(req.History))
	}
	if res.Query == nil || res.Query.CopyOf == nil || res.Query.ExchangeID != res.Exchange.ID {
		t.Errorf("the question answered is %+v, want the fork's copy", res.Query)
	}
	// The first reply, by its seq.
	first := int64(1)
	turn, err = svc.Regenerate(ctx, RegenerateRequest{UserID: ann, ExchangeID: parent, Seq: &first})
	if err != nil {
		t.Fatal(err)
	}
	if res, err = turn.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := logOf(t, s, ann, res.Exchange.ID), []string{"user:q0", "assistant:another answer to q0"}; !slices.Equal(got, want) {
		t.Errorf("regenerated first reply %v, want %v", got, want)
	}
	n := countMessages(t, s)
	for _, seq := range []int64{0, 2, 4} {
		_, err := svc.Regenerate(ctx, RegenerateRequest{UserID: ann, ExchangeID: parent, Seq: &seq})
		if !errors.Is(err, models.ErrBadSeq) {
			t.Errorf("regenerate at %d (no reply there): %v, want ErrBadSeq", seq, err)
		}
	}
	if got := countMessages(t, s); got != n {
		t.Errorf("%d messages after refused regenerations, want %d", got, n)
	}
}

func TestSendWithAStaleAfterSeqForks(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	hold := make(chan struct{})
	p := &fakeProvider{}
	p.exec = func(ctx context.Context, req Request) (*models.AgentResponse, error) {
		if req.Query == "tab one answers" {
			select { // the first tab's turn is still running when the second sends
			case <-hold:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &models.AgentResponse{Content: "answer to " + req.Query}, nil
	}
	svc := New(s, p, Options{Logger: quiet})
	ctx := context.Background()
	res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "q0"})
	if err != nil {
		t.Fatal(err)
	}
	parent := res.Exchange.ID
	seen := int64(1) // both tabs show u@0 a@1
	one, err := svc.Start(ctx, SendRequest{UserID: ann, ExchangeID: parent, Query: "tab one answers", AfterSeq: &seen})
	if err != nil || one.Forked || one.Exchange.ID != parent {
		t.Fatalf("tab one: %+v, %v; want a turn in the parent", one, err)
	}
	two, err := svc.StartResult(ctx, SendRequest{UserID: ann, ExchangeID: parent, Query: "tab two answers", AfterSeq: &seen})
	if err != nil || !two.Forked || two.Exchange.ID == parent {
		t.Fatalf("tab two: %+v, %v; want a fork", two, err)
	}
	close(hold)
	if _, err := one.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, s, ann, two.Exchange.ID)
	if got, want := logOf(t, s, ann, parent), []string{"user:q0", "assistant:answer to q0", "user:tab one answers", "assistant:answer to tab one answers"}; !slices.Equal(got, want) {
		t.Errorf("parent %v, want %v", got, want)
	}
	if got, want := logOf(t, s, ann, two.Exchange.ID), []string{"user:q0", "assistant:answer to q0", "user:tab two answers", "assistant:answer to tab two answers"}; !slices.Equal(got, want) {
		t.Errorf("fork %v, want %v", got, want)
	}
	ex, err := s.Exchange(ctx, ann, two.Exchange.ID)
	if err != nil || ex.ForkedFromID == nil || *ex.ForkedFromID != parent || *ex.ForkedAtSeq != 2 {
		t.Errorf("the fork %+v, %v; want forked from %d at 2", ex, err, parent)
	}
	// A send that has seen the whole log lands in it.
	last := int64(3)
	res, err = svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: parent, Query: "up to date", AfterSeq: &last})
	if err != nil || res.Forked || res.Exchange.ID != parent || *res.Query.Seq != 4 {
		t.Errorf("an up-to-date send: %+v, %v", res, err)
	}
	bad := int64(-2)
	if _, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: parent, Query: "x", AfterSeq: &bad}); err == nil {
		t.Error("after_seq -2 was accepted")
	}
}

// waitIdle waits for the exchange's turn to end (a turn started by
// StartResult, which gives no Turn to wait for).
func waitIdle(t *testing.T, s *models.Store, userID, exchangeID int64) {
	t.Helper()
	for range 500 {
		ex, err := s.Exchange(context.Background(), userID, exchangeID)
		if err != nil {
			t.Fatal(err)
		}
		if ex.TurnStatus != models.TurnRunning {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("exchange %d still running", exchangeID)
}

func TestForkWithoutAQueryIsAnnounced(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	svc := New(s, &fakeProvider{}, Options{Logger: quiet})
	ctx := context.Background()
	parent := twoTurns(t, svc, ann)
	sub := svc.Hub().Subscribe(ann)
	defer sub.Close()
	turn, ex, err := svc.StartFork(ctx, ForkRequest{UserID: ann, ExchangeID: parent, Seq: 2})
	if err != nil || turn != nil || ex == nil || ex.ID == parent {
		t.Fatalf("fork = %v, %+v, %v", turn, ex, err)
	}
	evs := events(sub)
	if len(evs) != 1 || evs[0].Kind != EventTurn || evs[0].ExchangeID != ex.ID || evs[0].Exchange.ID != ex.ID {
		t.Errorf("events %+v, want one EventTurn for the fork", evs)
	}
	if got, want := logOf(t, s, ann, ex.ID), []string{"user:q0", "assistant:answer to q0"}; !slices.Equal(got, want) {
		t.Errorf("fork %v, want %v", got, want)
	}
}
