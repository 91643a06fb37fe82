package handlers_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestRegisterFirstIsAdmin(t *testing.T) {
	a := newTestApp(t)
	first := a.register("ada")
	second := a.register("bob")
	if !first.user.IsAdmin || second.user.IsAdmin {
		t.Fatalf("admin flags: first %v, second %v; want true, false", first.user.IsAdmin, second.user.IsAdmin)
	}
}

func TestRegisterErrors(t *testing.T) {
	a := newTestApp(t)
	a.register("ada")
	for _, tc := range []struct {
		name, user, pw string
		status         int
		msg            string
	}{
		{"taken", "ada", "correct horse", http.StatusConflict, "That username is taken"},
		{"short password", "bob", "short", http.StatusUnprocessableEntity, "too short"},
		{"empty name", "", "correct horse", http.StatusUnprocessableEntity, "Choose a username"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := a.anon()
			c.get("/register")
			res := c.postForm("/register", url.Values{"username": {tc.user}, "password": {tc.pw}})
			mustStatus(t, res, tc.status)
			if body := bodyOf(res); !strings.Contains(body, tc.msg) {
				t.Fatalf("body lacks %q: %s", tc.msg, body)
			}
		})
	}
}

func TestRegistrationClosed(t *testing.T) {
	a := newTestApp(t, withoutRegistration())
	c := a.anon()
	if body := bodyOf(c.get("/register")); !strings.Contains(body, "Registration is closed") {
		t.Fatalf("register page does not say it is closed: %s", body)
	}
	res := c.postForm("/register", url.Values{"username": {"eve"}, "password": {"correct horse"}})
	mustStatus(t, res, http.StatusForbidden)
	if _, err := a.store.UserByUsername(t.Context(), "eve"); err == nil {
		t.Fatal("an account was created with registration closed")
	}
}

func TestLoginLogout(t *testing.T) {
	a := newTestApp(t)
	a.register("ada")

	c := a.anon()
	c.get("/login")
	res := c.postForm("/login", url.Values{"username": {"ada"}, "password": {"wrong password"}})
	mustStatus(t, res, http.StatusUnauthorized)
	if !strings.Contains(bodyOf(res), "Wrong username or password") {
		t.Fatal("no clear message for a wrong password")
	}

	before := c.cookies["palaver_session"]
	res = c.postForm("/login", url.Values{"username": {"ada"}, "password": {"correct horse"}})
	mustStatus(t, res, http.StatusSeeOther)
	if c.cookies["palaver_session"] == before {
		t.Fatal("session token was not renewed at login")
	}
	c.get("/chat")
	signedIn := c.cookies["palaver_session"]

	res = c.postForm("/logout", nil)
	mustStatus(t, res, http.StatusSeeOther)
	if c.cookies["palaver_session"] == signedIn {
		t.Fatal("session token was not renewed at logout")
	}
	res = c.get("/chat")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Fatalf("after logout /chat: %d %q, want a redirect to /login", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestSessionCookieFlags: the visitor's CSRF cookie and the signed-in
// session's cookie are HttpOnly and SameSite=Lax.
func TestSessionCookieFlags(t *testing.T) {
	a := newTestApp(t)
	c := a.anon()
	checkFlags := func(res *http.Response, name string) {
		t.Helper()
		for _, ck := range res.Cookies() {
			if ck.Name == name {
				if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
					t.Fatalf("%s flags: HttpOnly %v SameSite %v", name, ck.HttpOnly, ck.SameSite)
				}
				return
			}
		}
		t.Fatalf("no %s cookie", name)
	}
	checkFlags(c.get("/register"), "palaver_csrf")
	checkFlags(c.postForm("/register", url.Values{"username": {"ada"}, "password": {"correct horse"}}), "palaver_session")
}

func TestCSRFRequired(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	res := c.postForm("/logout", url.Values{"csrf_token": {"forged"}})
	mustStatus(t, res, http.StatusForbidden)
	// Still signed in: nothing changed.
	res = c.get("/login")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/chat" {
		t.Fatalf("after a forged logout /login answers %d %q; want the signed-in redirect to /chat", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestRegisterUsernameRules: registration applies the username rules; a
// name that is another's in another case or Unicode form is taken; an
// account signs in under any form of its name.
func TestRegisterUsernameRules(t *testing.T) {
	a := newTestApp(t)
	a.register("alice")
	a.register("алиса") // all Cyrillic: its own name
	a.register("田中さん")
	for _, tc := range []struct {
		name   string
		status int
		msg    string
	}{
		{"Alice", http.StatusConflict, "That username is taken"},
		{"ＡＬＩＣＥ", http.StatusConflict, "That username is taken"},
		{"alice\u200b", http.StatusUnprocessableEntity, "only contain letters, digits"},
		{"\u202eecila", http.StatusUnprocessableEntity, "only contain letters, digits"},
		{"ali\x07ce", http.StatusUnprocessableEntity, "only contain letters, digits"},
		{"\u0430lice", http.StatusUnprocessableEntity, "cannot mix letters of different alphabets"},
		{"al", http.StatusUnprocessableEntity, "3 to 32 characters"},
		{"abcdefghijklmnopqrstuvwxyz0123456", http.StatusUnprocessableEntity, "3 to 32 characters"},
	} {
		c := a.anon()
		c.get("/register")
		res := c.postForm("/register", url.Values{"username": {tc.name}, "password": {"correct horse"}})
		mustStatus(t, res, tc.status)
		if body := bodyOf(res); !strings.Contains(body, tc.msg) {
			t.Errorf("register %q: body lacks %q", tc.name, tc.msg)
		}
	}
	db, _ := a.store.SQL()
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM users").Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d accounts (%v), want the 3 accepted ones", n, err)
	}

	for _, name := range []string{"ALICE", "Alice", "ａｌｉｃｅ"} {
		c := a.anon()
		c.get("/login")
		res := c.postForm("/login", url.Values{"username": {name}, "password": {"correct horse"}})
		mustStatus(t, res, http.StatusSeeOther)
		if body := bodyOf(c.get("/chat")); !strings.Contains(body, "alice") {
			t.Errorf("signed in as %q: the page does not show alice", name)
		}
	}
}
