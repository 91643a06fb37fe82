package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The reasoning a model streams reaches the tab as it comes, in the
// pending reply's Thinking section, before the finished reply; and the
// API's stream sends it as "reasoning" events.
func TestLiveReasoningStreams(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	// The reasoning comes a moment before the text, as a real model's
	// does: sent together, the tab's queued updates would fold it into
	// the reply's frame.
	fake, _ := fakeModels(t, a, admin, 300*time.Millisecond)
	addr := a.listen()

	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "first", "model": fake.ID}, http.StatusOK, &out)
	ex := *out.ExchangeID
	tab := bob.openTab(t, addr)
	tab.watch(ex, 1)
	stream := bob.openStream(t, addr, fmt.Sprintf("/api/chat/exchange/%d/stream?since=1", ex))

	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "second", "exchange_id": ex}, http.StatusOK, &out)
	thoughtAt, replyAt := -1, -1
	tab.readUntil("the reply", func() bool {
		for i, f := range tab.frames {
			if thoughtAt < 0 && strings.Contains(f, `hx-swap-oob="beforeend:#pending-reasoning-text"`) && strings.Contains(f, "hmm") {
				thoughtAt = i
			}
			if replyAt < 0 && strings.Contains(f, "From the fake.") && strings.Contains(f, `data-role="assistant"`) {
				replyAt = i
			}
		}
		return replyAt >= 0
	})
	if thoughtAt < 0 || thoughtAt > replyAt {
		t.Fatalf("the reasoning did not come live before the reply (at %d, reply at %d): %q", thoughtAt, replyAt, tab.frames)
	}
	if !strings.Contains(strings.Join(tab.frames, ""), `hx-swap-oob="beforeend:#pending-reasoning"`) {
		t.Fatalf("the Thinking section was not opened: %q", tab.frames)
	}
	for {
		ev := stream.next()
		if ev.Event == "reasoning" {
			if !strings.Contains(ev.Data, "hmm") {
				t.Fatalf("reasoning event %q", ev.Data)
			}
			break
		}
		if ev.Event == "entry" && strings.Contains(ev.Data, "From the fake.") {
			t.Fatal("the stream sent the reply before any reasoning")
		}
	}
}

// A reply's reasoning is in the conversation's exports: the JSON as
// agent_response.reasoning, the Markdown folded above the reply.
func TestReasoningExported(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	fake, _ := fakeModels(t, a, admin)
	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "think", "model": fake.ID}, http.StatusOK, &out)
	_, md := bob.api("GET", fmt.Sprintf("/api/chat/exchange/%d/export?format=md", *out.ExchangeID), nil)
	if !strings.Contains(string(md), "<details><summary>Thinking</summary>\n\n```\nhmm\n```") ||
		strings.Index(string(md), "hmm") > strings.Index(string(md), "From the fake.") {
		t.Fatalf("markdown export:\n%s", md)
	}
	_, js := bob.api("GET", fmt.Sprintf("/api/chat/exchange/%d/export", *out.ExchangeID), nil)
	if !strings.Contains(string(js), `"reasoning": "hmm"`) {
		t.Fatalf("json export:\n%s", js)
	}
}
