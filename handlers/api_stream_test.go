package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"palaver/models"
)

// sseEvent is one Server-Sent Event as a client reads it.
type sseEvent struct {
	ID, Event, Data string
}

// sseStream is an open event stream read in the background.
type sseStream struct {
	t      *testing.T
	events chan sseEvent
	cancel context.CancelFunc
}

// openStream GETs the stream with the client's API key (without one, its
// cookies) and reads its events.
func (c *client) openStream(t *testing.T, addr, path string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.apiKey != "" {
		req.Header.Set("x-api-key", c.apiKey)
	} else {
		req.Header.Set("Cookie", c.cookieHeader())
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &sseStream{t: t, events: make(chan sseEvent, 64), cancel: cancel}
	t.Cleanup(cancel)
	go func() {
		defer close(s.events)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var e sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if e.Event != "" {
					s.events <- e
				}
				e = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				e.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				e.Event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				e.Data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

// next waits for the next event.
func (s *sseStream) next() sseEvent {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			s.t.Fatal("the stream ended")
		}
		return e
	case <-time.After(liveWait):
		s.t.Fatal("no event within the wait")
	}
	return sseEvent{}
}

// entry waits for the next event, checks it is an entry, and decodes it.
func (s *sseStream) entry() (id string, m struct {
	ID      int64  `json:"id"`
	Seq     *int64 `json:"seq"`
	Role    string `json:"role"`
	Content string `json:"content"`
}) {
	s.t.Helper()
	e := s.next()
	if e.Event != "entry" {
		s.t.Fatalf("event %+v, want an entry", e)
	}
	if err := json.Unmarshal([]byte(e.Data), &m); err != nil {
		s.t.Fatalf("entry %q: %v", e.Data, err)
	}
	return e.ID, m
}

// expect waits for the next event and checks its name and data.
func (s *sseStream) expect(event, data string) {
	s.t.Helper()
	if e := s.next(); e.Event != event || e.Data != data {
		s.t.Fatalf("event %+v, want %s %s", e, event, data)
	}
}

func TestAPIStreamCatchesUpThenFollows(t *testing.T) {
	a := newTestApp(t)
	addr := a.listen()
	api := a.apiClient("ann")
	uid := api.user.ID
	ex, _ := a.liveStart(uid, 0, "first")
	r1 := a.liveFinish(uid, ex.ID, "first answer")
	path := "/api/chat/exchange/" + strconv.FormatInt(ex.ID, 10) + "/stream"

	// The client has seq 0: it gets seq 1, then the turn's state.
	s := api.openStream(t, addr, path+"?since=0")
	id, m := s.entry()
	if id != strconv.FormatInt(r1.ID, 10) || m.ID != r1.ID || *m.Seq != 1 || m.Role != "assistant" || m.Content != "first answer" {
		t.Fatalf("catch-up entry id %s %+v", id, m)
	}
	s.expect("turn", `{"status":"idle"}`)

	// Live: a turn that is written, then fails.
	_, q2 := a.liveStart(uid, ex.ID, "second")
	a.liveDelta(uid, ex.ID, "half an ")
	e2 := a.liveFail(uid, ex.ID, "provider down")
	if _, m := s.entry(); m.ID != q2.ID || m.Role != "user" || m.Content != "second" {
		t.Fatalf("live entry %+v", m)
	}
	s.expect("turn", `{"status":"running"}`)
	s.expect("delta", `{"text":"half an "}`)
	if _, m := s.entry(); m.ID != e2.ID || m.Seq != nil || m.Role != "error" {
		t.Fatalf("error row %+v", m)
	}
	s.expect("turn", `{"status":"failed"}`)

	// The client goes away: the server notices at its next write and lets
	// go of its subscription.
	s.cancel()
	deadline := time.Now().Add(liveWait)
	for a.hub.Subscribers() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers left after the client went away", a.hub.Subscribers())
		}
		a.liveDelta(uid, ex.ID, ".")
		time.Sleep(10 * time.Millisecond)
	}

	// Without since: the whole log, each entry once.
	all := api.openStream(t, addr, path)
	for _, want := range a.chatMessages(uid, ex.ID) {
		if _, m := all.entry(); m.ID != want.ID {
			t.Fatalf("entry %d, want %d", m.ID, want.ID)
		}
	}
	all.expect("turn", `{"status":"failed"}`)
}

func TestAPIStreamRefusesBeforeStreaming(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	ex, _ := a.liveStart(bob.user.ID, 0, "bob's")
	bobs := "/api/chat/exchange/" + strconv.FormatInt(ex.ID, 10) + "/stream"
	tests := []struct {
		name   string
		c      *client
		path   string
		status int
	}{
		{"another user's exchange", ann, bobs, http.StatusNotFound},
		{"a missing exchange", bob, "/api/chat/exchange/999/stream", http.StatusNotFound},
		{"an id that is no id", bob, "/api/chat/exchange/x/stream", http.StatusNotFound},
		{"a since that is no seq", bob, bobs + "?since=abc", http.StatusBadRequest},
		{"a since below -1", bob, bobs + "?since=-2", http.StatusBadRequest},
		{"no credentials", a.anon(), bobs, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, body := tt.c.api(http.MethodGet, tt.path, nil)
			if res.StatusCode != tt.status || !strings.Contains(string(body), `"err_code":`+strconv.Itoa(tt.status)) {
				t.Fatalf("status %d %s, want %d", res.StatusCode, body, tt.status)
			}
		})
	}
}

// TestAPIStreamJoinsMidReply: a stream opened while the reply is being
// written gets the text so far as its first delta, then each later piece
// once.
func TestAPIStreamJoinsMidReply(t *testing.T) {
	p := gatedProvider{
		first: []string{"Half ", "a "}, rest: []string{"reply, ", "then ", "the rest."},
		wrote: make(chan struct{}), gate: make(chan struct{}),
	}
	a := newTestApp(t, withChatProvider(p))
	addr := a.listen()
	ann := a.apiClient("ann")
	done := make(chan apiChatOut, 1)
	go func() { done <- ann.apiChat("go on", 0) }()
	<-p.wrote
	exs, err := a.store.ListExchanges(context.Background(), ann.user.ID, models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 2})
	if err != nil || len(exs) != 1 {
		t.Fatalf("the new exchange: %v (%d exchanges)", err, len(exs))
	}
	s := ann.openStream(t, addr, "/api/chat/exchange/"+strconv.FormatInt(exs[0].ID, 10)+"/stream")
	s.entry() // the question
	s.expect("turn", `{"status":"running"}`)
	s.expect("delta", `{"text":"Half a "}`)
	close(p.gate)
	var text strings.Builder
	for {
		e := s.next()
		if e.Event != "delta" {
			break
		}
		var d struct{ Text string }
		if err := json.Unmarshal([]byte(e.Data), &d); err != nil {
			t.Fatal(err)
		}
		text.WriteString(d.Text)
	}
	if text.String() != "reply, then the rest." {
		t.Fatalf("deltas after the first: %q", text.String())
	}
	if out := <-done; out.Response != "Half a reply, then the rest." {
		t.Fatalf("the answer: %+v", out)
	}
}
