package screens_test

import (
	"context"
	"testing"

	"palaver/agents"
	"palaver/models"
	"palaver/screens"
	"palaver/views"
)

// liveChat stores a general chat with one finished turn (the question, the
// answer) and returns its header as the turn left it.
func liveChat(t *testing.T, s *models.Store, userID int64, query string) *models.Exchange {
	t.Helper()
	ctx := context.Background()
	ex, _, err := s.StartTurn(ctx, models.TurnStart{UserID: userID, Scope: models.ScopeGeneral, AgentType: "router", Query: query, Owner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if ex, err = s.FinishTurnHeader(ctx, ex.ID, "test", &models.Message{Role: models.RoleAssistant, Content: "an answer"}); err != nil {
		t.Fatal(err)
	}
	return ex
}

// The live parts are a function of the viewer, what the tab watches and
// the event: each case watches a chat (and a page) as a tab's watch
// message says, then hears one event, and gets the parts the tab lacks.
// No socket: the handlers write what this returns.
func TestLiveEventParts(t *testing.T) {
	ctx := context.Background()
	type world struct {
		s            *models.Store
		user         *models.User
		watched      *models.Exchange // the chat the tab shows
		other        *models.Exchange // another chat of the user's
		page, other2 *models.Page     // the page the tab shows, another
	}
	cases := []struct {
		name  string
		event func(t *testing.T, w world) agents.Event
		want  func(t *testing.T, w world, u views.LiveUpdate)
	}{
		{
			name: "an entry of the watched chat",
			event: func(t *testing.T, w world) agents.Event {
				ex, msg, err := w.s.StartTurn(ctx, models.TurnStart{UserID: w.user.ID, ExchangeID: w.watched.ID, AgentType: "router", Query: "and then?", Owner: "test"})
				if err != nil {
					t.Fatal(err)
				}
				return agents.Event{Kind: agents.EventEntry, UserID: w.user.ID, ExchangeID: ex.ID, Exchange: ex, Entry: msg}
			},
			want: func(t *testing.T, w world, u views.LiveUpdate) {
				if len(u.Entries) != 1 || u.Entries[0].Text != "and then?" || u.Entries[0].Role != models.RoleUser {
					t.Fatalf("entries %+v, want the new question", u.Entries)
				}
			},
		},
		{
			name: "an entry of another chat",
			event: func(t *testing.T, w world) agents.Event {
				ex, msg, err := w.s.StartTurn(ctx, models.TurnStart{UserID: w.user.ID, ExchangeID: w.other.ID, AgentType: "router", Query: "elsewhere", Owner: "test"})
				if err != nil {
					t.Fatal(err)
				}
				return agents.Event{Kind: agents.EventEntry, UserID: w.user.ID, ExchangeID: ex.ID, Exchange: ex, Entry: msg}
			},
			want: func(t *testing.T, w world, u views.LiveUpdate) {
				if len(u.Entries) != 0 || u.Turn != nil {
					t.Fatalf("another chat's entry shown on the tab: %+v", u)
				}
			},
		},
		{
			name: "a turn of another chat",
			event: func(t *testing.T, w world) agents.Event {
				return agents.Event{Kind: agents.EventTurn, UserID: w.user.ID, ExchangeID: w.other.ID, Exchange: w.other}
			},
			want: func(t *testing.T, w world, u views.LiveUpdate) {
				if u.History == nil || u.History.ID != w.other.ID {
					t.Fatalf("sidebar item %+v, want the other chat's", u.History)
				}
				if u.Turn != nil || u.Heading != nil {
					t.Fatalf("another chat's turn changed the watched one's composer: %+v", u)
				}
			},
		},
		{
			name: "the shown page saved",
			event: func(t *testing.T, w world) agents.Event {
				if _, err := w.s.UpdatePage(ctx, w.user.ID, w.page.ID, nil, "# Plan\n\nMore steps.\n"); err != nil {
					t.Fatal(err)
				}
				return agents.Event{Kind: agents.EventPage, UserID: w.user.ID, PageID: w.page.ID}
			},
			want: func(t *testing.T, w world, u views.LiveUpdate) {
				if u.Page == nil || !u.Page.Content {
					t.Fatalf("page parts %+v, want the page's new state", u.Page)
				}
			},
		},
		{
			name: "another page saved",
			event: func(t *testing.T, w world) agents.Event {
				return agents.Event{Kind: agents.EventPage, UserID: w.user.ID, PageID: w.other2.ID}
			},
			want: func(t *testing.T, w world, u views.LiveUpdate) {
				if u.Page != nil {
					t.Fatalf("another page's state sent: %+v", u.Page)
				}
			},
		},
		{
			name: "the watched chat deleted",
			event: func(t *testing.T, w world) agents.Event {
				if _, err := w.s.DeleteExchange(ctx, w.user.ID, w.watched.ID); err != nil {
					t.Fatal(err)
				}
				return agents.Event{Kind: agents.EventTurn, UserID: w.user.ID, ExchangeID: w.watched.ID}
			},
			want: func(t *testing.T, w world, u views.LiveUpdate) {
				if u.Removed != w.watched.ID || !u.Gone {
					t.Fatalf("removed %d, gone %v: want the watched chat gone", u.Removed, u.Gone)
				}
			},
		},
		{
			name: "the watched chat renamed",
			event: func(t *testing.T, w world) agents.Event {
				ex, err := w.s.RenameExchange(ctx, w.user.ID, w.watched.ID, "Renamed")
				if err != nil {
					t.Fatal(err)
				}
				return agents.Event{Kind: agents.EventTurn, UserID: w.user.ID, ExchangeID: ex.ID, Exchange: ex}
			},
			want: func(t *testing.T, w world, u views.LiveUpdate) {
				if u.Heading == nil || u.Heading.Title != "Renamed" {
					t.Fatalf("heading %+v, want the new name", u.Heading)
				}
				if u.History == nil || u.History.ID != w.watched.ID {
					t.Fatalf("sidebar item %+v, want the renamed chat's", u.History)
				}
			},
		},
		{
			name: "a piece of the watched chat's reply",
			event: func(t *testing.T, w world) agents.Event {
				return agents.Event{Kind: agents.EventDelta, UserID: w.user.ID, ExchangeID: w.watched.ID, Delta: "Hel"}
			},
			want: func(t *testing.T, w world, u views.LiveUpdate) {
				if u.OpenReply == nil || u.Delta != "Hel" {
					t.Fatalf("open %v, delta %q: want a pending cell with the piece", u.OpenReply, u.Delta)
				}
			},
		},
		{
			name: "another user's event",
			event: func(t *testing.T, w world) agents.Event {
				return agents.Event{Kind: agents.EventTurn, UserID: w.user.ID + 1, ExchangeID: w.watched.ID, Exchange: w.watched}
			},
			want: func(t *testing.T, w world, u views.LiveUpdate) {
				if u.History != nil || u.Turn != nil || u.Heading != nil {
					t.Fatalf("another user's event shown: %+v", u)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, u := newStore(t)
			w := world{s: s, user: u, watched: liveChat(t, s, u.ID, "first"), other: liveChat(t, s, u.ID, "second")}
			var err error
			if w.page, err = s.CreatePage(ctx, u.ID, "Plan", "# Plan\n\nSteps.\n"); err != nil {
				t.Fatal(err)
			}
			if w.other2, err = s.CreatePage(ctx, u.ID, "Other", "# Other\n"); err != nil {
				t.Fatal(err)
			}
			sc := screens.New(s, s, views.NewMarkdown())
			v := screens.Viewer{UserID: u.ID, CSRF: "tok"}
			var tab screens.LiveTab
			// The tab has the whole log (seq 0: the question, 1: the answer).
			caught, err := sc.LiveWatch(ctx, v, &tab, w.watched.ID, 1, w.page.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(caught.Entries) != 0 {
				t.Fatalf("catch-up sent %d entries the tab has", len(caught.Entries))
			}
			got, err := sc.LiveEvent(ctx, v, &tab, tc.event(t, w), false)
			if err != nil {
				t.Fatal(err)
			}
			tc.want(t, w, got)
		})
	}
}

// What the tab was sent is not sent again: the same entry heard twice (a
// catch-up read and its event) shows once, and a deleted chat's later
// events show nothing on the tab that watched it.
func TestLiveTabRemembersWhatItWasSent(t *testing.T) {
	ctx := context.Background()
	s, u := newStore(t)
	sc := screens.New(s, s, views.NewMarkdown())
	v := screens.Viewer{UserID: u.ID, CSRF: "tok"}
	watched := liveChat(t, s, u.ID, "first")
	var tab screens.LiveTab
	caught, err := sc.LiveWatch(ctx, v, &tab, watched.ID, -1, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(caught.Entries) != 2 {
		t.Fatalf("catch-up from nothing: %d entries, want the question and the answer", len(caught.Entries))
	}
	msgs, err := s.Messages(ctx, u.ID, watched.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, err := sc.LiveEvent(ctx, v, &tab, agents.Event{Kind: agents.EventEntry, UserID: u.ID, ExchangeID: watched.ID, Exchange: watched, Entry: &msgs[1]}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Entries) != 0 {
		t.Fatalf("an entry the catch-up sent came again: %+v", again.Entries)
	}
	if _, err := s.DeleteExchange(ctx, u.ID, watched.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.LiveEvent(ctx, v, &tab, agents.Event{Kind: agents.EventTurn, UserID: u.ID, ExchangeID: watched.ID}, false); err != nil {
		t.Fatal(err)
	}
	late, err := sc.LiveEvent(ctx, v, &tab, agents.Event{Kind: agents.EventDelta, UserID: u.ID, ExchangeID: watched.ID, Delta: "late"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if late.OpenReply != nil || late.Delta != "" {
		t.Fatalf("a deleted chat's reply piece shown on the tab that watched it: %+v", late)
	}
}

// A read mark of a chat in a project redraws the sidebar's projects (their
// unread counts) with the open chat's project still marked, as the
// sidebar drew it.
func TestLiveProjectCountsKeepTheOpenProject(t *testing.T) {
	ctx := context.Background()
	s, u := newStore(t)
	sc := screens.New(s, s, views.NewMarkdown())
	v := screens.Viewer{UserID: u.ID, CSRF: "tok"}
	name := "Garden"
	p, err := s.CreateProject(ctx, u.ID, models.ProjectInput{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	watched := liveChat(t, s, u.ID, "in the project")
	if _, err := s.MoveToProject(ctx, u.ID, watched.ID, &p.ID); err != nil {
		t.Fatal(err)
	}
	other := liveChat(t, s, u.ID, "also in it")
	if _, err := s.MoveToProject(ctx, u.ID, other.ID, &p.ID); err != nil {
		t.Fatal(err)
	}
	for _, about := range []int64{watched.ID, other.ID} {
		var tab screens.LiveTab
		if _, err := sc.LiveWatch(ctx, v, &tab, watched.ID, 1, 0, nil); err != nil {
			t.Fatal(err)
		}
		up, err := sc.LiveEvent(ctx, v, &tab, agents.ReadEvent(ctx, s, u.ID, about), false)
		if err != nil {
			t.Fatal(err)
		}
		if up.Projects == nil || len(*up.Projects) != 1 || (*up.Projects)[0].ID != p.ID || !(*up.Projects)[0].Current {
			t.Fatalf("a read mark of chat %d redrew the projects as %+v; want %d marked as the open chat's", about, up.Projects, p.ID)
		}
	}
}
