package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"palaver/internal/familytest"
	"palaver/models"
	"palaver/paths"
)

// Deleting the branch on screen moves the tab to the branch the sidebar
// shows for the family afterwards, the deletion's heir, in each case.
func TestChatDeleteShownBranchFollowsTheSidebar(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	ctx := context.Background()
	for _, tc := range familytest.Cases {
		root := c.chatSend(t, "the question", 0)
		a.waitTurns()
		ids := [3]int64{root}
		for i := 1; i < 3; i++ {
			f, err := a.store.Fork(ctx, c.user.ID, root, 1)
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = f.ID
		}
		base := time.Now().Add(-time.Hour).Truncate(time.Second).UTC()
		for i, id := range ids {
			a.chatExec("UPDATE exchanges SET updated_at = ?, pinned = ?, archived = ? WHERE id = ?",
				base.Add(-time.Duration(tc.Ago[i])*time.Minute), tc.Pinned[i], tc.Archived[i], id)
		}
		if tc.PageF1 {
			p, err := a.store.CreatePage(ctx, c.user.ID, "a page", "text")
			if err != nil {
				t.Fatal(err)
			}
			a.chatExec("UPDATE exchanges SET scope = ?, page_id = ? WHERE id = ?", models.ScopePage, p.ID, ids[1])
		}
		want := ids[tc.Want]

		c.chatScreen(t, paths.Chat(ids[2]))
		res := c.htmx(http.MethodPost, paths.ChatDelete(ids[2]), url.Values{"confirmed": {"1"}})
		if got := res.Header.Get("HX-Redirect"); got != paths.Chat(want) {
			t.Errorf("%s: the tab went to %q, want %s", tc.Name, got, paths.Chat(want))
		}
		heads, err := a.store.FamilyHeads(ctx, c.user.ID, []int64{want})
		if err != nil {
			t.Fatal(err)
		}
		if !heads[want].Head {
			t.Errorf("%s: the sidebar does not show %d for the family: %+v", tc.Name, want, heads[want])
		}
	}
}
