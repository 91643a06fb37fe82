package handlers_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"palaver/models"
	"palaver/paths"
)

// deleteCase arranges a family of three, root ← f1 and root ← f2, shows f2
// and deletes it: want names the branch the tab must move to, the one the
// sidebar shows for the family then (0: the root, 1: f1). In each, the
// three rules the code had (the sidebar's head, the deletion's heir, the
// chat delete's own sibling) differed or could.
var deleteCases = []struct {
	name string
	// root, f1, f2: minutes ago last active, pinned, archived.
	ago      [3]int
	pinned   [3]bool
	archived [3]bool
	pageF1   bool // f1 is a page's chat (another scope)
	want     int
}{
	{name: "a tie goes to the younger", ago: [3]int{5, 5, 1}, want: 1},
	{name: "a pinned sibling is another list", ago: [3]int{5, 1, 9}, pinned: [3]bool{false, true, false}, want: 0},
	{name: "an archived sibling is not the sidebar's", ago: [3]int{5, 1, 9},
		pinned: [3]bool{true, false, false}, archived: [3]bool{false, true, false}, want: 0},
	{name: "an archived branch's heir is archived", ago: [3]int{1, 5, 9}, archived: [3]bool{false, true, true}, want: 1},
	{name: "a page chat is another scope", ago: [3]int{5, 1, 9}, pageF1: true, want: 0},
}

// Deleting the branch on screen moves the tab to the branch the sidebar
// shows for the family afterwards, the deletion's heir, in each case.
func TestChatDeleteShownBranchFollowsTheSidebar(t *testing.T) {
	a := newTestApp(t)
	c := a.register("ada")
	ctx := context.Background()
	for _, tc := range deleteCases {
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
				base.Add(-time.Duration(tc.ago[i])*time.Minute), tc.pinned[i], tc.archived[i], id)
		}
		if tc.pageF1 {
			p, err := a.store.CreatePage(ctx, c.user.ID, "a page", "text")
			if err != nil {
				t.Fatal(err)
			}
			a.chatExec("UPDATE exchanges SET scope = ?, page_id = ? WHERE id = ?", models.ScopePage, p.ID, ids[1])
		}
		want := ids[tc.want]

		c.chatScreen(t, paths.Chat(ids[2]))
		res := c.htmx(http.MethodPost, paths.ChatDelete(ids[2]), url.Values{"confirmed": {"1"}})
		if got := res.Header.Get("HX-Redirect"); got != paths.Chat(want) {
			t.Errorf("%s: the tab went to %q, want %s", tc.name, got, paths.Chat(want))
		}
		heads, err := a.store.FamilyHeads(ctx, c.user.ID, []int64{want})
		if err != nil {
			t.Fatal(err)
		}
		if !heads[want].Head {
			t.Errorf("%s: the sidebar does not show %d for the family: %+v", tc.name, want, heads[want])
		}
	}
}
