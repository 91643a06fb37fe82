package agents

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"palaver/models"
)

// newStore opens and migrates a fresh SQLite file.
func newStore(t *testing.T) *models.Store {
	t.Helper()
	s, err := models.Open(filepath.Join(t.TempDir(), "agents.db"), models.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func newUser(t *testing.T, s *models.Store, name string) int64 {
	t.Helper()
	u, err := s.CreateUser(context.Background(), name, "h", false)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeProvider runs exec and remembers every request it was given.
type fakeProvider struct {
	mu    sync.Mutex
	reqs  []Request
	exec  func(ctx context.Context, req Request) (*models.AgentResponse, error)
	calls int
}

func (p *fakeProvider) Name() string { return "fake" }

func (p *fakeProvider) Execute(ctx context.Context, req Request, onDelta func(string)) (*models.AgentResponse, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.calls++
	p.mu.Unlock()
	if p.exec != nil {
		return p.exec(ctx, req)
	}
	return &models.AgentResponse{Content: "answer to " + req.Query}, nil
}

func (p *fakeProvider) last(t *testing.T) Request {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.reqs) == 0 {
		t.Fatal("the provider was never called")
	}
	return p.reqs[len(p.reqs)-1]
}

func logOf(t *testing.T, s *models.Store, userID, exchangeID int64) []string {
	t.Helper()
	msgs, err := s.Messages(context.Background(), userID, exchangeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ":" + m.Content
	}
	return out
}

func countMessages(t *testing.T, s *models.Store) int {
	t.Helper()
	db, err := s.SQL()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM messages").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSendWithTheBuiltinAgent(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	res, err := svc.Send(context.Background(), SendRequest{UserID: ann, AgentType: AgentAuto, Query: "Hi there"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed || res.Cached || res.Query == nil || res.Reply == nil {
		t.Fatalf("result = %+v", res)
	}
	if res.Reply.Role != models.RoleAssistant || !strings.HasPrefix(res.Reply.Content, "Hello!") ||
		res.Reply.AgentType == nil || *res.Reply.AgentType != AgentRouter || res.Reply.AgentResponse == nil {
		t.Errorf("reply = %+v", res.Reply)
	}
	if res.Exchange.Title != "Hi there" || res.Exchange.AgentType != AgentRouter {
		t.Errorf("exchange = %+v", res.Exchange)
	}
	ex, err := s.Exchange(context.Background(), ann, res.Exchange.ID)
	if err != nil || ex.TurnStatus != models.TurnIdle || ex.TurnOwner != nil {
		t.Errorf("after the turn the exchange is %+v, %v; want idle with no lease", ex, err)
	}
	if got := logOf(t, s, ann, ex.ID); len(got) != 2 || got[0] != "user:Hi there" || !strings.HasPrefix(got[1], "assistant:Hello!") {
		t.Errorf("log = %v", got)
	}
}

// TestSendCommitsTheUserMessageFirst checks, from inside the agent, that the
// user's message is already durable while the agent runs.
func TestSendCommitsTheUserMessageFirst(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	var seen []string
	var status string
	p := &fakeProvider{}
	p.exec = func(ctx context.Context, req Request) (*models.AgentResponse, error) {
		// A fresh connection from the pool: only committed data is visible.
		items, err := s.ListExchanges(ctx, ann, models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 5})
		if err != nil || len(items) != 1 {
			return nil, errors.New("the exchange is not visible while the agent runs")
		}
		seen = logOf(t, s, ann, items[0].ID)
		status = items[0].TurnStatus
		return &models.AgentResponse{Content: "done"}, nil
	}
	svc := New(s, p, Options{Logger: quiet})
	res, err := svc.Send(context.Background(), SendRequest{UserID: ann, Query: "keep this"})
	if err != nil || res.Failed {
		t.Fatalf("Send = %+v, %v", res, err)
	}
	if !slices.Equal(seen, []string{"user:keep this"}) || status != models.TurnRunning {
		t.Errorf("while the agent ran the log was %v (status %q), want the user message under a running turn", seen, status)
	}
}

func TestSendAgentFailureIsKeptAndRetryWorks(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	broken := &fakeProvider{exec: func(context.Context, Request) (*models.AgentResponse, error) {
		return nil, errors.New("model unreachable")
	}}
	res, err := New(s, broken, Options{Logger: quiet}).Send(ctx, SendRequest{UserID: ann, Query: "will it work"})
	if err != nil {
		t.Fatalf("an agent failure is a result, not an error: %v", err)
	}
	if !res.Failed || res.Reply == nil || res.Reply.Role != models.RoleError || res.Reply.Seq != nil ||
		!strings.Contains(res.Reply.Content, "model unreachable") {
		t.Fatalf("failed result = %+v, reply %+v", res, res.Reply)
	}
	ex, _ := s.Exchange(ctx, ann, res.Exchange.ID)
	if ex.TurnStatus != models.TurnFailed {
		t.Errorf("exchange status %q, want failed", ex.TurnStatus)
	}
	if got := logOf(t, s, ann, ex.ID); len(got) != 2 || got[0] != "user:will it work" || !strings.HasPrefix(got[1], "error:") {
		t.Errorf("log after failure = %v", got)
	}

	// A provider that returns nothing at all fails the turn the same way.
	empty := &fakeProvider{exec: func(context.Context, Request) (*models.AgentResponse, error) { return nil, nil }}
	res2, err := New(s, empty, Options{Logger: quiet}).Send(ctx, SendRequest{UserID: ann, ExchangeID: ex.ID, Query: "again"})
	if err != nil || !res2.Failed {
		t.Fatalf("nil response: %+v, %v; want a failed turn", res2, err)
	}

	working := &fakeProvider{}
	res3, err := New(s, working, Options{Logger: quiet}).Send(ctx, SendRequest{UserID: ann, ExchangeID: ex.ID, Query: "will it work"})
	if err != nil || res3.Failed || res3.Reply.Content != "answer to will it work" {
		t.Fatalf("retry = %+v, %v", res3, err)
	}
	if got := logOf(t, s, ann, ex.ID); len(got) != 6 || got[4] != "user:will it work" || got[5] != "assistant:answer to will it work" {
		t.Errorf("log after retry = %v", got)
	}
	// The failures never reach the agent's context.
	for _, m := range working.last(t).History {
		if m.Role == models.RoleError {
			t.Errorf("an error row reached the agent: %+v", m)
		}
	}
}

func TestSendContext(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	p := &fakeProvider{}
	svc := New(s, p, Options{Logger: quiet, ContextMessages: 3})
	res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "q1"})
	if err != nil {
		t.Fatal(err)
	}
	exID := res.Exchange.ID
	if h := p.last(t).History; len(h) != 0 {
		t.Errorf("first turn's history = %v, want empty (the query travels on its own)", h)
	}
	// A failing turn in the middle leaves an error row in the log.
	p.exec = func(context.Context, Request) (*models.AgentResponse, error) { return nil, errors.New("boom") }
	if res, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: exID, Query: "q2"}); err != nil || !res.Failed {
		t.Fatalf("failing turn: %+v, %v", res, err)
	}
	p.exec = nil
	for _, q := range []string{"q3", "q4"} {
		if _, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: exID, Query: q, Context: "ctx-" + q}); err != nil {
			t.Fatal(err)
		}
	}
	// Log: q1 a1 q2 error q3 a3 q4 a4. The q4 turn saw the 3 log entries
	// before q4: q2's turn failed, its user message is in the log, the error
	// row is not.
	req := p.last(t)
	var got []string
	for _, m := range req.History {
		got = append(got, m.Content)
	}
	if want := []string{"q2", "q3", "answer to q3"}; !slices.Equal(got, want) {
		t.Errorf("history for q4 = %v, want %v", got, want)
	}
	if req.Query != "q4" || req.Context != "ctx-q4" || req.AgentType != AgentRouter {
		t.Errorf("request = %+v", req)
	}

	// Without a bound set, the default keeps a long conversation's context
	// bounded too.
	p2 := &fakeProvider{}
	svc2 := New(s, p2, Options{Logger: quiet})
	for range 25 {
		if _, err := svc2.Send(ctx, SendRequest{UserID: ann, ExchangeID: exID, Query: "more"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(p2.last(t).History); n != 40 {
		t.Errorf("default context has %d entries, want 40", n)
	}
}

func TestJobChats(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann, bob := newUser(t, s, "ann"), newUser(t, s, "bob")
	p := &fakeProvider{}
	svc := New(s, p, Options{Logger: quiet})
	job := "12"

	first, err := svc.Send(ctx, SendRequest{UserID: ann, JobID: &job, Query: "summarise job 12"})
	if err != nil || first.Cached || first.Failed {
		t.Fatalf("first job call = %+v, %v", first, err)
	}
	if first.Exchange.Scope != models.ScopeJob || first.Exchange.JobID == nil || *first.Exchange.JobID != job {
		t.Errorf("job exchange = %+v", first.Exchange)
	}
	before := countMessages(t, s)

	second, err := svc.Send(ctx, SendRequest{UserID: ann, JobID: &job, Query: "something else"})
	if err != nil || !second.Cached || second.Query != nil {
		t.Fatalf("second job call = %+v, %v; want the cached answer", second, err)
	}
	if second.Reply.ID != first.Reply.ID || second.Reply.Content != "answer to summarise job 12" || second.Exchange.ID != first.Exchange.ID {
		t.Errorf("cached reply = %+v, want the first answer", second.Reply)
	}
	if p.calls != 1 || countMessages(t, s) != before {
		t.Errorf("the cached call ran the agent (%d calls) or stored messages", p.calls)
	}

	regen, err := svc.Send(ctx, SendRequest{UserID: ann, JobID: &job, Query: "summarise job 12", Regenerate: true})
	if err != nil || regen.Cached || regen.Reply.ID == first.Reply.ID || regen.Exchange.ID != first.Exchange.ID {
		t.Fatalf("regenerate = %+v, %v; want a new answer in the same exchange", regen, err)
	}
	if p.calls != 2 || countMessages(t, s) != before+2 {
		t.Errorf("regenerate: %d calls, %d new messages", p.calls, countMessages(t, s)-before)
	}

	// The same job number is another conversation for another user.
	other, err := svc.Send(ctx, SendRequest{UserID: bob, JobID: &job, Query: "mine"})
	if err != nil || other.Cached || other.Exchange.ID == first.Exchange.ID {
		t.Fatalf("bob's job call = %+v, %v", other, err)
	}

	// An exchange_id that is not the job's conversation.
	general, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "plain chat"})
	if err != nil {
		t.Fatal(err)
	}
	var ie *InputError
	_, err = svc.Send(ctx, SendRequest{UserID: ann, JobID: &job, ExchangeID: general.Exchange.ID, Query: "x"})
	if !errors.As(err, &ie) {
		t.Errorf("job with another exchange_id: err = %v, want *InputError", err)
	}
	newJob := "13"
	n := countMessages(t, s)
	_, err = svc.Send(ctx, SendRequest{UserID: ann, JobID: &newJob, ExchangeID: general.Exchange.ID, Query: "x"})
	if !errors.As(err, &ie) {
		t.Errorf("new job with a general exchange_id: err = %v, want *InputError", err)
	}
	_, err = svc.Send(ctx, SendRequest{UserID: ann, JobID: &newJob, ExchangeID: other.Exchange.ID, Query: "x"})
	if !errors.Is(err, models.ErrNotFound) {
		t.Errorf("new job with another user's exchange_id: err = %v, want ErrNotFound", err)
	}
	if got := countMessages(t, s); got != n {
		t.Errorf("refused job calls stored %d messages", got-n)
	}
	if _, err := s.JobExchange(ctx, ann, newJob); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("a refused call created job %s's exchange", newJob)
	}
}

func TestJobChatRetriesAFailedFirstAnswer(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	p := &fakeProvider{exec: func(context.Context, Request) (*models.AgentResponse, error) { return nil, errors.New("down") }}
	svc := New(s, p, Options{Logger: quiet})
	job := "1"
	if res, err := svc.Send(ctx, SendRequest{UserID: ann, JobID: &job, Query: "q"}); err != nil || !res.Failed {
		t.Fatalf("first call = %+v, %v; want failed", res, err)
	}
	p.exec = nil
	res, err := svc.Send(ctx, SendRequest{UserID: ann, JobID: &job, Query: "q"})
	if err != nil || res.Cached || res.Failed || res.Reply.Content != "answer to q" {
		t.Fatalf("second call = %+v, %v; want the agent to run again", res, err)
	}
}

func TestSendRejectsBadInputAndStoresNothing(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	p := &fakeProvider{}
	svc := New(s, p, Options{Logger: quiet})
	for _, tc := range []struct {
		name, agent, query, want string
	}{
		{"empty", AgentAuto, "", "No query provided"},
		{"whitespace", AgentAuto, " \n\t  ", "No query provided"},
		{"too long", AgentAuto, strings.Repeat("a", MaxQueryLength+1), "100000"},
		{"too long multibyte", AgentAuto, strings.Repeat("é", MaxQueryLength+1), "100000"},
		{"unknown agent", "wizard", "hello", "auto, router"},
	} {
		_, err := svc.Send(ctx, SendRequest{UserID: ann, AgentType: tc.agent, Query: tc.query})
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: err = %v, want *InputError", tc.name, err)
			continue
		}
		if !strings.Contains(ie.Error(), tc.want) {
			t.Errorf("%s: message %q does not say %q", tc.name, ie.Error(), tc.want)
		}
	}
	if n := countMessages(t, s); n != 0 || p.calls != 0 {
		t.Errorf("bad input stored %d messages and ran the agent %d times", n, p.calls)
	}
	// The limit itself is allowed, counted in characters, not bytes.
	res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: strings.Repeat("é", MaxQueryLength)})
	if err != nil || res.Failed {
		t.Errorf("a query of exactly the limit: %v", err)
	}
	var ie *InputError
	if _, err := svc.RouteAndExecute(ctx, Request{AgentType: "wizard", Query: "q"}, nil); !errors.As(err, &ie) {
		t.Errorf("RouteAndExecute(wizard): err = %v, want *InputError", err)
	}
}

func TestSendToOthersAndBusyExchanges(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann, bob := newUser(t, s, "ann"), newUser(t, s, "bob")
	svc := New(s, &fakeProvider{}, Options{Logger: quiet})
	res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	n := countMessages(t, s)
	for _, id := range []int64{res.Exchange.ID, 424242} {
		_, err = svc.Send(ctx, SendRequest{UserID: bob, ExchangeID: id, Query: "let me in"})
		if !errors.Is(err, models.ErrNotFound) {
			t.Errorf("send to exchange %d as bob: err = %v, want ErrNotFound", id, err)
		}
	}
	// A page chat is sent to through its page, not as a general chat.
	db, _ := s.SQL()
	if _, err := db.Exec("INSERT INTO pages (user_id, title, content, created_at, updated_at) VALUES (?, 'P', '', ?, ?)", ann, time.Now().UTC(), time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	var pageID int64
	db.QueryRow("SELECT id FROM pages").Scan(&pageID)
	pex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: ann, Scope: models.ScopePage, PageID: &pageID, Query: "p", Owner: "other-process"})
	if err != nil {
		t.Fatal(err)
	}
	var ie *InputError
	if _, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: pex.ID, Query: "x"}); !errors.As(err, &ie) {
		t.Errorf("send to a page chat: err = %v, want *InputError", err)
	}
	// A turn already running (another tab, another server) refuses the message.
	busy, _, err := s.StartTurn(ctx, models.TurnStart{UserID: ann, ExchangeID: res.Exchange.ID, Query: "other tab", Owner: "other-process"})
	if err != nil {
		t.Fatal(err)
	}
	n = countMessages(t, s)
	if _, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: busy.ID, Query: "me too"}); !errors.Is(err, models.ErrTurnRunning) {
		t.Errorf("send while a turn runs: err = %v, want ErrTurnRunning", err)
	}
	if got := countMessages(t, s); got != n {
		t.Errorf("refused sends stored %d messages", got-n)
	}
}

// TestHeartbeatKeepsALongTurnAlive runs a turn longer than StaleAfter: the
// service's heartbeats must keep another process's recovery off it.
func TestHeartbeatKeepsALongTurnAlive(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	// Stale after 300 ms, beating every 20: a loaded machine may delay a
	// beat's commit by tens of milliseconds, never by the whole window.
	opts := Options{Logger: quiet, Heartbeat: 20 * time.Millisecond, StaleAfter: 300 * time.Millisecond}
	other := New(s, &fakeProvider{}, opts) // another server on the same database
	var recovered int
	var recoverErr error
	p := &fakeProvider{exec: func(ctx context.Context, req Request) (*models.AgentResponse, error) {
		for range 4 { // 600 ms in all: twice the window, which only the beats outlast
			time.Sleep(150 * time.Millisecond)
			n, err := other.RecoverStaleTurns(ctx)
			recovered += n
			if err != nil {
				recoverErr = err
			}
		}
		return &models.AgentResponse{Content: "slow but alive"}, nil
	}}
	res, err := New(s, p, opts).Send(ctx, SendRequest{UserID: ann, Query: "take your time"})
	if err != nil || res.Failed || recovered != 0 || recoverErr != nil {
		t.Fatalf("long turn = %+v, %v; recovered %d (%v); want it to finish untouched", res, err, recovered, recoverErr)
	}
}

func TestRecoverStaleTurns(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	// A turn whose process died: started, never renewed.
	ex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: ann, Scope: models.ScopeGeneral, AgentType: AgentRouter, Query: "lost?", Owner: "dead-process"})
	if err != nil {
		t.Fatal(err)
	}
	svc := New(s, &fakeProvider{}, Options{Logger: quiet, Heartbeat: time.Millisecond, StaleAfter: 20 * time.Millisecond})
	if n, err := svc.RecoverStaleTurns(ctx); err != nil || n != 0 {
		t.Fatalf("recovery of a fresh turn = %d, %v; want 0", n, err)
	}
	time.Sleep(30 * time.Millisecond)
	if n, err := svc.RecoverStaleTurns(ctx); err != nil || n != 1 {
		t.Fatalf("recovery = %d, %v; want 1", n, err)
	}
	got := logOf(t, s, ann, ex.ID)
	if len(got) != 2 || got[0] != "user:lost?" || !strings.Contains(got[1], "retry it") {
		t.Errorf("log after recovery = %v", got)
	}
	// The kept message can be sent again.
	if res, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: ex.ID, Query: "lost?"}); err != nil || res.Failed {
		t.Errorf("retry after recovery = %+v, %v", res, err)
	}
}
