package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"palaver/models"
)

// The administrators' models page: a connection added by its form lists
// its models (a wrong key shows the server's refusal and stores nothing),
// a model is enabled, priced and renamed by its row, the connection is
// tested and edited, and the flags' connection is read-only. Others: 404.
func TestAdminModelsPage(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	srv := fakeOpenAIServer(t)
	ctx := context.Background()

	for _, p := range []string{"/admin/models", "/admin/usage"} {
		mustStatus(t, bob.get(p), http.StatusNotFound)
	}
	mustStatus(t, bob.postForm("/admin/connections", url.Values{"name": {"x"}, "kind": {"openai"}, "base_url": {srv.URL + "/v1"}, "api_key": {"sk-secret-key"}}), http.StatusNotFound)

	page := bodyOf(admin.get("/admin/models"))
	if !strings.Contains(page, `data-testid="admin-connections"`) || !strings.Contains(page, `data-testid="connection-read-only"`) ||
		strings.Contains(page, `data-testid="connection-delete"`) {
		t.Fatalf("the flags' connection is not shown read-only:\n%s", page)
	}

	form := url.Values{"name": {"fake"}, "kind": {"openai"}, "base_url": {srv.URL + "/v1"}, "api_key": {"wrong"}}
	mustStatus(t, admin.postForm("/admin/connections", form), http.StatusSeeOther)
	if page := bodyOf(admin.get("/admin/models")); !strings.Contains(page, "the server answered 401") {
		t.Fatalf("the refusal is not shown:\n%s", page)
	}
	if cs, _ := a.store.Connections(ctx); len(cs) != 1 {
		t.Fatalf("a refused connection was stored: %+v", cs)
	}
	for _, bad := range []url.Values{
		{"name": {""}, "kind": {"openai"}, "base_url": {srv.URL + "/v1"}},
		{"name": {"x"}, "kind": {"gemini"}, "base_url": {srv.URL + "/v1"}},
		{"name": {"x"}, "kind": {"openai"}, "base_url": {"ftp://example"}},
	} {
		res := admin.htmx("POST", "/admin/connections", bad)
		if res.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("bad form %v: %d", bad, res.StatusCode)
		}
	}

	form.Set("api_key", "sk-secret-key")
	mustStatus(t, admin.postForm("/admin/connections", form), http.StatusSeeOther)
	page = bodyOf(admin.get("/admin/models"))
	if !strings.Contains(page, "Connection fake added with 2 models") || !strings.Contains(page, "gpt-other") || strings.Contains(page, "sk-secret") {
		t.Fatalf("after adding:\n%s", page)
	}
	cs, _ := a.store.Connections(ctx)
	conn := cs[1]
	ms, _ := a.store.LLMModels(ctx)
	var fake models.LLMModel
	for _, m := range ms {
		if m.Model == "gpt-fake" {
			fake = m
		}
	}
	if fake.Enabled {
		t.Fatal("a listed model starts enabled")
	}

	// A bad price changes nothing.
	res := admin.htmx("POST", fmt.Sprintf("/admin/models/%d", fake.ID), url.Values{"name": {"Fake"}, "enabled": {"1"}, "input_price": {"-1"}})
	mustStatus(t, res, http.StatusUnprocessableEntity)
	mustStatus(t, admin.postForm(fmt.Sprintf("/admin/models/%d", fake.ID),
		url.Values{"name": {"Fake GPT"}, "enabled": {"1"}, "input_price": {"1.5"}, "output_price": {""}}), http.StatusSeeOther)
	var choices []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	bob.apiJSON("GET", "/api/models", nil, http.StatusOK, &choices)
	if len(choices) != 2 || choices[1].Name != "Fake GPT" {
		t.Fatalf("choices after enabling by the form: %+v", choices)
	}
	ms, _ = a.store.LLMModels(ctx)
	for _, m := range ms {
		if m.ID == fake.ID && (m.InputPrice == nil || *m.InputPrice != 1.5 || m.OutputPrice != nil) {
			t.Fatalf("prices %+v", m)
		}
	}
	page = bodyOf(admin.get("/admin/models"))
	if !strings.Contains(page, `value="Fake GPT"`) || !strings.Contains(page, `value="1.5"`) {
		t.Fatalf("the saved row:\n%s", page)
	}

	// Test connection: the server answers with its list again.
	mustStatus(t, admin.postForm(fmt.Sprintf("/admin/connections/%d/test", conn.ID), nil), http.StatusSeeOther)
	if page := bodyOf(admin.get("/admin/models")); !strings.Contains(page, "Connection fake answered: it lists 2 models (0 new).") {
		t.Fatalf("test connection:\n%s", page)
	}
	// Edited with an empty key: the stored key stays (the test still passes);
	// a wrong key is then refused by the server when tested.
	mustStatus(t, admin.postForm(fmt.Sprintf("/admin/connections/%d", conn.ID),
		url.Values{"name": {"fake two"}, "base_url": {srv.URL + "/v1"}, "api_key": {""}}), http.StatusSeeOther)
	mustStatus(t, admin.postForm(fmt.Sprintf("/admin/connections/%d/test", conn.ID), nil), http.StatusSeeOther)
	if page := bodyOf(admin.get("/admin/models")); !strings.Contains(page, "Connection fake two answered") {
		t.Fatalf("after the edit:\n%s", page)
	}
	mustStatus(t, admin.postForm(fmt.Sprintf("/admin/connections/%d", conn.ID),
		url.Values{"name": {"fake two"}, "base_url": {srv.URL + "/v1"}, "api_key": {"sk-wrong"}}), http.StatusSeeOther)
	mustStatus(t, admin.postForm(fmt.Sprintf("/admin/connections/%d/test", conn.ID), nil), http.StatusSeeOther)
	if page := bodyOf(admin.get("/admin/models")); !strings.Contains(page, "the server answered 401") {
		t.Fatalf("a wrong key is not refused:\n%s", page)
	}
	// The flags' connection is read-only.
	res = admin.htmx("POST", fmt.Sprintf("/admin/connections/%d/delete", cs[0].ID), url.Values{"confirmed": {"1"}})
	mustStatus(t, res, http.StatusConflict)
	mustStatus(t, admin.postForm(fmt.Sprintf("/admin/connections/%d/delete", conn.ID), url.Values{"confirmed": {"1"}}), http.StatusSeeOther)
	if cs, _ := a.store.Connections(ctx); len(cs) != 1 {
		t.Fatalf("not deleted: %+v", cs)
	}
}

// The administrators' usage overview: per person, per model and per day,
// from the usage rows the turns kept.
func TestAdminUsageOverview(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	bob := a.register("bob")
	srv := fakeOpenAIServer(t)
	var conn struct {
		ID int64 `json:"id"`
	}
	admin.apiJSON("POST", "/api/admin/connections", map[string]any{"name": "fake", "kind": "openai", "base_url": srv.URL + "/v1", "api_key": "sk-secret-key"}, http.StatusCreated, &conn)
	ms, _ := a.store.LLMModels(context.Background())
	fake := ms[1]
	admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", fake.ID), map[string]any{"enabled": true, "input_price": 1.0, "output_price": 2.0}, http.StatusOK, nil)
	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "hello", "model": fake.ID}, http.StatusOK, &out)
	admin.apiJSON("POST", "/api/chat", map[string]any{"query": "hello", "model": fake.ID}, http.StatusOK, &out)

	page := bodyOf(admin.get("/admin/usage"))
	for _, want := range []string{`data-testid="usage-by-user"`, `data-testid="usage-by-model"`, `data-testid="usage-by-day"`,
		"<td>bob</td>", "<td>ann</td>", "gpt-fake", "$0.0050", "Total $0.0100"} {
		if !strings.Contains(page, want) {
			t.Fatalf("usage overview without %q:\n%s", want, page)
		}
	}
	if n := strings.Count(page, `data-testid="usage-row"`); n != 2 {
		t.Fatalf("%d usage rows, want 2", n)
	}
	if page := bodyOf(admin.get("/admin/usage?month=1999-01")); !strings.Contains(page, `data-testid="usage-empty"`) {
		t.Fatalf("another month:\n%s", page)
	}
	mustStatus(t, admin.get("/admin/usage?month=2026-13"), http.StatusBadRequest)
}
