package agents

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"palaver/models"
)

func TestSearchRequests(t *testing.T) {
	for q, want := range map[string]string{
		"search my chats for zebras":                       "zebras",
		"Search My Chats For Zebra stripes?":               "Zebra stripes",
		"please SEARCH my chats for \"blue whale\".":       "\"blue whale\"",
		"find zebras in my conversations":                  "zebras",
		"Can you FIND the zebra herd in My Conversations?": "the zebra herd",
		"research my chats for zebras":                     "",
		"search my chats for":                              "",
		"find in my conversations":                         "",
		"search my chatsfor zebras":                        "",
		"find zebras in my conversationsXYZ":               "",
	} {
		got, ok := searchRequest(q)
		if ok != (want != "") || got != want {
			t.Errorf("searchRequest(%q) = %q, %v; want %q", q, got, ok, want)
		}
	}
}

// send runs one builtin turn and fails the test unless it answered.
func send(t *testing.T, svc *Service, req SendRequest) *TurnResult {
	t.Helper()
	res, err := svc.Send(context.Background(), req)
	if err != nil || res.Failed {
		t.Fatalf("send %q = %+v, %v", req.Query, res, err)
	}
	return res
}

var markdownLink = regexp.MustCompile(`\[([^\]]*)\]\(([^)]*)\)`)

func TestRouterSearchesAsARecordedSubRun(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann, bob := newUser(t, s, "ann"), newUser(t, s, "bob")
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	zebras := send(t, svc, SendRequest{UserID: ann, Query: "Where do *zebras* graze in winter?"})
	send(t, svc, SendRequest{UserID: ann, Query: "something else entirely"})
	page, err := s.CreatePage(ctx, ann, "Savanna", "# Savanna\n")
	if err != nil {
		t.Fatal(err)
	}
	pageChat := send(t, svc, SendRequest{UserID: ann, PageID: &page.ID, Query: "add zebras to the savanna page"})
	send(t, svc, SendRequest{UserID: bob, Query: "bob's zebras are private"})

	res := send(t, svc, SendRequest{UserID: ann, Query: "Search my chats for zebras"})
	reply := res.Reply.Content
	links := markdownLink.FindAllStringSubmatch(reply, -1)
	if len(links) == 0 || len(links) > searchHits {
		t.Fatalf("reply without 1 to %d links:\n%s", searchHits, reply)
	}
	var urls []string
	for _, l := range links {
		urls = append(urls, l[2])
	}
	for _, want := range []string{
		fmt.Sprintf("/chat/%d?seq=0", zebras.Exchange.ID),
		fmt.Sprintf("/pages/%d/chat/%d?seq=0", page.ID, pageChat.Exchange.ID),
	} {
		if !slices.Contains(urls, want) {
			t.Errorf("no link to %s in:\n%s", want, reply)
		}
	}
	for _, u := range urls {
		if strings.Contains(u, fmt.Sprintf("/chat/%d", res.Exchange.ID)) {
			t.Errorf("the search found its own question: %s", u)
		}
	}
	if strings.Contains(reply, "bob") || strings.Contains(reply, "<mark>") || !strings.Contains(reply, `Where do \*zebras\* graze`) {
		t.Errorf("reply's snippets (another user's, marks, Markdown not escaped):\n%s", reply)
	}

	// The parent's log shows the delegation as one tool_call / tool_result
	// pair naming the sub-run.
	msgs, err := s.Messages(ctx, ann, res.Exchange.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []string{"user", "tool_call", "tool_result", "assistant"}) {
		t.Fatalf("parent log roles %v", roles)
	}
	call, result := msgs[1], msgs[2]
	if call.Tool == nil || call.Tool.Name != toolSearch || call.Tool.Arguments["query"] != "zebras" ||
		result.Tool == nil || result.Tool.CallID != call.Tool.CallID {
		t.Fatalf("tool entries %+v / %+v", call.Tool, result.Tool)
	}
	r, _ := result.Tool.Result.(map[string]any)
	runs, err := s.SubRuns(ctx, ann, res.Exchange.ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("sub-runs %+v, %v", runs, err)
	}
	run := runs[0]
	if r["sub_run_id"] != float64(run.ExchangeID) || r["agent"] != AgentSearch || r["status"] != models.SubRunOK || r["hit_count"] != float64(len(links)) {
		t.Fatalf("tool result %v for sub-run %d with %d links", r, run.ExchangeID, len(links))
	}
	if run.Agent != AgentSearch || run.Task != "zebras" || run.Status != models.SubRunOK || run.FinishedAt == nil ||
		run.FinishedAt.Before(run.StartedAt) || run.ParentSeq != *call.Seq || run.Result != countHits(len(links)) {
		t.Fatalf("sub-run record %+v (the call is at seq %d)", run, *call.Seq)
	}
	// The sub-run's log: the query, each hit, what it found.
	sub := logOf(t, s, ann, run.ExchangeID)
	if len(sub) != len(links)+2 || sub[0] != "user:zebras" || !strings.HasPrefix(sub[1], "tool_result:") || !strings.HasPrefix(sub[len(sub)-1], "assistant:Found") {
		t.Fatalf("sub-run log %v", sub)
	}

	// Hidden from the history and from search.
	hist, err := s.ListExchanges(ctx, ann, models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hist {
		if h.ID == run.ExchangeID {
			t.Fatal("the sub-run is in the history")
		}
	}
	hits, err := s.Search(ctx, ann, models.SearchQuery{Terms: models.ParseSearch("zebras"), Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.ExchangeID == run.ExchangeID {
			t.Fatalf("the search finds the sub-run: %+v", h)
		}
	}
	// A sub-run takes no messages, and its log and lease stay as they were.
	before, err := s.Messages(ctx, ann, run.ExchangeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	header, err := s.Exchange(ctx, ann, run.ExchangeID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: run.ExchangeID, Query: "hi"})
	var in *InputError
	if !errors.As(err, &in) || !strings.Contains(in.Msg, "sub-run; it takes no messages") {
		t.Fatalf("a message sent to a sub-run: %v", err)
	}
	after, err := s.Messages(ctx, ann, run.ExchangeID, nil)
	if err != nil || len(after) != len(before) {
		t.Fatalf("the sub-run's log went from %d to %d entries (%v)", len(before), len(after), err)
	}
	if ex, err := s.Exchange(ctx, ann, run.ExchangeID); err != nil || ex.TurnStatus != header.TurnStatus || ex.TurnCount != header.TurnCount {
		t.Fatalf("the sub-run's lease after the refused message: %+v, %v", ex, err)
	}

	// Deleting the parent deletes the sub-run.
	if _, err := s.DeleteExchange(ctx, ann, res.Exchange.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exchange(ctx, ann, run.ExchangeID); err == nil {
		t.Fatal("the sub-run outlived its parent")
	}
}

func TestRouterSearchFindsNothing(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	send(t, svc, SendRequest{UserID: ann, Query: "zebras"})
	res := send(t, svc, SendRequest{UserID: ann, Query: "find hippopotamus in my conversations"})
	if want := "I searched your chats for “hippopotamus” and nothing matched."; res.Reply.Content != want {
		t.Fatalf("reply %q, want %q", res.Reply.Content, want)
	}
	runs, err := s.SubRuns(context.Background(), ann, res.Exchange.ID)
	if err != nil || len(runs) != 1 || runs[0].Status != models.SubRunOK || runs[0].Result != "no matches" {
		t.Fatalf("sub-runs %+v, %v", runs, err)
	}
	if got := logOf(t, s, ann, runs[0].ExchangeID); !slices.Equal(got, []string{"user:hippopotamus", "assistant:Nothing matched."}) {
		t.Fatalf("sub-run log %v", got)
	}
}

// A sub-agent that fails leaves a failed record with the reason, an error
// row in its log, and the parent goes on.
func TestRunSubRecordsAFailure(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ann := newUser(t, s, "ann")
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	res := send(t, svc, SendRequest{UserID: ann, Query: "hello"})
	run, err := svc.RunSub(ctx, res.Exchange, *res.Query.Seq, "helper", "do the thing", func(ctx context.Context, sub *SubRun) (string, error) {
		if err := sub.Log(ctx, &models.Message{Role: models.RoleToolResult, Content: "half done"}); err != nil {
			return "", err
		}
		return "", &FailureError{Reason: "The helper gave up.", Err: fmt.Errorf("internal detail")}
	})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != models.SubRunFailed || run.Result != "The helper gave up." || run.FinishedAt == nil {
		t.Fatalf("record %+v", run)
	}
	if got := logOf(t, s, ann, run.ExchangeID); !slices.Equal(got, []string{"user:do the thing", "tool_result:half done", "error:The helper gave up."}) {
		t.Fatalf("sub-run log %v", got)
	}
	run, err = svc.RunSub(ctx, res.Exchange, 0, "helper", "panic", func(context.Context, *SubRun) (string, error) { panic("boom") })
	if err != nil || run.Status != models.SubRunFailed {
		t.Fatalf("a panicking sub-agent: %+v, %v", run, err)
	}
	// Its parent stopped: the record says so, not "context canceled".
	parent, stop := context.WithCancelCause(ctx)
	run, err = svc.RunSub(parent, res.Exchange, 0, "helper", "wait", func(ctx context.Context, _ *SubRun) (string, error) {
		stop(errStopped)
		<-ctx.Done()
		return "", ctx.Err()
	})
	if err != nil || run.Status != models.SubRunFailed || run.Result != errStopped.Error() {
		t.Fatalf("a stopped sub-run: %+v, %v", run, err)
	}
}

// TestRouterSearchLinksNoJobChat: a job's chat has no screen (its /chat/{id}
// answers 404), so the agent's search leaves its hits out, as the search
// screen does, and links the rest where the screen links them.
func TestRouterSearchLinksNoJobChat(t *testing.T) {
	s := newStore(t)
	ann := newUser(t, s, "ann")
	svc := New(s, &Builtin{}, Options{Logger: quiet})
	job := "7"
	jobChat := send(t, svc, SendRequest{UserID: ann, JobID: &job, Query: "okapis in job seven"})
	general := send(t, svc, SendRequest{UserID: ann, Query: "where do okapis live"})

	res := send(t, svc, SendRequest{UserID: ann, Query: "Search my chats for okapis"})
	links := markdownLink.FindAllStringSubmatch(res.Reply.Content, -1)
	var urls []string
	for _, l := range links {
		urls = append(urls, l[2])
	}
	if want := fmt.Sprintf("/chat/%d?seq=0", general.Exchange.ID); !slices.Contains(urls, want) {
		t.Errorf("no link to %s in:\n%s", want, res.Reply.Content)
	}
	for _, u := range urls {
		if strings.Contains(u, fmt.Sprintf("/chat/%d", jobChat.Exchange.ID)) {
			t.Errorf("a link to the job's chat, which no screen shows: %s", u)
		}
	}
}
