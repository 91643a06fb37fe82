package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"palaver/agents"
	"palaver/handlers"
	"palaver/models"
)

// withAPIProvider runs the app's agents on p instead of the builtin provider.
func withAPIProvider(p agents.Provider) appOption {
	return func(d *handlers.Deps) {
		d.Agents = agents.New(d.Store, p, agents.Options{Logger: d.Logger, Hub: d.Hub})
	}
}

// apiFailingProvider is an agent backend that is down.
type apiFailingProvider struct{}

func (apiFailingProvider) Name() string { return "failing" }

func (apiFailingProvider) Execute(context.Context, agents.Request, func(string)) (*models.AgentResponse, error) {
	return nil, errors.New("the model endpoint refused the connection")
}

// apiChatOut is POST /api/chat's answer.
type apiChatOut struct {
	Response       string                `json:"response"`
	ErrorCode      int                   `json:"error_code"`
	ErrorMessage   string                `json:"error_message"`
	AgentResponse  *models.AgentResponse `json:"agent_response"`
	ExchangeID     *int64                `json:"exchange_id"`
	ProcessingTime float64               `json:"processing_time"`
	Forked         bool                  `json:"forked"`
}

// apiMsgOut is an entry of GET /api/chat/exchange/{id}/messages.
type apiMsgOut struct {
	ID              int64                 `json:"id"`
	Seq             *int64                `json:"seq"`
	Role            string                `json:"role"`
	Content         string                `json:"content"`
	Timestamp       string                `json:"timestamp"`
	AgentType       *string               `json:"agent_type"`
	AgentResponse   *models.AgentResponse `json:"agent_response"`
	Feedback        *int64                `json:"feedback"`
	FeedbackComment *string               `json:"feedback_comment"`
}

// apiHistoryOut is an item of GET /api/chat/history.
type apiHistoryOut struct {
	ID            int64                 `json:"id"`
	Title         string                `json:"title"`
	Query         string                `json:"query"`
	Response      string                `json:"response"`
	AgentType     string                `json:"agent_type"`
	AgentResponse *models.AgentResponse `json:"agent_response"`
	Timestamp     string                `json:"timestamp"`
	UpdatedAt     string                `json:"updated_at"`
	Feedback      *int64                `json:"feedback"`
	MessageCount  int                   `json:"message_count"`
	Pinned        bool                  `json:"pinned"`
	Archived      bool                  `json:"archived"`
	ForkedFrom    *struct {
		ExchangeID int64 `json:"exchange_id"`
		Seq        int64 `json:"seq"`
	} `json:"forked_from"`
	Cursor string `json:"cursor"`
}

// apiChat sends query (to exchangeID unless 0) and expects a 200.
func (c *client) apiChat(query string, exchangeID int64) apiChatOut {
	c.a.t.Helper()
	body := map[string]any{"query": query}
	if exchangeID != 0 {
		body["exchange_id"] = exchangeID
	}
	var out apiChatOut
	c.apiJSON(http.MethodPost, "/api/chat", body, http.StatusOK, &out)
	if out.ExchangeID == nil {
		c.a.t.Fatalf("chat %q: no exchange_id", query)
	}
	return out
}

// apiMessages reads an exchange's log through the API.
func (c *client) apiMessages(exchangeID int64) []apiMsgOut {
	c.a.t.Helper()
	var out []apiMsgOut
	c.apiJSON(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages", exchangeID), nil, http.StatusOK, &out)
	return out
}

// apiHistory reads one batch of the history through the API.
func (c *client) apiHistory(query string) []apiHistoryOut {
	c.a.t.Helper()
	var out []apiHistoryOut
	c.apiJSON(http.MethodGet, "/api/chat/history"+query, nil, http.StatusOK, &out)
	return out
}

// apiCount is the number of rows in a table, for "nothing was stored" checks.
func (a *testApp) apiCount(table string) int {
	a.t.Helper()
	db, err := a.store.SQL()
	if err != nil {
		a.t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		a.t.Fatal(err)
	}
	return n
}

// apiRows is the number of exchanges and messages in the database.
func (a *testApp) apiRows() [2]int { return [2]int{a.apiCount("exchanges"), a.apiCount("messages")} }

// apiObject decodes a JSON object, failing the test if it is not one.
func apiObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		t.Fatalf("not a JSON object: %s (%v)", b, err)
	}
	return m
}

// apiJSONType names a decoded JSON value's type.
func apiJSONType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// apiShape checks that obj has exactly the keys of want, each of one of the
// JSON types listed ("number|null").
func apiShape(t *testing.T, what string, obj map[string]any, want map[string]string) {
	t.Helper()
	var got, exp []string
	for k := range obj {
		got = append(got, k)
	}
	for k := range want {
		exp = append(exp, k)
	}
	sort.Strings(got)
	sort.Strings(exp)
	if !slices.Equal(got, exp) {
		t.Fatalf("%s keys: %v, want %v", what, got, exp)
	}
	for k, types := range want {
		if !slices.Contains(strings.Split(types, "|"), apiJSONType(obj[k])) {
			t.Fatalf("%s: %q is %s (%v), want %s", what, k, apiJSONType(obj[k]), obj[k], types)
		}
	}
}

// apiErr checks an API error answer: the status and {err_msg, err_code}.
func apiErr(t *testing.T, res *http.Response, b []byte, status int) string {
	t.Helper()
	if res.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d: %s", res.Request.Method, res.Request.URL, res.StatusCode, status, b)
	}
	m := apiObject(t, b)
	msg, _ := m["err_msg"].(string)
	if code, _ := m["err_code"].(float64); int(code) != status || msg == "" {
		t.Fatalf("error body %s: want err_code %d and an err_msg", b, status)
	}
	return msg
}

func apiPtr[T any](v T) *T { return &v }
