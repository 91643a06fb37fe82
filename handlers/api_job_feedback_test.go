package handlers_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// jobFeedbackPath is Galaxy's job-chat feedback route for job, which the
// path carries percent-encoded.
func jobFeedbackPath(job, query string) string {
	return "/api/chat/" + url.PathEscape(job) + "/feedback" + query
}

func TestAPIJobFeedback(t *testing.T) {
	a := newTestApp(t)
	ada, bob := a.apiClient("ada"), a.apiClient("bob")
	const job = "f2db41e1fa331b3e"
	var first apiChatOut
	ada.apiJSON(http.MethodPost, "/api/chat?job_id="+job, map[string]any{"query": "why did it fail?"}, http.StatusOK, &first)
	id := *first.ExchangeID
	ada.apiJSON(http.MethodPost, "/api/chat?job_id="+job, map[string]any{"query": "and now?", "regenerate": true}, http.StatusOK, nil)

	// Galaxy sends the rating in the query string and no body; it applies to
	// the latest reply, as PUT /api/chat/exchange/{id}/feedback does.
	for _, fb := range []int64{0, 1} {
		res, b := ada.api(http.MethodPut, jobFeedbackPath(job, "?feedback="+map[int64]string{0: "0", 1: "1"}[fb]), nil)
		mustStatus(t, res, http.StatusOK)
		out := apiObject(t, b)
		apiShape(t, "job feedback", out, map[string]string{"message": "string", "feedback": "number"})
		if out["message"] != "Feedback saved" || out["feedback"] != float64(fb) {
			t.Fatalf("answer %s, want Feedback saved and %d", b, fb)
		}
		msgs := ada.apiMessages(id)
		if len(msgs) != 4 || msgs[3].Feedback == nil || *msgs[3].Feedback != fb || msgs[1].Feedback != nil {
			t.Fatalf("after feedback %d: latest reply %v, first reply %v; want the latest rated", fb, msgs[3].Feedback, msgs[1].Feedback)
		}
	}

	// Another user's job, a job without a chat and a path that is no job id
	// answer as one missing job does; bob's own job of the same name is his.
	var bobs apiChatOut
	bob.apiJSON(http.MethodPost, "/api/chat?job_id=bobs-job", map[string]any{"query": "mine"}, http.StatusOK, &bobs)
	before := a.ratedMessages()
	res, want := ada.api(http.MethodPut, jobFeedbackPath("no-such-job", "?feedback=1"), nil)
	apiErr(t, res, want, http.StatusNotFound)
	for _, c := range []struct {
		who  *client
		path string
	}{
		{bob, jobFeedbackPath(job, "?feedback=0")},
		{ada, jobFeedbackPath("bobs-job", "?feedback=0")},
		{ada, "/api/chat/" + strings.Repeat("j", 129) + "/feedback?feedback=1"},
		{ada, "/api/chat/%C3%A9/feedback?feedback=1"},
	} {
		res, b := c.who.api(http.MethodPut, c.path, nil)
		apiErr(t, res, b, http.StatusNotFound)
		if string(b) != string(want) {
			t.Errorf("%s %s: %s, a missing job's: %s", c.who.user.Username, c.path, b, want)
		}
	}
	// Feedback other than 0 or 1, or none: 400.
	for _, q := range []string{"", "?feedback=", "?feedback=2", "?feedback=-1", "?feedback=up", "?feedback=1.0", "?other=1"} {
		res, b := ada.api(http.MethodPut, jobFeedbackPath(job, q), nil)
		if msg := apiErr(t, res, b, http.StatusBadRequest); !strings.Contains(msg, "feedback must be 0") {
			t.Errorf("%s: err_msg %q", q, msg)
		}
	}
	if after := a.ratedMessages(); after != before {
		t.Fatalf("refused ratings changed feedback: %d rated messages, before %d", after, before)
	}
	if msgs := ada.apiMessages(id); *msgs[3].Feedback != 1 {
		t.Fatalf("ada's rating changed: %v", *msgs[3].Feedback)
	}
	if msgs := bob.apiMessages(*bobs.ExchangeID); msgs[1].Feedback != nil {
		t.Fatalf("bob's reply was rated: %v", *msgs[1].Feedback)
	}
}

// Job ids are opaque: one with characters a path must encode, or one that
// spells a word of the fixed /api/chat routes, still names its job.
func TestAPIJobFeedbackIDs(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	for _, job := range []string{"job 7/a?b#c%d", "history", "exchange", "search"} {
		var out apiChatOut
		ada.apiJSON(http.MethodPost, "/api/chat?job_id="+url.QueryEscape(job), map[string]any{"query": "about " + job}, http.StatusOK, &out)
		res, b := ada.api(http.MethodPut, jobFeedbackPath(job, "?feedback=0"), nil)
		mustStatus(t, res, http.StatusOK)
		if msgs := ada.apiMessages(*out.ExchangeID); msgs[1].Feedback == nil || *msgs[1].Feedback != 0 {
			t.Fatalf("job %q: %s, reply feedback %v", job, b, msgs[1].Feedback)
		}
	}
	// The fixed routes beside it still answer.
	ex := *ada.apiChat("a general chat", 0).ExchangeID
	ada.apiJSON(http.MethodPut, fmt.Sprintf("/api/chat/exchange/%d/feedback", ex), 1, http.StatusOK, nil)
	if msgs := ada.apiMessages(ex); msgs[1].Feedback == nil || *msgs[1].Feedback != 1 {
		t.Fatalf("PUT /api/chat/exchange/{id}/feedback: %v", msgs[1].Feedback)
	}
}

// ratedMessages is the number of messages with a rating.
func (a *testApp) ratedMessages() int {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM messages WHERE feedback IS NOT NULL").Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}
