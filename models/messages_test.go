package models

import (
	"context"
	"slices"
	"testing"
)

// logFixture is an exchange whose log has replies, failures and a retry:
//
//	u@0 "q1", a@1 "a1", u@2 "q2", error "e1", u@3 "q3", a@4 "a3", u@5 "q4", error "e2"
type logFixture struct {
	ann, bob *User
	ex       *Exchange
	a1, a3   *Message
}

func newLogFixture(t *testing.T, s *Store) logFixture {
	t.Helper()
	ctx := context.Background()
	f := logFixture{ann: mustUser(t, s, "ann"), bob: mustUser(t, s, "bob")}
	f.ex, _, f.a1 = mustTurn(t, s, TurnStart{UserID: f.ann.ID, Query: "q1"}, "a1")
	fail := func(query, reason string) {
		ex, _ := mustStart(t, s, TurnStart{UserID: f.ann.ID, ExchangeID: f.ex.ID, Query: query})
		if _, err := s.FailTurn(ctx, ex.ID, *ex.TurnOwner, reason); err != nil {
			t.Fatal(err)
		}
	}
	fail("q2", "e1")
	_, _, f.a3 = mustTurn(t, s, TurnStart{UserID: f.ann.ID, ExchangeID: f.ex.ID, Query: "q3"}, "a3")
	fail("q4", "e2")
	return f
}

func contents(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

func TestMessagesAndTimeTravel(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newLogFixture(t, s)
		all, err := s.Messages(ctx, f.ann.ID, f.ex.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"q1", "a1", "q2", "e1", "q3", "a3", "q4", "e2"}; !slices.Equal(contents(all), want) {
			t.Fatalf("Messages = %v, want %v", contents(all), want)
		}
		if want := []string{"user@0", "assistant@1", "user@2", "error@-", "user@3", "assistant@4", "user@5", "error@-"}; !slices.Equal(seqs(all), want) {
			t.Fatalf("seqs = %v, want %v", seqs(all), want)
		}
		for _, tc := range []struct {
			at   int64
			want []string
		}{
			{-1, []string{}},
			{0, []string{"q1"}},
			{1, []string{"q1", "a1"}},
			// The failure of the turn that seq 2 opened belongs to that state...
			{2, []string{"q1", "a1", "q2", "e1"}},
			{3, []string{"q1", "a1", "q2", "e1", "q3"}},
			// ...but an error row written after the cut is not shown.
			{4, []string{"q1", "a1", "q2", "e1", "q3", "a3"}},
			{5, []string{"q1", "a1", "q2", "e1", "q3", "a3", "q4", "e2"}},
			{99, []string{"q1", "a1", "q2", "e1", "q3", "a3", "q4", "e2"}},
		} {
			got, err := s.Messages(ctx, f.ann.ID, f.ex.ID, &tc.at)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(contents(got), tc.want) {
				t.Errorf("Messages(at=%d) = %v, want %v", tc.at, contents(got), tc.want)
			}
		}
		_, err = s.Messages(ctx, f.bob.ID, f.ex.ID, nil)
		wantErr(t, err, ErrNotFound, "another user's Messages")
		_, err = s.Messages(ctx, f.ann.ID, 424242, nil)
		wantErr(t, err, ErrNotFound, "Messages of a missing exchange")
	})
}

func TestRecentContext(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newLogFixture(t, s)
		for _, tc := range []struct {
			limit int
			want  []string
		}{
			{3, []string{"q3", "a3", "q4"}},
			{1, []string{"q4"}},
			{100, []string{"q1", "a1", "q2", "q3", "a3", "q4"}},
		} {
			got, err := s.RecentContext(ctx, f.ann.ID, f.ex.ID, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(contents(got), tc.want) {
				t.Errorf("RecentContext(%d) = %v, want %v (no error rows, oldest first)", tc.limit, contents(got), tc.want)
			}
		}
		got, err := s.RecentContext(ctx, f.bob.ID, f.ex.ID, 10)
		if err != nil || len(got) != 0 {
			t.Errorf("another user's RecentContext = %v, %v; want nothing", contents(got), err)
		}
	})
}

func TestMessageAndFirstAnswer(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newLogFixture(t, s)
		m, err := s.Message(ctx, f.ann.ID, f.a3.ID)
		if err != nil || m.Content != "a3" || m.AgentResponse == nil || m.AgentResponse.Content != "a3" {
			t.Errorf("Message(a3) = %+v, %v", m, err)
		}
		_, err = s.Message(ctx, f.bob.ID, f.a3.ID)
		wantErr(t, err, ErrNotFound, "another user's Message")
		_, err = s.Message(ctx, f.ann.ID, 424242)
		wantErr(t, err, ErrNotFound, "missing Message")

		first, err := s.FirstAnswer(ctx, f.ann.ID, f.ex.ID)
		if err != nil || first.ID != f.a1.ID {
			t.Errorf("FirstAnswer = %+v, %v; want a1", first, err)
		}
		_, err = s.FirstAnswer(ctx, f.bob.ID, f.ex.ID)
		wantErr(t, err, ErrNotFound, "another user's FirstAnswer")
		unanswered, _ := mustStart(t, s, TurnStart{UserID: f.ann.ID, Query: "pending"})
		_, err = s.FirstAnswer(ctx, f.ann.ID, unanswered.ID)
		wantErr(t, err, ErrNotFound, "FirstAnswer before any answer")
	})
}

func TestSetFeedback(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newLogFixture(t, s)
		m, err := s.SetFeedback(ctx, f.ann.ID, f.a1.ID, ptr[int64](FeedbackUp), ptr("spot on"))
		if err != nil {
			t.Fatal(err)
		}
		if m.ID != f.a1.ID || m.Feedback == nil || *m.Feedback != FeedbackUp || m.FeedbackComment == nil || *m.FeedbackComment != "spot on" {
			t.Errorf("SetFeedback returned %+v", m)
		}
		if n := count(t, s, "messages", "id = ? AND feedback = 1 AND feedback_comment = 'spot on'", f.a1.ID); n != 1 {
			t.Error("feedback not stored")
		}

		// Only assistant replies take a rating; others look missing.
		all, _ := s.Messages(ctx, f.ann.ID, f.ex.ID, nil)
		for _, other := range all {
			if other.Role == RoleAssistant {
				continue
			}
			_, err := s.SetFeedback(ctx, f.ann.ID, other.ID, ptr[int64](FeedbackDown), nil)
			wantErr(t, err, ErrNotFound, "feedback on a "+other.Role+" entry")
		}
		// Another user cannot rate, and changes nothing.
		_, err = s.SetFeedback(ctx, f.bob.ID, f.a1.ID, ptr[int64](FeedbackDown), nil)
		wantErr(t, err, ErrNotFound, "another user's SetFeedback")
		if n := count(t, s, "messages", "feedback IS NOT NULL"); n != 1 {
			t.Errorf("%d rated messages, want only a1", n)
		}
		if n := count(t, s, "messages", "id = ? AND feedback = 1", f.a1.ID); n != 1 {
			t.Error("another user's attempt changed a1's rating")
		}
		// nil clears the rating and its comment.
		m, err = s.SetFeedback(ctx, f.ann.ID, f.a1.ID, nil, nil)
		if err != nil || m.Feedback != nil || m.FeedbackComment != nil {
			t.Errorf("clearing feedback: %+v, %v", m, err)
		}
	})
}

func TestSetExchangeFeedback(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		f := newLogFixture(t, s)
		if _, err := s.SetFeedback(ctx, f.ann.ID, f.a3.ID, ptr[int64](FeedbackUp), ptr("keep me")); err != nil {
			t.Fatal(err)
		}
		m, err := s.SetExchangeFeedback(ctx, f.ann.ID, f.ex.ID, FeedbackDown)
		if err != nil {
			t.Fatal(err)
		}
		// The latest reply is a3, not the trailing error row or a1.
		if m.ID != f.a3.ID || m.Feedback == nil || *m.Feedback != FeedbackDown {
			t.Errorf("SetExchangeFeedback rated %+v, want a3 down", m)
		}
		if m.FeedbackComment == nil || *m.FeedbackComment != "keep me" {
			t.Errorf("comment = %v, want it kept", m.FeedbackComment)
		}
		if n := count(t, s, "messages", "id = ? AND feedback IS NULL", f.a1.ID); n != 1 {
			t.Error("a1 was rated too")
		}
		_, err = s.SetExchangeFeedback(ctx, f.bob.ID, f.ex.ID, FeedbackUp)
		wantErr(t, err, ErrNotFound, "another user's SetExchangeFeedback")
		if n := count(t, s, "messages", "id = ? AND feedback = 0", f.a3.ID); n != 1 {
			t.Error("another user's attempt changed the rating")
		}
		unanswered, _ := mustStart(t, s, TurnStart{UserID: f.ann.ID, Query: "pending"})
		_, err = s.SetExchangeFeedback(ctx, f.ann.ID, unanswered.ID, FeedbackUp)
		wantErr(t, err, ErrNoAssistantMessage, "rating an exchange with no reply")
	})
}

func TestSetJobFeedback(t *testing.T) {
	eachDB(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		ann, bob := mustUser(t, s, "ann"), mustUser(t, s, "bob")
		job := "f2db41e1fa331b3e"
		ex, _, first := mustTurn(t, s, TurnStart{UserID: ann.ID, Scope: ScopeJob, JobID: &job, Query: "why?"}, "out of memory")
		latest := assistant("still out of memory")
		again, _ := mustStart(t, s, TurnStart{UserID: ann.ID, ExchangeID: ex.ID, Query: "and now?"})
		if err := s.FinishTurn(ctx, again.ID, *again.TurnOwner, latest); err != nil {
			t.Fatal(err)
		}
		bobs := "f2db41e1fa331b3f"
		mustTurn(t, s, TurnStart{UserID: bob.ID, Scope: ScopeJob, JobID: &bobs, Query: "mine"}, "yours")

		m, err := s.SetJobFeedback(ctx, ann.ID, job, FeedbackUp)
		if err != nil || m.ID != latest.ID || m.Feedback == nil || *m.Feedback != FeedbackUp {
			t.Fatalf("SetJobFeedback = %+v, %v; want the latest reply %d rated up", m, err, latest.ID)
		}
		if n := count(t, s, "messages", "id = ? AND feedback IS NULL", first.ID); n != 1 {
			t.Error("the first reply was rated too")
		}
		before := count(t, s, "messages", "feedback IS NOT NULL")
		for _, tc := range []struct {
			what string
			user int64
			job  string
		}{{"another user's job", ann.ID, bobs}, {"a job of hers that bob names", bob.ID, job}, {"a job with no chat", ann.ID, "nope"}} {
			_, err := s.SetJobFeedback(ctx, tc.user, tc.job, FeedbackDown)
			wantErr(t, err, ErrNotFound, tc.what)
		}
		if after := count(t, s, "messages", "feedback IS NOT NULL"); after != before {
			t.Errorf("refused ratings changed %d messages", after-before)
		}
	})
}
