package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestAPIDeleteExchange(t *testing.T) {
	a := newTestApp(t)
	ada := a.apiClient("ada")
	gone := *ada.apiChat("delete me", 0).ExchangeID
	kept := *ada.apiChat("keep me", 0).ExchangeID
	if n := a.apiCount("messages"); n != 4 {
		t.Fatalf("%d messages before, want 4", n)
	}

	res, b := ada.api(http.MethodDelete, fmt.Sprintf("/api/chat/exchange/%d", gone), nil)
	mustStatus(t, res, http.StatusOK)
	out := apiObject(t, b)
	apiShape(t, "delete answer", out, map[string]string{"message": "string"})
	if out["message"] != "Deleted" {
		t.Fatalf("delete answer: %s", b)
	}
	if n := a.apiCount("messages"); n != 2 {
		t.Fatalf("%d messages after the delete, want 2: the log did not go with the exchange", n)
	}
	if h := ada.apiHistory(""); len(h) != 1 || h[0].ID != kept {
		t.Fatalf("history after delete: %+v", h)
	}
	res, b = ada.api(http.MethodGet, fmt.Sprintf("/api/chat/exchange/%d/messages", gone), nil)
	apiErr(t, res, b, http.StatusNotFound)

	for _, p := range []string{fmt.Sprint(gone), "abc", "0", "-1", "1.5"} {
		res, b := ada.api(http.MethodDelete, "/api/chat/exchange/"+p, nil)
		apiErr(t, res, b, http.StatusNotFound)
	}
	if len(ada.apiMessages(kept)) != 2 {
		t.Fatal("the other exchange changed")
	}
}

func TestAPIBatchDelete(t *testing.T) {
	a := newTestApp(t)
	ada, bob := a.apiClient("ada"), a.apiClient("bob")
	a1, a2, a3 := *ada.apiChat("one", 0).ExchangeID, *ada.apiChat("two", 0).ExchangeID, *ada.apiChat("three", 0).ExchangeID
	b1 := *bob.apiChat("bob's", 0).ExchangeID

	for _, tc := range []struct {
		name string
		body any
		msg  string
	}{
		{"no ids", `{}`, `"ids" must be a list of integers`},
		{"null ids", `{"ids": null}`, `"ids" must be a list of integers`},
		{"ids a string", `{"ids": "1"}`, `"ids" must be a list`},
		{"ids an integer", fmt.Sprintf(`{"ids": %d}`, a1), `"ids" must be a list`},
		{"a fraction", `{"ids": [1.5]}`, `"ids" must be an integer`},
		{"a string id", fmt.Sprintf(`{"ids": ["%d"]}`, a1), `"ids" must be an integer`},
		{"not JSON", "ids=1", "Invalid JSON"},
		{"too many", map[string]any{"ids": make([]int64, 1001)}, "At most 1000 ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := a.apiRows()
			res, b := ada.api(http.MethodPut, "/api/chat/exchanges/batch/delete", tc.body)
			if msg := apiErr(t, res, b, http.StatusBadRequest); !strings.Contains(msg, tc.msg) {
				t.Fatalf("err_msg %q lacks %q", msg, tc.msg)
			}
			if after := a.apiRows(); after != before {
				t.Fatalf("rows went from %v to %v", before, after)
			}
		})
	}

	var out map[string]any
	ada.apiJSON(http.MethodPut, "/api/chat/exchanges/batch/delete", map[string]any{"ids": []int64{}}, 200, &out)
	if out["message"] != "Deleted 0 exchanges" {
		t.Fatalf("empty batch: %v", out)
	}
	ada.apiJSON(http.MethodPut, "/api/chat/exchanges/batch/delete", map[string]any{"ids": []int64{a1, a2, a2, b1, 999_999, -4}}, 200, &out)
	apiShape(t, "batch answer", out, map[string]string{"message": "string"})
	if out["message"] != "Deleted 2 exchanges" {
		t.Fatalf("batch: %v", out)
	}
	if h := ada.apiHistory(""); len(h) != 1 || h[0].ID != a3 {
		t.Fatalf("ada's history after the batch: %+v", h)
	}
	if len(bob.apiMessages(b1)) != 2 {
		t.Fatal("bob's exchange was touched by ada's batch")
	}
}
