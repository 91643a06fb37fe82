package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"palaver/models"
)

// Galaxy's client and its API tests send POST /api/chat's fields as query
// parameters, often with no body at all (API.md, "POST /api/chat rules").

// rawChat posts to /api/chat with the query string q, the body and the
// Content-Type as given ("" sends none), and decodes the answer.
func (c *client) rawChat(q url.Values, ctype, body string) (int, map[string]any) {
	c.a.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/chat?"+q.Encode(), strings.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res := c.do(req)
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		c.a.t.Fatalf("POST /api/chat?%s: %d, not JSON: %v", q.Encode(), res.StatusCode, err)
	}
	return res.StatusCode, out
}

// chatExchangeID is a successful answer's exchange_id.
func chatExchangeID(t *testing.T, out map[string]any) int64 {
	t.Helper()
	id, ok := out["exchange_id"].(float64)
	if !ok || out["error_code"] != 0.0 {
		t.Fatalf("not a successful ChatResponse: %v", out)
	}
	return int64(id)
}

func TestAPIChatQueryParameters(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")

	// Galaxy's API tests: everything in the query string, no body, whatever
	// the Content-Type says (or none).
	for _, tc := range []struct{ name, ctype, body string }{
		{"no body, no Content-Type", "", ""},
		{"no body, JSON Content-Type", "application/json", ""},
		{"no body, form Content-Type", "application/x-www-form-urlencoded", ""},
		{"an empty object", "application/json", "{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, out := ada.rawChat(url.Values{"query": {"hello from galaxy"}, "agent_type": {"auto"}}, tc.ctype, tc.body)
			if status != http.StatusOK {
				t.Fatalf("status %d: %v", status, out)
			}
			id := chatExchangeID(t, out)
			if resp, _ := out["response"].(string); !strings.Contains(resp, `You asked: "hello from galaxy"`) {
				t.Fatalf("response %q does not answer the query", resp)
			}
			if msgs := ada.apiMessages(id); len(msgs) != 2 || msgs[0].Content != "hello from galaxy" {
				t.Fatalf("log: %+v", msgs)
			}
		})
	}

	// exchange_id in the query continues that exchange.
	_, out := ada.rawChat(url.Values{"query": {"first question"}}, "", "")
	first := chatExchangeID(t, out)
	_, out = ada.rawChat(url.Values{"query": {"second question"}, "exchange_id": {fmt.Sprint(first)}}, "", "")
	if id := chatExchangeID(t, out); id != first {
		t.Fatalf("exchange_id in the query: answered in %d, want %d", id, first)
	}
	if msgs := ada.apiMessages(first); len(msgs) != 4 || msgs[2].Content != "second question" {
		t.Fatalf("continued log: %+v", msgs)
	}
	// after_seq is taken (its fork comes with branches) and must be a number.
	_, out = ada.rawChat(url.Values{"query": {"third question"}, "exchange_id": {fmt.Sprint(first)}, "after_seq": {"3"}}, "", "")
	if id := chatExchangeID(t, out); id != first {
		t.Fatalf("with after_seq: answered in %d, want %d", id, first)
	}

	// A field in both places: the body wins.
	other := *ada.apiChat("another conversation", 0).ExchangeID
	status, out := ada.rawChat(url.Values{"query": {"from the url"}, "exchange_id": {fmt.Sprint(other)}}, "application/json",
		fmt.Sprintf(`{"query": "from the body", "exchange_id": %d}`, first))
	if status != http.StatusOK || chatExchangeID(t, out) != first {
		t.Fatalf("body and query: %d %v; want exchange %d, the body's", status, out, first)
	}
	msgs := ada.apiMessages(first)
	if last := msgs[len(msgs)-2]; last.Content != "from the body" {
		t.Fatalf("the stored question is %q, want the body's", last.Content)
	}
	if n := len(ada.apiMessages(other)); n != 2 {
		t.Fatalf("the query's exchange got messages too: %d", n)
	}
	// A body without a query takes it from the query string.
	_, out = ada.rawChat(url.Values{"query": {"only in the url"}}, "application/json", `{"context": "from a script"}`)
	if msgs := ada.apiMessages(chatExchangeID(t, out)); msgs[0].Content != "only in the url" {
		t.Fatalf("query from the url with a body: %+v", msgs)
	}

	// page_id in the query: the page's chat.
	var page struct {
		ID int64 `json:"id"`
	}
	ada.apiJSON(http.MethodPost, "/api/pages", map[string]any{"title": "Trip", "content": "# Trip\nParis.\n"}, http.StatusCreated, &page)
	_, out = ada.rawChat(url.Values{"query": {`replace "Paris" with "Rome"`}, "page_id": {fmt.Sprint(page.ID)}}, "", "")
	pageChat := chatExchangeID(t, out)
	var pageHist []apiHistoryOut
	ada.apiJSON(http.MethodGet, fmt.Sprintf("/api/chat/page/%d/history", page.ID), nil, http.StatusOK, &pageHist)
	if len(pageHist) != 1 || pageHist[0].ID != pageChat {
		t.Fatalf("page_id in the query did not make a chat of the page: %+v", pageHist)
	}
	if ar, _ := out["agent_response"].(map[string]any); ar["agent_type"] != "page_assistant" {
		t.Fatalf("the page's chat was not answered by the page assistant: %v", out)
	}

	// regenerate in the query: a job's new turn instead of its first answer.
	job := url.Values{"query": {"why did it fail?"}, "job_id": {"f2db41e1fa331b3e"}}
	_, out = ada.rawChat(job, "", "")
	jobChat := chatExchangeID(t, out)
	job.Set("query", "once more")
	_, out = ada.rawChat(job, "", "")
	if chatExchangeID(t, out) != jobChat || len(ada.apiMessages(jobChat)) != 2 {
		t.Fatalf("a second call about the job ran a turn: %v", out)
	}
	job.Set("regenerate", "true")
	_, out = ada.rawChat(job, "", "")
	if msgs := ada.apiMessages(jobChat); chatExchangeID(t, out) != jobChat || len(msgs) != 4 || msgs[2].Content != "once more" {
		t.Fatalf("regenerate=true in the query did not run a turn: %+v", msgs)
	}
	// regenerate=false in the body wins over the query's true.
	_, out = ada.rawChat(job, "application/json", `{"regenerate": false}`)
	if chatExchangeID(t, out) != jobChat || len(ada.apiMessages(jobChat)) != 4 {
		t.Fatalf("the body's regenerate=false lost to the query's: %v", out)
	}
}

// Galaxy's job ids are encoded strings; other systems send their own.
func TestAPIChatJobIDs(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	for _, id := range []string{"f2db41e1fa331b3e", "42", "042", "job 7/a?b&c=d#e%", strings.Repeat("x", 128), "~"} {
		_, out := ada.rawChat(url.Values{"query": {"about " + id}, "job_id": {id}}, "", "")
		ex := chatExchangeID(t, out)
		got, err := a.store.JobExchange(t.Context(), ada.user.ID, id)
		if err != nil || got.ID != ex || got.Scope != models.ScopeJob || *got.JobID != id {
			t.Fatalf("job %q: %+v, %v; want exchange %d", id, got, err, ex)
		}
	}
	// "42" and "042" are two jobs: the ids are opaque.
	a42, _ := a.store.JobExchange(t.Context(), ada.user.ID, "42")
	a042, _ := a.store.JobExchange(t.Context(), ada.user.ID, "042")
	if a42.ID == a042.ID {
		t.Fatal(`jobs "42" and "042" share an exchange`)
	}
}

// A query parameter of the wrong type is refused like the route's other
// input errors: 400 in the ChatResponse shape (with err_msg and err_code),
// nothing stored.
func TestAPIChatQueryParameterErrors(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	own := fmt.Sprint(*ada.apiChat("mine", 0).ExchangeID)
	for _, tc := range []struct {
		name string
		q    url.Values
		body string
		msg  string
	}{
		{"exchange_id a word", url.Values{"query": {"hi"}, "exchange_id": {"abc"}}, "", "exchange_id must be an integer"},
		{"exchange_id a fraction", url.Values{"query": {"hi"}, "exchange_id": {"1.5"}}, "", "exchange_id must be an integer"},
		{"page_id a word", url.Values{"query": {"hi"}, "page_id": {"front"}}, "", "page_id must be an integer"},
		{"regenerate a word", url.Values{"query": {"hi"}, "regenerate": {"maybe"}}, "", "regenerate must be true or false"},
		{"after_seq a word", url.Values{"query": {"hi"}, "exchange_id": {own}, "after_seq": {"last"}}, "", "after_seq must be an integer"},
		{"empty query", url.Values{"query": {"  "}}, "", "No query provided"},
		{"no query anywhere", url.Values{"agent_type": {"auto"}}, "", "No query provided"},
		{"no query anywhere, an empty object", url.Values{}, "{}", "No query provided"},
		{"a body that is not JSON", url.Values{"query": {"hi"}}, "query=hi", "Invalid JSON"},
		{"a wrongly typed body field", url.Values{"query": {"hi"}}, `{"exchange_id": "abc"}`, `"exchange_id" must be an integer`},
		{"job_id too long", url.Values{"query": {"hi"}, "job_id": {strings.Repeat("j", 129)}}, "", "job_id must be 1 to 128 printable ASCII characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := a.apiRows()
			status, out := ada.rawChat(tc.q, "application/json", tc.body)
			if status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %v", status, out)
			}
			raw, _ := json.Marshal(out)
			apiShape(t, "refused ChatResponse", out, map[string]string{
				"response": "string", "error_code": "number", "error_message": "string",
				"agent_response": "null", "exchange_id": "null", "processing_time": "number",
				"err_msg": "string", "err_code": "number",
			})
			if msg, _ := out["error_message"].(string); out["error_code"] != 400.0 || out["err_code"] != 400.0 ||
				out["err_msg"] != msg || !strings.Contains(msg, tc.msg) {
				t.Fatalf("answer %s, want error 400 saying %q", raw, tc.msg)
			}
			if after := a.apiRows(); after != before {
				t.Fatalf("rows (exchanges, messages) went from %v to %v", before, after)
			}
		})
	}
	// A query parameter naming another user's exchange is a 404 like the
	// body's, in the API's error shape.
	bobs := fmt.Sprint(*a.apiClient("bob").apiChat("bob's", 0).ExchangeID)
	before := a.apiRows()
	res, b := ada.api(http.MethodPost, "/api/chat?query=hi&exchange_id="+bobs, nil)
	apiErr(t, res, b, http.StatusNotFound)
	if after := a.apiRows(); after != before {
		t.Fatalf("a refused send stored rows: %v → %v", before, after)
	}
}
