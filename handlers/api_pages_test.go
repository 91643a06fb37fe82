package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"palaver/agents"
	"palaver/models"
)

// apiPageOut is a page as the API answers it.
type apiPageOut struct {
	ID          int64  `json:"id"`
	Title       string `json:"title"`
	Content     string `json:"content"`
	ContentHash string `json:"content_hash"`
	UpdatedAt   string `json:"updated_at"`
}

type apiRevOut struct {
	ID         int64  `json:"id"`
	EditSource string `json:"edit_source"`
	MessageID  *int64 `json:"message_id"`
	CreatedAt  string `json:"created_at"`
}

func (c *client) apiPageCreate(title, content string) apiPageOut {
	c.a.t.Helper()
	var out apiPageOut
	c.apiJSON(http.MethodPost, "/api/pages", map[string]any{"title": title, "content": content}, http.StatusCreated, &out)
	return out
}

// apiPageChat sends a page chat message and expects a 200.
func (c *client) apiPageChat(pageID int64, query string, exchangeID int64) apiChatOut {
	c.a.t.Helper()
	body := map[string]any{"query": query, "page_id": pageID}
	if exchangeID != 0 {
		body["exchange_id"] = exchangeID
	}
	var out apiChatOut
	c.apiJSON(http.MethodPost, "/api/chat", body, http.StatusOK, &out)
	return out
}

func (c *client) apiRevisions(pageID int64) []apiRevOut {
	c.a.t.Helper()
	var out []apiRevOut
	c.apiJSON(http.MethodGet, fmt.Sprintf("/api/pages/%d/revisions", pageID), nil, http.StatusOK, &out)
	return out
}

func TestAPIPagesCRUD(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")

	res, b := ada.api(http.MethodPost, "/api/pages", map[string]any{"title": "Trip", "content": "a\r\nb"})
	mustStatus(t, res, http.StatusCreated)
	obj := apiObject(t, b)
	apiShape(t, "page", obj, map[string]string{"id": "number", "title": "string", "content": "string", "content_hash": "string", "updated_at": "string"})
	id := int64(obj["id"].(float64))
	if obj["content"] != "a\r\nb" || obj["content_hash"] != agents.DJB2("a\r\nb") {
		t.Fatalf("created %s: the API keeps content byte for byte", b)
	}
	if _, err := time.Parse(time.RFC3339Nano, obj["updated_at"].(string)); err != nil {
		t.Fatalf("updated_at %v", obj["updated_at"])
	}
	var got apiPageOut
	ada.apiJSON(http.MethodGet, fmt.Sprintf("/api/pages/%d", id), nil, http.StatusOK, &got)
	if got.ID != id || got.Title != "Trip" || got.Content != "a\r\nb" || got.ContentHash != agents.DJB2("a\r\nb") {
		t.Fatalf("get %+v", got)
	}
	// Empty content is a page too; its hash is API.md's vector.
	if p := ada.apiPageCreate("Empty", ""); p.ContentHash != "00001505" {
		t.Fatalf("empty page hash %s", p.ContentHash)
	}

	ada.apiJSON(http.MethodPut, fmt.Sprintf("/api/pages/%d", id), map[string]any{"content": "hello"}, http.StatusOK, &got)
	if got.Content != "hello" || got.ContentHash != "0f923099" || got.Title != "Trip" {
		t.Fatalf("put %+v", got)
	}
	ada.apiJSON(http.MethodPut, fmt.Sprintf("/api/pages/%d", id), map[string]any{"content": "hello", "title": " Renamed "}, http.StatusOK, &got)
	if got.Title != "Renamed" {
		t.Fatalf("put title %+v", got)
	}
	revs := ada.apiRevisions(id)
	if len(revs) != 3 || revs[0].ID >= revs[1].ID || revs[1].ID >= revs[2].ID {
		t.Fatalf("revisions %+v", revs)
	}
	for _, r := range revs {
		if r.EditSource != "user" || r.MessageID != nil || r.CreatedAt == "" {
			t.Fatalf("revision %+v", r)
		}
	}
	res, b = ada.api(http.MethodGet, fmt.Sprintf("/api/pages/%d/revisions", id), nil)
	var list []map[string]any
	if err := json.Unmarshal(b, &list); err != nil || len(list) != 3 {
		t.Fatalf("revisions body %s", b)
	}
	apiShape(t, "revision", list[0], map[string]string{"id": "number", "edit_source": "string", "message_id": "null", "created_at": "string"})

	var notice struct{ Message string }
	ada.apiJSON(http.MethodDelete, fmt.Sprintf("/api/pages/%d", id), nil, http.StatusOK, &notice)
	if !strings.HasPrefix(notice.Message, "Deleted") {
		t.Fatalf("delete answered %q", notice.Message)
	}
	res, b = ada.api(http.MethodGet, fmt.Sprintf("/api/pages/%d", id), nil)
	apiErr(t, res, b, http.StatusNotFound)
}

func TestAPIPagesBadInput(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	p := ada.apiPageCreate("Trip", "x")
	before := a.pageSnapshot()
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		msg                string
	}{
		{"no title", http.MethodPost, "/api/pages", map[string]any{"content": "x"}, 400, `"title" is required`},
		{"blank title", http.MethodPost, "/api/pages", map[string]any{"title": "  "}, 400, "title"},
		{"long title", http.MethodPost, "/api/pages", map[string]any{"title": strings.Repeat("t", 201)}, 400, "200"},
		{"title a number", http.MethodPost, "/api/pages", `{"title": 5}`, 400, `"title" must be a string`},
		{"not JSON", http.MethodPost, "/api/pages", `{"title": `, 400, "Invalid JSON"},
		{"two values", http.MethodPost, "/api/pages", `{"title": "a"} {}`, 400, "single JSON value"},
		{"put without content", http.MethodPut, fmt.Sprintf("/api/pages/%d", p.ID), map[string]any{"title": "x"}, 400, `"content" is required`},
		{"put content a list", http.MethodPut, fmt.Sprintf("/api/pages/%d", p.ID), `{"content": []}`, 400, `"content" must be a string`},
		{"put blank title", http.MethodPut, fmt.Sprintf("/api/pages/%d", p.ID), map[string]any{"content": "x", "title": ""}, 400, "title"},
		{"missing page", http.MethodGet, "/api/pages/999", nil, 404, "Not found"},
		{"bad id", http.MethodGet, "/api/pages/abc", nil, 404, "Not found"},
		{"history bad limit", http.MethodGet, fmt.Sprintf("/api/chat/page/%d/history?limit=0", p.ID), nil, 400, "limit"},
		{"history bad cursor", http.MethodGet, fmt.Sprintf("/api/chat/page/%d/history?before=%%%%", p.ID), nil, 400, "cursor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, b := ada.api(tc.method, tc.path, tc.body)
			if msg := apiErr(t, res, b, tc.status); !strings.Contains(msg, tc.msg) {
				t.Fatalf("message %q lacks %q", msg, tc.msg)
			}
		})
	}
	if a.pageSnapshot() != before {
		t.Fatal("bad input changed something")
	}
}

// A page chat through POST /api/chat: auto (and page_assistant) run the page
// assistant on the page; its proposal is accepted through the API.
func TestAPIPageChatAndAccept(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	p := ada.apiPageCreate("Trip", pageTrip)
	other := ada.apiPageCreate("Other", "# O\n")

	prose := ada.apiPageChat(p.ID, "what is here?", 0)
	if prose.AgentResponse == nil || prose.AgentResponse.AgentType != "page_assistant" || prose.AgentResponse.Metadata["edit_mode"] != nil ||
		!strings.Contains(prose.Response, "2 sections") {
		t.Fatalf("prose reply %+v", prose)
	}
	ex := *prose.ExchangeID
	var out apiChatOut
	ada.apiJSON(http.MethodPost, "/api/chat?agent_type=page_assistant", map[string]any{
		"query": "replace section \"Plan\" with: Walk.\n## Extra\nMore.", "page_id": p.ID, "exchange_id": ex,
	}, http.StatusOK, &out)
	if *out.ExchangeID != ex {
		t.Fatalf("the proposal went to exchange %d", *out.ExchangeID)
	}
	meta := out.AgentResponse.Metadata
	if meta["edit_mode"] != "section_patch" || meta["target_section_heading"] != "Plan" ||
		meta["new_section_content"] != "## Plan\nWalk.\n## Extra\nMore." || meta["original_content_hash"] != p.ContentHash || meta["reasoning"] == "" {
		t.Fatalf("proposal metadata %v", meta)
	}
	msgs := ada.apiMessages(ex)
	proposal := msgs[len(msgs)-1].ID
	if m, _ := a.store.Message(t.Context(), ada.user.ID, proposal); m.EditMode == nil || *m.EditMode != models.EditSectionPatch {
		t.Fatalf("stored edit_mode %v", m.EditMode)
	}

	// Input that does not fit the proposal: 400, nothing changes.
	before := a.pageSnapshot()
	for _, tc := range []struct {
		body any
		msg  string
	}{
		{map[string]any{"sections": []string{}}, "at least one section"},
		{map[string]any{"sections": []string{"Budget"}}, `no section "Budget"`},
		{`{"sections": "Plan"}`, `"sections" must be a list`},
		{`{"sections": [1]}`, "must be a string"},
	} {
		res, b := ada.api(http.MethodPost, fmt.Sprintf("/api/pages/%d/proposals/%d/accept", p.ID, proposal), tc.body)
		if msg := apiErr(t, res, b, http.StatusBadRequest); !strings.Contains(msg, tc.msg) {
			t.Fatalf("%v: %q", tc.body, msg)
		}
	}
	// Messages that are not a proposal of this page: 404.
	generalReply := a.chatReply(ada.user.ID, *ada.apiChat("general", 0).ExchangeID)
	before = a.pageSnapshot()
	for name, mid := range map[string]int64{
		"the user's message": msgs[len(msgs)-2].ID,
		"a prose reply":      msgs[1].ID,
		"a general chat's":   generalReply,
		"a missing message":  proposal + 1000,
	} {
		res, b := ada.api(http.MethodPost, fmt.Sprintf("/api/pages/%d/proposals/%d/accept", p.ID, mid), nil)
		if msg := apiErr(t, res, b, http.StatusNotFound); msg != "Not found" {
			t.Fatalf("%s: %q", name, msg)
		}
	}
	res, b := ada.api(http.MethodPost, fmt.Sprintf("/api/pages/%d/proposals/%d/accept", other.ID, proposal), nil)
	apiErr(t, res, b, http.StatusNotFound)
	if a.pageSnapshot() != before {
		t.Fatal("refused accepts changed something")
	}

	// Accept only the new section.
	var page apiPageOut
	ada.apiJSON(http.MethodPost, fmt.Sprintf("/api/pages/%d/proposals/%d/accept", p.ID, proposal),
		map[string]any{"sections": []string{"## Extra"}}, http.StatusOK, &page)
	if !strings.Contains(page.Content, "## Extra\nMore.") || !strings.Contains(page.Content, "Fly to Paris.") || strings.Contains(page.Content, "Walk.") {
		t.Fatalf("partial accept %q", page.Content)
	}
	if page.ContentHash != agents.DJB2(page.Content) {
		t.Fatal("content_hash")
	}
	revs := ada.apiRevisions(p.ID)
	if last := revs[len(revs)-1]; len(revs) != 2 || last.EditSource != "agent" || last.MessageID == nil || *last.MessageID != proposal {
		t.Fatalf("revisions %+v", revs)
	}

	// A whole-page proposal made before a PUT is stale: 409, nothing changes.
	full := ada.apiPageChat(p.ID, `rewrite the page as: # New`, ex)
	if full.AgentResponse.Metadata["content"] != "# New" || full.AgentResponse.Metadata["original_content_hash"] != page.ContentHash {
		t.Fatalf("full proposal %v", full.AgentResponse.Metadata)
	}
	msgs = ada.apiMessages(ex)
	fullID := msgs[len(msgs)-1].ID
	ada.apiJSON(http.MethodPut, fmt.Sprintf("/api/pages/%d", p.ID), map[string]any{"content": page.Content + "edit\n"}, http.StatusOK, nil)
	before = a.pageSnapshot()
	res, b = ada.api(http.MethodPost, fmt.Sprintf("/api/pages/%d/proposals/%d/accept", p.ID, fullID), nil)
	apiErr(t, res, b, http.StatusConflict)
	if a.pageSnapshot() != before {
		t.Fatal("a stale accept changed something")
	}
	// Put the proposed-for content back: it applies (a full replacement
	// takes no sections).
	ada.apiJSON(http.MethodPut, fmt.Sprintf("/api/pages/%d", p.ID), map[string]any{"content": page.Content}, http.StatusOK, nil)
	res, b = ada.api(http.MethodPost, fmt.Sprintf("/api/pages/%d/proposals/%d/accept", p.ID, fullID), map[string]any{"sections": []string{"x"}})
	apiErr(t, res, b, http.StatusBadRequest)
	ada.apiJSON(http.MethodPost, fmt.Sprintf("/api/pages/%d/proposals/%d/accept", p.ID, fullID), `{}`, http.StatusOK, &page)
	if page.Content != "# New" {
		t.Fatalf("full accept %q", page.Content)
	}
}

// POST /api/chat's page rules (API.md).
func TestAPIPageChatRules(t *testing.T) {
	a := newTestApp(t)
	ada, bob := a.apiClient("ada"), a.apiClient("bob")
	p := ada.apiPageCreate("Trip", pageTrip)
	q := ada.apiPageCreate("Other", "x")
	ex := *ada.apiPageChat(p.ID, "hi", 0).ExchangeID
	general := *ada.apiChat("hello", 0).ExchangeID
	bobs := bob.apiPageCreate("Bob", "b")
	before := a.apiRows()
	for _, tc := range []struct {
		name   string
		query  string
		body   map[string]any
		status int
		msg    string
	}{
		{"another page's exchange", "", map[string]any{"query": "x", "page_id": q.ID, "exchange_id": ex}, 400, "another conversation than page_id"},
		{"a general exchange with a page", "", map[string]any{"query": "x", "page_id": p.ID, "exchange_id": general}, 400, "another conversation"},
		{"a page exchange without its page", "", map[string]any{"query": "x", "exchange_id": ex}, 400, "page_id"},
		{"the router on a page", "?agent_type=router", map[string]any{"query": "x", "page_id": p.ID}, 400, "page_assistant"},
		{"page_assistant without a page", "?agent_type=page_assistant", map[string]any{"query": "x"}, 400, "page_id"},
		{"another user's page", "", map[string]any{"query": "x", "page_id": bobs.ID}, 404, "Not found"},
		{"a missing page", "", map[string]any{"query": "x", "page_id": 999}, 404, "Not found"},
		{"page_id zero", "", map[string]any{"query": "x", "page_id": 0}, 404, "Not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, b := ada.api(http.MethodPost, "/api/chat"+tc.query, tc.body)
			if msg := apiErr(t, res, b, tc.status); !strings.Contains(msg, tc.msg) {
				t.Fatalf("message %q lacks %q", msg, tc.msg)
			}
		})
	}
	if a.apiRows() != before {
		t.Fatal("a refused page chat stored something")
	}
	// Unknown agent types name page_assistant among the valid ones.
	res, b := ada.api(http.MethodPost, "/api/chat?agent_type=oracle", map[string]any{"query": "x", "page_id": p.ID})
	if msg := apiErr(t, res, b, 400); !strings.Contains(msg, "page_assistant") {
		t.Fatalf("unknown agent message %q", msg)
	}
}

// GET /api/chat/page/{id}/history: that page's chats only, in the history
// item shape, in batches by cursor.
func TestAPIPageHistory(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	p := ada.apiPageCreate("Trip", pageTrip)
	q := ada.apiPageCreate("Other", "x")
	var ids []int64
	for i := range 5 {
		ids = append(ids, *ada.apiPageChat(p.ID, fmt.Sprintf("question %d", i), 0).ExchangeID)
	}
	ada.apiPageChat(q.ID, "elsewhere", 0)
	ada.apiChat("general", 0)
	res, b := ada.api(http.MethodGet, fmt.Sprintf("/api/chat/page/%d/history?limit=2", p.ID), nil)
	mustStatus(t, res, http.StatusOK)
	var first []map[string]any
	if err := json.Unmarshal(b, &first); err != nil || len(first) != 2 {
		t.Fatalf("first page %s", b)
	}
	apiShape(t, "page history item", first[0], map[string]string{
		"id": "number", "title": "string", "query": "string", "response": "string", "agent_type": "string",
		"agent_response": "object", "timestamp": "string", "updated_at": "string", "feedback": "null",
		"message_count": "number", "cursor": "string",
		"pinned": "bool", "archived": "bool", "forked_from": "null", "status": "string",
	})
	if first[0]["agent_type"] != "page_assistant" || first[0]["query"] != "question 4" || first[0]["message_count"] != 1.0 {
		t.Fatalf("item %v", first[0])
	}
	var got []int64
	before := ""
	for range 5 {
		var items []apiHistoryOut
		ada.apiJSON(http.MethodGet, fmt.Sprintf("/api/chat/page/%d/history?limit=2&before=%s", p.ID, before), nil, http.StatusOK, &items)
		for _, it := range items {
			got = append(got, it.ID)
		}
		if len(items) < 2 {
			break
		}
		before = items[len(items)-1].Cursor
	}
	want := []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("walk %v, want %v", got, want)
	}
	var empty []apiHistoryOut
	r := ada.apiPageCreate("Empty", "")
	res, b = ada.api(http.MethodGet, fmt.Sprintf("/api/chat/page/%d/history", r.ID), nil)
	if res.StatusCode != 200 || strings.TrimSpace(string(b)) != "[]" || json.Unmarshal(b, &empty) != nil {
		t.Fatalf("a page without chats: %s", b)
	}
}
