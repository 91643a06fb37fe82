package handlers_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"palaver/agents"
	"palaver/models"
)

// flakyProvider fails its first call and answers afterwards.
type flakyProvider struct{ calls atomic.Int32 }

func (p *flakyProvider) Name() string { return "flaky" }

func (p *flakyProvider) Execute(_ context.Context, req agents.Request, _ func(string)) (*models.AgentResponse, error) {
	if p.calls.Add(1) == 1 {
		return nil, errors.New("the model endpoint is down")
	}
	return &models.AgentResponse{Content: "answer to " + req.Query}, nil
}

func TestRetryFromTheTranscriptWithoutJS(t *testing.T) {
	a := newTestApp(t, withAPIProvider(&flakyProvider{}))
	c := a.register("ada")
	res := c.postForm("/chat/send", url.Values{"query": {"what now?"}, "exchange_id": {"0"}})
	mustStatus(t, res, http.StatusSeeOther)
	page := bodyOf(c.get(res.Header.Get("Location")))
	if !strings.Contains(page, `data-role="error"`) || !strings.Contains(page, `data-testid="retry"`) {
		t.Fatalf("the failed turn shows no error with Retry:\n%s", page)
	}
	ex, _ := a.store.ListExchanges(context.Background(), c.user.ID, models.ExchangeQuery{Scope: models.ScopeGeneral, Limit: 1})
	id := ex[0].ID

	other := a.register("bob")
	mustStatus(t, other.postForm(fmt.Sprintf("/chat/%d/retry", id), nil), http.StatusNotFound)

	res = c.postForm(fmt.Sprintf("/chat/%d/retry", id), nil)
	mustStatus(t, res, http.StatusSeeOther)
	page = bodyOf(c.get(fmt.Sprintf("/chat/%d", id)))
	if !strings.Contains(page, "answer to what now?") || strings.Contains(page, `data-testid="retry"`) {
		t.Fatalf("after Retry the reply is missing or Retry is still offered:\n%s", page)
	}
	// Nothing left to retry: a clear 409.
	mustStatus(t, c.postForm(fmt.Sprintf("/chat/%d/retry", id), nil), http.StatusConflict)
}

func TestStopWhenNothingRuns(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	id := c.chatSend(t, "hello", 0)
	mustStatus(t, c.postForm(fmt.Sprintf("/chat/%d/stop", id), nil), http.StatusConflict)
	mustStatus(t, a.register("bob").postForm(fmt.Sprintf("/chat/%d/stop", id), nil), http.StatusNotFound)
	api := a.apiClient("ada")
	res, body := api.api(http.MethodPost, fmt.Sprintf("/api/chat/exchange/%d/stop", id), nil)
	if res.StatusCode != http.StatusConflict || !strings.Contains(string(body), "no reply is being written") {
		t.Fatalf("API stop of an idle exchange: %d %s", res.StatusCode, body)
	}
}
