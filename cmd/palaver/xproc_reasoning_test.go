package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestReasoningReachesAnotherProcess: a model's reasoning, streamed to the
// process running the turn (A), reaches a tab held by B live, in the
// Thinking section, before the reply; as a reply's pieces do.
func TestReasoningReachesAnotherProcess(t *testing.T) {
	// An OpenAI-format model that thinks aloud for a while, then answers.
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"pondering ", "the question"} {
			fmt.Fprintf(w, `data: {"model":"thinker","choices":[{"delta":{"reasoning_content":%q}}]}`+"\n\n", piece)
			w.(http.Flusher).Flush()
			time.Sleep(400 * time.Millisecond)
		}
		fmt.Fprint(w, `data: {"model":"thinker","choices":[{"delta":{"content":"An answer, thought through."},"finish_reason":"stop"}]}`+"\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(model.Close)
	ts := startTwo(t, "--llm-base-url", model.URL+"/v1", "--llm-model", "thinker")
	first := ts.chat(ts.a, 0, "hello")
	ex := first.ExchangeID
	tb := ts.openTab(ts.b, ts.signIn(ts.b))
	tb.watch(ex, 1)
	tb.until("the turn state", func() bool { return tb.turn == "idle" })

	done := make(chan apiAnswer, 1)
	go func() { done <- ts.chat(ts.a, ex, "think first") }()
	tb.until("the reply", func() bool { return strings.Contains(tb.raw.String(), "An answer, thought through.") })
	raw := tb.raw.String()
	thought := strings.Index(raw, "pondering")
	if thought < 0 || !strings.Contains(raw, `hx-swap-oob="beforeend:#pending-reasoning-text"`) {
		t.Fatalf("the tab on B was not shown the reasoning live: %q", raw)
	}
	if reply := strings.Index(raw, "An answer, thought through."); thought > reply {
		t.Fatalf("the reasoning came after the reply on B: %q", raw)
	}
	if answer := <-done; answer.Response != "An answer, thought through." {
		t.Fatalf("the answer through A: %+v", answer)
	}
}
