package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fasthttp/websocket"
)

// TestTwoProcessesHearBranchDeletions: a tab on B shows a conversation
// with two other branches; branches deleted through A reach it: its
// switcher and the family's sidebar item follow, the deleted branch's item
// goes, and when the conversation it shows goes, it is told.
func TestTwoProcessesHearBranchDeletions(t *testing.T) {
	ts := startTwo(t)
	ex := ts.chat(ts.a, 0, "hello").ExchangeID
	first := ts.messages(ts.a, ex)[0].ID
	var forks []int64
	for range 2 {
		var made struct {
			ExchangeID int64 `json:"exchange_id"`
		}
		if code := ts.a.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/fork", ex), ts.key, map[string]any{"seq": 0}, &made); code != http.StatusCreated {
			t.Fatalf("fork through A: %d", code)
		}
		forks = append(forks, made.ExchangeID)
	}
	tb := ts.openTab(ts.b, ts.signIn(ts.b))
	if err := tb.conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"watch","exchange_id":%d,"since":1,"switches":[0]}`, ex)); err != nil {
		t.Fatal(err)
	}
	tb.until("the turn state", func() bool { return tb.turn == "idle" })

	family := fmt.Sprintf(`hx-swap-oob="outerHTML:#history-items &gt; [data-family=&#34;%d&#34;]"`, ex)
	switcher := fmt.Sprintf(`id="branch-switch-%d" class="contents" hx-swap-oob="true"`, first)
	gone := func(id int64) string { return fmt.Sprintf(`id="history-%d" hx-swap-oob="delete"`, id) }
	if code := ts.a.api(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", forks[1]), ts.key, nil, nil); code != http.StatusOK {
		t.Fatalf("delete through A: %d", code)
	}
	tb.until("the second branch's deletion", func() bool { return strings.Contains(tb.raw.String(), gone(forks[1])) })
	raw := tb.raw.String()
	if !strings.Contains(raw, family) || !strings.Contains(raw, "2 branches") {
		t.Fatalf("the family's item did not follow on B: %s", raw)
	}
	if at := strings.Index(raw, switcher); at < 0 || !strings.Contains(raw[at:], "1 / 2") {
		t.Fatalf("the switcher did not follow on B: %s", raw)
	}

	tb.raw.Reset()
	if code := ts.a.api(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", ex), ts.key, nil, nil); code != http.StatusOK {
		t.Fatalf("delete the shown one through A: %d", code)
	}
	tb.until("the notice", func() bool { return strings.Contains(tb.raw.String(), `data-testid="chat-deleted"`) })
	if !strings.Contains(tb.raw.String(), gone(ex)) {
		t.Fatalf("the deleted conversation's item stays on B: %s", tb.raw.String())
	}
}
