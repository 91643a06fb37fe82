package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"palaver/agents"
	"palaver/handlers"
	"palaver/models"
)

// withCatalog gives the app a model catalog with the offline agent's
// connection, as serve sets it up without --llm-* flags.
func withCatalog(t *testing.T) appOption {
	return func(d *handlers.Deps) {
		box, err := agents.NewSecretBox("test secret")
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Store.EnsureFlagConnection(context.Background(), models.LLMConnection{Name: "offline", Kind: models.KindBuiltin}, "builtin"); err != nil {
			t.Fatal(err)
		}
		cat := agents.NewCatalog(d.Store, box, &agents.Builtin{})
		d.Agents = agents.New(d.Store, &agents.Builtin{}, agents.Options{Logger: d.Logger, Hub: d.Hub, Catalog: cat})
	}
}

// fakeOpenAIServer lists two models and answers every chat with one line.
func fakeOpenAIServer(t *testing.T) *httptest.Server { return fakeOpenAIServerPaced(t, 0) }

// fakeOpenAIServerPaced is fakeOpenAIServer, its reasoning sent and
// flushed pause before the reply's text.
func fakeOpenAIServerPaced(t *testing.T, pause time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-secret-key" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"invalid key"}}`)
			return
		}
		switch r.URL.Path {
		case "/v1/models":
			fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-fake"},{"id":"gpt-other"}]}`)
		case "/v1/chat/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, `data: {"model":"gpt-fake","choices":[{"delta":{"reasoning_content":"hmm"}}]}`+"\n\n")
			if pause > 0 {
				w.(http.Flusher).Flush()
				time.Sleep(pause)
			}
			fmt.Fprint(w, `data: {"model":"gpt-fake","choices":[{"delta":{"content":"From the fake."},"finish_reason":"stop"}]}`+"\n\n")
			fmt.Fprint(w, `data: {"model":"gpt-fake","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":2000,"total_tokens":3000}}`+"\n\n")
			fmt.Fprint(w, "data: [DONE]\n\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestModelsConnectionsUsageAndQuotas(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann") // the first account is the administrator
	bob := a.apiClient("bob")
	srv := fakeOpenAIServer(t)

	res, _ := bob.api("GET", "/api/admin/connections", nil)
	mustStatus(t, res, http.StatusNotFound)
	res, _ = bob.api("PUT", "/api/admin/quotas", map[string]any{"daily_tokens": 1})
	mustStatus(t, res, http.StatusNotFound)

	// A wrong key: the provider's refusal is shown, nothing is stored.
	res, body := admin.api("POST", "/api/admin/connections", map[string]any{"name": "fake", "kind": "openai", "base_url": srv.URL + "/v1", "api_key": "wrong"})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "401") {
		t.Fatalf("wrong key: %d %s", res.StatusCode, body)
	}
	var conn struct {
		ID int64 `json:"id"`
	}
	res, body = admin.api("POST", "/api/admin/connections", map[string]any{"name": "fake", "kind": "openai", "base_url": srv.URL + "/v1", "api_key": "sk-secret-key"})
	mustStatus(t, res, http.StatusCreated)
	_ = json.Unmarshal(body, &conn)
	_, list := admin.api("GET", "/api/admin/connections", nil)
	if strings.Contains(string(body)+string(list), "sk-secret") || !strings.Contains(string(list), "gpt-other") {
		t.Fatalf("connections: %s / %s", body, list)
	}
	var choices []agents.Choice
	bob.apiJSON("GET", "/api/models", nil, http.StatusOK, &choices)
	if len(choices) != 1 || choices[0].Name != "builtin" || !choices[0].Default {
		t.Fatalf("choices before enabling %+v", choices)
	}
	var all []struct {
		ID     int64             `json:"id"`
		Models []models.LLMModel `json:"models"`
	}
	_ = json.Unmarshal(list, &all)
	fake := all[1].Models[0]
	if fake.Model != "gpt-fake" {
		t.Fatalf("models %+v", all)
	}
	admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", fake.ID),
		map[string]any{"enabled": true, "name": "Fake GPT", "input_price": 1.0, "output_price": 2.0}, http.StatusOK, nil)
	bob.apiJSON("GET", "/api/models", nil, http.StatusOK, &choices)
	if len(choices) != 2 || choices[1].Name != "Fake GPT" || choices[1].Connection != "fake" {
		t.Fatalf("choices %+v", choices)
	}

	var out apiChatOut
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "hello", "model": fake.ID}, http.StatusOK, &out)
	if out.Response != "From the fake." || out.AgentResponse.Metadata["model"] != "gpt-fake" || out.AgentResponse.Reasoning != "hmm" ||
		out.AgentResponse.Metadata["cost"] != 0.005 {
		t.Fatalf("chat %+v", out)
	}
	res, body = bob.api("POST", "/api/chat", map[string]any{"query": "hello", "model": 424242})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Fake GPT") {
		t.Fatalf("unknown model: %d %s", res.StatusCode, body)
	}

	var usage struct {
		ByModel []models.UsageByModel `json:"by_model"`
		Total   float64               `json:"total_cost"`
		Budget  map[string]int64      `json:"budget"`
	}
	bob.apiJSON("GET", "/api/account/usage", nil, http.StatusOK, &usage)
	if len(usage.ByModel) != 1 || usage.ByModel[0].InputTokens != 1000 || usage.Total != 0.005 || usage.Budget["used_today"] != 3000 {
		t.Fatalf("usage %+v", usage)
	}
	res, _ = bob.api("GET", "/api/account/usage?month=2026-13", nil)
	mustStatus(t, res, http.StatusBadRequest)

	// Over budget: 200 with error_code 429, the message kept, the budget named.
	admin.apiJSON("PUT", "/api/admin/quotas", map[string]any{"daily_tokens": 2000, "monthly_tokens": 0}, http.StatusOK, nil)
	bob.apiJSON("POST", "/api/chat", map[string]any{"query": "one more"}, http.StatusOK, &out)
	if out.ErrorCode != http.StatusTooManyRequests || !strings.Contains(out.ErrorMessage, "daily token budget (2000 tokens)") {
		t.Fatalf("over budget %+v", out)
	}
	var msgs []apiMsgOut
	bob.apiJSON("GET", fmt.Sprintf("/api/chat/exchange/%d/messages", *out.ExchangeID), nil, http.StatusOK, &msgs)
	if len(msgs) < 1 || msgs[0].Content != "one more" {
		t.Fatalf("messages %+v", msgs)
	}

	var agentList []map[string]string
	bob.apiJSON("GET", "/api/ai/agents", nil, http.StatusOK, &agentList)
	if len(agentList) != 2 || agentList[0]["agent_type"] != "router" || agentList[0]["model"] != "builtin" {
		t.Fatalf("agents %+v", agentList)
	}

	res, _ = admin.api("DELETE", fmt.Sprintf("/api/admin/connections/%d", all[0].ID), nil)
	mustStatus(t, res, http.StatusConflict) // the offline connection is read-only
	admin.apiJSON("DELETE", fmt.Sprintf("/api/admin/connections/%d", conn.ID), nil, http.StatusOK, nil)
}

// The composer offers the enabled models, grouped by connection, as a
// plain select; a form send runs on the one picked.
func TestComposerModelPicker(t *testing.T) {
	a := newTestApp(t, withCatalog(t))
	admin := a.register("ann")
	srv := fakeOpenAIServer(t)
	if strings.Contains(bodyOf(admin.get("/chat")), `data-testid="model-picker"`) {
		t.Fatal("a picker with one model")
	}
	var conn struct {
		ID int64 `json:"id"`
	}
	admin.apiJSON("POST", "/api/admin/connections", map[string]any{"name": "fake", "kind": "openai", "base_url": srv.URL + "/v1", "api_key": "sk-secret-key"}, http.StatusCreated, &conn)
	ms, _ := a.store.LLMModels(context.Background())
	fake := ms[1]
	admin.apiJSON("PUT", fmt.Sprintf("/api/admin/models/%d", fake.ID), map[string]any{"enabled": true, "name": "Fake GPT"}, http.StatusOK, nil)
	page := bodyOf(admin.get("/chat"))
	if !strings.Contains(page, `data-testid="model-picker"`) || !strings.Contains(page, `<optgroup label="fake">`) ||
		!strings.Contains(page, fmt.Sprintf(`<option value="%d" data-connection="fake">Fake GPT</option>`, fake.ID)) {
		t.Fatalf("composer without the picker:\n%s", page)
	}
	res := admin.postForm("/chat/send", url.Values{"query": {"hi"}, "exchange_id": {"0"}, "model": {fmt.Sprint(fake.ID)}})
	mustStatus(t, res, http.StatusSeeOther)
	if page := bodyOf(admin.get(res.Header.Get("Location"))); !strings.Contains(page, "From the fake.") ||
		!strings.Contains(page, `data-testid="reasoning"`) || !strings.Contains(page, `data-testid="message-model">gpt-fake<`) {
		t.Fatalf("the reply of the picked model:\n%s", page)
	}
	acct := bodyOf(admin.get("/account"))
	if !strings.Contains(acct, `data-testid="usage"`) || !strings.Contains(acct, `<td class="py-1 font-mono text-xs">gpt-fake</td>`) ||
		!strings.Contains(acct, "1000 / 2000") {
		t.Fatalf("account usage:\n%s", acct)
	}
}
