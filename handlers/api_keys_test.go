package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"palaver/handlers"
)

// apiKeyOut is an item of GET /api/keys.
type apiKeyOut struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"`
}

func TestAPIKeysListCreateRevoke(t *testing.T) {
	a := newTestApp(t)
	ann, bob := a.apiClient("ann"), a.apiClient("bob")

	// The list: the caller's own keys, never a key or a hash.
	res, b := ann.api(http.MethodGet, "/api/keys", nil)
	mustStatus(t, res, http.StatusOK)
	obj := apiObject(t, []byte(strings.TrimSuffix(strings.TrimPrefix(string(b), "["), "]")))
	apiShape(t, "key", obj, map[string]string{"id": "number", "name": "string", "created_at": "string", "last_used_at": "string"})
	if strings.Contains(string(b), ann.apiKey) || strings.Contains(string(b), handlers.HashAPIKey(ann.apiKey)) || strings.Contains(string(b), "hash") {
		t.Fatalf("the list shows a key or its hash: %s", b)
	}

	// Create: 201, the key shown once, the name trimmed; it works.
	var created struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
		Key  string `json:"key"`
	}
	ann.apiJSON(http.MethodPost, "/api/keys", map[string]string{"name": "  my laptop \t"}, http.StatusCreated, &created)
	if created.ID == 0 || created.Name != "my laptop" || !strings.HasPrefix(created.Key, "pal_") || len(created.Key) < 40 {
		t.Fatalf("created %+v", created)
	}
	laptop := &client{a: a, cookies: map[string]string{}, apiKey: created.Key, user: ann.user}
	var keys []apiKeyOut
	laptop.apiJSON(http.MethodGet, "/api/keys", nil, http.StatusOK, &keys)
	if len(keys) != 2 || keys[0].Name != "test" || keys[1].ID != created.ID || keys[1].Name != "my laptop" || keys[1].LastUsedAt == nil {
		t.Fatalf("ann's keys %+v", keys)
	}
	_, b = laptop.api(http.MethodGet, "/api/keys", nil)
	if strings.Contains(string(b), created.Key) {
		t.Fatal("the list shows the new key again")
	}
	var bobs []apiKeyOut
	bob.apiJSON(http.MethodGet, "/api/keys", nil, http.StatusOK, &bobs)
	if len(bobs) != 1 || bobs[0].Name != "test" {
		t.Fatalf("bob sees %+v", bobs)
	}

	// Bad names: 400, nothing stored.
	before := a.apiCount("api_keys")
	for _, body := range []any{map[string]string{"name": ""}, map[string]string{"name": " \t "}, map[string]any{},
		map[string]string{"name": strings.Repeat("ß", 101)}, map[string]int{"name": 3}, "not json"} {
		res, b := ann.api(http.MethodPost, "/api/keys", body)
		apiErr(t, res, b, http.StatusBadRequest)
	}
	if n := a.apiCount("api_keys"); n != before {
		t.Fatalf("refused names stored %d keys", n-before)
	}
	ann.apiJSON(http.MethodPost, "/api/keys", map[string]string{"name": strings.Repeat("ß", 100)}, http.StatusCreated, nil)

	// Another user's key answers 404 exactly like a missing one, and stays.
	own := "/api/keys/" + strconv.FormatInt(created.ID, 10)
	resOther, bOther := bob.api(http.MethodDelete, own, nil)
	resMissing, bMissing := bob.api(http.MethodDelete, "/api/keys/999999", nil)
	apiErr(t, resOther, bOther, http.StatusNotFound)
	if string(bOther) != string(bMissing) || resMissing.StatusCode != http.StatusNotFound {
		t.Fatalf("another user's key %s, a missing one %s", bOther, bMissing)
	}
	laptop.apiJSON(http.MethodGet, "/api/keys", nil, http.StatusOK, nil)

	// Revoked: 200, and the key stops working at once.
	ann.apiJSON(http.MethodDelete, own, nil, http.StatusOK, nil)
	res, b = laptop.api(http.MethodGet, "/api/keys", nil)
	apiErr(t, res, b, http.StatusUnauthorized)
	res, b = ann.api(http.MethodDelete, own, nil)
	apiErr(t, res, b, http.StatusNotFound)
	res, b = ann.api(http.MethodDelete, "/api/keys/abc", nil)
	apiErr(t, res, b, http.StatusNotFound)
}

func TestAPIKeysFromABrowserSession(t *testing.T) {
	a := newTestApp(t)
	ann := a.register("ann")
	var created struct {
		ID  int64  `json:"id"`
		Key string `json:"key"`
	}
	ann.apiJSON(http.MethodPost, "/api/keys", map[string]string{"name": "script"}, http.StatusCreated, &created)
	// Without the CSRF header a session cannot make or revoke keys.
	token := ann.csrf
	ann.csrf = ""
	res, b := ann.api(http.MethodPost, "/api/keys", map[string]string{"name": "forged"})
	apiErr(t, res, b, http.StatusForbidden)
	res, b = ann.api(http.MethodDelete, "/api/keys/"+strconv.FormatInt(created.ID, 10), nil)
	apiErr(t, res, b, http.StatusForbidden)
	ann.csrf = token
	var keys []apiKeyOut
	ann.apiJSON(http.MethodGet, "/api/keys", nil, http.StatusOK, &keys)
	if len(keys) != 1 || keys[0].Name != "script" || keys[0].LastUsedAt != nil {
		t.Fatalf("keys %+v", keys)
	}
}

func TestAdminPasswordResetMayRevokeKeys(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	a.register("bob")
	key := a.apiClient("bob")
	path := fmt.Sprintf("/admin/users/%d/password", key.user.ID)

	// The form offers it, unticked.
	doc := admin.get("/admin/users")
	if page := bodyOf(doc); !strings.Contains(page, "Also revoke their API keys") ||
		!strings.Contains(page, `name="revoke_keys" value="1" class`) || strings.Contains(page, `name="revoke_keys" value="1" checked`) {
		t.Fatal("the reset form does not offer an unticked revoke_keys box")
	}

	// Unticked: the password changes, the key keeps working.
	mustStatus(t, admin.postForm(path, url.Values{"password": {"a brand new secret"}}), http.StatusSeeOther)
	key.apiJSON(http.MethodGet, "/api/keys", nil, http.StatusOK, nil)
	if f := adminFlash(admin.chatScreen(t, "/admin/users")); strings.Contains(f, "revoked") {
		t.Fatalf("flash %q", f)
	}

	// Ticked: the password changes and every key of bob's goes with it.
	if _, err := a.store.CreateAPIKey(context.Background(), key.user.ID, "second", handlers.HashAPIKey("pal_second")); err != nil {
		t.Fatal(err)
	}
	mustStatus(t, admin.postForm(path, url.Values{"password": {"another new secret"}, "revoke_keys": {"1"}}), http.StatusSeeOther)
	if f := adminFlash(admin.chatScreen(t, "/admin/users")); !strings.Contains(f, "2 API keys were revoked") {
		t.Fatalf("flash %q", f)
	}
	res, b := key.api(http.MethodGet, "/api/keys", nil)
	apiErr(t, res, b, http.StatusUnauthorized)
	if n := a.apiCount("api_keys"); n != 0 {
		t.Fatalf("%d keys left", n)
	}
	login := a.anon()
	login.get("/login")
	mustStatus(t, login.postForm("/login", url.Values{"username": {"bob"}, "password": {"another new secret"}}), http.StatusSeeOther)
}
