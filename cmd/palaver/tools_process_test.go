package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pausedAnswer is POST /api/chat's answer when the turn pauses.
type pausedAnswer struct {
	Response      string `json:"response"`
	ExchangeID    int64  `json:"exchange_id"`
	AgentResponse struct {
		Metadata struct {
			Paused  bool `json:"paused"`
			Pending []struct {
				CallID string `json:"call_id"`
			} `json:"pending"`
		} `json:"metadata"`
	} `json:"agent_response"`
}

// pause sends a request that waits for approval and returns the exchange
// and the call.
func pause(t *testing.T, s *server, key, query string) (int64, string) {
	t.Helper()
	var out pausedAnswer
	if st := s.api(http.MethodPost, "/api/chat", key, map[string]any{"query": query}, &out); st != http.StatusOK ||
		!out.AgentResponse.Metadata.Paused || len(out.AgentResponse.Metadata.Pending) != 1 {
		t.Fatalf("POST /api/chat %q: %d %+v\n%s", query, st, out, s.log)
	}
	return out.ExchangeID, out.AgentResponse.Metadata.Pending[0].CallID
}

// approve answers the call through s and returns the reply.
func approve(t *testing.T, s *server, key string, exchangeID int64, callID string) string {
	t.Helper()
	var out pausedAnswer
	body := map[string]any{"results": []any{map[string]any{"call_id": callID, "approved": true}}}
	if st := s.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/tool_results", exchangeID), key, body, &out); st != http.StatusOK {
		t.Fatalf("tool_results: %d %+v\n%s", st, out, s.log)
	}
	return out.Response
}

// TestKillWhilePausedThenApprove kills a real server with SIGKILL while a
// turn waits for approval, restarts it on the same database: the turn is
// still paused (recovery leaves it), and approving it resumes it.
func TestKillWhilePausedThenApprove(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real binary")
	}
	bin := buildBinary(t)
	db := filepath.Join(t.TempDir(), "palaver.db")
	cli(t, bin, "user", "add", "ann", "--password", "correct horse", "--db", db)
	key := cli(t, bin, "user", "key", "ann", "--db", db)
	addr := freeAddr(t)
	srv := startServer(t, bin, db, addr)
	var first struct {
		ExchangeID int64 `json:"exchange_id"`
	}
	srv.api(http.MethodPost, "/api/chat", key, map[string]any{"query": "Old plans"}, &first)
	ex, call := pause(t, srv, key, `delete my chat "Old plans"`)

	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = srv.cmd.Wait()
	srv = startServer(t, bin, db, addr)
	time.Sleep(200 * time.Millisecond) // the start-up recovery has run

	var pending []struct {
		CallID string `json:"call_id"`
	}
	if st := srv.api(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/pending", ex), key, nil, &pending); st != http.StatusOK ||
		len(pending) != 1 || pending[0].CallID != call {
		t.Fatalf("pending after the restart: %d %+v", st, pending)
	}
	var hist []struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	srv.api(http.MethodGet, "/api/chat/history", key, nil, &hist)
	if len(hist) == 0 || hist[0].ID != ex || hist[0].Status != "paused" {
		t.Fatalf("history after the restart: %+v", hist)
	}
	if reply := approve(t, srv, key, ex, call); !strings.Contains(reply, `Deleted the conversation "Old plans"`) {
		t.Fatalf("reply after approval: %q", reply)
	}
	if st := srv.api(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages", first.ExchangeID), key, nil, nil); st != http.StatusNotFound {
		t.Fatalf("the deleted chat answers %d", st)
	}
}

// TestApproveThroughAnotherProcess: on PostgreSQL a turn paused by process
// A is approved through process B, which resumes it; a stream held by A
// sees the turn go paused, then the reply.
func TestApproveThroughAnotherProcess(t *testing.T) {
	ts := startTwo(t)
	ex, call := pause(t, ts.a, ts.key, `remember this: tea, no sugar`)
	st := ts.openStream(ts.a, ex, -1)
	st.until("the paused state on A's stream", func(e sseEvent) bool {
		return e.kind == "turn" && e.status == "paused"
	})
	if reply := approve(t, ts.b, ts.key, ex, call); !strings.Contains(reply, "Noted") {
		t.Fatalf("B's reply: %q", reply)
	}
	st.until("the resumed reply on A's stream", func(e sseEvent) bool {
		return e.kind == "entry" && strings.Contains(e.entry.Content, "Noted")
	})
	var out pausedAnswer
	body := map[string]any{"results": []any{map[string]any{"call_id": call, "approved": true}}}
	if code := ts.a.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/tool_results", ex), ts.key, body, &out); code != http.StatusConflict {
		t.Fatalf("a second approval through A: %d", code)
	}
}

// TestPausedTurnFollowedOnAnotherProcess: a tab and a stream on B follow a
// turn that pauses on A: B shows it waiting for approval (the card, the
// sidebar's mark, the stream's paused state), then, approved through A, the
// resumed reply and the idle state.
func TestPausedTurnFollowedOnAnotherProcess(t *testing.T) {
	ts := startTwo(t)
	ex := ts.chat(ts.a, 0, "hello").ExchangeID
	tb := ts.openTab(ts.b, ts.signIn(ts.b))
	tb.watch(ex, 1)
	tb.until("the turn state", func() bool { return tb.turn == "idle" })
	st := ts.openStream(ts.b, ex, 1)
	st.until("the turn state", func(e sseEvent) bool { return e.kind == "turn" })

	var out pausedAnswer
	if code := ts.a.api(http.MethodPost, "/api/chat", ts.key, map[string]any{"query": "remember this: tea, no sugar", "exchange_id": ex}, &out); code != http.StatusOK ||
		!out.AgentResponse.Metadata.Paused || len(out.AgentResponse.Metadata.Pending) != 1 {
		t.Fatalf("POST /api/chat through A: %d %+v", code, out)
	}
	call := out.AgentResponse.Metadata.Pending[0].CallID
	st.until("the paused state on B's stream", func(e sseEvent) bool { return e.kind == "turn" && e.status == "paused" })
	tb.until("the card and the paused mark on B's tab", func() bool {
		raw := tb.raw.String()
		return strings.Contains(raw, `data-awaiting="approval"`) && strings.Contains(raw, `data-testid="history-paused"`)
	})

	if reply := approve(t, ts.a, ts.key, ex, call); !strings.Contains(reply, "Noted") {
		t.Fatalf("A's reply: %q", reply)
	}
	st.until("the resumed reply on B's stream", func(e sseEvent) bool {
		return e.kind == "entry" && strings.Contains(e.entry.Content, "Noted")
	})
	st.until("the idle state on B's stream", func(e sseEvent) bool { return e.kind == "turn" && e.status == "idle" })
	after := ts.messages(ts.b, ex)
	reply := after[len(after)-1]
	tb.until("the resumed reply on B's tab", func() bool { return tb.has(reply.ID) && tb.turn == "idle" })
}
