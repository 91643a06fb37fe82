package agents

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"palaver/models"
)

// titleAnswer answers a title request (not streamed) with content.
func titleAnswer(content string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"model": "test-model", "choices": []any{
			map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"},
		}})
	}
}

// held answers only once release is closed, and says on started that the
// request arrived.
func held(started chan<- struct{}, release <-chan struct{}, then http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		then(w, r)
	}
}

// waitTitle waits for the hub to announce the exchange's header with a
// title other than was.
func waitTitle(t *testing.T, sub *Subscription, exchangeID int64, was string) *models.Exchange {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case e := <-sub.C:
			if e.Kind == EventTurn && e.ExchangeID == exchangeID && e.Exchange != nil && e.Exchange.Title != was {
				return e.Exchange
			}
		case <-deadline:
			t.Fatalf("no new title for exchange %d was announced", exchangeID)
		}
	}
}

func TestModelTitlesTheFirstTurn(t *testing.T) {
	f, o := newFakeLLM(t,
		sse([]string{textChunk("Zebras graze on the savanna."), finishChunk}, true),
		titleAnswer("Title: \"Where zebras graze.\"\nignored second line"),
		sse([]string{textChunk("Still zebras."), finishChunk}, true),
	)
	s := newStore(t)
	ann := newUser(t, s, "ann")
	ctx := context.Background()
	svc := New(s, o, Options{Logger: quiet})
	sub := svc.Hub().Subscribe(ann)
	defer sub.Close()
	res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "where do zebras  graze?"})
	if err != nil || res.Failed {
		t.Fatalf("send = %+v, %v", res, err)
	}
	before, err := s.Exchange(ctx, ann, res.Exchange.ID)
	if err != nil {
		t.Fatal(err)
	}
	if before.Title != "where do zebras graze?" && before.Title != "Where zebras graze" {
		t.Fatalf("title after the turn %q", before.Title)
	}
	announced := waitTitle(t, sub, res.Exchange.ID, "where do zebras graze?")
	if announced.Title != "Where zebras graze" {
		t.Fatalf("announced title %q", announced.Title)
	}
	after, err := s.Exchange(ctx, ann, res.Exchange.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Title != "Where zebras graze" || !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("after the title: %q, updated_at %v (was %v)", after.Title, after.UpdatedAt, before.UpdatedAt)
	}
	<-f.bodies // the turn's request
	title := <-f.bodies
	if title.Stream || len(title.Messages) != 2 || !strings.Contains(title.Messages[1].Content, "where do zebras  graze?") ||
		!strings.Contains(title.Messages[1].Content, "Zebras graze on the savanna.") {
		t.Fatalf("title request %+v", title)
	}
	// A second turn asks for no title.
	if _, err := svc.Send(ctx, SendRequest{UserID: ann, ExchangeID: res.Exchange.ID, Query: "and in winter?"}); err != nil {
		t.Fatal(err)
	}
	svc.background.Wait()
	if n := f.calls.Load(); n != 3 {
		t.Fatalf("%d requests, want the turn, the title, the second turn", n)
	}
}

func TestTitleFailureKeepsTheFirstMessage(t *testing.T) {
	for name, answer := range map[string]http.HandlerFunc{
		"500":   func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusInternalServerError) },
		"empty": titleAnswer(" \"\" \n"),
		"junk":  sse([]string{textChunk("not json")}, true),
	} {
		t.Run(name, func(t *testing.T) {
			f, o := newFakeLLM(t, sse([]string{textChunk("Hi."), finishChunk}, true), answer)
			s := newStore(t)
			ann := newUser(t, s, "ann")
			ctx := context.Background()
			svc := New(s, o, Options{Logger: quiet})
			res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "say hi"})
			if err != nil || res.Failed {
				t.Fatalf("send = %+v, %v", res, err)
			}
			svc.background.Wait() // the title's try
			if f.calls.Load() != 2 {
				t.Fatalf("%d requests, want the turn and the title", f.calls.Load())
			}
			ex, err := s.Exchange(ctx, ann, res.Exchange.ID)
			if err != nil || ex.Title != "say hi" {
				t.Fatalf("title %q, %v; want the first message's", ex.Title, err)
			}
		})
	}
}

// The reply comes while the title is still being made, and a rename made
// meanwhile is kept.
func TestTitleNeitherDelaysTheReplyNorOverwritesARename(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	_, o := newFakeLLM(t,
		sse([]string{textChunk("Hi."), finishChunk}, true),
		held(started, release, titleAnswer("A model's title")),
	)
	s := newStore(t)
	ann := newUser(t, s, "ann")
	svc := New(s, o, Options{Logger: quiet})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := svc.Send(ctx, SendRequest{UserID: ann, Query: "say hi"})
	if err != nil || res.Failed || res.Reply.Content != "Hi." {
		t.Fatalf("the reply waited for the title: %+v, %v", res, err)
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("no title was asked for")
	}
	if _, err := s.RenameExchange(ctx, ann, res.Exchange.ID, "My own name"); err != nil {
		t.Fatal(err)
	}
	close(release)
	svc.background.Wait()
	ex, err := s.Exchange(ctx, ann, res.Exchange.ID)
	if err != nil || ex.Title != "My own name" {
		t.Fatalf("title %q, %v; want the person's", ex.Title, err)
	}
}

func TestPageChatsGetTitlesToo(t *testing.T) {
	_, o := newFakeLLM(t, sse([]string{textChunk("It has one heading."), finishChunk}, true), titleAnswer("The trip page"))
	s := newStore(t)
	ann := newUser(t, s, "ann")
	ctx := context.Background()
	page, err := s.CreatePage(ctx, ann, "Trip", "# Trip\n")
	if err != nil {
		t.Fatal(err)
	}
	svc := New(s, o, Options{Logger: quiet})
	res, err := svc.Send(ctx, SendRequest{UserID: ann, PageID: &page.ID, Query: "what is in it?"})
	if err != nil || res.Failed {
		t.Fatalf("send = %+v, %v", res, err)
	}
	svc.background.Wait()
	if ex, err := s.Exchange(ctx, ann, res.Exchange.ID); err != nil || ex.Title != "The trip page" {
		t.Fatalf("page chat title %q, %v", ex.Title, err)
	}
}

func TestCleanTitle(t *testing.T) {
	long := strings.Repeat("word ", 30)
	for in, want := range map[string]string{
		"Zebra migration":                   "Zebra migration",
		"  \"Zebra migration.\"  ":          "Zebra migration",
		"Title: **Zebras**\nmore":           "Zebras",
		"\n\n“Zèbres en hiver”":             "Zèbres en hiver",
		"'single'":                          "single",
		"":                                  "",
		"\"\"":                              "",
		"...":                               "",
		"tabs\tand\u0007bells":              "tabs andbells",
		long:                                strings.TrimSpace(strings.Repeat("word ", 15)) + "…",
		"title: a title about titles: more": "a title about titles: more",
	} {
		got := cleanTitle(in)
		if got != want {
			t.Errorf("cleanTitle(%q) = %q, want %q", in, got, want)
		}
		if n := len([]rune(got)); n > maxTitleLength {
			t.Errorf("cleanTitle(%q) has %d characters", in, n)
		}
	}
}
