package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"palaver/models"
)

// fakeModels sets up the fake OpenAI connection with both its models
// enabled: the builtin default first, then gpt-fake and gpt-other.
// fakeModels connects fakeOpenAIServer, paced by pause if given, and
// enables its two models.
func fakeModels(t *testing.T, a *testApp, admin *client, pause ...time.Duration) (fake, other models.LLMModel) {
	t.Helper()
	srv := fakeOpenAIServerPaced(t, append(pause, 0)[0])
	admin.apiJSON("POST", "/api/admin/connections", map[string]any{"name": "fake", "kind": "openai", "base_url": srv.URL + "/v1", "api_key": "sk-secret-key"}, http.StatusCreated, nil)
	ms, _ := a.store.LLMModels(context.Background())
	for _, m := range ms {
		switch m.Model {
		case "gpt-fake":
			fake = m
		case "gpt-other":
			other = m
		default:
			continue
		}
		admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", m.ID), map[string]any{"enabled": true}, http.StatusOK, nil)
	}
	return fake, other
}

func modelIDOf(t *testing.T, out apiChatOut) int64 {
	t.Helper()
	if out.AgentResponse == nil {
		t.Fatalf("no reply: %+v", out)
	}
	id, _ := out.AgentResponse.Metadata["model_id"].(float64)
	return int64(id)
}

// The model a message gets when none is picked: the conversation's last
// model, else the project's default, else the person's (account page),
// else the administrators'; the picker and GET /api/models mark it.
func TestModelPreferences(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	fake, other := fakeModels(t, a, admin)

	// The person's default, set on the account page.
	if page := bodyOf(bob.get("/account")); !strings.Contains(page, `data-testid="default-model"`) {
		t.Fatalf("no default model form:\n%s", page)
	}
	mustStatus(t, bob.postForm("/account/model", url.Values{"model": {"424242"}}), http.StatusBadRequest)
	mustStatus(t, bob.postForm("/account/model", url.Values{"model": {fmt.Sprint(fake.ID)}}), http.StatusSeeOther)
	if page := bodyOf(bob.get("/account")); !strings.Contains(page, fmt.Sprintf(`<option value="%d" selected>`, fake.ID)) {
		t.Fatalf("the default is not shown chosen:\n%s", page)
	}
	var choices []struct {
		ID      int64 `json:"id"`
		Default bool  `json:"default"`
	}
	bob.apiJSON("GET", "/api/models", nil, http.StatusOK, &choices)
	for _, ch := range choices {
		if ch.Default != (ch.ID == fake.ID) {
			t.Fatalf("GET /api/models marks another default: %+v", choices)
		}
	}
	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "first"}, http.StatusOK, &out)
	if modelIDOf(t, out) != fake.ID {
		t.Fatalf("a new chat did not get the person's default: %v", out.AgentResponse.Metadata)
	}
	ex := *out.ExchangeID

	// Picked once, the conversation keeps it: a later message, and the
	// chat opened again, use it, not the person's default.
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "second", "exchange_id": ex, "model": other.ID}, http.StatusOK, &out)
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "third", "exchange_id": ex}, http.StatusOK, &out)
	if modelIDOf(t, out) != other.ID {
		t.Fatalf("the conversation forgot its model: %v", out.AgentResponse.Metadata)
	}
	if page := bodyOf(bob.get(fmt.Sprintf("/chat/%d", ex))); !strings.Contains(page, fmt.Sprintf(`<option value="%d" selected`, other.ID)) {
		t.Fatalf("the picker of a resumed chat does not show its model:\n%s", page)
	}
	// Disabled since: the next preference answers.
	admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", other.ID), map[string]any{"enabled": false}, http.StatusOK, nil)
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "fourth", "exchange_id": ex}, http.StatusOK, &out)
	if out.ErrorCode != 0 || modelIDOf(t, out) != fake.ID {
		t.Fatalf("a disabled last model: %+v", out)
	}
	admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", other.ID), map[string]any{"enabled": true}, http.StatusOK, nil)

	// A project's default wins over the person's inside the project.
	var pr struct {
		ID           int64  `json:"id"`
		DefaultModel *int64 `json:"default_model"`
	}
	res, _ := bob.api("POST", "/api/projects", map[string]any{"name": "Work", "default_model": 424242})
	mustStatus(t, res, http.StatusBadRequest)
	bob.apiJSON("POST", "/api/projects", map[string]any{"name": "Work", "default_model": other.ID}, http.StatusCreated, &pr)
	if pr.DefaultModel == nil || *pr.DefaultModel != other.ID {
		t.Fatalf("project %+v", pr)
	}
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "in the project", "project_id": pr.ID}, http.StatusOK, &out)
	if modelIDOf(t, out) != other.ID {
		t.Fatalf("the project's default did not win: %v", out.AgentResponse.Metadata)
	}
	bob.apiJSON("PATCH", fmt.Sprintf("/api/projects/%d", pr.ID), map[string]any{"default_model": nil}, http.StatusOK, &pr)
	if pr.DefaultModel != nil {
		t.Fatalf("not cleared: %+v", pr)
	}
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "in the project again", "project_id": pr.ID}, http.StatusOK, &out)
	if modelIDOf(t, out) != fake.ID {
		t.Fatalf("a project without a default: %v", out.AgentResponse.Metadata)
	}
	// Back to the server's default.
	mustStatus(t, bob.postForm("/account/model", url.Values{"model": {"0"}}), http.StatusSeeOther)
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "fresh"}, http.StatusOK, &out)
	if got := out.AgentResponse.Metadata["model"]; got != "builtin" {
		t.Fatalf("the server's default: %v", out.AgentResponse.Metadata)
	}
}

// A long list of models gets the picker's search field.
func TestModelPickerSearch(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	fakeModels(t, a, admin)
	if strings.Contains(bodyOf(admin.get("/chat")), `data-testid="model-search"`) {
		t.Fatal("a search field for three models")
	}
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = fmt.Sprintf("m%d", i)
	}
	conn := &models.LLMConnection{Name: "many", Kind: models.KindOpenAI, BaseURL: "http://127.0.0.1:1/v1"}
	if err := a.store.CreateConnection(context.Background(), conn, ids); err != nil {
		t.Fatal(err)
	}
	ms, _ := a.store.LLMModels(context.Background())
	on := true
	for _, m := range ms {
		if _, err := a.store.UpdateLLMModel(context.Background(), m.ID, models.ModelPatch{Enabled: &on}); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(bodyOf(admin.get("/chat")), `data-testid="model-search"`) {
		t.Fatal("no search field for a long list")
	}
}
