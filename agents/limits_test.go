package agents

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"palaver/models"
)

// blocker is a provider whose replies wait until released or stopped.
type blocker struct {
	release chan struct{}
	started chan struct{} // one value per reply begun
}

func newBlocker() *blocker {
	return &blocker{release: make(chan struct{}), started: make(chan struct{}, 16)}
}

func (b *blocker) Name() string { return "blocker" }

func (b *blocker) Execute(ctx context.Context, req Request, onDelta func(string)) (*models.AgentResponse, error) {
	b.started <- struct{}{}
	select {
	case <-b.release:
		return &models.AgentResponse{Content: "done: " + req.Query}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestAFifthRunningTurnIsRefusedAndStoresNothing(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann, bob := newUser(t, s, "ann"), newUser(t, s, "bob")
	p := newBlocker()
	slots := NewMemorySlots()
	svc := New(s, p, Options{Logger: quiet, Slots: slots})
	var turns []*Turn
	for i := range MaxTurnsPerUser {
		turn, err := svc.Start(ctx, SendRequest{UserID: ann, Query: fmt.Sprintf("q%d", i)})
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		turns = append(turns, turn)
		<-p.started
	}
	before := countMessages(t, s)
	if _, err := svc.Start(ctx, SendRequest{UserID: ann, Query: "one too many"}); !errors.Is(err, ErrTooManyTurns) {
		t.Fatalf("5th turn: %v, want ErrTooManyTurns", err)
	}
	// A retry is a turn too.
	if _, err := svc.Retry(ctx, ann, turns[0].Exchange.ID); !errors.Is(err, ErrTooManyTurns) {
		t.Fatalf("retry at the limit: %v, want ErrTooManyTurns", err)
	}
	if n := countMessages(t, s); n != before {
		t.Fatalf("a refused turn stored %d messages", n-before)
	}
	// Another user is not held back.
	other, err := svc.Start(ctx, SendRequest{UserID: bob, Query: "mine"})
	if err != nil {
		t.Fatalf("bob: %v", err)
	}
	<-p.started
	// A stopped turn gives its slot back, and so does a finished one.
	if _, err := svc.Stop(ctx, ann, turns[0].Exchange.ID); err != nil {
		t.Fatal(err)
	}
	next, err := svc.Start(ctx, SendRequest{UserID: ann, Query: "after a stop"})
	if err != nil {
		t.Fatalf("after a stop: %v", err)
	}
	<-p.started
	close(p.release)
	for _, turn := range append(turns[1:], next, other) {
		if _, err := turn.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := slots.Held(SlotTurn, ann) + slots.Held(SlotTurn, bob); n != 0 {
		t.Fatalf("%d slots still held after every turn ended", n)
	}
}

func TestFailedAndPanickingTurnsGiveTheirSlotBack(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	slots := NewMemorySlots()
	var mu sync.Mutex
	calls := 0
	p := &fakeProvider{exec: func(context.Context, Request) (*models.AgentResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls%2 == 0 {
			panic("provider bug")
		}
		return nil, errors.New("down")
	}}
	svc := New(s, p, Options{Logger: quiet, Slots: slots})
	for i := range 2 * MaxTurnsPerUser {
		res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: fmt.Sprintf("q%d", i)})
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		if !res.Failed || res.Reply.Role != models.RoleError {
			t.Fatalf("send %d: %+v", i, res)
		}
		if i%2 == 1 && !strings.Contains(res.Reply.Content, "failed unexpectedly") {
			t.Fatalf("a panic's error row: %q", res.Reply.Content)
		}
	}
	if n := slots.Held(SlotTurn, ann); n != 0 {
		t.Fatalf("%d slots held after failed turns", n)
	}
}

func TestTurnTimeoutEndsTheTurnWithAnErrorRow(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	slots := NewMemorySlots()
	p := newBlocker()
	t.Cleanup(func() { close(p.release) })
	svc := New(s, p, Options{Logger: quiet, Slots: slots, TurnTimeout: 150 * time.Millisecond})
	res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "take your time"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed || res.Reply.Content != "The reply took longer than 150ms and was stopped." {
		t.Fatalf("result %+v, reply %q", res, res.Reply.Content)
	}
	ex, err := s.Exchange(ctx, ann, res.Exchange.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ex.TurnStatus != models.TurnFailed || ex.TurnOwner != nil {
		t.Fatalf("exchange after the timeout: status %q, owner %v", ex.TurnStatus, ex.TurnOwner)
	}
	if got := logOf(t, s, ann, ex.ID); len(got) != 2 || got[0] != "user:take your time" || !strings.HasPrefix(got[1], "error:The reply took longer") {
		t.Fatalf("log %v", got)
	}
	if n := slots.Held(SlotTurn, ann); n != 0 {
		t.Fatalf("%d slots held after the timeout", n)
	}
}

func TestModelEndpointErrorsArePlainForTheUserAndDetailedInTheLog(t *testing.T) {
	cases := []struct {
		name    string
		openai  func(t *testing.T) *OpenAI
		reason  string
		inLog   []string
		private string
	}{{
		name: "502",
		openai: func(t *testing.T) *OpenAI {
			_, o := newFakeLLM(t, func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "upstream 10.0.0.7 refused", http.StatusBadGateway)
			})
			return o
		},
		reason:  "The assistant could not answer: the model's server answered 502.",
		inLog:   []string{"502", "upstream 10.0.0.7 refused", "/v1"},
		private: "10.0.0.7",
	}, {
		name: "unreachable",
		openai: func(t *testing.T) *OpenAI {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close() // nothing listens there now
			return &OpenAI{BaseURL: "http://" + addr + "/v1", Model: "m", Backoff: time.Millisecond, MaxAttempts: 2}
		},
		reason:  "The assistant could not answer: the model's server could not be reached.",
		inLog:   []string{"connection refused"},
		private: "127.0.0.1",
	}, {
		name: "error chunk",
		openai: func(t *testing.T) *OpenAI {
			_, o := newFakeLLM(t, sse([]string{`{"error":{"message":"backend gpu-7.internal crashed"}}`}, true))
			return o
		},
		reason:  "The assistant could not answer: the model's server reported an error.",
		inLog:   []string{"gpu-7.internal"},
		private: "gpu-7.internal",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			ctx := context.Background()
			ann := newUser(t, s, "ann")
			var logBuf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&syncWriter{w: &logBuf}, nil))
			res, err := New(s, tc.openai(t), Options{Logger: log}).Send(ctx, SendRequest{UserID: ann, Query: "q"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Failed || res.Reply.Content != tc.reason {
				t.Fatalf("error row %q, want %q", res.Reply.Content, tc.reason)
			}
			msgs, err := s.Messages(ctx, ann, res.Exchange.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range msgs {
				if strings.Contains(m.Content, tc.private) {
					t.Fatalf("stored %s row names %q: %q", m.Role, tc.private, m.Content)
				}
			}
			for _, want := range tc.inLog {
				if !strings.Contains(logBuf.String(), want) {
					t.Errorf("the log lacks %q:\n%s", want, logBuf.String())
				}
			}
		})
	}
}

// syncWriter serialises writes to a buffer shared with a turn's goroutine.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
