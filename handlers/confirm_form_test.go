package handlers_test

import (
	"maps"
	"net/http"
	"palaver/internal/htmltest"
	"testing"

	"palaver/paths"
)

// TestConfirmationsReadTheFormOnly posts every confirmed action with
// confirmed=1 in the URL's query but not in the form: each answers its
// confirmation page and deletes or changes nothing (a link or a form
// pointing at such a URL must not stand in for the person's confirmation).
func TestConfirmationsReadTheFormOnly(t *testing.T) {
	a := newTestApp(t)
	admin := a.register("root")
	bob := a.register("bob")
	ex := a.adminExchange(admin.user.ID, adminEx{queries: []string{"one"}})
	page := a.adminPage(admin.user.ID, "A page")
	pageChat := a.adminExchange(admin.user.ID, adminEx{scope: "page", page: page, agent: "page_assistant", queries: []string{"edit it"}})
	a.adminExchange(bob.user.ID, adminEx{queries: []string{"bob's"}})

	for _, path := range []string{
		paths.AdminUserDisable(bob.user.ID),
		paths.AdminUserDelete(bob.user.ID),
		paths.AdminUserDemote(admin.user.ID),
		paths.AdminOrphans,
		paths.AdminRetentionRun,
		paths.ChatDelete(ex),
		paths.ChatClear,
		paths.PageDelete(page),
		paths.PageChatClear(page),
		paths.PageChatDelete(page, pageChat),
	} {
		before := a.adminCounts()
		disabled := a.userDisabled(bob.user.ID)
		res := admin.postForm(path+"?confirmed=1", nil)
		mustStatus(t, res, http.StatusOK)
		if len(htmltest.ByTestID(chatDoc(t, res), "confirm-message")) != 1 {
			t.Errorf("%s?confirmed=1: no confirmation page", path)
		}
		if after := a.adminCounts(); !maps.Equal(before, after) || a.userDisabled(bob.user.ID) != disabled {
			t.Errorf("%s?confirmed=1 changed rows:\n got %v\nwant %v", path, after, before)
		}
	}
	// And the form's own confirmation still works.
	mustStatus(t, admin.postForm(paths.ChatDelete(ex), map[string][]string{"confirmed": {"1"}}), http.StatusSeeOther)
	if n := a.adminCounts()["exchanges"]; n != 2 {
		t.Errorf("exchanges after a confirmed delete: %d, want 2", n)
	}
}

// userDisabled says whether the account is disabled now.
func (a *testApp) userDisabled(id int64) bool {
	u, err := a.store.UserByID(a.t.Context(), id)
	if err != nil {
		a.t.Fatal(err)
	}
	return u.Disabled
}
