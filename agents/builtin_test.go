package agents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"palaver/models"
)

// TestRouterGreetsOnlyAGreeting: a message that is only a greeting gets
// the greeting; one that merely holds a greeting word gets the offline
// answer quoting it (API.md, the builtin agent).
func TestRouterGreetsOnlyAGreeting(t *testing.T) {
	b := &Builtin{}
	for _, tc := range []struct {
		query    string
		greeting bool
	}{
		{"hello", true},
		{"Hi!", true},
		{"hi there", true},
		{"hello again", true},
		{"hey there", true},
		{"HEY!", true},
		{"(hi)", true},
		{"  Hello, everyone 👋 ", true},
		{"oh, hey you", true},
		{"show me a python hello world code block", false},
		{"console.log('hi')", false},
		{"say\nhello", false},
		{"hello, what is 2+2?", false},
		{"well, hello.", true},
		{"this", false}, {"high", false}, {"they went home", false}, {"shell script", false},
		{"chi-square test", false}, {"hithere", false}, {"Ωhi", false}, {"éhey", false},
		{"hi5", false}, {"hello_world", false}, {"What is 2+2?", false},
		{"a question\nover two lines, with \"quotes\"", false},
	} {
		resp, err := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: tc.query}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.HasPrefix(resp.Content, "Hello!"); got != tc.greeting {
			t.Errorf("%q: greeting %v, want %v: %q", tc.query, got, tc.greeting, resp.Content)
		}
		if resp.AgentType != AgentRouter || resp.Metadata["provider"] != "builtin" || resp.Suggestions == nil {
			t.Errorf("%q: response = %+v", tc.query, resp)
		}
		if tc.greeting {
			continue
		}
		if !strings.Contains(resp.Content, "offline agent") {
			t.Errorf("%q: the reply does not say it is the offline agent: %q", tc.query, resp.Content)
		}
		if !strings.Contains(resp.Content, `"`+tc.query+`"`) {
			t.Errorf("%q: the reply does not quote the whole question: %q", tc.query, resp.Content)
		}
	}
}

// TestRouterAnswersACodeBlockRequestWithAFence: a question asking for a
// code block gets a fenced block, of the language it names (Python when it
// names none), the same every time.
func TestRouterAnswersACodeBlockRequestWithAFence(t *testing.T) {
	b := &Builtin{}
	for _, tc := range []struct {
		query string
		fence string // "": no block
	}{
		{"show me a python hello world code block", "```python\n"},
		{"Can I see a code block?", "```python\n"},
		{"a Go code snippet please", "```go\n"},
		{"write a JavaScript code example", "```javascript\n"},
		{"code sample in bash", "```bash\n"},
		{"give me some SQL code blocks", "```sql\n"},
		{"a rust code-block", "```rust\n"},
		{"what is a barcode block", ""},
		{"console.log('hi')", ""},
		{"I like python", ""},
	} {
		resp, err := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: tc.query}, nil)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: tc.query}, nil)
		if again.Content != resp.Content {
			t.Errorf("%q: two answers differ: %q and %q", tc.query, resp.Content, again.Content)
		}
		if tc.fence == "" {
			if strings.Contains(resp.Content, "```") {
				t.Errorf("%q: a code block nobody asked for: %q", tc.query, resp.Content)
			}
			continue
		}
		i := strings.Index(resp.Content, tc.fence)
		if i < 0 || !strings.HasSuffix(resp.Content, "\n```") || strings.Count(resp.Content, "```") != 2 {
			t.Errorf("%q: want one block opening %q, got %q", tc.query, tc.fence, resp.Content)
		}
		if !strings.Contains(resp.Content, "offline agent") || !strings.Contains(resp.Content, `"`+tc.query+`"`) {
			t.Errorf("%q: the reply does not say what it is and quote the question: %q", tc.query, resp.Content)
		}
	}
}

// TestRouterCountsAndNumbersAnswers: the count comes from the turn's place
// (the history holds only recent entries), and a regenerated answer says
// which answer it is.
func TestRouterCountsAndNumbersAnswers(t *testing.T) {
	b := &Builtin{}
	short := []models.Message{{Role: models.RoleUser, Content: "a"}, {Role: models.RoleAssistant, Content: "b"}}
	for _, tc := range []struct {
		name   string
		req    Request
		want   string
		absent string
	}{
		{"first message", Request{Query: "more"}, "You asked", "message 1 "},
		{"from the history", Request{Query: "more", History: short}, "message 2 of this conversation", ""},
		{"from the turn", Request{Query: "more", History: short, Turn: 140}, "message 140 of this conversation", "message 2 "},
		{"a greeting", Request{Query: "hello again", Turn: 7}, "We're 7 messages into", ""},
		{"a first answer", Request{Query: "more", Answer: 1}, "You asked", "Another answer"},
		{"a second answer", Request{Query: "more", Answer: 2}, "\n\nAnother answer (2) to this message.", ""},
		{"a third greeting", Request{Query: "hi", Answer: 3}, "Another answer (3)", ""},
	} {
		tc.req.AgentType = AgentRouter
		resp, err := b.Execute(context.Background(), tc.req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(resp.Content, tc.want) || (tc.absent != "" && strings.Contains(resp.Content, tc.absent)) {
			t.Errorf("%s: want %q without %q, got %q", tc.name, tc.want, tc.absent, resp.Content)
		}
	}
}

func TestBuiltinStreamsWords(t *testing.T) {
	b := &Builtin{}
	for _, q := range []string{"hello", "tell me about\nthe  sea", "naïve café ☕ question"} {
		var deltas []string
		resp, err := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: q}, func(d string) {
			deltas = append(deltas, d)
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(deltas, ""); got != resp.Content {
			t.Errorf("%q: deltas concatenate to %q, not the content %q", q, got, resp.Content)
		}
		if words := len(strings.Fields(resp.Content)); len(deltas) < words {
			t.Errorf("%q: %d deltas for %d words", q, len(deltas), words)
		}
		for _, d := range deltas {
			if d == "" || strings.ContainsAny(strings.TrimLeft(d, " \n"), " \n") {
				t.Errorf("%q: delta %q is not one word", q, d)
			}
		}
	}
}

func TestBuiltinStreamStopsWhenCancelled(t *testing.T) {
	b := &Builtin{Delay: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := b.Execute(ctx, Request{AgentType: AgentRouter, Query: "a long enough question"}, func(string) {
		if n++; n == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n > 4 {
		t.Errorf("%d deltas sent after the cancel", n-3)
	}
}

func TestBuiltinUnknownAgent(t *testing.T) {
	_, err := (&Builtin{}).Execute(context.Background(), Request{AgentType: "wizard", Query: "q"}, nil)
	if err == nil || !strings.Contains(err.Error(), "wizard") {
		t.Fatalf("err = %v, want one naming the agent", err)
	}
}

// TestBuiltinCountsALongConversation: in a 300-message chat, turns 128 to
// 150 each say their own number (the agent sees only the recent entries,
// which once made every one of them "message 21").
func TestBuiltinCountsALongConversation(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	ctx := context.Background()
	ex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: ann, Scope: models.ScopeGeneral, AgentType: AgentRouter, Query: "q1", Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for turn := 1; turn <= 127; turn++ {
		if turn > 1 {
			if _, _, err := s.StartTurn(ctx, models.TurnStart{UserID: ann, ExchangeID: ex.ID, Scope: models.ScopeGeneral, AgentType: AgentRouter, Query: fmt.Sprintf("q%d", turn), Owner: "test"}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.FinishTurn(ctx, ex.ID, "test", &models.Message{Role: models.RoleAssistant, Content: fmt.Sprintf("a%d", turn)}); err != nil {
			t.Fatal(err)
		}
	}
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	for turn := 128; turn <= 150; turn++ {
		res, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: ex.ID, Query: fmt.Sprintf("question %d", turn)})
		if err != nil || res.Failed {
			t.Fatalf("turn %d: %+v, %v", turn, res, err)
		}
		if want := fmt.Sprintf("This is message %d of this conversation", turn); !strings.Contains(res.Reply.Content, want) {
			t.Fatalf("turn %d: %q, want %q", turn, res.Reply.Content, want)
		}
	}
	if n := countMessages(t, s); n != 300 {
		t.Errorf("%d messages, want 300", n)
	}
}

// TestBuiltinRegeneratedAnswersDiffer: each new answer to a message says
// which it is, so that switching branches shows a change.
func TestBuiltinRegeneratedAnswersDiffer(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	ctx := context.Background()
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	first, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "what is a fork?"})
	if err != nil {
		t.Fatal(err)
	}
	answers := []string{first.Reply.Content}
	answersExchange := first.Exchange.ID
	for _, tc := range []struct {
		from int64 // the exchange whose reply is answered again
		want string
	}{
		{first.Exchange.ID, "Another answer (2) to this message."},
		{first.Exchange.ID, "Another answer (3) to this message."},
		{0, "Another answer (4) to this message."}, // from the last branch
	} {
		from := tc.from
		if from == 0 {
			from = answersExchange
		}
		turn, err := svc.Regenerate(ctx, RegenerateRequest{UserID: ann, ExchangeID: from})
		if err != nil {
			t.Fatal(err)
		}
		res, err := turn.Wait(ctx)
		if err != nil || res.Failed {
			t.Fatalf("regenerate: %+v, %v", res, err)
		}
		answersExchange = res.Exchange.ID
		if !strings.HasSuffix(res.Reply.Content, tc.want) || slices.Contains(answers, res.Reply.Content) {
			t.Errorf("regenerated %q, want a new answer ending %q (before: %q)", res.Reply.Content, tc.want, answers)
		}
		answers = append(answers, res.Reply.Content)
	}
}

// TestRouterShowsTheInstructionsInForce: the offline agent quotes the
// instructions in force (what a model would follow), bounded; none, no note.
func TestRouterShowsTheInstructionsInForce(t *testing.T) {
	b := &Builtin{}
	resp, err := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "when to prune",
		System: "Instructions of the project \"Garden\":\nAlways talk about roses."}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Content, "> Always talk about roses.") || !strings.HasPrefix(resp.Content, "I'm the offline agent") {
		t.Fatalf("reply %q", resp.Content)
	}
	plain, _ := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "when to prune"}, nil)
	if strings.Contains(plain.Content, "instructions in force") {
		t.Fatalf("a reply with no instructions mentions them: %q", plain.Content)
	}
	long, _ := b.Execute(context.Background(), Request{AgentType: AgentRouter, Query: "x", System: strings.Repeat("a", 5000)}, nil)
	if n := strings.Count(long.Content, "a"); n > toldNoteMax+200 {
		t.Fatalf("the note quotes %d characters", n)
	}
}
