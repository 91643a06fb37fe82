package views

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

func renderString(t *testing.T, c templ.Component) string {
	t.Helper()
	var b strings.Builder
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The live cache's keys are the view models themselves, so they must be
// plain values: a pointer, slice, map or interface field would compare by
// identity (or not at all), and a changed value behind it would serve the
// HTML of the old one.
func TestCacheKeysArePlainValues(t *testing.T) {
	for _, v := range []any{ChatMessage{}, HistoryItem{}, TurnControl{}} {
		var walk func(path string, ty reflect.Type)
		walk = func(path string, ty reflect.Type) {
			switch ty.Kind() {
			case reflect.Struct:
				for i := range ty.NumField() {
					walk(path+"."+ty.Field(i).Name, ty.Field(i).Type)
				}
			case reflect.String, reflect.Bool, reflect.Int, reflect.Int64:
			default:
				t.Errorf("%s is a %s: a cache key holds plain values only", path, ty.Kind())
			}
		}
		walk(reflect.TypeOf(v).Name(), reflect.TypeOf(v))
	}
}

// vary calls change once per plain field of v (at any depth) with a copy
// of v in which that field, named, holds another value.
func vary[T any](v T, change func(field string, changed T)) {
	root := reflect.ValueOf(&v).Elem()
	var walk func(path string, f reflect.Value)
	walk = func(path string, f reflect.Value) {
		old := reflect.ValueOf(f.Interface()) // a copy of the value
		switch f.Kind() {
		case reflect.Struct:
			for i := range f.NumField() {
				walk(path+"."+f.Type().Field(i).Name, f.Field(i))
			}
			return
		case reflect.String:
			f.SetString(f.String() + "-changed")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 1000)
		}
		change(path, v)
		f.Set(old)
	}
	walk(root.Type().Name(), root)
}

// A cached fragment is the fragment: the same HTML as a fresh render, and
// for every field of its view model, a changed value renders anew (never
// the HTML remembered for the old value).
func TestLiveCacheFollowsEveryField(t *testing.T) {
	lc := NewLiveCache()
	m := ChatMessage{ID: 7, Seq: 3, HasSeq: true, Role: RoleAssistant, HTML: "<p>hi</p>", Time: "10:00",
		TimeFull: "2026-12-02T10:00:00Z", Feedback: FeedbackView{MessageID: 7, CSRF: "tok", Comment: "ok"},
		Retry: RetryView{Action: "/chat/1/retry", CSRF: "tok"}, Text: "text", Detail: "{}"}
	for _, role := range []string{RoleUser, RoleAssistant, RoleError, RoleToolCall} {
		m.Role = role
		base := renderString(t, Message(m))
		if got := renderString(t, lc.message(m)); got != base {
			t.Fatalf("cached %s message\n%s\nwant\n%s", role, got, base)
		}
		changed := 0
		vary(m, func(field string, v ChatMessage) {
			want := renderString(t, Message(v))
			if got := renderString(t, lc.message(v)); got != want {
				t.Fatalf("%s message with %s changed came out as\n%s\nwant\n%s", role, field, got, want)
			}
			if want != base {
				changed++
			}
		})
		if changed == 0 {
			t.Fatalf("no field of a %s message changed its HTML: the test changes nothing", role)
		}
	}

	it := HistoryItem{ID: 9, Title: "Plans", AgentType: "router", When: "just now", WhenFull: "2026-12-02T10:00:00Z",
		Turns: 1, Current: true, Group: GroupToday, CSRF: "tok", TurnStatus: TurnRunning}
	if got, want := renderString(t, lc.historyEntry(it)), renderString(t, HistoryEntry(it)); got != want {
		t.Fatalf("cached history item\n%s\nwant\n%s", got, want)
	}
	vary(it, func(field string, v HistoryItem) {
		if got, want := renderString(t, lc.historyEntry(v)), renderString(t, HistoryEntry(v)); got != want {
			t.Fatalf("history item with %s changed came out as\n%s\nwant\n%s", field, got, want)
		}
	})

	turn := TurnControl{ExchangeID: 4, Status: TurnRunning, CSRF: "tok"}
	if got, want := renderString(t, lc.composerTurn(turn)), renderString(t, ComposerTurn(turn, true)); got != want {
		t.Fatalf("cached turn state\n%s\nwant\n%s", got, want)
	}
	vary(turn, func(field string, v TurnControl) {
		if got, want := renderString(t, lc.composerTurn(v)), renderString(t, ComposerTurn(v, true)); got != want {
			t.Fatalf("turn state with %s changed came out as\n%s\nwant\n%s", field, got, want)
		}
	})
	for _, after := range []int64{5, 6} {
		if got, want := renderString(t, lc.pendingReply(after)), renderString(t, PendingReplyOOB(after)); got != want {
			t.Fatalf("cached pending cell after %d\n%s\nwant\n%s", after, got, want)
		}
	}
}
