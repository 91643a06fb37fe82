package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

type apiProjectOut struct {
	ID            int64  `json:"id"`
	UID           string `json:"uid"`
	Name          string `json:"name"`
	Instructions  string `json:"instructions"`
	ParentID      *int64 `json:"parent_id"`
	Memory        bool   `json:"memory"`
	ExchangeCount int64  `json:"exchange_count"`
	CreatedAt     string `json:"created_at"`
}

type apiProjectHistoryOut struct {
	ID        int64  `json:"id"`
	ProjectID *int64 `json:"project_id"`
}

func TestAPIProjects(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	var work apiProjectOut
	ann.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Work", "instructions": "Be brief."}, http.StatusCreated, &work)
	if work.ID == 0 || work.UID == "" || !work.Memory || work.Instructions != "Be brief." || work.CreatedAt == "" {
		t.Fatalf("created %+v", work)
	}
	res, b := ann.api(http.MethodPost, "/api/projects", map[string]any{"name": "Work"})
	apiErr(t, res, b, http.StatusConflict)
	var sub apiProjectOut
	ann.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Sub", "parent_id": work.ID}, http.StatusCreated, &sub)
	res, b = ann.api(http.MethodPost, "/api/projects", map[string]any{"name": "Deep", "parent_id": sub.ID})
	apiErr(t, res, b, http.StatusBadRequest)
	res, b = ann.api(http.MethodPatch, fmt.Sprintf("/api/projects/%d", work.ID), map[string]any{"parent_id": sub.ID})
	apiErr(t, res, b, http.StatusBadRequest)
	res, b = ann.api(http.MethodPost, "/api/projects", map[string]any{"name": strings.Repeat("n", 201)})
	apiErr(t, res, b, http.StatusBadRequest)
	res, b = bob.api(http.MethodGet, fmt.Sprintf("/api/projects/%d", work.ID), nil)
	apiErr(t, res, b, http.StatusNotFound)
	res, b = bob.api(http.MethodPost, "/api/chat", map[string]any{"query": "hi", "project_id": work.ID})
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("a chat in another's project: %d %s", res.StatusCode, b)
	}

	// A chat started in it; one moved in; a temporary one.
	var in apiChatOut
	ann.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": "plan the launch", "project_id": work.ID}, http.StatusOK, &in)
	out := ann.apiChat("lunch ideas", 0)
	var tmp apiChatOut
	ann.apiJSON(http.MethodPost, "/api/chat", map[string]any{"query": "secret launch", "temporary": true}, http.StatusOK, &tmp)
	var moved apiProjectHistoryOut
	ann.apiJSON(http.MethodPatch, fmt.Sprintf("/api/chat/exchange/%d", *out.ExchangeID), map[string]any{"project_id": work.ID}, http.StatusOK, &moved)
	if moved.ProjectID == nil || *moved.ProjectID != work.ID {
		t.Errorf("moved: %+v", moved)
	}
	res, b = bob.api(http.MethodPatch, fmt.Sprintf("/api/chat/exchange/%d", *out.ExchangeID), map[string]any{"project_id": nil})
	apiErr(t, res, b, http.StatusNotFound)
	var items []apiProjectHistoryOut
	ann.apiJSON(http.MethodGet, fmt.Sprintf("/api/chat/history?project_id=%d", work.ID), nil, http.StatusOK, &items)
	if len(items) != 2 {
		t.Errorf("project history: %+v", items)
	}
	ann.apiJSON(http.MethodGet, "/api/chat/history", nil, http.StatusOK, &items)
	for _, it := range items {
		if it.ID == *tmp.ExchangeID {
			t.Error("the temporary chat is in the history")
		}
	}
	res, b = bob.api(http.MethodGet, fmt.Sprintf("/api/chat/history?project_id=%d", work.ID), nil)
	apiErr(t, res, b, http.StatusNotFound)
	if hits := ann.apiSearch("launch", fmt.Sprintf("project_id=%d", work.ID)); len(hits) == 0 {
		t.Error("scoped search found nothing")
	} else {
		for _, h := range hits {
			if h.ExchangeID == *tmp.ExchangeID {
				t.Error("search found the temporary chat")
			}
		}
	}
	if hits := ann.apiSearch("lunch", fmt.Sprintf("project_id=%d", sub.ID)); len(hits) != 0 {
		t.Errorf("search in the empty project: %+v", hits)
	}
	ann.apiJSON(http.MethodPatch, fmt.Sprintf("/api/chat/exchange/%d", *tmp.ExchangeID), map[string]any{"temporary": false}, http.StatusOK, nil)
	if hits := ann.apiSearch("secret"); len(hits) == 0 {
		t.Error("a kept chat is not found")
	}

	// The reply records its instructions, readable by its owner only.
	msgs := ann.apiMessages(*in.ExchangeID)
	reply := msgs[len(msgs)-1]
	instr, _ := reply.AgentResponse.Metadata["instructions"].(map[string]any)
	if instr == nil || instr["project_id"] != float64(work.ID) || len(instr["hash"].(string)) != 64 {
		t.Fatalf("metadata %v", reply.AgentResponse.Metadata)
	}
	var told struct{ Text, Hash string }
	ann.apiJSON(http.MethodGet, fmt.Sprintf("/api/chat/message/%d/instructions", reply.ID), nil, http.StatusOK, &told)
	if told.Hash != instr["hash"] || !strings.Contains(told.Text, "Be brief.") {
		t.Errorf("told %+v", told)
	}
	res, b = bob.api(http.MethodGet, fmt.Sprintf("/api/chat/message/%d/instructions", reply.ID), nil)
	apiErr(t, res, b, http.StatusNotFound)

	// Delete keeping the chats, then another with its chats.
	var del struct {
		Message        string
		Moved, Deleted int64
	}
	ann.apiJSON(http.MethodDelete, fmt.Sprintf("/api/projects/%d?chats=keep", work.ID), nil, http.StatusOK, &del)
	if del.Moved != 2 || del.Deleted != 0 || del.Message == "" {
		t.Errorf("delete keep: %+v", del)
	}
	var scratch apiProjectOut
	ann.apiJSON(http.MethodPost, "/api/projects", map[string]any{"name": "Scratch"}, http.StatusCreated, &scratch)
	ann.apiJSON(http.MethodPatch, fmt.Sprintf("/api/chat/exchange/%d", *out.ExchangeID), map[string]any{"project_id": scratch.ID}, http.StatusOK, nil)
	ann.apiJSON(http.MethodDelete, fmt.Sprintf("/api/projects/%d?chats=delete", scratch.ID), nil, http.StatusOK, &del)
	if del.Moved != 0 || del.Deleted != 1 {
		t.Errorf("delete with chats: %+v", del)
	}
	var list []apiProjectOut
	ann.apiJSON(http.MethodGet, "/api/projects", nil, http.StatusOK, &list)
	if len(list) != 0 {
		t.Errorf("left: %+v", list)
	}
}

func TestAPIInstructionsAndMemories(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")
	var ins struct{ About, Style string }
	ann.apiJSON(http.MethodPut, "/api/account/instructions", map[string]any{"about": "I garden.", "style": "Briefly."}, http.StatusOK, &ins)
	ann.apiJSON(http.MethodGet, "/api/account/instructions", nil, http.StatusOK, &ins)
	if ins.About != "I garden." || ins.Style != "Briefly." {
		t.Errorf("instructions %+v", ins)
	}
	type mem struct {
		ID      int64
		Content string
		Source  string
	}
	var m mem
	ann.apiJSON(http.MethodPost, "/api/memories", map[string]any{"content": "likes tea"}, http.StatusCreated, &m)
	if m.Source != "manual" || m.Content != "likes tea" {
		t.Errorf("memory %+v", m)
	}
	res, b := ann.api(http.MethodPost, "/api/memories", map[string]any{"content": strings.Repeat("m", 2001)})
	apiErr(t, res, b, http.StatusBadRequest)
	res, b = bob.api(http.MethodPatch, fmt.Sprintf("/api/memories/%d", m.ID), map[string]any{"content": "x"})
	apiErr(t, res, b, http.StatusNotFound)
	ann.apiJSON(http.MethodPatch, fmt.Sprintf("/api/memories/%d", m.ID), map[string]any{"content": "likes green tea"}, http.StatusOK, &m)
	out := ann.apiChat("hello", 0)
	msgs := ann.apiMessages(*out.ExchangeID)
	var told struct{ Text string }
	ann.apiJSON(http.MethodGet, fmt.Sprintf("/api/chat/message/%d/instructions", msgs[len(msgs)-1].ID), nil, http.StatusOK, &told)
	if !strings.Contains(told.Text, "I garden.") || !strings.Contains(told.Text, "likes green tea") {
		t.Errorf("told %q", told.Text)
	}
	var list []mem
	ann.apiJSON(http.MethodDelete, fmt.Sprintf("/api/memories/%d", m.ID), nil, http.StatusOK, nil)
	ann.apiJSON(http.MethodGet, "/api/memories", nil, http.StatusOK, &list)
	if len(list) != 0 {
		t.Errorf("left %+v", list)
	}
}
