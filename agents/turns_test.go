package agents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"palaver/models"
)

// streamer is a provider that streams words until released or stopped.
type streamer struct {
	words   []string
	release chan struct{} // closed: finish the reply
	started chan struct{} // closed when the first word has gone out
}

func newStreamer(words ...string) *streamer {
	return &streamer{words: words, release: make(chan struct{}), started: make(chan struct{})}
}

func (p *streamer) Name() string { return "streamer" }

func (p *streamer) Execute(ctx context.Context, req Request, onDelta func(string)) (*models.AgentResponse, error) {
	for i, w := range p.words {
		onDelta(w)
		if i == 0 {
			close(p.started)
			select {
			case <-p.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return &models.AgentResponse{Content: strings.Join(p.words, "")}, nil
}

// events drains what a subscription has received so far.
func events(sub *Subscription) []Event {
	var out []Event
	for {
		select {
		case e := <-sub.C:
			out = append(out, e)
		case <-time.After(50 * time.Millisecond):
			return out
		}
	}
}

func TestStartReturnsBeforeTheReplyAndPublishesProgress(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	p := newStreamer("Hello", " there", ".")
	svc := New(s, p, Options{Logger: quiet})
	sub := svc.Hub().Subscribe(ann)
	defer sub.Close()

	turn, err := svc.Start(context.Background(), SendRequest{UserID: ann, Query: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	<-p.started
	// The user message is committed and the turn is running while the agent works.
	if got := logOf(t, s, ann, turn.Exchange.ID); len(got) != 1 || got[0] != "user:hi" {
		t.Fatalf("log while running = %v", got)
	}
	if ex, _ := s.Exchange(context.Background(), ann, turn.Exchange.ID); ex.TurnStatus != models.TurnRunning {
		t.Fatalf("status while running = %s", ex.TurnStatus)
	}
	close(p.release)
	res, err := turn.Wait(context.Background())
	if err != nil || res.Reply.Content != "Hello there." {
		t.Fatalf("Wait = %+v, %v", res, err)
	}
	var kinds []string
	var text strings.Builder
	for _, e := range events(sub) {
		switch e.Kind {
		case EventEntry:
			kinds = append(kinds, "entry:"+e.Entry.Role)
		case EventDelta:
			text.WriteString(e.Delta)
		case EventTurn:
			kinds = append(kinds, "turn:"+e.Exchange.TurnStatus)
		}
		if e.UserID != ann || e.ExchangeID != turn.Exchange.ID {
			t.Fatalf("event for the wrong user or exchange: %+v", e)
		}
	}
	if got := strings.Join(kinds, ","); got != "entry:user,turn:running,entry:assistant,turn:idle" {
		t.Fatalf("events %s", got)
	}
	if text.String() != "Hello there." {
		t.Fatalf("deltas %q", text.String())
	}
}

func TestStopKeepsWhatWasWritten(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	p := newStreamer("Partial", " never sent")
	svc := New(s, p, Options{Logger: quiet})
	turn, err := svc.Start(context.Background(), SendRequest{UserID: ann, Query: "long one"})
	if err != nil {
		t.Fatal(err)
	}
	<-p.started
	other := newUser(t, s, "bob")
	if _, err := svc.Stop(context.Background(), other, turn.Exchange.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another user's stop = %v, want not found", err)
	}
	res, err := svc.Stop(context.Background(), ann, turn.Exchange.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.Reply.Content != "Partial" || res.Reply.AgentResponse.Metadata["stopped"] != true {
		t.Fatalf("stopped result %+v (reply %+v)", res, res.Reply)
	}
	if got := logOf(t, s, ann, turn.Exchange.ID); len(got) != 2 || got[1] != "assistant:Partial" {
		t.Fatalf("log after stop = %v", got)
	}
	ex, _ := s.Exchange(context.Background(), ann, turn.Exchange.ID)
	if ex.TurnStatus != models.TurnIdle {
		t.Fatalf("status after stop = %s", ex.TurnStatus)
	}
	if _, err := svc.Stop(context.Background(), ann, turn.Exchange.ID); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("stopping an idle exchange = %v, want ErrNotRunning", err)
	}
}

func TestRetryReplaysThePreservedMessageWithinTheCap(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	fail := true
	p := &fakeProvider{exec: func(ctx context.Context, req Request) (*models.AgentResponse, error) {
		if fail {
			return nil, errors.New("upstream down")
		}
		return &models.AgentResponse{Content: "answer to " + req.Query}, nil
	}}
	svc := New(s, p, Options{Logger: quiet, MaxAttempts: 2})
	ctx := context.Background()
	res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "question"})
	if err != nil || !res.Failed {
		t.Fatalf("first try = %+v, %v", res, err)
	}
	id := res.Exchange.ID
	// One retry left (attempt 2 of 2): it fails too.
	turn, err := svc.Retry(ctx, ann, id)
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := turn.Wait(ctx); !res.Failed {
		t.Fatalf("second try %+v", res)
	}
	if _, err := svc.Retry(ctx, ann, id); !errors.Is(err, models.ErrRetryLimit) {
		t.Fatalf("a third try = %v, want ErrRetryLimit", err)
	}
	// Sending the message again starts over, and then works.
	fail = false
	res, err = svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: id, Query: "question"})
	if err != nil || res.Failed || res.Reply.Content != "answer to question" {
		t.Fatalf("send again = %+v, %v", res, err)
	}
	if _, err := svc.Retry(ctx, ann, id); !errors.Is(err, models.ErrNothingToRetry) {
		t.Fatalf("retry of a good turn = %v", err)
	}
	if _, err := svc.Retry(ctx, newUser(t, s, "bob"), id); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("another user's retry = %v", err)
	}
}

func TestRetryAnswersTheLastUserMessageOnly(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	calls := 0
	p := &fakeProvider{exec: func(ctx context.Context, req Request) (*models.AgentResponse, error) {
		calls++
		if calls == 1 {
			return nil, errors.New("boom")
		}
		return &models.AgentResponse{Content: "ok"}, nil
	}}
	svc := New(s, p, Options{Logger: quiet})
	ctx := context.Background()
	res, _ := svc.Send(ctx, SendRequest{UserID: ann, Query: "the question"})
	turn, err := svc.Retry(ctx, ann, res.Exchange.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := turn.Wait(ctx); err != nil || r.Failed {
		t.Fatalf("retry %+v %v", r, err)
	}
	req := p.last(t)
	if req.Query != "the question" || len(req.History) != 0 {
		t.Fatalf("retried request: query %q, history %d entries", req.Query, len(req.History))
	}
	if got := logOf(t, s, ann, res.Exchange.ID); len(got) != 3 || got[0] != "user:the question" || !strings.HasPrefix(got[1], "error:") || got[2] != "assistant:ok" {
		t.Fatalf("log = %v", got)
	}
}

func TestRecoveryRetriesAutomaticallyWithinTheCap(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	// A turn whose process died: started by someone else, never renewed.
	ex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: ann, Scope: models.ScopeGeneral, AgentType: AgentRouter, Query: "hello", Owner: "dead"})
	if err != nil {
		t.Fatal(err)
	}
	svc := New(s, &Builtin{}, Options{Logger: quiet, Heartbeat: 5 * time.Millisecond, StaleAfter: 10 * time.Millisecond, AutoRetries: 1})
	time.Sleep(20 * time.Millisecond)
	if n, err := svc.RecoverStaleTurns(ctx); err != nil || n != 1 {
		t.Fatalf("recovered %d, %v", n, err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if e, _ := s.Exchange(ctx, ann, ex.ID); e.TurnStatus == models.TurnIdle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the automatic retry did not finish")
		}
	}
	got := logOf(t, s, ann, ex.ID)
	if len(got) != 3 || got[0] != "user:hello" || !strings.HasPrefix(got[1], "error:") || !strings.HasPrefix(got[2], "assistant:Hello!") {
		t.Fatalf("log after recovery = %v", got)
	}
}

func TestCloseFailsRunningTurnsCleanly(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	p := newStreamer("never", " finished")
	svc := New(s, p, Options{Logger: quiet})
	turn, err := svc.Start(context.Background(), SendRequest{UserID: ann, Query: "q"})
	if err != nil {
		t.Fatal(err)
	}
	<-p.started
	if err := svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, _ := turn.Wait(context.Background())
	if !res.Failed || !strings.Contains(res.Reply.Content, "restarted") {
		t.Fatalf("turn after shutdown %+v", res.Reply)
	}
	ex, _ := s.Exchange(context.Background(), ann, turn.Exchange.ID)
	if ex.TurnStatus != models.TurnFailed {
		t.Fatalf("status %s", ex.TurnStatus)
	}
}

func TestRecoveryFailsTurnsOfDeadLocalProcessesAtOnce(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	host, _ := os.Hostname()
	// A pid far above any the kernel hands out: that process is gone.
	dead, _, err := s.StartTurn(ctx, models.TurnStart{UserID: ann, Scope: models.ScopeGeneral, AgentType: AgentRouter, Query: "q1", Owner: host + "/999999999/0a0b"})
	if err != nil {
		t.Fatal(err)
	}
	// A live process of this host (this one's parent) and one of another host.
	alive, _, _ := s.StartTurn(ctx, models.TurnStart{UserID: ann, Scope: models.ScopeGeneral, AgentType: AgentRouter, Query: "q2", Owner: fmt.Sprintf("%s/%d/0c0d", host, os.Getppid())})
	remote, _, _ := s.StartTurn(ctx, models.TurnStart{UserID: ann, Scope: models.ScopeGeneral, AgentType: AgentRouter, Query: "q3", Owner: "elsewhere/1/0e0f"})
	svc := New(s, &Builtin{}, Options{Logger: quiet}) // StaleAfter 30 s: nothing is stale yet
	if n, err := svc.RecoverStaleTurns(ctx); err != nil || n != 1 {
		t.Fatalf("recovered %d, %v; want only the dead local turn", n, err)
	}
	for id, want := range map[int64]string{dead.ID: models.TurnFailed, alive.ID: models.TurnRunning, remote.ID: models.TurnRunning} {
		if ex, _ := s.Exchange(ctx, ann, id); ex.TurnStatus != want {
			t.Errorf("exchange %d: %s, want %s", id, ex.TurnStatus, want)
		}
	}
}

func TestConcurrentSendsToOneExchange(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	ctx := context.Background()
	svc := New(s, &Builtin{Delay: time.Millisecond}, Options{Logger: quiet})
	first, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "start"})
	if err != nil {
		t.Fatal(err)
	}
	id := first.Exchange.ID
	const senders, rounds = 8, 5
	var mu sync.Mutex
	accepted, refused := 0, 0
	var wg sync.WaitGroup
	for i := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				_, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: id, Query: fmt.Sprintf("sender %d round %d", i, r)})
				mu.Lock()
				switch {
				case err == nil:
					accepted++
				case errors.Is(err, models.ErrTurnRunning), errors.Is(err, ErrTooManyTurns):
					// More than 4 sends in flight for one user meet the
					// per-user limit before the exchange's lease.
					refused++
				default:
					t.Errorf("send: %v", err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if accepted+refused != senders*rounds || accepted == 0 {
		t.Fatalf("accepted %d, refused %d", accepted, refused)
	}
	msgs, err := s.Messages(ctx, ann, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Every accepted send is in the log with its reply; seqs are 0..n-1.
	if want := 2 * (accepted + 1); len(msgs) != want {
		t.Fatalf("%d entries, want %d", len(msgs), want)
	}
	for i, m := range msgs {
		if m.Seq == nil || *m.Seq != int64(i) {
			t.Fatalf("entry %d has seq %v", i, m.Seq)
		}
		if want := []string{models.RoleUser, models.RoleAssistant}[i%2]; m.Role != want {
			t.Fatalf("entry %d is %s, want %s (interleaved turns)", i, m.Role, want)
		}
	}
}

// A request's strings may alias a buffer the HTTP server reuses as soon as
// the request ends; the detached turn must not see it change.
func TestStartKeepsItsOwnCopyOfTheRequest(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	p := newStreamer("ok")
	svc := New(s, p, Options{Logger: quiet})
	buf := []byte("what is the plan?")
	query := unsafe.String(&buf[0], len(buf))
	turn, err := svc.Start(context.Background(), SendRequest{UserID: ann, Query: query})
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, "XXXXXXXXXXXXXXXXX") // the server reuses the buffer
	close(p.release)
	if _, err := turn.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	p2 := &fakeProvider{}
	svc2 := New(s, p2, Options{Logger: quiet})
	buf2 := []byte("second question")
	turn2, err := svc2.Start(context.Background(), SendRequest{UserID: ann, ExchangeID: turn.Exchange.ID, Query: unsafe.String(&buf2[0], len(buf2))})
	if err != nil {
		t.Fatal(err)
	}
	copy(buf2, "XXXXXXXXXXXXXXX")
	if _, err := turn2.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := p2.last(t).Query; got != "second question" {
		t.Fatalf("the agent saw %q", got)
	}
	if got := logOf(t, s, ann, turn.Exchange.ID); got[0] != "user:what is the plan?" || got[2] != "user:second question" {
		t.Fatalf("log %v", got)
	}
}
